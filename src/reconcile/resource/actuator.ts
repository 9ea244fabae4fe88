/**
 * The contract one OpenStack resource kind fulfils so the engine (engine.ts)
 * can create, find again, wait for and delete every kind the same way.
 *
 * The rules that make a crash at any point harmless live in the engine; an
 * actuator only has to keep three promises:
 * - `create` sends exactly one request that can create the primary resource
 *   and never throws once that request has succeeded, so the caller always
 *   learns the ID it must record;
 * - whatever that request cannot do (Neutron tags, attachments) is left to
 *   `postCreate`, which runs on every ensure and so checks before it acts;
 * - `findAdoptable` matches only resources carrying the owner tag, so a
 *   same-named resource of another object, of another management cluster or
 *   of a user is never adopted, nor deleted.
 */
import { isNotFound } from '../../openstack/index.js';
import { TerminalError } from '../runtime/controller.js';

/** The Kubernetes object on whose behalf resources are created; its uid is what makes ownership unambiguous. */
export interface Owner {
  uid: string;
  namespace: string;
  name: string;
  /** E.g. OpenStackCluster; only for the human-readable tag. */
  kind: string;
  /** Adopting CAPO's resources (adoption.ts): one of the name that no capo-apiserver object owns is taken over. */
  adopt?: boolean;
  /** The installation creating for it (installation.ts), tagged on what it creates. */
  installation?: string;
}

/** Still waiting on OpenStack: reconcile again later instead of holding a worker. */
export interface Waiting {
  /** Shown in conditions, e.g. `load balancer 1f2e to become ACTIVE (now PENDING_CREATE)`. */
  waitingFor: string;
  requeueAfterMs: number;
  /** The change under way, when it is one whose duration the wait schedule can learn. */
  transition?: Transition;
}

export interface Transition {
  /** The same for every resource of a kind in one state (`load balancer PENDING_CREATE`, `server BUILD`): what is learned. */
  kind: string;
  /** The resource whose state is awaited; without one, the object awaits one such transition at a time. */
  id?: string;
  /** The change was sent in this pass: an earlier transition of the same resource was seen over. */
  begins?: boolean;
}

/** Only a wait's own fields, from anything that carries them (an engine result, a thrown WaitingError). */
export function waitingOf({ waitingFor, requeueAfterMs, transition }: Waiting): Waiting {
  return transition === undefined ? { waitingFor, requeueAfterMs } : { waitingFor, requeueAfterMs, transition };
}

/** A wait found deep in a step (a dependency not ready yet): thrown, and turned back into a wait by the pass. */
export class WaitingError extends Error implements Waiting {
  override name = 'WaitingError';

  constructor(
    readonly waitingFor: string,
    readonly requeueAfterMs: number,
  ) {
    super(`waiting for ${waitingFor}`);
  }
}

export type Progress = { done: true } | Waiting;

export type Readiness = { ready: true } | Waiting | { failed: string };

/** A status-sized, JSON-safe summary of what OpenStack reports for one resource. */
export interface ResourceDescription {
  id: string;
  name: string;
  [field: string]: string | number | boolean | null | readonly string[] | undefined;
}

export interface ResourceActuator<Desired extends { name: string }, Resource extends { id: string }> {
  /** Names the kind in messages, e.g. `network`. */
  readonly kind: string;
  /** Undefined when OpenStack answers 404. */
  getById(id: string): Promise<Resource | undefined>;
  /**
   * Every resource with exactly this name that carries the owner tag. What
   * several mean is the engine's call: ambiguous on ensure, all deleted on
   * remove.
   */
  findAdoptable(name: string, owner: Owner, desired?: Desired): Promise<Resource[]>;
  /** One request creating the primary resource, named and, where the API allows, tagged (see the module comment). */
  create(desired: Desired, owner: Owner): Promise<Resource>;
  /** Idempotent follow-up steps, run on every ensure once the resource exists. */
  postCreate?(resource: Resource, desired: Desired, owner: Owner): Promise<Progress>;
  readiness(resource: Resource): Readiness;
  /** Reads many resources of this kind in one call, where OpenStack can (see read-together.ts). */
  readMany?: ReadMany<Resource>;
  /**
   * Done once OpenStack no longer has the resource; waiting while an
   * asynchronous delete runs (on the next pass the engine reads the resource
   * again, so the actuator can tell "still going" from "not started"). A
   * 404 may be thrown: the engine counts it as gone.
   */
  delete(resource: Resource): Promise<Progress>;
  /**
   * What keeps the resource from being deleted after a 409, e.g. the ports
   * on a network, so the user learns which object to look at.
   */
  blockers?(resource: Resource): Promise<string[]>;
  describe(resource: Resource): ResourceDescription;
}

/** A resource to read along with another: its ID and the uid of the object owning it (whose owner tag it carries). */
export interface ReadTarget {
  id: string;
  ownerUid: string;
}

export interface ReadMany<Resource> {
  /** What one call can answer for (one kind on one cloud, below one parent): only targets of one group are read together. */
  group: string;
  /** One call for the targets (at most readTogetherLimit); what it has beyond them is ignored, what it lacks is not vouched for. */
  read(targets: readonly ReadTarget[]): Promise<Resource[]>;
  /**
   * Read together only for looks at resources in a transition, never at resync: an answer kept for
   * a resync may be older than a change made since, which a reader that judges by when it read
   * (a load balancer's children) must not be given.
   */
  onlyForLooks?: true;
}

const clientNumbers = new WeakMap<object, number>();
let clientsNumbered = 0;

/** A read group: `kind` as `client` (one per cloud connection) serves it. */
export function readGroup(client: object, kind: string): string {
  let number = clientNumbers.get(client);
  if (number === undefined) {
    number = ++clientsNumbered;
    clientNumbers.set(client, number);
  }
  return `${number}/${kind}`;
}

/** For getById: a read that answers 404 means the resource is gone, not that the reconcile failed. */
export async function absentOn404<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * Neutron and Nova refuse tags over 60 characters, and Nova refuses `/` and
 * `,` in a tag, so neither separator appears in ours. Only the owner tag is
 * ever used for lookup.
 */
export const maxTagLength = 60;
const tagPrefix = 'capo-apiserver:';
const ownerTagPrefix = `${tagPrefix}owner=`;

/**
 * `capo-apiserver:owner=<uid>`: 57 characters for a Kubernetes uid (a UUID).
 * Matching on it, rather than on the name alone, keeps two management
 * clusters with the same namespace/name from adopting each other's resources.
 */
export function ownerTag(owner: Owner): string {
  const tag = ownerTagOf(owner.uid);
  if (owner.uid === '' || /[,/]/.test(owner.uid) || tag.length > maxTagLength) {
    throw new TerminalError(
      `${owner.kind} ${owner.namespace}/${owner.name}: uid "${owner.uid}" cannot form an owner tag (at most ${maxTagLength} characters, without "/" or ",")`,
    );
  }
  return tag;
}

/** The owner tag for an object's uid, unchecked: for reading what ownerTag tagged. */
export function ownerTagOf(uid: string): string {
  return `${ownerTagPrefix}${uid}`;
}

/**
 * Of the resources a name lookup found: the owner's; or, when there are none
 * and the owner adopts CAPO's resources, those no capo-apiserver object owns
 * (`ownedByAnyone` tells), which CAPO made.
 */
export function ownOrAdoptable<R>(found: readonly R[], owner: Owner, ownedByOwner: (resource: R) => boolean, ownedByAnyone: (resource: R) => boolean): R[] {
  const ours = found.filter(ownedByOwner);
  if (ours.length > 0 || !owner.adopt) return ours;
  return found.filter((resource) => !ownedByAnyone(resource));
}

/** The uid an owner tag among these names, if any. */
export function ownerUidOfTags(tags: readonly string[] | null | undefined): string | undefined {
  return valueOfTag(tags, ownerTagPrefix);
}

/** What follows `prefix` in the first of these tags that starts with it. */
function valueOfTag(tags: readonly string[] | null | undefined, prefix: string): string | undefined {
  return tags?.find((tag) => tag.startsWith(prefix))?.slice(prefix.length);
}

/** Whether some owner's tag is among these: the resource was created by capo-apiserver, not by a user. */
export function carriesOwnerTag(tags: readonly string[] | undefined): boolean {
  return (tags ?? []).some((tag) => tag.startsWith(ownerTagPrefix));
}

/**
 * `capo-apiserver:<kind>=<namespace>.<name>`, for people reading the cloud.
 * Namespaces hold no dots, so the first dot separates the two. Cut to the
 * tag limit (ending in `...`), which is safe because nothing looks it up.
 */
export function humanTag(owner: Owner): string {
  const tag = `${tagPrefix}${owner.kind}=${owner.namespace}.${owner.name}`;
  return tag.length <= maxTagLength ? tag : `${tag.slice(0, maxTagLength - 3)}...`;
}

/** The tags every created resource carries; throws before anything is created if the owner cannot be tagged. */
export function ownerTags(owner: Owner): string[] {
  return [ownerTag(owner), humanTag(owner), ...(owner.installation === undefined ? [] : [installationTag(owner.installation)])];
}

const installationTagPrefix = `${tagPrefix}installation=`;

/** `capo-apiserver:installation=<id>`: which installation made the resource (installation.ts). */
export function installationTag(installation: string): string {
  return `${installationTagPrefix}${installation}`;
}

/** The installation these tags name, if any: resources made before installations were tagged name none. */
export function installationOfTags(tags: readonly string[] | null | undefined): string | undefined {
  return valueOfTag(tags, installationTagPrefix);
}
