/**
 * The simulated Glance's state and rules: images (seeded with ministack's public ubuntu-22.04),
 * Glance's visibility rule, how an image is shown, and finding the image a request names.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Response } from 'express';
import type { SimulatorContext, TokenScope } from '../framework.js';
import { fail } from './errors.js';

export type Visibility = 'public' | 'private' | 'shared' | 'community';
export type MemberStatus = 'pending' | 'accepted' | 'rejected';

export interface Image {
  id: string;
  name: string | null;
  status: 'queued' | 'saving' | 'active' | 'deactivated' | 'killed' | 'deleted' | 'pending_delete' | 'importing' | 'uploading';
  visibility: Visibility;
  protected: boolean;
  os_hidden: boolean;
  owner: string | null;
  size: number | null;
  checksum: string | null;
  os_hash_value: string | null;
  min_ram: number;
  min_disk: number;
  disk_format: string | null;
  container_format: string | null;
  tags: Set<string>;
  properties: Map<string, string>;
  members: Map<string, { status: MemberStatus; createdAt: number; updatedAt: number }>;
  /** The key of the image's data in the cloud's BlobFiles. */
  data?: string;
  createdAt: number;
  updatedAt: number;
}

/** Glance's timestamps have no fraction. */
export const timestamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export const coreKeys = new Set([
  'id',
  'name',
  'status',
  'visibility',
  'protected',
  'os_hidden',
  'owner',
  'size',
  'virtual_size',
  'checksum',
  'os_hash_algo',
  'os_hash_value',
  'min_ram',
  'min_disk',
  'disk_format',
  'container_format',
  'tags',
  'created_at',
  'updated_at',
  'self',
  'file',
  'schema',
  'locations',
  'direct_url',
  'stores',
]);
export const readOnlyKeys = new Set([
  'id',
  'status',
  'owner',
  'size',
  'virtual_size',
  'checksum',
  'os_hash_algo',
  'os_hash_value',
  'created_at',
  'updated_at',
  'self',
  'file',
  'schema',
  'locations',
  'direct_url',
  'stores',
]);
export const diskFormats = ['ami', 'ari', 'aki', 'vhd', 'vhdx', 'vmdk', 'raw', 'qcow2', 'vdi', 'iso', 'ploop'];
export const containerFormats = ['ami', 'ari', 'aki', 'bare', 'ovf', 'ova', 'docker', 'compressed'];

export class GlanceStore {
  readonly images = new Map<string, Image>();

  constructor(readonly ctx: SimulatorContext) {
    const adminProject = ctx.projectIdByName('admin') ?? null;
    const seedData = randomBytes(1024 * 1024);
    const now = ctx.clock.now();
    const seedId = ctx.newId();
    this.images.set(seedId, {
      id: seedId,
      name: 'ubuntu-22.04',
      status: 'active',
      visibility: 'public',
      protected: false,
      os_hidden: false,
      owner: adminProject,
      size: seedData.length,
      checksum: createHash('md5').update(seedData).digest('hex'),
      os_hash_value: createHash('sha512').update(seedData).digest('hex'),
      min_ram: 0,
      min_disk: 0,
      disk_format: 'qcow2',
      container_format: 'bare',
      tags: new Set(),
      properties: new Map([
        ['os_distro', 'ubuntu'],
        ['os_version', '22.04'],
      ]),
      members: new Map(),
      data: ctx.blobs.put(seedData),
      createdAt: now,
      updatedAt: now,
    });
  }

  /** Deletes an image; its data goes once no other image holds the same content. */
  remove(image: Image): void {
    this.images.delete(image.id);
    const key = image.data;
    if (key !== undefined && ![...this.images.values()].some((other) => other.data === key)) this.ctx.blobs.release(key);
  }

  touch(image: Image): void {
    image.updatedAt = this.ctx.clock.now();
  }
}

export const isAdmin = (auth: TokenScope) => auth.roles.includes('admin');
export const memberStatus = (image: Image, projectId: string) => image.members.get(projectId)?.status;
/** Glance's visibility rule for a single image (GET by id). */
export const canSee = (image: Image, auth: TokenScope) =>
  isAdmin(auth) ||
  image.owner === auth.projectId ||
  image.visibility === 'public' ||
  image.visibility === 'community' ||
  (image.visibility === 'shared' && image.members.has(auth.projectId));

export const view = (image: Image) => {
  const body: Record<string, unknown> = {
    name: image.name,
    disk_format: image.disk_format,
    container_format: image.container_format,
    visibility: image.visibility,
    size: image.size,
    virtual_size: null,
    status: image.status,
    checksum: image.checksum,
    protected: image.protected,
    min_ram: image.min_ram,
    min_disk: image.min_disk,
    owner: image.owner,
    os_hidden: image.os_hidden,
    os_hash_algo: image.os_hash_value ? 'sha512' : null,
    os_hash_value: image.os_hash_value,
    id: image.id,
    created_at: timestamp(image.createdAt),
    updated_at: timestamp(image.updatedAt),
    tags: [...image.tags],
    self: `/v2/images/${image.id}`,
    file: `/v2/images/${image.id}/file`,
    schema: '/v2/schemas/image',
  };
  for (const [key, value] of image.properties) body[key] = value;
  if (image.data) body.stores = 'fs';
  return body;
};

export const auth = (res: Response) => res.locals.auth as TokenScope;
export const visibleImage = (store: GlanceStore, res: Response, id: string): Image | undefined => {
  const image = store.images.get(id);
  if (!image || !canSee(image, auth(res))) {
    fail(res, 404, `No image found with ID ${id}`);
    return undefined;
  }
  return image;
};
export const ownedImage = (store: GlanceStore, res: Response, id: string): Image | undefined => {
  const image = visibleImage(store, res, id);
  if (!image) return undefined;
  if (!isAdmin(auth(res)) && image.owner !== auth(res).projectId) {
    fail(res, 403, `You are not permitted to modify this image.`);
    return undefined;
  }
  return image;
};
