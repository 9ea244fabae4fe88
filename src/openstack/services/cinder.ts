/**
 * Cinder (block-storage service), API v3. The endpoint already ends in
 * `/v3/{project_id}`, so paths start below it (`/volumes`).
 *
 * Every call pins microversion 3.60 (Ussuri), so response shapes never vary
 * between calls or clouds; it is well inside what any supported cloud
 * serves (ministack's Zed goes to 3.70).
 */
import { z } from 'zod';
import type { ServiceTransport } from '../transport.js';
import { anyBody, linkedList, recordOf, segment, ServiceCalls, type Query } from './common.js';

export const cinderMicroversion = '3.60';

const volumeSchema = z.looseObject({
  id: z.string(),
  name: z.string().nullable(),
  status: z.string(),
  size: z.number(),
  availability_zone: z.string().nullish(),
  volume_type: z.string().nullish(),
  /** "true" or "false", as a string. */
  bootable: z.string().optional(),
  multiattach: z.boolean().optional(),
  metadata: z.record(z.string(), z.string()),
  attachments: z.array(z.looseObject({ server_id: z.string(), attachment_id: z.string().optional(), device: z.string().nullish() })),
  description: z.string().nullish(),
  created_at: z.string().optional(),
});
export type Volume = z.infer<typeof volumeSchema>;

const volumeTypeSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string().nullish(),
  is_public: z.boolean().optional(),
});
export type VolumeType = z.infer<typeof volumeTypeSchema>;

const availabilityZoneSchema = z.looseObject({ zoneName: z.string(), zoneState: z.looseObject({ available: z.boolean() }) });
export type CinderAvailabilityZone = z.infer<typeof availabilityZoneSchema>;

const absoluteLimitsSchema = z.looseObject({
  maxTotalVolumes: z.number().optional(),
  maxTotalVolumeGigabytes: z.number().optional(),
  maxTotalSnapshots: z.number().optional(),
  totalVolumesUsed: z.number().optional(),
  totalGigabytesUsed: z.number().optional(),
  totalSnapshotsUsed: z.number().optional(),
});
/** Project quota and use; -1 means unlimited. */
export type CinderAbsoluteLimits = z.infer<typeof absoluteLimitsSchema>;

const quotaUsageSchema = z.looseObject({ limit: z.number(), in_use: z.number(), reserved: z.number().optional() });
/** Per resource (`volumes`, `gigabytes`, `volumes_<type>`, …); a limit of -1 means unlimited. */
export type CinderQuotaUsage = z.infer<typeof quotaUsageSchema>;

export interface VolumeFilters {
  name?: string;
  /** Volumes carrying all of these items. */
  metadata?: Readonly<Record<string, string>>;
  status?: string;
}

export interface CreateVolume {
  /** GiB. */
  size: number;
  name?: string;
  description?: string;
  volume_type?: string;
  availability_zone?: string;
  /** Creates the volume from this Glance image (a boot volume). */
  imageRef?: string;
  metadata?: Readonly<Record<string, string>>;
  multiattach?: boolean;
}

const volumeBody = z.object({ volume: volumeSchema });
const volumeList = linkedList('volumes', volumeSchema);
const volumeTypeList = linkedList('volume_types', volumeTypeSchema);
const availabilityZoneList = z.object({ availabilityZoneInfo: z.array(availabilityZoneSchema) });
const limitsBody = z.object({ limits: z.object({ absolute: absoluteLimitsSchema }) });
const quotaSetBody = z.object({ quota_set: recordOf(quotaUsageSchema) });

export class CinderClient {
  private readonly calls: ServiceCalls;

  constructor(transport: ServiceTransport) {
    this.calls = new ServiceCalls(transport, 'block-storage', cinderMicroversion);
  }

  /** Answers at once in `creating`; poll `getVolume` for `available` (or `error`). */
  async createVolume(volume: CreateVolume): Promise<Volume> {
    return (await this.calls.post('/volumes', { volume }, volumeBody)).volume;
  }

  async getVolume(id: string): Promise<Volume> {
    return (await this.calls.get(`/volumes/${segment(id)}`, volumeBody)).volume;
  }

  /** The detailed list, so one call gives status, size and attachments (the plain list has only ids and names). */
  async listVolumes(filters: VolumeFilters = {}): Promise<Volume[]> {
    const query: Query = {};
    if (filters.name !== undefined) query.name = filters.name;
    if (filters.status !== undefined) query.status = filters.status;
    // Cinder reads the metadata filter as a dict literal, which JSON of string values is.
    if (filters.metadata !== undefined && Object.keys(filters.metadata).length > 0) query.metadata = JSON.stringify(filters.metadata);
    return this.calls.list('/volumes/detail', volumeList, { query });
  }

  /** Accepted (202) and asynchronous; refused with 400 while the volume is attached or in a transitional status. */
  /** Sets these metadata items, keeping the others. */
  async updateVolumeMetadata(id: string, metadata: Readonly<Record<string, string>>): Promise<void> {
    await this.calls.post(`/volumes/${segment(id)}/metadata`, { metadata }, anyBody);
  }

  async deleteVolume(id: string): Promise<void> {
    return this.calls.delete(`/volumes/${segment(id)}`);
  }

  async listVolumeTypes(): Promise<VolumeType[]> {
    return this.calls.list('/types', volumeTypeList);
  }

  async listAvailabilityZones(): Promise<CinderAvailabilityZone[]> {
    return (await this.calls.get('/os-availability-zone', availabilityZoneList)).availabilityZoneInfo;
  }

  /** Absolute limits and use of the token's project. */
  async getLimits(): Promise<CinderAbsoluteLimits> {
    return (await this.calls.get('/limits', limitsBody)).limits.absolute;
  }

  /** Limit, use and reservations per resource of `projectId`. */
  async getQuotas(projectId: string): Promise<Record<string, CinderQuotaUsage>> {
    return (await this.calls.get(`/os-quota-sets/${segment(projectId)}`, quotaSetBody, { query: { usage: true } })).quota_set;
  }
}
