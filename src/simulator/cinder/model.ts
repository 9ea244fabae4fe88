/**
 * The simulated Cinder's state and its rules: volumes and volume types, the asynchronous status
 * transitions, the quota check a create makes, and the deletion guard. Routes (volumes.ts,
 * types.ts, quotas.ts) and Nova's peer calls (peers.ts) go through one CinderStore.
 */
import type { Response } from 'express';
import { z } from 'zod';
import { SimulatorError, type SimulatorContext, type TokenScope } from '../framework.js';

export const MIN_VERSION = { major: 3, minor: 0 };
export const MAX_VERSION = { major: 3, minor: 70 };

export type VolumeStatus = 'creating' | 'available' | 'reserved' | 'attaching' | 'in-use' | 'detaching' | 'deleting' | 'error' | 'error_deleting' | 'extending';

export interface Attachment {
  id: string;
  serverId: string;
  device: string | null;
  hostName: string | null;
  attachedAt: number;
}

export interface Volume {
  id: string;
  name: string | null;
  description: string | null;
  projectId: string;
  userId: string;
  status: VolumeStatus;
  size: number;
  availabilityZone: string;
  volumeTypeId: string;
  imageMetadata?: Record<string, string>;
  metadata: Record<string, string>;
  attachments: Attachment[];
  multiattach: boolean;
  createdAt: number;
  updatedAt: number;
}

/** Where each transitional status ends (`deleting` ends with the volume gone). */
const settles: Partial<Record<VolumeStatus, VolumeStatus>> = {
  creating: 'available',
  reserved: 'in-use',
  attaching: 'in-use',
  detaching: 'available',
  extending: 'available',
};

export interface VolumeType {
  id: string;
  name: string;
  description: string | null;
  extraSpecs: Record<string, string>;
}

/** Cinder's timestamps: microseconds, no zone. */
export const timestamp = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000');

/** Cinder's defaults from cinder.conf ([DEFAULT] quota_*). */
export const quotaDefaults: Record<string, number> = {
  volumes: 10,
  gigabytes: 1000,
  snapshots: 10,
  backups: 10,
  backup_gigabytes: 1000,
  per_volume_gigabytes: Infinity,
  groups: 10,
};

const IN_USE_DELETE_MESSAGE =
  'Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.';

export const createSchema = z.object({
  volume: z.object({
    size: z
      .union([z.number(), z.string().regex(/^\d+$/).transform(Number)])
      .nullable()
      .optional(),
    name: z.string().max(255).nullable().optional(),
    description: z.string().max(255).nullable().optional(),
    display_name: z.string().max(255).nullable().optional(),
    display_description: z.string().max(255).nullable().optional(),
    volume_type: z.string().nullable().optional(),
    availability_zone: z.string().nullable().optional(),
    imageRef: z.string().nullable().optional(),
    image_id: z.string().nullable().optional(),
    snapshot_id: z.string().nullable().optional(),
    source_volid: z.string().nullable().optional(),
    metadata: z.record(z.string().max(255), z.string().max(255)).nullable().optional(),
    multiattach: z.boolean().optional(),
    consistencygroup_id: z.string().nullable().optional(),
    group_id: z.string().nullable().optional(),
    backup_id: z.string().nullable().optional(),
  }),
});

type VolumeCreate = z.infer<typeof createSchema>['volume'];

export interface Microversion {
  major: number;
  minor: number;
}
export const atLeast = (v: Microversion, minor: number) => v.minor >= minor;

/** The token's scope, as the host's authentication put it on the response. */
export const auth = (res: Response) => res.locals.auth as TokenScope;
export const isAdmin = (scope: TokenScope) => scope.roles.includes('admin');

export class CinderStore {
  readonly volumes = new Map<string, Volume>();
  readonly types = new Map<string, VolumeType>();
  /** `__DEFAULT__`, seeded here or restored with its id. */
  defaultType: VolumeType;
  readonly zones: readonly string[];

  constructor(readonly ctx: SimulatorContext) {
    this.zones = ctx.availabilityZones;
    this.defaultType = { id: ctx.newId(), name: '__DEFAULT__', description: 'Default Volume Type', extraSpecs: {} };
    this.types.set(this.defaultType.id, this.defaultType);
  }

  usage(projectId: string): { volumes: number; gigabytes: number } {
    let count = 0;
    let gigabytes = 0;
    for (const v of this.volumes.values()) {
      if (v.projectId !== projectId) continue;
      count += 1;
      gigabytes += v.size;
    }
    return { volumes: count, gigabytes };
  }
  limit(projectId: string, resource: string): number {
    return this.ctx.quota(projectId, resource, quotaDefaults[resource] ?? Infinity);
  }

  /** Cinder's reservation check; the messages are those of VolumeSizeExceedsAvailableQuota and VolumeLimitExceeded. */
  private checkQuota(projectId: string, size: number): void {
    const used = this.usage(projectId);
    const perVolume = this.limit(projectId, 'per_volume_gigabytes');
    if (size > perVolume) {
      throw new SimulatorError(413, `Volume size ${size}G exceeded the per volume gigabytes quota of ${perVolume}G.`, 'VolumeSizeExceedsLimit');
    }
    const gigabytes = this.limit(projectId, 'gigabytes');
    if (used.gigabytes + size > gigabytes) {
      throw new SimulatorError(
        413,
        `Requested volume or snapshot exceeds allowed gigabytes quota. Requested ${size}G, quota is ${gigabytes}G and ${used.gigabytes}G has been consumed.`,
        'VolumeSizeExceedsAvailableQuota',
      );
    }
    const count = this.limit(projectId, 'volumes');
    if (used.volumes + 1 > count) {
      throw new SimulatorError(413, `Maximum number of volumes allowed (${count}) exceeded for quota 'volumes'.`, 'VolumeLimitExceeded');
    }
  }

  /** `volume` moves to `to` after the cloud's transition delay, if it is still in one of `when`. */
  transition(volume: Volume, to: VolumeStatus, when: VolumeStatus[]): void {
    this.ctx.clock.after(this.ctx.transitionDelayMs, () => {
      if (this.volumes.get(volume.id) !== volume || !when.includes(volume.status)) return;
      volume.status = to;
      volume.updatedAt = this.ctx.clock.now();
    });
  }

  createVolume(scope: { projectId: string; userId: string }, spec: VolumeCreate): Volume {
    const imageRef = spec.imageRef ?? spec.image_id ?? undefined;
    if (spec.snapshot_id || spec.source_volid || spec.backup_id)
      throw new SimulatorError(400, 'Invalid input received: Creating volumes from snapshots, volumes or backups is not simulated.');
    let imageMetadata: Record<string, string> | undefined;
    let minSize = 1;
    if (imageRef) {
      const image = this.ctx.peers.image?.getImage(imageRef, scope.projectId);
      if (!image) throw new SimulatorError(400, 'Invalid input received: Invalid image identifier or unable to access requested image.');
      if (image.status !== 'active') throw new SimulatorError(400, `Invalid input received: Image ${image.id} is not active.`);
      imageMetadata = {
        image_id: image.id,
        image_name: image.name ?? '',
        min_disk: String(image.min_disk),
        min_ram: String(image.min_ram),
        size: String(image.size ?? 0),
        ...(image.disk_format ? { disk_format: image.disk_format } : {}),
        ...(image.container_format ? { container_format: image.container_format } : {}),
      };
      minSize = Math.max(1, image.min_disk, Math.ceil((image.size ?? 0) / 1024 ** 3));
    }
    const size = spec.size ?? undefined;
    if (size === undefined) throw new SimulatorError(400, 'Invalid input received: "size" is a required property');
    if (!Number.isInteger(size) || size < 1)
      throw new SimulatorError(400, `Invalid input for field/attribute size. Value: ${size}. ${size} is less than the minimum of 1`);
    if (imageMetadata && size < minSize) {
      const imageGb = Math.ceil(Number(imageMetadata.size) / 1024 ** 3);
      throw new SimulatorError(
        400,
        imageGb > size
          ? `Invalid input received: Size of specified image ${imageGb}GB is larger than volume size ${size}GB.`
          : `Invalid input received: Volume size ${size}GB cannot be smaller than the image minDisk size ${imageMetadata.min_disk}GB.`,
      );
    }
    let type = this.defaultType;
    if (spec.volume_type) {
      const found = this.types.get(spec.volume_type) ?? [...this.types.values()].find((t) => t.name === spec.volume_type);
      if (!found) throw new SimulatorError(404, `Volume type with name ${spec.volume_type} could not be found.`, 'VolumeTypeNotFoundByName');
      type = found;
    }
    const zone = spec.availability_zone ?? this.zones[0];
    if (!this.zones.includes(zone)) throw new SimulatorError(400, `Invalid input received: Availability zone '${zone}' is invalid.`);
    this.checkQuota(scope.projectId, size);
    const now = this.ctx.clock.now();
    const volume: Volume = {
      id: this.ctx.newId(),
      name: spec.name ?? spec.display_name ?? null,
      description: spec.description ?? spec.display_description ?? null,
      projectId: scope.projectId,
      userId: scope.userId,
      status: 'creating',
      size,
      availabilityZone: zone,
      volumeTypeId: type.id,
      imageMetadata,
      metadata: spec.metadata ?? {},
      attachments: [],
      multiattach: spec.multiattach ?? false,
      createdAt: now,
      updatedAt: now,
    };
    this.volumes.set(volume.id, volume);
    this.transition(volume, 'available', ['creating']);
    return volume;
  }

  deleteVolume(volume: Volume): void {
    const deletable = ['available', 'error', 'error_restoring', 'error_extending', 'error_managing'].includes(volume.status) && volume.attachments.length === 0;
    if (!deletable) throw new SimulatorError(400, IN_USE_DELETE_MESSAGE, 'InvalidVolume');
    volume.status = 'deleting';
    volume.updatedAt = this.ctx.clock.now();
    this.removeLater(volume);
  }

  private removeLater(volume: Volume): void {
    this.ctx.clock.after(this.ctx.transitionDelayMs, () => {
      if (this.volumes.get(volume.id) === volume) this.volumes.delete(volume.id);
    });
  }

  /**
   * After a restart from a state file: a volume saved in a transitional status ends it one delay
   * on, as it would have (creating and detaching `available`, reserved and attaching `in-use`,
   * deleting gone).
   */
  resume(): void {
    for (const volume of this.volumes.values()) {
      if (volume.status === 'deleting') this.removeLater(volume);
      const settled = settles[volume.status];
      if (settled) this.transition(volume, settled, [volume.status]);
    }
  }
}
