/**
 * The way in for CAPO users: an OpenStackCluster annotated
 * `capo-apiserver.io/adopt: capo` takes over the resources CAPO created for
 * a cluster of the same namespace and name instead of creating its own.
 * CAPO finds its resources by name alone and marks none of them, so a
 * resource of the expected name that carries no capo-apiserver owner mark
 * is CAPO's; it is adopted (our owner tags added) and from then on managed
 * and deleted as ours. Its machines' servers, ports and volumes follow, as
 * the machines inherit the annotation. `dry-run` instead lists in the
 * cluster's status what would be adopted and what would be created, and
 * changes nothing.
 */
import type { JsonObject } from '../storage/interface.js';
import { metaOf } from './objects.js';

/**
 * The uid the owner tags of an object's OpenStack resources name, kept on the object itself.
 * An object's uid is its storage's: `clusterctl move` (or a restore from `clusterctl move
 * --to-directory`) makes a copy with a uid of its own in another management cluster, whose
 * reconciler would find none of the resources by their owner tag and create them all again,
 * while the source forgets them without deleting anything (clusterctl removes our finalizers
 * first). The reconciler writes the object's uid here with its finalizer, before it creates
 * anything; metadata travels with the copy, so the copy finds, and goes on owning, what the
 * original made.
 */
export const ownerUidAnnotation = 'capo-apiserver.io/owner-uid';

/** The uid the object's resources are tagged with: the one it was first reconciled under, else its own. */
export function ownerUidOf(object: JsonObject): string {
  const meta = metaOf(object);
  const recorded = meta.annotations?.[ownerUidAnnotation];
  return recorded === undefined || recorded === '' ? meta.uid : recorded;
}

export const adoptAnnotation = 'capo-apiserver.io/adopt';

export type Adoption = 'capo' | 'dry-run';

/** What the object's annotation asks for; undefined when absent or not a known value. */
export function adoptionOf(object: JsonObject | undefined): Adoption | undefined {
  const value = object === undefined ? undefined : metaOf(object).annotations?.[adoptAnnotation];
  return value === 'capo' || value === 'dry-run' ? value : undefined;
}
