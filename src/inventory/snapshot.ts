/**
 * Reading an InventorySnapshot from storage, and the link between the
 * computed kinds' generic inputs and the inventory's snapshot.
 */
import { z } from 'zod';
import type { JsonObject, Storage } from '../storage/interface.js';
import type { ComputedInputs, KindDefinition } from '../apiserver/registry/kind.js';
import { readInputs } from '../apiserver/store/computed-storage.js';
import { openStackClusterKind, openStackMachineKind, openStackServerKind } from '../api/infrastructure/kinds.js';
import { InventoryCache } from './inventory-cache.js';
import type { InventorySnapshot } from './model.js';

/** The kinds an inventory is computed from, in the order of InventorySnapshot's lists. */
export const inventoryKinds: KindDefinition[] = [openStackClusterKind, openStackMachineKind, openStackServerKind];

const selection = z.object({
  namespace: z
    .string()
    .max(63)
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a namespace name (a lowercase RFC 1123 label)')
    .optional(),
});

/**
 * The inventory's input objects at the storage's current revision or later.
 * While a cache runs for the storage (cacheInventory), one revision read and
 * no list. Otherwise a constant number of storage reads (one paged list per
 * kind), whatever the number of hosts; none while the storage revision has
 * not moved since the last read of the same namespace. Objects unchanged
 * since that read are the same objects as then, so what was computed from
 * them is reused. Snapshots are shared between callers: treat them as read-only.
 */
export async function readInventorySnapshot(storage: Storage, request: { namespace?: string }): Promise<InventorySnapshot> {
  const parsed = selection.safeParse(request);
  if (!parsed.success) throw new Error(`invalid inventory selection: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const { namespace } = parsed.data;
  const cache = caches.get(storage);
  if (cache) return cache.cache.snapshot(namespace);
  const recent = recentSnapshots(storage);
  const previous = recent.get(namespace ?? '');
  const revision = await storage.currentRevision();
  if (previous?.revision === revision) return previous;
  const read = snapshotOf(await readInputs(storage, inventoryKinds, namespace, revision));
  const snapshot = previous ? keepUnchanged(previous, read) : read;
  recent.set(namespace ?? '', snapshot);
  return snapshot;
}

/**
 * The caches running per storage, shared by everyone who asked for one, so
 * every reader of that storage (GraphQL, admin API) gets them without being
 * handed the cache; the last holder's release stops its watch.
 */
const caches = new WeakMap<Storage, { cache: InventoryCache; holders: number }>();

/**
 * Keeps the inventory of `storage` in memory from now until the returned
 * release is called: readInventorySnapshot then reads no list at all.
 */
export function cacheInventory(storage: Storage): () => void {
  const running = caches.get(storage) ?? { cache: new InventoryCache(storage, inventoryKinds), holders: 0 };
  caches.set(storage, running);
  running.holders++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--running.holders > 0) return;
    caches.delete(storage);
    running.cache.close();
  };
}

/** The last snapshot read from each storage, per namespace ('' for all). */
const lastReads = new WeakMap<Storage, Map<string, InventorySnapshot>>();

function recentSnapshots(storage: Storage): Map<string, InventorySnapshot> {
  let recent = lastReads.get(storage);
  if (!recent) {
    recent = new Map();
    lastReads.set(storage, recent);
  }
  return recent;
}

/** In one storage, an object's kind, namespace, name and resourceVersion identify its content. */
function keepUnchanged(previous: InventorySnapshot, read: InventorySnapshot): InventorySnapshot {
  const identity = (object: JsonObject) => {
    const meta = object.metadata as { namespace?: string; name?: string; resourceVersion?: string } | undefined;
    return `${String(object.kind)}/${meta?.namespace}/${meta?.name}/${meta?.resourceVersion}`;
  };
  const known = new Map([...previous.clusters, ...previous.machines, ...previous.servers].map((object) => [identity(object), object]));
  const reuse = (objects: JsonObject[]) => objects.map((object) => known.get(identity(object)) ?? object);
  return { revision: read.revision, clusters: reuse(read.clusters), machines: reuse(read.machines), servers: reuse(read.servers) };
}

const snapshots = new WeakMap<ComputedInputs, InventorySnapshot>();

/** The snapshot view of computed-kind inputs read for inventoryKinds; one per inputs object, so its index is built once. */
export function snapshotOf(inputs: ComputedInputs): InventorySnapshot {
  let snapshot = snapshots.get(inputs);
  if (!snapshot) {
    const [clusters = [], machines = [], servers = []] = inputs.objects;
    snapshot = { revision: inputs.revision, clusters, machines, servers };
    snapshots.set(inputs, snapshot);
  }
  return snapshot;
}
