/** Octavia's load balancers and their children as a state file keeps them, validated when read back; the tables rebuild their indexes. */
import { z } from 'zod';
import { epochMs, parseSnapshot } from '../snapshots.js';
import type { Kind, OctaviaStore, Resource } from './model.js';

const kind = z.enum(['loadbalancer', 'listener', 'pool', 'member', 'healthmonitor']) satisfies z.ZodType<Kind>;

const resource = z.object({
  kind,
  id: z.string(),
  projectId: z.string(),
  lbId: z.string(),
  poolId: z.string().optional(),
  attrs: z.record(z.string(), z.unknown()),
  provisioningStatus: z.string(),
  operatingStatus: z.string(),
  createdAt: epochMs,
  updatedAt: epochMs.nullable(),
  vipOwned: z.boolean().optional(),
  amphoraId: z.string().optional(),
}) satisfies z.ZodType<Resource>;

const octaviaSnapshotSchema = z.record(kind, z.array(resource));

type OctaviaSnapshot = z.infer<typeof octaviaSnapshotSchema>;

const kinds = kind.options;

export function snapshotStore(store: OctaviaStore): OctaviaSnapshot {
  return Object.fromEntries(kinds.map((k) => [k, [...store[k].values()]])) as OctaviaSnapshot;
}

export function restoreStore(store: OctaviaStore, snapshot: unknown): void {
  const data = parseSnapshot('octavia', octaviaSnapshotSchema, snapshot);
  for (const k of kinds) {
    const wrong = data[k].find((r) => r.kind !== k);
    if (wrong) throw new Error(`octavia ${k}: ${wrong.id} is a ${wrong.kind}`);
    store[k].refill(data[k]);
  }
}
