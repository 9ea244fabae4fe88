/**
 * The Cinder volume actuator: a server's root and data volumes. Cinder
 * volumes take no tags, so the owner's uid goes into the volume's metadata,
 * which Cinder can filter on, and adoption matches on name and that item.
 */
import { derivedError, OpenStackError, type CinderClient, type Volume } from '../../openstack/index.js';
import { TerminalError } from '../runtime/controller.js';
import { absentOn404, ownOrAdoptable, type Owner, type ResourceActuator } from './actuator.js';

/** Cinder's own field names, so the create body is the desired state plus the owner's metadata. */
export interface VolumeDesired {
  name: string;
  /** GiB. */
  size: number;
  volume_type?: string;
  availability_zone?: string;
  /** Makes a bootable root volume from this image. */
  imageRef?: string;
  description?: string;
  metadata?: Record<string, string>;
}

/** Holds the owner's uid: the only item looked up, so it plays the owner tag's part. */
export const ownerMetadataKey = 'capo-apiserver-owner';
/** The installation that made the volume, as the other resources' installation tag says it. */
export const installationMetadataKey = 'capo-apiserver-installation';
/** `<kind> <namespace>/<name>`, for people reading the cloud; never looked up. */
export const ownerObjectMetadataKey = 'capo-apiserver-object';
/** Cinder's limit on metadata keys and values. */
const maxMetadataLength = 255;

/** An empty volume is available within seconds; one made from an image takes as long as the copy. */
const settleRequeueMs = 5_000;

/** Statuses Cinder leaves on its own; a DELETE sent during them is refused. */
const settling = new Set(['creating', 'downloading', 'attaching', 'detaching', 'extending', 'retyping', 'uploading', 'backing-up', 'restoring-backup']);

/** The metadata every created volume carries; throws before anything is created if the owner cannot be marked. */
export function ownerMetadata(owner: Owner): Record<string, string> {
  const object = `${owner.kind} ${owner.namespace}/${owner.name}`;
  return {
    [ownerMetadataKey]: ownerUid(owner),
    [ownerObjectMetadataKey]: object.length <= maxMetadataLength ? object : `${object.slice(0, maxMetadataLength - 3)}...`,
    ...(owner.installation === undefined ? {} : { [installationMetadataKey]: owner.installation }),
  };
}

function ownerUid(owner: Owner): string {
  if (owner.uid === '' || owner.uid.length > maxMetadataLength) {
    throw new TerminalError(
      `${owner.kind} ${owner.namespace}/${owner.name}: uid "${owner.uid}" cannot mark volume ownership (1 to ${maxMetadataLength} characters)`,
    );
  }
  return owner.uid;
}

export function volumeActuator(cinder: CinderClient): ResourceActuator<VolumeDesired, Volume> {
  return {
    kind: 'volume',
    getById: (id) => absentOn404(cinder.getVolume(id)),
    async findAdoptable(name, owner) {
      const uid = ownerUid(owner);
      const volumes = await cinder.listVolumes(owner.adopt ? { name } : { name, metadata: { [ownerMetadataKey]: uid } });
      // Ownership must not rest on the cloud applying a filter (an operator can narrow Cinder's allowed filters), so it is checked here too.
      return ownOrAdoptable(
        volumes.filter((volume) => volume.name === name),
        owner,
        (volume) => volume.metadata[ownerMetadataKey] === uid,
        (volume) => volume.metadata[ownerMetadataKey] !== undefined,
      );
    },
    // The owner's metadata travels in the create body; only an adopted volume (CAPO's) gets it afterwards.
    create: (desired, owner) => cinder.createVolume({ ...desired, metadata: { ...desired.metadata, ...ownerMetadata(owner) } }),
    async postCreate(volume, _desired, owner) {
      if (volume.metadata[ownerMetadataKey] !== ownerUid(owner)) {
        const marks = ownerMetadata(owner);
        await cinder.updateVolumeMetadata(volume.id, marks);
        Object.assign(volume.metadata, marks);
      }
      return { done: true };
    },
    readiness(volume) {
      if (volume.status === 'available' || volume.status === 'in-use') return { ready: true };
      if (volume.status.startsWith('error')) return { failed: `Cinder reports status ${volume.status}` };
      return { waitingFor: `volume ${volume.id} to become available (now ${volume.status})`, requeueAfterMs: settleRequeueMs };
    },
    async delete(volume) {
      if (settling.has(volume.status)) {
        return { waitingFor: `volume ${volume.id} to settle before it is deleted (now ${volume.status})`, requeueAfterMs: settleRequeueMs };
      }
      if (volume.status !== 'deleting') {
        try {
          await cinder.deleteVolume(volume.id);
        } catch (error) {
          throw asBlocked(error);
        }
      }
      return { waitingFor: `volume ${volume.id} to be deleted`, requeueAfterMs: settleRequeueMs };
    },
    // The volume was read in the same pass as the refused DELETE, so its attachments are current.
    blockers: async (volume) => volume.attachments.map((attachment) => `server ${attachment.server_id}${attachment.device ? ` at ${attachment.device}` : ''}`),
    describe: (volume) => ({
      id: volume.id,
      name: volume.name ?? '',
      status: volume.status,
      size: volume.size,
      volume_type: volume.volume_type,
      availability_zone: volume.availability_zone,
      bootable: volume.bootable,
      attached_to: volume.attachments.map((attachment) => attachment.server_id),
    }),
  };
}

/**
 * Cinder refuses to delete a volume that is attached, has snapshots, is in
 * a group or awaits a transfer with 400, not 409. A DELETE by ID cannot be
 * malformed, so the refusal is about the volume's state: something else
 * has to change first, which the engine reports as blocked.
 */
function asBlocked(error: unknown): unknown {
  return error instanceof OpenStackError && error.kind === 'BadRequest' ? derivedError(error, { kind: 'Conflict' }) : error;
}
