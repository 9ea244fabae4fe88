/**
 * Glance (image service), API v2: what image resolution needs, and the
 * create, upload and delete of the images an ORC Image manages. Glance differs from the others in three ways: an image is never wrapped in
 * an envelope, the next page is a relative `next` link, and custom image
 * properties (`os_distro`, `os_type`, `hw_*`) sit at the top level of the image.
 */
import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { ServiceTransport } from '../transport.js';
import { pick, segment, ServiceCalls, type Page, type Query } from './common.js';

const imageSchema = z.looseObject({
  id: z.string(),
  name: z.string().nullable(),
  status: z.string(),
  visibility: z.string(),
  tags: z.array(z.string()),
  disk_format: z.string().nullish(),
  container_format: z.string().nullish(),
  size: z.number().nullish(),
  virtual_size: z.number().nullish(),
  protected: z.boolean().optional(),
  /** Glance's hash of the stored data (sha512 unless the operator chose another). */
  os_hash_algo: z.string().nullish(),
  os_hash_value: z.string().nullish(),
  min_disk: z.number().optional(),
  min_ram: z.number().optional(),
  owner: z.string().nullish(),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
  /** Custom properties CAPO reads (nodeInfo.operatingSystem comes from os_type). */
  os_type: z.string().optional(),
  os_distro: z.string().optional(),
  os_version: z.string().optional(),
});
export type Image = z.infer<typeof imageSchema>;

/** The create body: core fields plus custom properties (`os_distro`, `hw_disk_bus`, ...) at the top level, as strings. */
export interface CreateImage {
  name: string;
  disk_format: string;
  container_format: string;
  visibility?: string;
  protected?: boolean;
  tags?: readonly string[];
  min_disk?: number;
  min_ram?: number;
  [property: string]: string | number | boolean | readonly string[] | undefined;
}

export interface ImageFilters {
  /** Exact name. */
  name?: string;
  /** Images carrying all of these tags. */
  tag?: readonly string[];
  /** e.g. `active`; all statuses but deleted ones when omitted. */
  status?: string;
  /** Omitted: the images the project may use, without shares it has not accepted (`all` includes those). */
  visibility?: 'public' | 'private' | 'shared' | 'community' | 'all';
  owner?: string;
}

const imageList: z.ZodType<Page<Image>> = z
  .object({ images: z.array(imageSchema), next: z.string().optional() })
  .transform((body) => ({ items: body.images, next: body.next }));

export class GlanceClient {
  private readonly calls: ServiceCalls;

  constructor(transport: ServiceTransport) {
    this.calls = new ServiceCalls(transport, 'image');
  }

  /** Follows `next` until the last page; more than the shared page bound is an error, not a partial list. */
  async listImages(filters: ImageFilters = {}): Promise<Image[]> {
    const query: Query = pick(filters, ['name', 'status', 'visibility', 'owner']);
    // Glance takes one `tag` parameter per tag, all of which must match.
    if (filters.tag !== undefined && filters.tag.length > 0) query.tag = filters.tag;
    return this.calls.list('/v2/images', imageList, { query });
  }

  /** A queued image, with no data yet. */
  async createImage(image: CreateImage): Promise<Image> {
    return this.calls.post('/v2/images', image, imageSchema);
  }

  /** The image's data, streamed; Glance moves it from queued to active (or back to queued if the upload breaks off). */
  async uploadImageData(id: string, data: Readable): Promise<void> {
    await this.calls.upload(`/v2/images/${segment(id)}/file`, data);
  }

  /** Changes core fields or properties: `replace` of a whole value each, in Glance's JSON patch. */
  async updateImage(id: string, changes: readonly { op: 'replace' | 'add' | 'remove'; path: string; value?: unknown }[]): Promise<Image> {
    return this.calls.patch(`/v2/images/${segment(id)}`, changes, imageSchema, 'application/openstack-images-v2.1-json-patch');
  }

  async deleteImage(id: string): Promise<void> {
    await this.calls.delete(`/v2/images/${segment(id)}`);
  }

  async getImage(id: string): Promise<Image> {
    return this.calls.get(`/v2/images/${segment(id)}`, imageSchema);
  }

  /**
   * The images CAPO's image filter `{name, tags}` selects: exact name (if
   * given) and all the tags. Choosing among several matches is the caller's.
   */
  async findImages(filter: { name?: string; tags?: readonly string[] }): Promise<Image[]> {
    return this.listImages({ ...(filter.name === undefined ? {} : { name: filter.name }), ...(filter.tags === undefined ? {} : { tag: filter.tags }) });
  }
}
