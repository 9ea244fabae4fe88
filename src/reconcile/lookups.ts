/**
 * Flavor and image references resolved the way CAPO resolves them, shared by
 * the server reconciler (which freezes the answer in status.resolved) and the
 * machine template reconciler (which reports the machine's capacity). Flavors
 * and images by name change rarely, so many objects resolving them at once
 * share one lookup per cloud.
 */
import type { Flavor } from '../openstack/index.js';
import type { CloudConnection } from './cloud.js';
import { TerminalError } from './runtime/controller.js';

const lookupTtlMs = 5 * 60_000;
/** A flavor never changes under its ID; the resync reads it again after this. */
const flavorTtlMs = 10 * 60_000;

export interface ImageParam {
  id?: string;
  filter?: { name?: string; tags?: string[] };
  imageRef?: { name: string };
}

/** A machine's flavor parameter (ID or name filter) in the server's spelling. */
export function flavorReference(param: { id?: string; filter?: { name?: string } } | undefined): { flavorID: string } | { flavor: string | undefined } {
  return param?.id !== undefined ? { flavorID: param.id } : { flavor: param?.filter?.name };
}

/**
 * The flavor behind an ID. The flavors this cloud's lookups listed (one list serves every object
 * resolving a flavor by name) hold it already, so a machine's capacity, read once its server is
 * ACTIVE, costs no call on the way to Ready; one the list does not hold (a private flavor, or one
 * made since the list) is read alone, and shared too.
 */
export async function flavorById(cloud: CloudConnection, id: string): Promise<Flavor> {
  const listed = (await listedFlavors(cloud)).find((flavor) => flavor.id === id);
  return listed ?? cloud.memo(`flavor:${id}`, flavorTtlMs, () => cloud.clients.nova.getFlavor(id));
}

/** The flavor's ID: `flavorID` as given, else the one flavor named `flavor`. */
export async function resolveFlavorId(cloud: CloudConnection, spec: { flavor?: string; flavorID?: string }): Promise<string> {
  if (spec.flavorID) return spec.flavorID;
  const flavor = (await listedFlavors(cloud)).find((candidate) => candidate.name === spec.flavor);
  if (!flavor) throw new TerminalError(`flavor "${spec.flavor}" does not exist`);
  return flavor.id;
}

function listedFlavors(cloud: CloudConnection): Promise<Flavor[]> {
  return cloud.memo('flavors', lookupTtlMs, () => cloud.clients.nova.listFlavors());
}

/** A dependency failed for good (an ORC Image that cannot be made available): CAPO's DependencyFailed. */
export class DependencyFailedError extends TerminalError {
  override name = 'DependencyFailedError';
}

/**
 * The Glance ID of the ORC Image named by `image.imageRef`, once it is
 * Available; it throws DependencyFailedError for a missing or failed Image
 * and a WaitingError while it is on its way.
 */
export type ImageRefResolver = (name: string) => Promise<string>;

/** The image's ID: `id` as given, the ORC Image's for `imageRef`, else the one image the filter matches. */
export async function resolveImageId(cloud: CloudConnection, image: ImageParam, imageRefs: ImageRefResolver): Promise<string> {
  if (image.id) return image.id;
  if (image.imageRef) return imageRefs(image.imageRef.name);
  const filter = image.filter ?? {};
  const images = await cloud.memo(`image:${JSON.stringify(filter)}`, lookupTtlMs, () => cloud.clients.glance.findImages(filter));
  if (images.length !== 1) {
    throw new TerminalError(`image filter ${JSON.stringify(filter)} matches ${images.length} images; it must match exactly one`);
  }
  return images[0].id;
}
