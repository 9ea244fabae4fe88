/**
 * Flavor and image references resolved the way CAPO resolves them, shared by
 * the server reconciler (which freezes the answer in status.resolved) and the
 * machine template reconciler (which reports the machine's capacity). Flavors
 * and images by name change rarely, so many objects resolving them at once
 * share one lookup per cloud.
 */
import type { CloudConnection } from './cloud.js';
import { TerminalError } from './controller.js';

const lookupTtlMs = 5 * 60_000;

export interface ImageParam {
  id?: string;
  filter?: { name?: string; tags?: string[] };
  imageRef?: { name: string };
}

/** The flavor's ID: `flavorID` as given, else the one flavor named `flavor`. */
export async function resolveFlavorId(cloud: CloudConnection, spec: { flavor?: string; flavorID?: string }): Promise<string> {
  if (spec.flavorID) return spec.flavorID;
  const flavors = await cloud.memo('flavors', lookupTtlMs, () => cloud.clients.nova.listFlavors());
  const flavor = flavors.find((candidate) => candidate.name === spec.flavor);
  if (!flavor) throw new TerminalError(`flavor "${spec.flavor}" does not exist`);
  return flavor.id;
}

/** The image's ID: `id` as given, else the one image the filter matches. */
export async function resolveImageId(cloud: CloudConnection, image: ImageParam): Promise<string> {
  if (image.id) return image.id;
  if (image.imageRef) throw new TerminalError('image.imageRef (an ORC Image) is not supported: give image.id or image.filter');
  const filter = image.filter ?? {};
  const images = await cloud.memo(`image:${JSON.stringify(filter)}`, lookupTtlMs, () => cloud.clients.glance.findImages(filter));
  if (images.length !== 1) {
    throw new TerminalError(`image filter ${JSON.stringify(filter)} matches ${images.length} images; it must match exactly one`);
  }
  return images[0].id;
}
