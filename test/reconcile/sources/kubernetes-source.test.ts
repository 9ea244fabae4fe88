import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KubernetesClusterApiSource } from '../../../src/reconcile/sources/kubernetes-source.js';
import { MalformedObjectError, type SourceChange } from '../../../src/reconcile/sources/source.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { eventually } from './eventually.js';
import { FakeKubeApiServer } from './fake-kube-apiserver.js';

let dir: string;
let server: FakeKubeApiServer | undefined;
let source: KubernetesClusterApiSource | undefined;
let errors: unknown[];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'capo-kube-source-'));
  errors = [];
});

afterEach(async () => {
  await source?.close();
  source = undefined;
  // A watch left open by a closed source would fail here rather than hold the server open.
  if (server) await eventually(() => expect(server!.openWatches).toBe(0));
  await server?.stop();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function start(clusterApiVersions: string[] = ['v1beta2', 'v1beta1']): Promise<{ server: FakeKubeApiServer; source: KubernetesClusterApiSource }> {
  server = await FakeKubeApiServer.start(dir, clusterApiVersions);
  source = KubernetesClusterApiSource.fromKubeconfig(server.kubeconfigPath, { onError: (error) => errors.push(error), retry: { baseMs: 5, maxMs: 20 } });
  return { server, source };
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const meta = (name: string, extra: JsonObject = {}) => ({ namespace: 'default', name, ...extra });
const secret = (name: string, data: Record<string, string>, namespace = 'default'): JsonObject => ({
  metadata: { namespace, name },
  type: 'Opaque',
  data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, base64(value)])),
});
const clusterV1beta2 = (name: string, spec: JsonObject = {}, metadata: JsonObject = {}): JsonObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Cluster',
  metadata: meta(name, metadata),
  spec,
});
const machineV1beta2 = (name: string, spec: JsonObject, metadata: JsonObject = {}): JsonObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Machine',
  metadata: meta(name, metadata),
  spec,
});
const change = (kind: SourceChange['kind'], name: string, namespace = 'default'): SourceChange => ({ kind, namespace, name });

/** Reads until a read no longer reaches the server, i.e. the informer cache answers. */
async function untilCached(fake: FakeKubeApiServer, read: () => Promise<unknown>, request: string): Promise<void> {
  await eventually(async () => {
    const before = fake.count(request);
    await read();
    expect(fake.count(request)).toBe(before);
  });
}

describe('KubernetesClusterApiSource reads', () => {
  it('fails a read the management cluster never answers, after the request deadline, and reads again once it answers', async () => {
    server = await FakeKubeApiServer.start(dir, ['v1beta2']);
    source = KubernetesClusterApiSource.fromKubeconfig(server.kubeconfigPath, { onError: (error) => errors.push(error), requestTimeoutMs: 200 });
    server.put('secrets', secret('identity', { 'clouds.yaml': 'clouds: {}\n' }));
    server.hang(/^GET \/api\/v1\/namespaces\/default\/secrets/);
    await expect(source.getSecret('default', 'identity')).rejects.toThrow('reading Secret default/identity: no answer within 200 ms');
    server.clearFaults();
    expect((await source.getSecret('default', 'identity'))?.data['clouds.yaml']?.toString('utf8')).toBe('clouds: {}\n');
  });

  it('reads a Secret over mutual TLS with the kubeconfig, and answers undefined on 404', async () => {
    const { server: fake, source: reader } = await start();
    const stored = fake.put('secrets', secret('identity', { 'clouds.yaml': 'clouds: {}\n', cacert: 'PEM' }));
    expect(await reader.getSecret('default', 'identity')).toEqual({
      namespace: 'default',
      name: 'identity',
      resourceVersion: (stored.metadata as JsonObject).resourceVersion,
      type: 'Opaque',
      data: { 'clouds.yaml': Buffer.from('clouds: {}\n'), cacert: Buffer.from('PEM') },
    });
    expect(await reader.getSecret('default', 'missing')).toBeUndefined();
    expect(await reader.getSecret('elsewhere', 'identity')).toBeUndefined();
  });

  it('reads v1beta2 Clusters and Machines', async () => {
    const { server: fake, source: reader } = await start();
    const cluster = fake.put(
      'clusters',
      clusterV1beta2(
        'c1',
        {
          paused: true,
          infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackCluster', name: 'c1' },
          controlPlaneEndpoint: { host: '10.0.0.10', port: 6443 },
        },
        { labels: { team: 'a' } },
      ),
    );
    const machine = fake.put(
      'machines',
      machineV1beta2(
        'c1-cp-0',
        {
          clusterName: 'c1',
          bootstrap: { dataSecretName: 'c1-cp-0' },
          failureDomain: 'az1',
          version: 'v1.31.2',
          infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackMachine', name: 'c1-cp-0' },
        },
        { labels: { 'cluster.x-k8s.io/control-plane': '' } },
      ),
    );
    expect(await reader.getCluster('default', 'c1')).toEqual({
      namespace: 'default',
      name: 'c1',
      uid: (cluster.metadata as JsonObject).uid,
      paused: true,
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
      labels: { 'cluster.x-k8s.io/control-plane': '' },
      controlPlane: true,
      bootstrapDataSecretName: 'c1-cp-0',
      failureDomain: 'az1',
      version: 'v1.31.2',
      infrastructureRef: { kind: 'OpenStackMachine', name: 'c1-cp-0' },
    });
    expect(await reader.getCluster('default', 'c2')).toBeUndefined();
    expect(await reader.getMachine('other', 'c1-cp-0')).toBeUndefined();
    expect(fake.requests).not.toContain('GET /apis/cluster.x-k8s.io/v1beta1');
  });

  it('falls back to v1beta1 when the server does not serve v1beta2, and honours the paused annotation', async () => {
    const { server: fake, source: reader } = await start(['v1beta1']);
    fake.put('clusters', {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Cluster',
      metadata: meta('old', { annotations: { 'cluster.x-k8s.io/paused': 'true' } }),
      spec: {
        paused: false,
        infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'OpenStackCluster', name: 'old', namespace: 'default' },
        controlPlaneEndpoint: { host: '', port: 0 },
      },
    });
    fake.put('machines', {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      metadata: meta('old-md-0'),
      spec: {
        clusterName: 'old',
        bootstrap: { dataSecretName: 'old-md-0' },
        infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'OpenStackMachine', name: 'old-md-0' },
      },
    });
    const cluster = await reader.getCluster('default', 'old');
    expect(cluster).toMatchObject({ paused: true, infrastructureRef: { kind: 'OpenStackCluster', name: 'old' } });
    expect(cluster).not.toHaveProperty('controlPlaneEndpoint');
    expect(await reader.getMachine('default', 'old-md-0')).toMatchObject({
      controlPlane: false,
      bootstrapDataSecretName: 'old-md-0',
      infrastructureRef: { kind: 'OpenStackMachine', name: 'old-md-0' },
    });
    expect(fake.requests).toEqual(
      expect.arrayContaining(['GET /apis/cluster.x-k8s.io/v1beta2', 'GET /apis/cluster.x-k8s.io/v1beta1', 'GET /apis/cluster.x-k8s.io/v1beta1/clusters']),
    );
    expect(fake.requests.filter((request) => request.includes('/v1beta2/'))).toEqual([]);
  });

  it('says so when Cluster API is not installed, and keeps reading Secrets', async () => {
    const { server: fake, source: reader } = await start([]);
    fake.put('secrets', secret('identity', { 'clouds.yaml': 'x' }));
    await expect(reader.getCluster('default', 'c1')).rejects.toThrow('cluster.x-k8s.io serves clusters in none of v1beta2, v1beta1: is Cluster API installed?');
    expect(await reader.getSecret('default', 'identity')).toMatchObject({ name: 'identity' });
  });

  it('serves reads from the watch cache once it has listed, and the cache follows changes', async () => {
    const { server: fake, source: reader } = await start();
    fake.put('secrets', secret('identity', { 'clouds.yaml': 'one' }));
    fake.put('clusters', clusterV1beta2('c1'));
    const secretPath = 'GET /api/v1/namespaces/default/secrets/identity';
    const clusterPath = 'GET /apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/c1';
    await untilCached(fake, () => reader.getSecret('default', 'identity'), secretPath);
    await untilCached(fake, () => reader.getCluster('default', 'c1'), clusterPath);
    const gets = fake.requests.filter((request) => !request.endsWith('?watch')).length;

    fake.put('secrets', secret('identity', { 'clouds.yaml': 'two' }));
    fake.put('clusters', clusterV1beta2('c1', { paused: true }));
    await eventually(async () => expect((await reader.getSecret('default', 'identity'))?.data['clouds.yaml']).toEqual(Buffer.from('two')));
    await eventually(async () => expect(await reader.getCluster('default', 'c1')).toMatchObject({ paused: true }));
    fake.remove('secrets', 'default', 'identity');
    await eventually(async () => expect(await reader.getSecret('default', 'identity')).toBeUndefined());
    expect(await reader.getSecret('default', 'never-existed')).toBeUndefined();

    // One list per collection at most, then nothing but the watches.
    expect(fake.requests.filter((request) => !request.endsWith('?watch')).length).toBe(gets);
  });

  it('reports a malformed object naming it, and keeps serving the others', async () => {
    const { server: fake, source: reader } = await start();
    fake.put('machines', machineV1beta2('broken', { clusterName: 7 }));
    fake.put('machines', machineV1beta2('fine', { clusterName: 'c1' }));
    fake.put('clusters', { apiVersion: 'cluster.x-k8s.io/v1alpha4', kind: 'Cluster', metadata: meta('ancient'), spec: {} });
    fake.put('secrets', secret('garbled', {}));
    fake.put('secrets', { ...secret('garbled', {}), data: { cacert: '%%%' } });
    const broken = reader.getMachine('default', 'broken');
    await expect(broken).rejects.toBeInstanceOf(MalformedObjectError);
    await expect(broken).rejects.toThrow(/^Machine default\/broken is malformed: spec\.clusterName: /);
    await expect(reader.getCluster('default', 'ancient')).rejects.toThrow(
      'Cluster default/ancient is malformed: apiVersion "cluster.x-k8s.io/v1alpha4" is not one of cluster.x-k8s.io/v1beta2, cluster.x-k8s.io/v1beta1',
    );
    await expect(reader.getSecret('default', 'garbled')).rejects.toThrow(/^Secret default\/garbled is malformed: data\.cacert: /);
    expect(await reader.getMachine('default', 'fine')).toMatchObject({ clusterName: 'c1' });
  });

  it('turns other API errors into one line with the server message and code', async () => {
    const { server: fake, source: reader } = await start();
    fake.fail(/secrets/, 403, 'secrets "identity" is forbidden: User "admin" cannot get resource "secrets" in the namespace "default"');
    await expect(reader.getSecret('default', 'identity')).rejects.toThrow(
      'reading Secret default/identity: secrets "identity" is forbidden: User "admin" cannot get resource "secrets" in the namespace "default" (HTTP 403)',
    );
  });
});

describe('KubernetesClusterApiSource watch', () => {
  it('reports Clusters and Machines, and the Secrets of namespaces it read from', async () => {
    const { server: fake, source: reader } = await start();
    fake.put('clusters', clusterV1beta2('c1'));
    const changes: SourceChange[] = [];
    reader.watch((c) => changes.push(c));
    await eventually(() => expect(changes).toEqual([change('Cluster', 'c1')]));
    expect(await reader.getSecret('default', 'identity')).toBeUndefined();
    await eventually(() => expect(fake.openWatches).toBe(3));

    changes.length = 0;
    fake.put('secrets', secret('identity', { 'clouds.yaml': 'x' }));
    fake.put('secrets', secret('unrelated', { token: 'x' }, 'kube-system'));
    fake.put('machines', machineV1beta2('m1', { clusterName: 'c1' }));
    fake.put('clusters', clusterV1beta2('c1', { paused: true }));
    fake.remove('machines', 'default', 'm1');
    fake.remove('secrets', 'default', 'identity');
    await eventually(() => expect(changes).toHaveLength(5));
    expect(changes).toEqual(expect.arrayContaining([change('Secret', 'identity'), change('Machine', 'm1'), change('Cluster', 'c1')]));
    expect(changes.filter((c) => c.kind === 'Secret')).toEqual([change('Secret', 'identity'), change('Secret', 'identity')]);
    expect(changes.filter((c) => c.kind === 'Machine')).toEqual([change('Machine', 'm1'), change('Machine', 'm1')]);
  });

  it("asks for bookmarks, and for each watch to be ended after 5 to 10 minutes (client-go's reflector's timeouts)", async () => {
    const { server: fake, source: reader } = await start();
    reader.watch(() => undefined);
    expect(await reader.getSecret('default', 'identity')).toBeUndefined();
    await eventually(() => expect(fake.openWatches).toBe(3));
    expect(fake.watchQueries).toHaveLength(3);
    for (const query of fake.watchQueries) {
      expect(query.get('allowWatchBookmarks')).toBe('true');
      expect(Number(query.get('timeoutSeconds'))).toBeGreaterThanOrEqual(300);
      expect(Number(query.get('timeoutSeconds'))).toBeLessThan(600);
    }
  });

  it('resumes a watch the server ended, and relists after 410 Gone reporting what changed meanwhile', async () => {
    const { server: fake, source: reader } = await start();
    fake.put('clusters', clusterV1beta2('kept'));
    fake.put('clusters', clusterV1beta2('deleted'));
    const changes: SourceChange[] = [];
    reader.watch((c) => changes.push(c));
    reader.watch(() => undefined).stop();
    await eventually(() => expect(changes).toHaveLength(2));
    await eventually(() => expect(fake.openWatches).toBe(2));
    const lists = () => fake.count('GET /apis/cluster.x-k8s.io/v1beta2/clusters');
    expect(lists()).toBe(1);

    // A timeout on the server's side: the watch resumes from its resourceVersion without listing.
    // (Server and client share one event loop, so nothing reconnects before the test yields.)
    changes.length = 0;
    fake.endWatches();
    fake.put('clusters', clusterV1beta2('kept', { paused: true }));
    await eventually(() => expect(changes).toEqual([change('Cluster', 'kept')]));
    expect(lists()).toBe(1);

    // History compacted while disconnected: the resumed watch gets 410 and the cache lists again.
    await eventually(() => expect(fake.openWatches).toBe(2));
    changes.length = 0;
    fake.endWatches();
    fake.remove('clusters', 'default', 'deleted');
    fake.compact();
    await eventually(() => expect(lists()).toBe(2));
    await eventually(() => expect(changes).toEqual([change('Cluster', 'deleted')]));
    expect(await reader.getCluster('default', 'deleted')).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('reports a failing watch, reads from the server meanwhile, and restores the cache', async () => {
    const { server: fake, source: reader } = await start();
    fake.put('secrets', secret('identity', { 'clouds.yaml': 'one' }));
    fake.fail(/^GET \/api\/v1\/namespaces\/default\/secrets$/, 403, 'secrets is forbidden: User "admin" cannot list resource "secrets"');
    const secretPath = 'GET /api/v1/namespaces/default/secrets/identity';
    expect(await reader.getSecret('default', 'identity')).toMatchObject({ name: 'identity' });
    await eventually(() => expect(errors.length).toBeGreaterThanOrEqual(2));
    expect(String(errors[0])).toBe(
      'Error: watching /api/v1/namespaces/default/secrets: secrets is forbidden: User "admin" cannot list resource "secrets" (HTTP 403)',
    );
    const before = fake.count(secretPath);
    expect(await reader.getSecret('default', 'identity')).toMatchObject({ name: 'identity' });
    expect(fake.count(secretPath)).toBe(before + 1);

    fake.clearFaults();
    await untilCached(fake, () => reader.getSecret('default', 'identity'), secretPath);
    fake.put('secrets', secret('identity', { 'clouds.yaml': 'two' }));
    await eventually(async () => expect((await reader.getSecret('default', 'identity'))?.data['clouds.yaml']).toEqual(Buffer.from('two')));
  });

  it('survives a listener that throws', async () => {
    const { server: fake, source: reader } = await start();
    const seen: string[] = [];
    reader.watch((c) => {
      seen.push(c.name);
      throw new Error(`listener broke on ${c.name}`);
    });
    await eventually(() => expect(fake.openWatches).toBe(2));
    fake.put('clusters', clusterV1beta2('a'));
    fake.put('clusters', clusterV1beta2('b'));
    await eventually(() => expect(seen).toEqual(['a', 'b']));
    expect(errors).toEqual([new Error('listener broke on a'), new Error('listener broke on b')]);
  });

  it('stops reporting after stop(), and close() ends every watch', async () => {
    const { server: fake, source: reader } = await start();
    const stopped: SourceChange[] = [];
    const live: SourceChange[] = [];
    const handle = reader.watch((c) => stopped.push(c));
    reader.watch((c) => live.push(c));
    await reader.getSecret('default', 'identity');
    await eventually(() => expect(fake.openWatches).toBe(3));
    fake.put('clusters', clusterV1beta2('first'));
    await eventually(() => expect(live).toHaveLength(1));
    handle.stop();
    fake.put('clusters', clusterV1beta2('second'));
    await eventually(() => expect(live).toHaveLength(2));
    expect(stopped).toEqual([change('Cluster', 'first')]);

    await reader.close();
    await eventually(() => expect(fake.openWatches).toBe(0));
    await expect(reader.getSecret('default', 'identity')).rejects.toThrow('the Cluster API source is closed');
    expect(() => reader.watch(() => undefined)).toThrow('the Cluster API source is closed');
    expect(errors).toEqual([]);
  });
});

describe('KubernetesClusterApiSource configuration', () => {
  it('names the kubeconfig it cannot load', async () => {
    const missing = path.join(dir, 'absent');
    expect(() => KubernetesClusterApiSource.fromKubeconfig(missing)).toThrow(`cannot load kubeconfig ${missing}: `);
    const empty = path.join(dir, 'empty');
    await writeFile(empty, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    expect(() => KubernetesClusterApiSource.fromKubeconfig(empty)).toThrow(`kubeconfig ${empty} has no current context with a cluster`);
  });

  it('finds the kubeconfig through $KUBECONFIG, and says so when there is none', async () => {
    const { server: fake, source: fromPath } = await start();
    await fromPath.close();
    vi.stubEnv('HOME', dir);
    try {
      vi.stubEnv('KUBECONFIG', fake.kubeconfigPath);
      source = KubernetesClusterApiSource.fromKubeconfig();
      expect(await source.getSecret('default', 'identity')).toBeUndefined();
      vi.stubEnv('KUBECONFIG', '');
      expect(() => KubernetesClusterApiSource.fromKubeconfig()).toThrow(
        'no kubeconfig found: set KUBECONFIG, create ~/.kube/config, or run in a pod with a service account',
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('refuses in-cluster configuration outside a pod', () => {
    vi.stubEnv('KUBERNETES_SERVICE_HOST', '');
    try {
      expect(() => KubernetesClusterApiSource.inCluster()).toThrow(
        'not running in a Kubernetes pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set',
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
