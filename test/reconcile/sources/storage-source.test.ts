import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KindDefinition } from '../../../src/apiserver/registry/kind.js';
import { groupVersionOf } from '../../../src/apiserver/registry/registry.js';
import { ResourceStore, type WriteOptions } from '../../../src/apiserver/store/resource-store.js';
import { MalformedObjectError, type SourceChange } from '../../../src/reconcile/sources/source.js';
import { StorageClusterApiSource } from '../../../src/reconcile/sources/storage-source.js';
import { Stores } from '../../../src/apiserver/store/stores.js';
import { TooOldRevisionError, type JsonObject, type Storage, type WatchRequest } from '../../../src/storage/interface.js';
import { SqliteStorage } from '../../../src/storage/sqlite.js';
import { eventually } from './eventually.js';
import { clusterKind, machineKind, secretKind } from '../../../src/api/embedded/kinds.js';

const sourceKinds = { secret: secretKind, cluster: clusterKind, machine: machineKind };
const writeOptions: WriteOptions = { dryRun: false, fieldManager: 'test', fieldValidation: 'Strict', user: { name: 'admin', groups: ['system:masters'] } };
const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

let storage: SqliteStorage;
let source: StorageClusterApiSource | undefined;

beforeEach(() => {
  storage = SqliteStorage.open(':memory:');
});

afterEach(async () => {
  await source?.close();
  source = undefined;
  await storage.close();
});

/** The stores of the three kinds over `over`, as the composition root builds them. */
const storesOver = (over: Storage, kinds: KindDefinition[] = Object.values(sourceKinds)) => new Stores(kinds, over);

function open(over: Storage = storage, errors: unknown[] = []): StorageClusterApiSource {
  source = new StorageClusterApiSource(storesOver(over), sourceKinds, { onError: (error) => errors.push(error), retry: { baseMs: 1, maxMs: 5 } });
  return source;
}

/** Writes through the API machinery, as kubectl against the embedded server would. */
class Objects {
  private readonly stores = new Map<KindDefinition, ResourceStore>();

  constructor(private readonly into: Storage) {}

  async create(definition: KindDefinition, name: string, body: JsonObject = {}, metadata: JsonObject = {}): Promise<JsonObject> {
    const version = definition.versions[0];
    const apiVersion = groupVersionOf(definition.group, version.name);
    const result = await this.store(definition).create(
      'default',
      { apiVersion, kind: definition.kind, metadata: { name, ...metadata }, ...body },
      version,
      writeOptions,
    );
    return result.object;
  }

  cluster(name: string, spec: JsonObject = { paused: false }, metadata: JsonObject = {}): Promise<JsonObject> {
    return this.create(clusterKind, name, { spec }, metadata);
  }

  machine(name: string, spec: JsonObject, metadata: JsonObject = {}): Promise<JsonObject> {
    const infrastructureRef = { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackMachine', name };
    return this.create(machineKind, name, { spec: { bootstrap: {}, infrastructureRef, ...spec } }, metadata);
  }

  async change(definition: KindDefinition, name: string, mutate: (object: JsonObject) => void): Promise<void> {
    await this.store(definition).patch(
      'default',
      name,
      (current) => {
        const copy = structuredClone(current!);
        mutate(copy);
        return copy;
      },
      definition.versions[0],
      undefined,
      writeOptions,
    );
  }

  async delete(definition: KindDefinition, name: string): Promise<void> {
    await this.store(definition).delete('default', name, definition.versions[0], { dryRun: false, user: writeOptions.user });
  }

  private store(definition: KindDefinition): ResourceStore {
    let store = this.stores.get(definition);
    if (!store) {
      store = new ResourceStore(definition, this.into);
      this.stores.set(definition, store);
    }
    return store;
  }
}

function record(target: StorageClusterApiSource): SourceChange[] {
  const changes: SourceChange[] = [];
  target.watch((change) => changes.push(change));
  return changes;
}

const change = (kind: SourceChange['kind'], name: string): SourceChange => ({ kind, namespace: 'default', name });

describe('StorageClusterApiSource reads', () => {
  it('reads Secrets, Clusters and Machines written through the ResourceStore', async () => {
    const objects = new Objects(storage);
    const secret = await objects.create(secretKind, 'identity', { type: 'Opaque', data: { 'clouds.yaml': base64('clouds: {}\n'), cacert: base64('PEM') } });
    const cluster = await objects.cluster(
      'c1',
      {
        infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackCluster', name: 'c1' },
        controlPlaneEndpoint: { host: '10.0.0.10', port: 6443 },
      },
      { labels: { team: 'a' } },
    );
    const machine = await objects.machine(
      'c1-cp-0',
      {
        clusterName: 'c1',
        bootstrap: { dataSecretName: 'c1-cp-0-bootstrap' },
        failureDomain: 'az1',
        version: 'v1.31.2',
      },
      { labels: { 'cluster.x-k8s.io/control-plane': '', 'cluster.x-k8s.io/cluster-name': 'c1' } },
    );
    await objects.machine('c1-worker-0', { clusterName: 'c1', bootstrap: { dataSecretName: '' } });

    const reader = open();
    expect(await reader.getSecret('default', 'identity')).toEqual({
      namespace: 'default',
      name: 'identity',
      resourceVersion: (secret.metadata as JsonObject).resourceVersion,
      type: 'Opaque',
      data: { 'clouds.yaml': Buffer.from('clouds: {}\n'), cacert: Buffer.from('PEM') },
    });
    expect(await reader.getCluster('default', 'c1')).toEqual({
      namespace: 'default',
      name: 'c1',
      uid: (cluster.metadata as JsonObject).uid,
      paused: false,
      deleting: false,
      labels: { team: 'a' },
      infrastructureRef: { kind: 'OpenStackCluster', name: 'c1' },
      controlPlaneEndpoint: { host: '10.0.0.10', port: 6443 },
    });
    expect(await reader.getMachine('default', 'c1-cp-0')).toEqual({
      namespace: 'default',
      name: 'c1-cp-0',
      uid: (machine.metadata as JsonObject).uid,
      clusterName: 'c1',
      labels: { 'cluster.x-k8s.io/control-plane': '', 'cluster.x-k8s.io/cluster-name': 'c1' },
      controlPlane: true,
      bootstrapDataSecretName: 'c1-cp-0-bootstrap',
      failureDomain: 'az1',
      version: 'v1.31.2',
      infrastructureRef: { kind: 'OpenStackMachine', name: 'c1-cp-0' },
    });
    expect(await reader.getMachine('default', 'c1-worker-0')).toMatchObject({ controlPlane: false, labels: {} });
    expect(await reader.getMachine('default', 'c1-worker-0')).not.toHaveProperty('bootstrapDataSecretName');
  });

  it('answers undefined for objects that do not exist, also in other namespaces', async () => {
    const objects = new Objects(storage);
    await objects.create(secretKind, 'identity', { data: {} });
    const reader = open();
    expect(await reader.getSecret('default', 'missing')).toBeUndefined();
    expect(await reader.getSecret('other', 'identity')).toBeUndefined();
    expect(await reader.getCluster('default', 'c1')).toBeUndefined();
    expect(await reader.getMachine('default', 'm1')).toBeUndefined();
  });

  it('sees a Cluster as paused by spec.paused or by the paused annotation, and ignores an unset endpoint', async () => {
    const objects = new Objects(storage);
    await objects.cluster('by-spec', { paused: true });
    await objects.cluster('by-annotation', { paused: false }, { annotations: { 'cluster.x-k8s.io/paused': '' } });
    await objects.cluster('running', { controlPlaneEndpoint: { host: 'api.example' } });
    const reader = open();
    expect(await reader.getCluster('default', 'by-spec')).toMatchObject({ paused: true });
    expect(await reader.getCluster('default', 'by-annotation')).toMatchObject({ paused: true });
    const running = await reader.getCluster('default', 'running');
    expect(running).toMatchObject({ paused: false });
    expect(running).not.toHaveProperty('controlPlaneEndpoint');
  });

  it('rejects a malformed object with an error naming it, and keeps serving the others', async () => {
    const objects = new Objects(storage);
    await objects.machine('fine', { clusterName: 'c1' });
    // The API validates what it stores; an older writer or a hand edit of the database may not have.
    await storage.create(new ResourceStore(machineKind, storage).key('default', 'orphan'), {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: { name: 'orphan', namespace: 'default', uid: 'u1' },
      spec: { version: 'v1.31.2' },
    });
    await storage.create(new ResourceStore(secretKind, storage).key('default', 'garbled'), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'garbled', namespace: 'default' },
      data: { 'clouds.yaml': 'not base64!' },
    });
    const reader = open();
    const orphan = reader.getMachine('default', 'orphan');
    await expect(orphan).rejects.toBeInstanceOf(MalformedObjectError);
    await expect(orphan).rejects.toThrow(/^Machine default\/orphan is malformed: spec\.clusterName: /);
    await expect(reader.getSecret('default', 'garbled')).rejects.toThrow(/^Secret default\/garbled is malformed: data\.clouds\.yaml: /);
    expect(await reader.getMachine('default', 'fine')).toMatchObject({ clusterName: 'c1' });
  });

  it('refuses kind definitions that are not the namespaced Secret, Cluster and Machine', () => {
    expect(() => new StorageClusterApiSource(storesOver(storage), { ...sourceKinds, cluster: machineKind })).toThrow(
      'the Cluster definition must be the namespaced kind Cluster, got Machine',
    );
    const clusterScopedSecret = { ...secretKind, namespaced: false };
    expect(
      () => new StorageClusterApiSource(storesOver(storage, [clusterScopedSecret, clusterKind, machineKind]), { ...sourceKinds, secret: clusterScopedSecret }),
    ).toThrow('the Secret definition must be the namespaced kind Secret, got Secret');
  });
});

describe('StorageClusterApiSource watch', () => {
  it('reports the existing objects, then every create, update and delete of the three kinds', async () => {
    const objects = new Objects(storage);
    await objects.create(secretKind, 'identity', { data: {} });
    await objects.cluster('c1');
    const changes = record(open());
    await eventually(() => expect(changes).toHaveLength(2));
    expect(changes).toEqual(expect.arrayContaining([change('Secret', 'identity'), change('Cluster', 'c1')]));

    changes.length = 0;
    await objects.machine('m1', { clusterName: 'c1' });
    await objects.change(clusterKind, 'c1', (cluster) => ((cluster.spec as JsonObject).paused = true));
    await objects.change(secretKind, 'identity', (secret) => (secret.data = { 'clouds.yaml': base64('x') }));
    await objects.delete(machineKind, 'm1');
    await eventually(() => expect(changes).toHaveLength(4));
    expect(changes).toEqual([change('Machine', 'm1'), change('Cluster', 'c1'), change('Secret', 'identity'), change('Machine', 'm1')]);
  });

  it('stops reporting after stop() and after close()', async () => {
    const objects = new Objects(storage);
    const reader = open();
    const stopped: SourceChange[] = [];
    const handle = reader.watch((c) => stopped.push(c));
    const closed = record(reader);
    const live = record(reader);
    await objects.cluster('first');
    await eventually(() => expect(stopped).toEqual([change('Cluster', 'first')]));
    await eventually(() => expect(live).toEqual([change('Cluster', 'first')]));
    handle.stop();
    await objects.cluster('second');
    await eventually(() => expect(live).toHaveLength(2));
    await reader.close();
    await objects.cluster('third');
    // Once a fresh source has seen "third", the old watches would have been told too, had they still run.
    const after = record(open());
    await eventually(() => expect(after).toHaveLength(3));
    expect(stopped).toEqual([change('Cluster', 'first')]);
    expect(closed).toEqual([change('Cluster', 'first'), change('Cluster', 'second')]);
  });

  it('lists again when the storage ends its watch and reports exactly what changed meanwhile', async () => {
    const objects = new Objects(storage);
    await objects.cluster('kept');
    await objects.cluster('changed');
    await objects.cluster('deleted');
    await objects.machine('m1', { clusterName: 'kept' });
    let deaf = false;
    const ends: WatchRequest['onError'][] = [];
    const breaking = new Proxy(storage, {
      get(target, property) {
        if (property === 'watch') {
          return (request: WatchRequest) => {
            if (request.prefix.includes('/clusters/')) ends.push(request.onError);
            return target.watch({ ...request, onEvent: (event) => !deaf && request.onEvent(event) });
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Storage;
    const errors: unknown[] = [];
    const changes = record(open(breaking, errors));
    await eventually(() => expect(changes).toHaveLength(4));
    expect(ends).toHaveLength(1);

    // The watch misses these, as it would once etcd compacted past it.
    deaf = true;
    changes.length = 0;
    await objects.change(clusterKind, 'changed', (cluster) => ((cluster.metadata as JsonObject).labels = { now: 'labelled' }));
    await objects.delete(clusterKind, 'deleted');
    await objects.cluster('created');
    deaf = false;
    expect(changes).toEqual([]);
    ends[0]!(new TooOldRevisionError(3, 9));

    await eventually(() => expect(changes).toHaveLength(3));
    expect(changes).toEqual(expect.arrayContaining([change('Cluster', 'changed'), change('Cluster', 'deleted'), change('Cluster', 'created')]));
    expect(errors).toEqual([expect.any(TooOldRevisionError)]);
    expect(ends).toHaveLength(2);

    changes.length = 0;
    await objects.delete(clusterKind, 'kept');
    await eventually(() => expect(changes).toEqual([change('Cluster', 'kept')]));
  });

  it('retries a failed list and then reports as usual', async () => {
    const objects = new Objects(storage);
    await objects.create(secretKind, 'identity', { data: {} });
    let failures = 0;
    const flaky = new Proxy(storage, {
      get(target, property) {
        if (property === 'list') {
          return async (...args: Parameters<Storage['list']>) => {
            if (args[0].includes('/secrets/') && failures++ < 2) throw new Error('etcd unavailable');
            return target.list(...args);
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Storage;
    const errors: unknown[] = [];
    const changes = record(open(flaky, errors));
    await eventually(() => expect(changes).toEqual([change('Secret', 'identity')]));
    expect(errors).toEqual([new Error('etcd unavailable'), new Error('etcd unavailable')]);
    await objects.change(secretKind, 'identity', (secret) => (secret.data = { token: base64('t') }));
    await eventually(() => expect(changes).toHaveLength(2));
  });

  it('survives a listener that throws', async () => {
    const objects = new Objects(storage);
    const errors: unknown[] = [];
    const reader = open(storage, errors);
    const seen: string[] = [];
    reader.watch((c) => {
      seen.push(c.name);
      throw new Error(`listener broke on ${c.name}`);
    });
    await objects.cluster('a');
    await objects.cluster('b');
    await eventually(() => expect(seen).toEqual(['a', 'b']));
    expect(errors).toEqual([new Error('listener broke on a'), new Error('listener broke on b')]);
    expect(await reader.getCluster('default', 'b')).toMatchObject({ name: 'b' });
  });
});
