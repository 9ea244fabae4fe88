import { afterEach, describe, expect, it } from 'vitest';
import { readInventorySnapshot } from '../../src/inventory/index.js';
import type { JsonObject, Storage } from '../../src/storage/interface.js';
import { SqliteStorage } from '../../src/storage/sqlite.js';
import { cluster, machine, server } from './fixtures.js';

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
  await store(storage, cluster((c) => (c.metadata.namespace = 'team-b')));
  for (let i = 0; i < hosts; i++) {
    await store(storage, machine(`c1-md-${i}`));
    await store(storage, server(`c1-md-${i}`));
  }
  return storage;
}

/** Counts the calls that read objects. */
function counting(storage: Storage): { storage: Storage; reads: () => number } {
  let reads = 0;
  const counted = new Proxy(storage, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property === 'list' || property === 'get') {
        return (...args: unknown[]) => {
          reads++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { storage: counted, reads: () => reads };
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
    expect(((teamA.machines[0].metadata as JsonObject).resourceVersion as string)).toMatch(/^\d+$/);
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
    second.servers.forEach((server, i) => expect(server).toBe(first.servers[i]));
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
