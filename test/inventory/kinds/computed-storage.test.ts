/**
 * The computed kinds on top of real storage: reads, and watches that turn
 * input events into computed events at the input's revision.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { clusterExtensionResource } from '../../../src/inventory/kinds/clusterextension.js';
import { openStackNodeResource } from '../../../src/inventory/kinds/openstacknode.js';
import { ComputedStorage } from '../../../src/apiserver/store/computed-storage.js';
import { StorageError, type JsonObject, type WatchEvent } from '../../../src/storage/interface.js';
import { SqliteStorage } from '../../../src/storage/sqlite.js';
import { WatchCache } from '../../../src/storage/watch-cache.js';
import { cluster, machine, server } from '../../../harness/inventory-objects.js';
import { pollUntil } from '../../../harness/poll.js';

const opened: SqliteStorage[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

const base = '/registry/infrastructure.cluster.x-k8s.io';
const keyOf = (object: JsonObject) => {
  const plural = { OpenStackCluster: 'openstackclusters', OpenStackMachine: 'openstackmachines', OpenStackServer: 'openstackservers' }[object.kind as string];
  const meta = object.metadata as { namespace: string; name: string };
  return `${base}/${plural}/${meta.namespace}/${meta.name}`;
};
const extensionsPrefix = '/registry/extensions.capo-apiserver.io/clusterextensions/';
const nodesPrefix = '/registry/extensions.capo-apiserver.io/openstacknodes/';

async function reconciledStorage(): Promise<SqliteStorage> {
  const storage = SqliteStorage.open(':memory:');
  opened.push(storage);
  for (const object of [cluster(), machine('c1-cp-0', { controlPlane: true }), machine('c1-md-a'), server('c1-cp-0'), server('c1-md-a')]) {
    await storage.create(keyOf(object), object);
  }
  return storage;
}

function until<T>(read: () => T | undefined, what: string): Promise<T> {
  return pollUntil(what, async () => read(), { intervalMs: 5 });
}

async function changeStatus(storage: SqliteStorage, object: JsonObject, change: (status: Record<string, any>) => void): Promise<number> {
  const entry = (await storage.get(keyOf(object)))!;
  const next = structuredClone(entry.value) as Record<string, any>;
  change(next.status);
  return (await storage.update(entry.key, next, entry.modRevision)).modRevision;
}

describe('ComputedStorage reads', () => {
  it('computes get and list, with selection and paging, at one revision', async () => {
    const storage = await reconciledStorage();
    const nodes = new ComputedStorage(openStackNodeResource, storage);
    const revision = await storage.currentRevision();

    const entry = await nodes.get(`${nodesPrefix}team-a/c1-md-a`);
    expect(entry?.key).toBe(`${nodesPrefix}team-a/c1-md-a`);
    expect(entry?.modRevision).toBe(5);
    expect(await nodes.get(`${nodesPrefix}team-a/missing`)).toBeUndefined();

    const first = await nodes.list(`${nodesPrefix}team-a/`, { limit: 1 });
    expect(first.entries.map((e) => e.key)).toEqual([`${nodesPrefix}team-a/c1-cp-0`]);
    expect(first).toMatchObject({ revision, more: true });
    const rest = await nodes.list(`${nodesPrefix}team-a/`, { revision: first.revision, startAfter: first.entries[0].key });
    expect(rest.entries.map((e) => e.key)).toEqual([`${nodesPrefix}team-a/c1-md-a`]);
    expect(rest.more).toBe(false);

    const workers = await nodes.list(nodesPrefix, { filter: (value) => (value.spec as JsonObject).role === 'worker' });
    expect(workers.entries.map((e) => e.key)).toEqual([`${nodesPrefix}team-a/c1-md-a`]);
    expect((await nodes.list(`${nodesPrefix}team-b/`)).entries).toEqual([]);
  });

  it("waits for a revision on its inputs' watch cache, and leaves a store without one to be asked", async () => {
    const storage = await reconciledStorage();
    expect(await new ComputedStorage(openStackNodeResource, storage).reachCachedRevision(1, 0)).toBe(false);
    const cache = new WatchCache(storage);
    try {
      const nodes = new ComputedStorage(openStackNodeResource, cache);
      const next = (await cache.list('')).revision + 1;
      const reaching = nodes.reachCachedRevision(next, 5_000);
      expect(await changeStatus(storage, machine('c1-md-a'), (status) => (status.ready = false))).toBe(next);
      expect(await reaching).toBe(true);
    } finally {
      await cache.close();
    }
  });

  it('refuses writes and keys of other kinds', async () => {
    const storage = await reconciledStorage();
    const extensions = new ComputedStorage(clusterExtensionResource, storage);
    await expect(extensions.create()).rejects.toThrow(new StorageError('ClusterExtension objects are computed from other objects and cannot be written'));
    await expect(extensions.get('/registry/other/x')).rejects.toThrow(StorageError);
  });
});

describe('ComputedStorage watches', () => {
  it('turns input changes into events of the affected objects, at the input revision', async () => {
    const storage = await reconciledStorage();
    const extensions = new ComputedStorage(clusterExtensionResource, storage);
    const nodes = new ComputedStorage(openStackNodeResource, storage);
    const extensionEvents: WatchEvent[] = [];
    const nodeEvents: WatchEvent[] = [];
    const start = await storage.currentRevision();
    const watches = [
      extensions.watch({ prefix: `${extensionsPrefix}team-a/`, afterRevision: start, onEvent: (e) => extensionEvents.push(e) }),
      nodes.watch({ prefix: nodesPrefix, afterRevision: start, onEvent: (e) => nodeEvents.push(e) }),
    ];

    const revision = await changeStatus(storage, machine('c1-md-a'), (status) => (status.addresses = [{ type: 'InternalIP', address: '10.6.0.77' }]));
    const modified = await until(() => extensionEvents[0], 'the ClusterExtension event');
    expect(modified).toMatchObject({ type: 'MODIFIED', key: `${extensionsPrefix}team-a/c1`, revision });
    expect((modified.value.metadata as JsonObject).resourceVersion).toBe(String(revision));
    expect((modified.prevValue!.metadata as JsonObject).resourceVersion).toBe('5');
    const nodeEvent = await until(() => nodeEvents[0], 'the OpenStackNode event');
    expect(nodeEvent).toMatchObject({ type: 'MODIFIED', key: `${nodesPrefix}team-a/c1-md-a`, revision });
    expect((nodeEvent.value.spec as any).vars.ip).toBe('10.6.0.77');

    // Other kinds under the same key prefix (templates) are not inputs.
    await storage.create(`${base}/openstackmachinetemplates/team-a/t`, { metadata: { name: 't', namespace: 'team-a' } });
    // A cluster change reaches every node of the cluster.
    const clusterRevision = await changeStatus(storage, cluster(), (status) => delete status.bastion);
    await until(() => (nodeEvents.length === 3 ? nodeEvents : undefined), 'node events for the cluster change');
    expect(nodeEvents.slice(1).map((e) => [e.type, e.key, e.revision])).toEqual([
      ['MODIFIED', `${nodesPrefix}team-a/c1-cp-0`, clusterRevision],
      ['MODIFIED', `${nodesPrefix}team-a/c1-md-a`, clusterRevision],
    ]);

    const removed = await storage.delete(keyOf(cluster()));
    const deleted = await until(() => extensionEvents.find((e) => e.type === 'DELETED'), 'the DELETED event');
    expect(deleted).toMatchObject({ key: `${extensionsPrefix}team-a/c1`, revision: removed.modRevision });
    expect((deleted.value.metadata as JsonObject).resourceVersion).toBe(String(removed.modRevision));

    await storage.create(keyOf(cluster()), cluster());
    const added = await until(() => extensionEvents.find((e) => e.type === 'ADDED'), 'the ADDED event');
    expect(added.key).toBe(`${extensionsPrefix}team-a/c1`);
    expect(extensionEvents.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'DELETED', 'ADDED']);
    watches.forEach((w) => {
      w.stop();
    });
  });

  it('resumes from a past revision with the inputs as they were then', async () => {
    const storage = await reconciledStorage();
    const nodes = new ComputedStorage(openStackNodeResource, storage);
    const before = await storage.currentRevision();
    const first = await changeStatus(storage, server('c1-md-a'), (status) => (status.instanceState = 'BUILD'));
    const second = await changeStatus(storage, server('c1-md-a'), (status) => (status.instanceState = 'ERROR'));

    const events: WatchEvent[] = [];
    const watch = nodes.watch({ prefix: nodesPrefix, afterRevision: before, onEvent: (e) => events.push(e) });
    await until(() => (events.length === 2 ? events : undefined), 'the replayed events');
    expect(events.map((e) => [e.revision, (e.value.status as JsonObject).phase, (e.prevValue!.status as JsonObject).phase])).toEqual([
      [first, 'Provisioning', 'Running'],
      [second, 'Failed', 'Provisioning'],
    ]);
    watch.stop();
  });

  it('ends a watch whose start revision is compacted away', async () => {
    const storage = SqliteStorage.open(':memory:', { historyRetention: { maxEvents: 1, maxAgeMs: 0 } });
    opened.push(storage);
    for (const object of [cluster(), machine('c1-md-a'), machine('c1-md-b')]) await storage.create(keyOf(object), object);
    await storage.compact();
    const nodes = new ComputedStorage(openStackNodeResource, storage);
    expect(() => nodes.watch({ prefix: nodesPrefix, afterRevision: 1, onEvent: () => undefined })).toThrow(/too old resource version/);
  });
});
