/**
 * A way in for CAPO users: a cluster built in the simulated cloud the way CAPO
 * leaves it (CAPO's names, no capo-apiserver tag or owner mark anywhere, no
 * objects of ours pointing at it) is adopted. The dry run lists every resource
 * it would take over and nothing to create; the adoption reaches Ready with
 * not one resource created; deleting the cluster then leaves nothing.
 *
 * The CAPO-made cluster is this reconciler's own build with every trace of
 * ownership removed: the same names and shapes CAPO gives (capo/names.ts
 * follows CAPO's), without having to run CAPO.
 */
import { parseAllDocuments } from 'yaml';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createServiceClients, loadCloud, OpenStackSession, type ServiceClients } from '../../../src/openstack/index.js';
import { CloudCensus, noResources, type ResourceCounts } from '../../../harness/census.js';
import { waitForDeletion, waitForObject, waitForReady } from '../../../harness/cluster-flow.js';
import type { TestServer } from '../../../harness/test-server.js';
import { startExampleServer, type ExampleServer } from './examples.js';
import { expectedResources, type Manifest } from './expected.js';

const machines = ['demo-control-plane-0', 'demo-md-0-0'];
const adoptAnnotation = 'capo-apiserver.io/adopt';
const capoDescription = 'Created by cluster-api-provider-openstack cluster default-demo';

let example: ExampleServer;
let server: TestServer;
let census: CloudCensus;
let session: OpenStackSession;
let cloud: ServiceClients;
let documents: Record<string, any>[];
let expected: ResourceCounts;

type Inventory = ReturnType<NonNullable<TestServer['cloud']>['inventory']>;
const inventory = (): Inventory => server.cloud!.inventory();

/** The example as CAPO would have built it: no ingress load balancer (our extension), images by name, two machines. */
async function capoShapedCluster(): Promise<Record<string, any>[]> {
  const all: Record<string, any>[] = [];
  for (const file of ['00-cloud-credentials.yaml', '01-cluster.yaml', '02-openstackcluster.yaml', '03-machines.yaml', '04-bootstrap-data.yaml']) {
    for (const document of parseAllDocuments(await readFile(path.join(example.manifests, file), 'utf8'))) all.push(document.toJS());
  }
  const kept = all.filter((document) => !['Machine', 'OpenStackMachine'].includes(document.kind) || machines.includes(document.metadata.name));
  for (const document of kept) {
    if (document.kind === 'OpenStackCluster') {
      delete document.spec.extensions.loadBalancers;
      document.spec.bastion.spec.image = { filter: { name: 'ubuntu-22.04' } };
    }
    if (document.kind === 'OpenStackMachine') document.spec.image = { filter: { name: 'ubuntu-22.04' } };
  }
  return kept;
}

async function apply(objects: Record<string, any>[]): Promise<void> {
  const result = await server.kubectl(['apply', '-f', '-'], { input: objects.map((object) => JSON.stringify(object)).join('\n---\n') });
  if (result.code !== 0) throw new Error(`kubectl apply failed: ${result.stderr}`);
}

async function kubectl(args: string[]): Promise<string> {
  const result = await server.kubectl(args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** A request the simulated cloud may refuse with 409 while a load balancer is busy: tried again until it is accepted. */
async function untilAccepted(send: () => Promise<unknown>): Promise<void> {
  await vi.waitFor(
    async () => {
      await send();
    },
    { timeout: 30_000, interval: 100 },
  );
}

const ours = (tags: readonly string[] | null | undefined) => (tags ?? []).filter((tag) => !tag.startsWith('capo-apiserver:'));
const unmarked = (description: string | null | undefined) => (description ?? '').replace(/ ?\[owner [^\]]+\]$/, '');

/** Removes every trace of capo-apiserver's ownership from the cloud: tags, owner marks, volume metadata. */
async function forgetOwnership(): Promise<void> {
  const { neutron, octavia, nova } = cloud;
  const put = (service: 'network' | 'load-balancer' | 'compute', path: string, body: unknown) =>
    session.request(service, { method: 'PUT', path, body, idempotent: true }, z.unknown());
  const neutronKinds = [
    ['networks', 'network', await neutron.listNetworks()],
    ['subnets', 'subnet', await neutron.listSubnets()],
    ['routers', 'router', await neutron.listRouters()],
    ['security-groups', 'security_group', await neutron.listSecurityGroups()],
    ['ports', 'port', await neutron.listPorts()],
    ['floatingips', 'floatingip', await neutron.listFloatingIps()],
  ] as const;
  for (const [collection, key, items] of neutronKinds) {
    for (const item of items as readonly { id: string; tags?: string[] | null; description?: string | null }[]) {
      if (!(item.tags ?? []).some((tag) => tag.startsWith('capo-apiserver:')) && !/\[owner /.test(item.description ?? '')) continue;
      await put('network', `/v2.0/${collection}/${item.id}/tags`, { tags: ours(item.tags) });
      const description = collection === 'floatingips' ? capoDescription : unmarked(item.description);
      await put('network', `/v2.0/${collection}/${item.id}`, { [key]: { description } });
    }
  }
  for (const lb of await octavia.listLoadBalancers()) {
    await untilAccepted(() => put('load-balancer', `/v2/lbaas/loadbalancers/${lb.id}`, { loadbalancer: { tags: ours(lb.tags), description: '' } }));
  }
  for (const listener of await octavia.listListeners())
    await untilAccepted(() => put('load-balancer', `/v2/lbaas/listeners/${listener.id}`, { listener: { tags: ours(listener.tags) } }));
  for (const pool of await octavia.listPools()) {
    await untilAccepted(() => put('load-balancer', `/v2/lbaas/pools/${pool.id}`, { pool: { tags: ours(pool.tags) } }));
    for (const member of await octavia.listMembers(pool.id)) {
      await untilAccepted(() => put('load-balancer', `/v2/lbaas/pools/${pool.id}/members/${member.id}`, { member: { tags: ours(member.tags) } }));
    }
  }
  for (const monitor of await octavia.listHealthMonitors())
    await untilAccepted(() => put('load-balancer', `/v2/lbaas/healthmonitors/${monitor.id}`, { healthmonitor: { tags: ours(monitor.tags) } }));
  for (const instance of await nova.listServers()) await nova.replaceServerTags(instance.id, ours(instance.tags));
}

/** Takes our objects away without touching the cloud: paused (so nothing acts), their finalizers dropped, deleted. */
async function forgetObjects(): Promise<void> {
  await kubectl(['patch', 'cluster', 'demo', '--type=merge', '-p', '{"spec":{"paused":true}}']);
  await kubectl(['wait', 'openstackcluster/demo', '--for=condition=Paused', '--timeout=60s']);
  for (const kind of ['openstackservers', 'openstackmachines', 'openstackclusters']) {
    for (const name of (await kubectl(['get', kind, '-o', 'name'])).split('\n').filter(Boolean)) {
      await kubectl(['patch', name, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
      await kubectl(['delete', name, '--wait=true']);
    }
  }
  await kubectl(['delete', 'cluster', 'demo', '--wait=true']);
  await kubectl(['delete', 'machines', '--all', '--wait=true']);
}

beforeAll(async () => {
  example = await startExampleServer();
  server = example.server;
  census = await CloudCensus.open(server.cloud!);
  session = await OpenStackSession.create(loadCloud({ cloudsYaml: server.cloud!.cloudsYaml('sim'), cloudName: 'sim' }));
  cloud = createServiceClients(session);
  documents = await capoShapedCluster();
  expected = expectedResources(documents as Manifest[]);
  await apply(documents);
  await waitForReady(server.kubectl, 'demo', 180);
  await forgetOwnership();
  await forgetObjects();
}, 300_000);

afterAll(async () => {
  session?.close();
  census?.close();
  await example?.stop();
});

const annotated = (value: string) =>
  documents.map((document) =>
    document.kind === 'OpenStackCluster' ? { ...document, metadata: { ...document.metadata, annotations: { [adoptAnnotation]: value } } } : document,
  );

describe('adopting a cluster CAPO built', () => {
  let built: Inventory;

  it('starts from a cloud holding the cluster, with nothing of it marked ours', async () => {
    expect((await census.ours()).counts).toEqual(noResources);
    built = inventory();
    expect(built.compute?.servers).toBe(machines.length + 1);
  });

  it('lists what it would adopt, and nothing to create, in a dry run that changes nothing', async () => {
    await apply(annotated('dry-run'));
    await kubectl(['wait', 'openstackcluster/demo', '--for=jsonpath={.status.conditions[?(@.type=="Ready")].reason}=AdoptionDryRun', '--timeout=60s']);
    const surveyed = z.looseObject({
      status: z.looseObject({
        extensions: z.looseObject({ adoption: z.object({ adopt: z.array(z.string()).default([]), create: z.array(z.string()).default([]) }) }),
      }),
    });
    // The cluster may be surveyed before its last Machines are applied; each one that arrives has it surveyed again.
    const lastMachine = `server ${machines.at(-1)} (`;
    const cluster = surveyed.parse(
      await waitForObject(
        server.kubectl,
        'openstackcluster/demo',
        'a survey with every machine',
        (object) => surveyed.safeParse(object).data?.status.extensions.adoption.adopt.some((entry) => entry.startsWith(lastMachine)) === true,
        60,
      ),
    );
    const { adopt, create } = cluster.status.extensions.adoption;
    expect(create).toEqual([]);
    expect(adopt).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^network k8s-clusterapi-cluster-default-demo \(/),
        expect.stringMatching(/^load balancer k8s-clusterapi-cluster-default-demo-kubeapi \(/),
        expect.stringMatching(/^server demo-control-plane-0 \(/),
        expect.stringMatching(/^port demo-md-0-0-0 \(/),
        expect.stringMatching(/^floating IP demo-bastion \(/),
      ]),
    );
    expect(inventory()).toEqual(built);
    expect((await census.ours()).counts).toEqual(noResources);
  });

  it('adopts everything, reaching Ready without creating a single resource', async () => {
    await kubectl(['annotate', 'openstackcluster', 'demo', `${adoptAnnotation}=capo`, '--overwrite']);
    await waitForReady(server.kubectl, 'demo', 180);
    expect(inventory()).toEqual(built);
    const adopted = await census.ours();
    expect(adopted.duplicates).toEqual([]);
    expect(adopted.counts).toEqual(expected);
  });

  it('deletes the adopted cluster, leaving nothing behind', async () => {
    const deleted = await server.kubectl(['delete', '-f', '-', '--wait=false'], {
      input: documents.map((document) => JSON.stringify(document)).join('\n---\n'),
    });
    expect(deleted.code, deleted.stderr).toBe(0);
    await waitForDeletion(server.kubectl, 180);
    expect((await census.ours()).counts).toEqual(noResources);
    expect(inventory().compute?.servers).toBe(0);
    expect(inventory().network?.networks).toBe((built.network?.networks ?? 0) - 1);
  }, 240_000);
});
