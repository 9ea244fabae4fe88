import { afterEach, describe, expect, it } from 'vitest';
import { readInventorySnapshot } from '../../src/inventory/index.js';
import { cacheInventory } from '../../src/inventory/snapshot.js';
import { TooOldRevisionError, type JsonObject, type Storage, type Watch, type WatchRequest } from '../../src/storage/interface.js';
import { SqliteStorage } from '../../src/storage/sqlite.js';
import { cluster, machine, server } from '../../harness/inventory-objects.js';

const opened: SqliteStorage[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

const prefixes = {
  OpenStackCluster: 'openstackclusters',
  OpenStackMachine: 'openstackmachines',
  OpenStackServer: 'openstackservers',
} as Record<string, string>;

async function store(storage: Storage, object: JsonObject): Promise<void> {
  const meta = object.metadata as { namespace: string; name: string };
  await storage.create(`/registry/infrastructure.cluster.x-k8s.io/${prefixes[object.kind as string]}/${meta.namespace}/${meta.name}`, object);
}

/** A storage holding cluster c1 with `hosts` workers in team-a, and one cluster in team-b. */
async function populated(hosts: number): Promise<SqliteStorage> {
  const storage = SqliteStorage.open(':memory:');
  opened.push(storage);
  await store(storage, cluster());
  await store(
    storage,
    cluster((c) => (c.metadata.namespace = 'team-b')),
  );
  for (let i = 0; i < hosts; i++) {
    await store(storage, machine(`c1-md-${i}`));
    await store(storage, server(`c1-md-${i}`));
  }
  return storage;
}

/** Counts the calls that read objects, and keeps the requests of the watches still running. */
function counting(storage: Storage): { storage: Storage; reads: () => number; watches: Map<WatchRequest, Watch> } {
  let reads = 0;
  const watches = new Map<WatchRequest, Watch>();
  const counted = new Proxy(storage, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property === 'watch') {
        return (request: WatchRequest) => {
          const running = target.watch(request);
          const watch = {
            stop: () => {
              watches.delete(request);
              running.stop();
            },
            progress: () => running.progress(),
          };
          watches.set(request, watch);
          return watch;
        };
      }
      if (property === 'list' || property === 'get') {
        return (...args: unknown[]) => {
          reads++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { storage: counted, reads: () => reads, watches };
}

const machineKey = (name: string) => `/registry/infrastructure.cluster.x-k8s.io/openstackmachines/team-a/${name}`;

async function setInstanceState(storage: Storage, name: string, instanceState: string): Promise<void> {
  const entry = (await storage.get(machineKey(name)))!;
  await storage.update(machineKey(name), { ...entry.value, status: { instanceState } }, entry.modRevision);
}

describe('readInventorySnapshot', () => {
  it('reads each input kind once, whatever the number of hosts', async () => {
    for (const hosts of [2, 400]) {
      const { storage, reads } = counting(await populated(hosts));
      const snapshot = await readInventorySnapshot(storage, { namespace: 'team-a' });
      expect(snapshot.machines).toHaveLength(hosts);
      expect(snapshot.servers).toHaveLength(hosts);
      expect(reads()).toBe(3);
    }
  });

  it('reads one revision, in one namespace or all', async () => {
    const storage = await populated(2);
    const teamA = await readInventorySnapshot(storage, { namespace: 'team-a' });
    expect(teamA.revision).toBe(await storage.currentRevision());
    expect(teamA.clusters.map((c) => (c.metadata as JsonObject).namespace)).toEqual(['team-a']);
    expect((teamA.machines[0].metadata as JsonObject).resourceVersion as string).toMatch(/^\d+$/);
    const all = await readInventorySnapshot(storage, {});
    expect(all.clusters.map((c) => (c.metadata as JsonObject).namespace)).toEqual(['team-a', 'team-b']);
  });

  it('reads nothing while the revision stands still, and keeps unchanged objects across revisions', async () => {
    const { storage, reads } = counting(await populated(3));
    const first = await readInventorySnapshot(storage, { namespace: 'team-a' });
    expect(await readInventorySnapshot(storage, { namespace: 'team-a' })).toBe(first);
    expect(reads()).toBe(3);

    const key = '/registry/infrastructure.cluster.x-k8s.io/openstackmachines/team-a/c1-md-1';
    const entry = (await storage.get(key))!;
    await storage.update(key, { ...entry.value, status: { instanceState: 'SHUTOFF' } }, entry.modRevision);
    const second = await readInventorySnapshot(storage, { namespace: 'team-a' });
    expect(reads()).toBe(3 + 1 + 3);
    expect(second.revision).toBe(first.revision + 1);
    expect(second.machines[0]).toBe(first.machines[0]);
    expect(second.machines[1]).not.toBe(first.machines[1]);
    expect((second.machines[1].status as JsonObject).instanceState).toBe('SHUTOFF');
    expect(second.servers).toEqual(first.servers);
    second.servers.forEach((server, i) => {
      expect(server).toBe(first.servers[i]);
    });
    // Another namespace selection is read on its own.
    expect((await readInventorySnapshot(storage, {})).clusters).toHaveLength(2);
  });

  it('refuses a malformed namespace', async () => {
    const storage = await populated(0);
    await expect(readInventorySnapshot(storage, { namespace: 'Team A' })).rejects.toThrow(
      'invalid inventory selection: namespace: must be a namespace name (a lowercase RFC 1123 label)',
    );
  });
});

describe('readInventorySnapshot with a cached inventory', () => {
  it('lists once, then follows writes without listing, at the current revision', async () => {
    const sqlite = await populated(3);
    const { storage, reads } = counting(sqlite);
    const release = cacheInventory(storage);
    try {
      const first = await readInventorySnapshot(storage, { namespace: 'team-a' });
      expect(reads()).toBe(3);
      expect(first.machines).toHaveLength(3);

      await setInstanceState(sqlite, 'c1-md-1', 'SHUTOFF');
      await sqlite.delete(machineKey('c1-md-2'));
      await sqlite.create('/registry/bench.capo.dev/ticks/tick', { tick: 1 });
      const second = await readInventorySnapshot(storage, { namespace: 'team-a' });
      expect(reads()).toBe(3);
      expect(second.revision).toBe(await sqlite.currentRevision());
      expect(second.machines.map((m) => (m.metadata as JsonObject).name)).toEqual(['c1-md-0', 'c1-md-1']);
      expect((second.machines[1].status as JsonObject).instanceState).toBe('SHUTOFF');
      expect(second.machines[0]).toBe(first.machines[0]);
      expect(second.servers).toEqual(first.servers);
      expect(await readInventorySnapshot(storage, { namespace: 'team-a' })).toBe(second);

      const all = await readInventorySnapshot(storage, {});
      expect(all.revision).toBe(second.revision);
      expect(all.clusters.map((c) => (c.metadata as JsonObject).namespace)).toEqual(['team-a', 'team-b']);
      expect(reads()).toBe(3);
    } finally {
      release();
    }
  });

  it('lists again when its watch ends, and stops watching once released by every holder', async () => {
    const sqlite = await populated(2);
    const { storage, reads, watches } = counting(sqlite);
    const release = cacheInventory(storage);
    const releaseAgain = cacheInventory(storage);
    await readInventorySnapshot(storage, {});
    expect(watches.size).toBe(1);

    // What an etcd watch does when compaction overtakes it; nothing follows on that watch.
    const [[ended, watch]] = watches;
    watch!.stop();
    await setInstanceState(sqlite, 'c1-md-0', 'ERROR');
    ended!.onError!(new TooOldRevisionError(ended!.afterRevision, await sqlite.currentRevision()));
    const after = await readInventorySnapshot(storage, { namespace: 'team-a' });
    expect(reads()).toBe(3 + 3);
    expect((after.machines[0].status as JsonObject).instanceState).toBe('ERROR');
    expect(watches.size).toBe(1);

    release();
    expect(watches.size).toBe(1);
    releaseAgain();
    expect(watches.size).toBe(0);
    // Without a cache, reads list storage again.
    await setInstanceState(sqlite, 'c1-md-0', 'ACTIVE');
    expect((await readInventorySnapshot(storage, { namespace: 'team-a' })).machines[0].status).toEqual({ instanceState: 'ACTIVE' });
    expect(reads()).toBe(3 + 3 + 3);
  });
});
