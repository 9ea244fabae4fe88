/**
 * The ORC Image reconciler, ORC's behaviour for what CAPO needs of it.
 *
 * Managed: a Glance image created with our owner tags, its content
 * downloaded from the URL (hash checked, decompressed) and uploaded, at most
 * five attempts as ORC counts them in status.downloadAttempts; deleted by its
 * recorded ID or owner tag unless `onDelete: detach`. Unmanaged: an existing
 * image imported by ID or filter, never changed or deleted. The status shows
 * the image as Glance reports it, and ORC's two conditions: Available (the
 * image is active) and Progressing (work remains; False with a terminal
 * reason when it cannot go on without a change to the object).
 *
 * A download takes one of the download slots (downloads.ts), at most a share
 * of them per namespace; one that finds none free waits, said in Progressing,
 * without counting an attempt. Its destination, size and time are bounded
 * there too: a refused destination or content is terminal, a deadline missed
 * is an attempt counted as any other failure.
 */
import type { JsonObject } from '../../storage/interface.js';
import type { CloudConnection } from '../cloud.js';
import type { CreateImage, Image } from '../../openstack/index.js';
import { TerminalError, type Reconcile } from '../runtime/controller.js';
import type { ReconcilerDeps } from '../deps.js';
import { statusOf, type KindClient } from '../objects.js';
import type { ImageSpec } from '../kinds.js';
import { objectReconciler, type Outcome } from '../object-reconciler.js';
import { type ReconcilePass, describeWaits } from '../reconcile-pass.js';
import { absentOn404, WaitingError } from '../resource/actuator.js';
import { findCondition } from '../conditions.js';
import { classify } from '../resource/engine.js';
import { imageActuator } from '../resource/image.js';
import { uploadContent } from './content.js';
import type { ImageDownloads } from './downloads.js';
import { DependencyFailedError, type ImageRefResolver } from '../lookups.js';

export const imageFinalizer = 'openstack.k-orc.cloud/image';
/** ORC's bound: after this many failed downloads the Image needs a change to try again. */
const maxDownloadAttempts = 5;
/** How soon to look again for an imported image that does not exist yet. */
const importRequeueMs = 15_000;
/** How soon an Image waiting for a download slot looks again, if no released slot wakes it first. */
const slotRequeueMs = 30_000;

/** Glance's property for each field of spec.resource.properties.hardware. */
const hardwareProperties: Record<string, string> = {
  cpuSockets: 'hw_cpu_sockets',
  cpuCores: 'hw_cpu_cores',
  cpuThreads: 'hw_cpu_threads',
  cpuPolicy: 'hw_cpu_policy',
  cpuThreadPolicy: 'hw_cpu_thread_policy',
  cdromBus: 'hw_cdrom_bus',
  diskBus: 'hw_disk_bus',
  scsiModel: 'hw_scsi_model',
  vifModel: 'hw_vif_model',
  rngModel: 'hw_rng_model',
  qemuGuestAgent: 'hw_qemu_guest_agent',
};

/** What an Image's pass works with. */
interface ImageContext {
  pass: ReconcilePass<ImageSpec>;
  cloud: CloudConnection;
}

export function orcImageReconciler(deps: ReconcilerDeps, images: KindClient<ImageSpec>): Reconcile {
  return objectReconciler(deps, {
    client: images,
    finalizer: imageFinalizer,
    begin: async (pass): Promise<ImageContext> => {
      const { secretName, cloudName } = pass.spec.cloudCredentialsRef;
      return { pass, cloud: await deps.clouds.connect(pass.meta.namespace, { name: secretName, cloudName }) };
    },
    normal: async ({ pass, cloud }) => {
      const image =
        pass.spec.managementPolicy === 'unmanaged'
          ? await reconcileImport(pass, cloud, pass.spec)
          : await reconcileManaged(pass, cloud, pass.spec, deps.imageDownloads);
      if (image) reportImage(pass, image);
    },
    remove: ({ pass, cloud }) => reconcileDelete(pass, cloud, pass.spec),
    outcome: imageOutcome,
  });
}

async function reconcileManaged(pass: ReconcilePass, cloud: CloudConnection, spec: ImageSpec, downloads: ImageDownloads): Promise<Image | undefined> {
  const resource = spec.resource ?? {};
  const content = resource.content;
  const recordedId = pass.status.id as string | undefined;
  if (!content && recordedId === undefined) throw new TerminalError('spec.resource.content is required to create a managed image');
  const ensured = await pass.ensure('image', imageActuator(cloud.clients.glance), {
    recordedId,
    desired: createBody(pass.meta.name, resource),
    record: (status, id) => {
      status.id = id;
      // A new image (the recorded one was deleted behind our back): its upload has had no attempt yet.
      delete status.downloadAttempts;
    },
  });
  if (ensured.ready || ensured.resource.status !== 'queued' || !content) return ensured.resource;
  const attempts = (pass.status.downloadAttempts as number | undefined) ?? 0;
  if (attempts >= maxDownloadAttempts) throw new TerminalError(`Unable to download content after ${maxDownloadAttempts} attempts`);
  const slot = downloads.slots.take(pass.ref);
  // Woken when a slot is released; the requeue is only the fallback.
  if (typeof slot === 'string') throw new WaitingError(slot, slotRequeueMs);
  try {
    await pass.record((status) => {
      status.downloadAttempts = attempts + 1;
    });
    // The pass already waits for the image to turn active; the next one reads it so.
    await uploadContent(cloud.clients.glance, ensured.resource.id, content.download, downloads.limits);
  } finally {
    slot.release();
  }
  return ensured.resource;
}

/** Glance's create body: core fields, plus the properties as Glance's own names. */
function createBody(objectName: string, resource: NonNullable<ImageSpec['resource']>): CreateImage {
  const properties = resource.properties ?? {};
  const body: CreateImage = {
    name: resource.name ?? objectName,
    disk_format: resource.content?.diskFormat ?? 'qcow2',
    container_format: resource.content?.containerFormat ?? 'bare',
    ...(resource.visibility === undefined ? {} : { visibility: resource.visibility }),
    ...(resource.protected === undefined ? {} : { protected: resource.protected }),
    ...(resource.tags === undefined ? {} : { tags: resource.tags }),
    ...(properties.minDiskGB === undefined ? {} : { min_disk: properties.minDiskGB }),
    ...(properties.minMemoryMB === undefined ? {} : { min_ram: properties.minMemoryMB }),
    ...(properties.architecture === undefined ? {} : { architecture: properties.architecture }),
    ...(properties.hypervisorType === undefined ? {} : { hypervisor_type: properties.hypervisorType }),
    ...(properties.operatingSystem?.distro === undefined ? {} : { os_distro: properties.operatingSystem.distro }),
    ...(properties.operatingSystem?.version === undefined ? {} : { os_version: properties.operatingSystem.version }),
  };
  for (const [field, value] of Object.entries(properties.hardware ?? {})) {
    if (value !== undefined && hardwareProperties[field]) body[hardwareProperties[field]] = String(value);
  }
  return body;
}

async function reconcileImport(pass: ReconcilePass, cloud: CloudConnection, spec: ImageSpec): Promise<Image | undefined> {
  const { glance } = cloud.clients;
  const recordedId = (pass.status.id as string | undefined) ?? spec.import?.id;
  let image: Image | undefined;
  if (recordedId !== undefined) {
    image = await absentOn404(glance.getImage(recordedId));
    // ORC's rule: an imported image is not ours to make again; one seen before and gone now is gone for good.
    if (!image && pass.status.id !== undefined) throw new ImageGoneError();
    if (!image) throw new WaitingError(`Glance image ${recordedId} to exist`, importRequeueMs);
  } else {
    const filter = spec.import?.filter ?? {};
    const matches = await glance.listImages({
      ...(filter.name === undefined ? {} : { name: filter.name }),
      ...(filter.visibility === undefined ? {} : { visibility: filter.visibility }),
      ...(filter.tags === undefined ? {} : { tag: filter.tags }),
    });
    if (matches.length > 1)
      throw new TerminalError(`spec.import.filter matches ${matches.length} images (${matches.map((match) => match.id).join(', ')}); it must match one`);
    if (matches.length === 0) throw new WaitingError(`a Glance image matching ${JSON.stringify(filter)}`, importRequeueMs);
    image = matches[0];
  }
  if (pass.status.id !== image.id) {
    const id = image.id;
    await pass.record((status) => {
      status.id = id;
    });
  }
  return image;
}

/** True once nothing of ours is left in Glance (or nothing was ours to delete). */
async function reconcileDelete(pass: ReconcilePass, cloud: CloudConnection, spec: ImageSpec): Promise<boolean> {
  if (spec.managementPolicy === 'unmanaged' || spec.managedOptions?.onDelete === 'detach') return true;
  return pass.remove(imageActuator(cloud.clients.glance), {
    recordedId: pass.status.id as string | undefined,
    name: spec.resource?.name ?? pass.meta.name,
    owner: pass.owner,
  });
}

function reportImage(pass: ReconcilePass, image: Image): void {
  pass.observe((status) => {
    status.resource = {
      ...(image.name === null ? {} : { name: image.name }),
      status: image.status,
      ...(image.protected === undefined ? {} : { protected: image.protected }),
      visibility: image.visibility,
      ...(image.os_hash_algo && image.os_hash_value ? { hash: { algorithm: image.os_hash_algo, value: image.os_hash_value } } : {}),
      ...(typeof image.size === 'number' ? { sizeB: image.size } : {}),
      ...(typeof image.virtual_size === 'number' ? { virtualSizeB: image.virtual_size } : {}),
      ...(image.tags.length > 0 ? { tags: [...image.tags] } : {}),
    } as JsonObject;
  });
  const available = image.status === 'active';
  pass.condition(
    available
      ? { type: 'Available', status: 'True', reason: 'Success', message: 'Glance image is available' }
      : { type: 'Available', status: 'False', reason: 'Progressing', message: `Glance image is ${image.status}` },
  );
}

/** An imported image seen before is no longer in Glance (ORC: UnrecoverableError, which stops retries until the object changes). */
class ImageGoneError extends TerminalError {
  override name = 'ImageGoneError';

  constructor() {
    super('resource has been deleted from OpenStack');
  }
}

/** ORC's conditions from the pass's outcome: Progressing False with a terminal reason stops retries until the object changes. */
/** ORC's conditions: Progressing tells what the pass is doing or why it cannot, Available whether the Glance image is there. */
function imageOutcome(pass: ReconcilePass<ImageSpec>, error: unknown): Outcome {
  if (error === undefined || error instanceof WaitingError) {
    const waiting = error instanceof WaitingError ? [error] : pass.waiting;
    pass.condition(
      waiting.length === 0
        ? { type: 'Progressing', status: 'False', reason: 'Success', message: 'Glance image is up to date' }
        : { type: 'Progressing', status: 'True', reason: 'Progressing', message: describeWaits(waiting) },
    );
    if (findCondition(pass.status, 'Available') === undefined) {
      pass.condition({ type: 'Available', status: 'False', reason: 'Progressing', message: 'Glance image is not there yet' });
    }
    return { error, failure: { type: 'Available', reason: 'Progressing' } };
  }
  const terminal = classify(error) === 'terminal';
  const reason = error instanceof ImageGoneError ? 'UnrecoverableError' : terminal ? 'InvalidConfiguration' : 'TransientError';
  const message = error instanceof Error ? error.message : String(error);
  pass.condition({ type: 'Progressing', status: terminal ? 'False' : 'True', reason, message });
  return { error, failure: { type: 'Available', reason } };
}

/** How soon to look again at an Image that is not available yet, when its own change events do not come first. */
const imageRefRequeueMs = 30_000;

/** Resolves `image.imageRef` of objects in `namespace` through `readImage` (undefined: no ORC Images here). */
export function imageRefResolver(readImage: ReconcilerDeps['readOrcImage'], namespace: string): ImageRefResolver {
  return async (name) => {
    const where = `image.imageRef: Image ${namespace}/${name}`;
    if (!readImage) throw new DependencyFailedError(`${where}: ORC Images are neither served nor read here (see --orc-images)`);
    const image = await readImage(namespace, name);
    if (!image) throw new DependencyFailedError(`${where} does not exist`);
    const status = statusOf(image);
    const progressing = findCondition(status, 'Progressing');
    if (progressing?.status === 'False' && (progressing.reason === 'InvalidConfiguration' || progressing.reason === 'UnrecoverableError')) {
      throw new DependencyFailedError(`${where} failed: ${progressing.message ?? progressing.reason}`);
    }
    if (findCondition(status, 'Available')?.status !== 'True' || typeof status.id !== 'string') {
      throw new WaitingError(`Image ${namespace}/${name} to be available`, imageRefRequeueMs);
    }
    return status.id;
  };
}
