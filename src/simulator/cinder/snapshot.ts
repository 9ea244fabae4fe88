/** Cinder's volumes and volume types as a state file keeps them, validated when read back. */
import { z } from 'zod';
import { epochMs, parseSnapshot, refill, stringRecord } from '../snapshots.js';
import type { CinderStore, Volume, VolumeType } from './model.js';

const volumeType = z.object({ id: z.string(), name: z.string(), description: z.string().nullable(), extraSpecs: stringRecord }) satisfies z.ZodType<VolumeType>;

const volume = z.object({
  id: z.string(),
  name: z.string().nullable(),
  description: z.string().nullable(),
  projectId: z.string(),
  userId: z.string(),
  status: z.enum(['creating', 'available', 'reserved', 'attaching', 'in-use', 'detaching', 'deleting', 'error', 'error_deleting', 'extending']),
  size: z.number().int().positive(),
  availabilityZone: z.string(),
  volumeTypeId: z.string(),
  imageMetadata: stringRecord.optional(),
  metadata: stringRecord,
  attachments: z.array(z.object({ id: z.string(), serverId: z.string(), device: z.string().nullable(), hostName: z.string().nullable(), attachedAt: epochMs })),
  multiattach: z.boolean(),
  createdAt: epochMs,
  updatedAt: epochMs,
}) satisfies z.ZodType<Volume>;

const cinderSnapshotSchema = z.object({ volumes: z.array(volume), types: z.array(volumeType), defaultTypeId: z.string() });

type CinderSnapshot = z.infer<typeof cinderSnapshotSchema>;

export function snapshotStore(store: CinderStore): CinderSnapshot {
  return { volumes: [...store.volumes.values()], types: [...store.types.values()], defaultTypeId: store.defaultType.id };
}

/** Replaces the seeded default type (and its random id) and everything else with a snapshot's. */
export function restoreStore(store: CinderStore, snapshot: unknown): void {
  const data = parseSnapshot('cinder', cinderSnapshotSchema, snapshot);
  const defaultType = data.types.find((t) => t.id === data.defaultTypeId);
  if (!defaultType) throw new Error(`cinder defaultTypeId: no volume type ${data.defaultTypeId}`);
  refill(store.types, data.types);
  refill(store.volumes, data.volumes);
  store.defaultType = defaultType;
}
