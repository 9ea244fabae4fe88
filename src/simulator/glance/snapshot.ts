/**
 * Glance's images as a state file keeps them, validated when read back. An image's data is not in
 * the snapshot but beside it (BlobFiles), named by the key the snapshot records.
 */
import { z } from 'zod';
import type { BlobSink, BlobSource } from '../framework.js';
import { epochMs, parseSnapshot, refill } from '../snapshots.js';
import type { GlanceStore, Image } from './model.js';

const memberSchema = z.object({ status: z.enum(['pending', 'accepted', 'rejected']), createdAt: epochMs, updatedAt: epochMs });

const imageSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  status: z.enum(['queued', 'saving', 'active', 'deactivated', 'killed', 'deleted', 'pending_delete', 'importing', 'uploading']),
  visibility: z.enum(['public', 'private', 'shared', 'community']),
  protected: z.boolean(),
  os_hidden: z.boolean(),
  owner: z.string().nullable(),
  size: z.number().int().nonnegative().nullable(),
  checksum: z.string().nullable(),
  os_hash_value: z.string().nullable(),
  min_ram: z.number().int(),
  min_disk: z.number().int(),
  disk_format: z.string().nullable(),
  container_format: z.string().nullable(),
  tags: z.array(z.string()),
  properties: z.array(z.tuple([z.string(), z.string()])),
  members: z.array(z.tuple([z.string(), memberSchema])),
  /** The key of the image's data beside the state file; null without data. */
  data: z.string().nullable(),
  createdAt: epochMs,
  updatedAt: epochMs,
});

const glanceSnapshotSchema = z.object({ images: z.array(imageSchema) });

type ImageSnapshot = z.infer<typeof imageSchema>;

function imageSnapshot(image: Image, blobs: BlobSink): ImageSnapshot {
  return {
    ...image,
    tags: [...image.tags],
    properties: [...image.properties],
    members: [...image.members],
    data: image.data ? blobs.keep(image.data) : null,
  };
}

/**
 * An image as it was saved, its data read back. One caught in an upload (saving, uploading,
 * importing) ends as the upload would have: active with its data, queued again without; one
 * being deleted is gone (undefined).
 */
function restoredImage(saved: ImageSnapshot, blobs: BlobSource): Image | undefined {
  if (saved.status === 'deleted' || saved.status === 'pending_delete') return undefined;
  const { data: key, ...rest } = saved;
  const data = key === null ? undefined : blobs.existing(key);
  const uploading = saved.status === 'saving' || saved.status === 'uploading' || saved.status === 'importing';
  return {
    ...rest,
    status: uploading ? (data ? 'active' : 'queued') : saved.status,
    tags: new Set(saved.tags),
    properties: new Map(saved.properties),
    members: new Map(saved.members),
    ...(data ? { data } : {}),
  };
}

export function snapshotStore(store: GlanceStore, blobs: BlobSink) {
  return { images: [...store.images.values()].map((image) => imageSnapshot(image, blobs)) };
}

/** Replaces the seeded image (and its random data) with a snapshot's images. */
export function restoreStore(store: GlanceStore, snapshot: unknown, blobs: BlobSource): void {
  const images = parseSnapshot('glance', glanceSnapshotSchema, snapshot).images.flatMap((saved) => restoredImage(saved, blobs) ?? []);
  refill(store.images, images);
}
