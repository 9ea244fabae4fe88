/**
 * OpenStackFloatingIPPool as a Cluster API IPAM provider, through kubectl on
 * the embedded server: the example's three workers take their floating IPs
 * from a pool with maxIPs 3 that holds an address its crash left behind and
 * a user's pre-allocated one (and names one that does not exist); a further claim
 * waits at the limit until a worker is deleted and its address released
 * (reclaimPolicy Delete); with Retain a released address stays in the pool;
 * deleting the cluster and the pool leaves only the user's pre-allocated
 * address, unassociated.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { CloudCensus, noResources } from '../../../harness/census.js';
import { apply, deleteWithoutWaiting, getObject, waitForDeletion, waitForObject, waitForReady } from '../../../harness/cluster-flow.js';
import type { TestServer } from '../../../harness/test-server.js';
import { startExampleServer, type ExampleServer } from '../flows/examples.js';

const workers = ['demo-md-0-0', 'demo-md-0-1', 'demo-md-0-2'];
const poolTag = 'cluster-api-provider-openstack-fip-pool-workers';

let example: ExampleServer;
let server: TestServer;
let census: CloudCensus;
/** The address a user allocated and handed to the pool. */
let userAddress: string;
/** An address the pool created just before a crash, untagged and in no IPAddress. */
let leftoverAddress: string;
/** A pre-allocated address that does not exist. */
const missingAddress = '198.51.100.7';

const condition = z.looseObject({ type: z.string(), status: z.string(), reason: z.string(), message: z.string().optional() });
const poolView = z.looseObject({
  status: z.looseObject({
    claimedIPs: z.array(z.string()),
    availableIPs: z.array(z.string()),
    failedIPs: z.array(z.string()).optional(),
    floatingIPNetwork: z.looseObject({ id: z.string(), name: z.string() }).optional(),
    conditions: z.array(condition).optional(),
  }),
});
type PoolView = z.infer<typeof poolView>;
const claimView = z.looseObject({ status: z.looseObject({ addressRef: z.looseObject({ name: z.string() }).optional() }).optional() });
const addressView = z.looseObject({
  metadata: z.looseObject({ ownerReferences: z.array(z.looseObject({ kind: z.string(), name: z.string() })) }),
  spec: z.looseObject({
    address: z.string(),
    prefix: z.number(),
    claimRef: z.looseObject({ name: z.string() }),
    poolRef: z.looseObject({ apiGroup: z.string(), kind: z.string(), name: z.string() }),
  }),
});
const serverView = z.looseObject({ status: z.looseObject({ instanceID: z.string(), conditions: z.array(condition) }) });

const pool = (reclaimPolicy: 'Delete' | 'Retain') => ({
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
  kind: 'OpenStackFloatingIPPool',
  metadata: { name: 'workers', namespace: 'default' },
  spec: {
    identityRef: { type: 'Secret', name: 'demo-cloud-config', cloudName: 'openstack' },
    preAllocatedFloatingIPs: [missingAddress, userAddress],
    maxIPs: 3,
    reclaimPolicy,
  },
});

const claim = (name: string) => ({
  apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
  kind: 'IPAddressClaim',
  metadata: { name, namespace: 'default' },
  spec: { poolRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackFloatingIPPool', name: 'workers' } },
});

async function kubectlWith(args: string[], objects: object[]): Promise<void> {
  const result = await server.kubectl(args, { input: objects.map((object) => JSON.stringify(object)).join('\n---\n') });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
}

/** examples/03-machines.yaml with every worker's OpenStackMachine taking its floating IP from the pool. */
async function machinesFromPool(): Promise<object[]> {
  const documents = parseAllDocuments(await readFile(path.join(example.manifests, '03-machines.yaml'), 'utf8')).map(
    (document) => document.toJS() as Record<string, any>,
  );
  for (const document of documents) {
    if (document.kind === 'OpenStackMachine' && workers.includes(document.metadata.name)) {
      document.spec.floatingIPPoolRef = { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackFloatingIPPool', name: 'workers' };
    }
  }
  return documents;
}

const readPool = async () => poolView.parse(await getObject(server.kubectl, 'openstackfloatingippool/workers'));
const poolCondition = (view: PoolView) => view.status.conditions?.find((entry) => entry.type === 'OpenstackFloatingIPPoolReadyCondition');
async function waitForPool(what: string, reached: (view: PoolView) => boolean): Promise<PoolView> {
  const reachedBy = (object: unknown) => {
    const parsed = poolView.safeParse(object);
    return parsed.success && reached(parsed.data);
  };
  return poolView.parse(await waitForObject<unknown>(server.kubectl, 'openstackfloatingippool/workers', what, reachedBy, 60));
}
const addressOfClaim = async (name: string) => addressView.parse(await getObject(server.kubectl, `ipaddress/${name}`)).spec.address;
const floatingIp = async (address: string) => (await census.clients.neutron.listFloatingIps({ floating_ip_address: address }))[0];

async function deleteWorker(name: string): Promise<void> {
  const result = await server.kubectl(['delete', `machine/${name}`, `openstackmachine/${name}`, '--wait=true', '--timeout=120s']);
  if (result.code !== 0) throw new Error(`deleting ${name} failed: ${result.stderr}`);
}

beforeAll(async () => {
  example = await startExampleServer();
  server = example.server;
  census = await CloudCensus.open(server.cloud!);
  const [external] = await census.clients.neutron.findExternalNetworks();
  userAddress = (await census.clients.neutron.createFloatingIp({ floating_network_id: external.id, description: 'allocated by a person' })).floating_ip_address;
  for (const file of ['00-cloud-credentials.yaml', '00-images.yaml', '01-cluster.yaml', '02-openstackcluster.yaml', '04-bootstrap-data.yaml'])
    await apply(server.kubectl, path.join(example.manifests, file));
  await kubectlWith(['apply', '-f', '-'], [pool('Delete')]);
  await waitForPool('Ready', (view) => poolCondition(view)?.status === 'True');
  const { metadata } = z
    .looseObject({ metadata: z.looseObject({ uid: z.string() }) })
    .parse(await getObject(server.kubectl, 'openstackfloatingippool/workers'));
  const leftover = await census.clients.neutron.createFloatingIp({
    floating_network_id: external.id,
    description: `OpenStackFloatingIPPool default/workers [owner ${metadata.uid}]`,
  });
  leftoverAddress = leftover.floating_ip_address;
  await kubectlWith(['apply', '-f', '-'], await machinesFromPool());
  await waitForReady(server.kubectl, 'demo', 180);
}, 240_000);

afterAll(async () => {
  census?.close();
  await example?.stop();
});

describe('OpenStackFloatingIPPool', () => {
  it("answers each worker's claim with an IPAddress: its own unclaimed address, then the pre-allocated ones that exist, then a new one", async () => {
    const claims = (await server.kubectl(['get', 'ipaddressclaims', '-o', 'name'])).stdout.trim().split('\n').sort();
    expect(claims).toEqual(workers.map((name) => `ipaddressclaim.ipam.cluster.x-k8s.io/${name}-floating-ip-address`));
    for (const name of workers) {
      const claimName = `${name}-floating-ip-address`;
      expect(claimView.parse(await getObject(server.kubectl, `ipaddressclaim/${claimName}`)).status?.addressRef?.name).toBe(claimName);
      const address = addressView.parse(await getObject(server.kubectl, `ipaddress/${claimName}`));
      expect(address.spec).toMatchObject({
        prefix: 32,
        claimRef: { name: claimName },
        poolRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackFloatingIPPool', name: 'workers' },
      });
      expect(address.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'IPAddressClaim', name: claimName })]);
    }
    expect(await addressOfClaim('demo-md-0-0-floating-ip-address')).toBe(leftoverAddress);
    expect(await addressOfClaim('demo-md-0-1-floating-ip-address')).toBe(userAddress);
    const view = await readPool();
    expect(view.status.claimedIPs).toHaveLength(3);
    expect(view.status.claimedIPs).toEqual(expect.arrayContaining([leftoverAddress, userAddress]));
    expect(view.status.failedIPs).toEqual([missingAddress]);
    expect(view.status.availableIPs).toEqual([]);
    expect(view.status.floatingIPNetwork?.name).toBeDefined();
    expect(poolCondition(view)).toMatchObject({ status: 'True', reason: 'Ready' });
  });

  it("associates each address with its worker's port, and tags the ones it created", async () => {
    for (const name of workers) {
      const object = serverView.parse(await getObject(server.kubectl, `openstackserver/${name}`));
      expect(object.status.conditions.find((entry) => entry.type === 'FloatingAddressFromPoolReady')).toMatchObject({ status: 'True' });
      const fip = await floatingIp(await addressOfClaim(`${name}-floating-ip-address`));
      const ports = await census.clients.neutron.listPorts({ device_id: object.status.instanceID });
      expect(ports.map((port) => port.id)).toContain(fip.port_id);
      if (fip.floating_ip_address === userAddress) expect(fip.tags ?? []).not.toContain(poolTag);
      else expect(fip.tags).toContain(poolTag);
      // Nova lists it, and the machine reports it for Cluster API.
      const machine = await waitForObject<{ status?: { addresses?: { type: string; address: string }[] } }>(
        server.kubectl,
        `openstackmachine/${name}`,
        "the floating IP among the machine's addresses",
        (object) => (object.status?.addresses ?? []).some((entry) => entry.address === fip.floating_ip_address),
        30,
      );
      expect(machine.status?.addresses).toContainEqual({ type: 'ExternalIP', address: fip.floating_ip_address });
    }
    const [kubectlView] = (await server.kubectl(['get', 'ipaddress', 'demo-md-0-1-floating-ip-address'])).stdout.trim().split('\n').slice(1);
    expect(kubectlView).toContain(userAddress);
  });

  it("holds a claim past maxIPs until a worker's address is released, and deletes that address (reclaimPolicy Delete)", async () => {
    await kubectlWith(['apply', '-f', '-'], [claim('extra')]);
    await waitForPool('MaxIPsReached', (view) => poolCondition(view)?.reason === 'MaxIPsReached');
    expect(claimView.parse(await getObject(server.kubectl, 'ipaddressclaim/extra')).status?.addressRef).toBeUndefined();

    const released = await floatingIp(await addressOfClaim('demo-md-0-0-floating-ip-address'));
    await deleteWorker('demo-md-0-0');
    await waitForObject<unknown>(
      server.kubectl,
      'ipaddressclaim/extra',
      'an address for the extra claim',
      (object) => claimView.parse(object).status?.addressRef !== undefined,
      60,
    );
    // By ID: Neutron may hand the same address out again at once.
    expect((await census.clients.neutron.listFloatingIps()).map((fip) => fip.id)).not.toContain(released.id);
    const view = await waitForPool('Ready again', (current) => poolCondition(current)?.status === 'True');
    expect(view.status.claimedIPs).toHaveLength(3);
    expect(await server.kubectl(['get', 'ipaddressclaim/demo-md-0-0-floating-ip-address'])).toMatchObject({ code: 1 });
  }, 180_000);

  it('keeps a released address in the pool, unassociated, with reclaimPolicy Retain', async () => {
    await kubectlWith(['apply', '-f', '-'], [pool('Retain')]);
    const kept = await addressOfClaim('demo-md-0-2-floating-ip-address');
    await deleteWorker('demo-md-0-2');
    const view = await waitForPool('the released address available', (current) => current.status.availableIPs.includes(kept));
    expect(view.status.claimedIPs).not.toContain(kept);
    expect(await floatingIp(kept)).toMatchObject({ port_id: null });
  }, 180_000);

  it('reports a network it cannot find as UnableToFindNetwork', async () => {
    const nowhere = { ...pool('Delete'), metadata: { name: 'nowhere', namespace: 'default' } };
    nowhere.spec = { ...nowhere.spec, floatingIPNetwork: { filter: { name: 'no-such-network' } } } as typeof nowhere.spec;
    await kubectlWith(['apply', '-f', '-'], [nowhere]);
    const view = poolView.parse(
      await waitForObject<unknown>(
        server.kubectl,
        'openstackfloatingippool/nowhere',
        'UnableToFindNetwork',
        (object) => poolCondition(poolView.parse(object))?.reason === 'UnableToFindNetwork',
        60,
      ),
    );
    expect(poolCondition(view)?.message).toContain('spec.floatingIPNetwork matches 0 networks');
    const deleted = await server.kubectl(['delete', 'openstackfloatingippool/nowhere', '--wait=true', '--timeout=60s']);
    expect(deleted.code, deleted.stderr).toBe(0);
  });

  it("adopts the floating IPs CAPO's pool of the same name made, when annotated for adoption", async () => {
    const [external] = await census.clients.neutron.findExternalNetworks();
    const capoMade = await census.clients.neutron.createFloatingIp({
      floating_network_id: external.id,
      description: 'Created by cluster-api-provider-openstack OpenStackFloatingIPPool capo-made',
    });
    await census.clients.neutron.replaceTags('floatingips', capoMade.id, ['cluster-api-provider-openstack-fip-pool-capo-made']);
    const adopting = { ...pool('Delete'), metadata: { name: 'capo-made', namespace: 'default', annotations: { 'capo-apiserver.io/adopt': 'capo' } } };
    adopting.spec = { ...adopting.spec, preAllocatedFloatingIPs: [] };
    const capoClaim = { ...claim('capo-claim'), spec: { poolRef: { ...claim('capo-claim').spec.poolRef, name: 'capo-made' } } };
    await kubectlWith(['apply', '-f', '-'], [adopting, capoClaim]);
    await waitForObject<unknown>(
      server.kubectl,
      'ipaddressclaim/capo-claim',
      'an address for the claim',
      (object) => claimView.parse(object).status?.addressRef !== undefined,
      60,
    );
    expect(await addressOfClaim('capo-claim')).toBe(capoMade.floating_ip_address);
    const adopted = await census.clients.neutron.getFloatingIp(capoMade.id);
    expect(adopted.tags).toEqual(
      expect.arrayContaining(['cluster-api-provider-openstack-fip-pool-capo-made', expect.stringMatching(/^capo-apiserver:owner=/)]),
    );
    const deleted = await server.kubectl(['delete', 'ipaddressclaim/capo-claim', 'openstackfloatingippool/capo-made', '--wait=true', '--timeout=60s']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect((await census.clients.neutron.listFloatingIps()).map((fip) => fip.id)).not.toContain(capoMade.id);
  });

  it("refuses an IPAddress that is not an address, and a change to a claim's pool", async () => {
    const bad = await server.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddress',
        metadata: { name: 'bad', namespace: 'default' },
        spec: { address: '10.0.0.300', prefix: 40, claimRef: { name: 'x' }, poolRef: { apiGroup: 'a.b', kind: 'P', name: 'p' } },
      }),
    });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('spec.address: Invalid value: "10.0.0.300": not a valid IP address');
    const moved = await server.kubectl(['patch', 'ipaddressclaim/extra', '--type=merge', '-p', '{"spec":{"poolRef":{"name":"other"}}}']);
    expect(moved.code).not.toBe(0);
    expect(moved.stderr).toContain('IPAddressClaim spec is immutable');
  });

  it("deletes the pool's own addresses with the pool, and leaves the user's", async () => {
    await deleteWithoutWaiting(server.kubectl, example.manifests);
    await waitForDeletion(server.kubectl, 180);
    // The pool waits for the last address it handed out.
    expect((await server.kubectl(['delete', 'openstackfloatingippool/workers', '--wait=false'])).code).toBe(0);
    const waiting = await waitForPool("waiting for the extra claim's address", (view) => poolCondition(view)?.reason === 'Deleting');
    expect(poolCondition(waiting)?.message).toContain('extra');
    const deleted = await server.kubectl(['delete', 'ipaddressclaim/extra', '--wait=true', '--timeout=60s']);
    expect(deleted.code, deleted.stderr).toBe(0);
    const gone = await server.kubectl(['wait', '--for=delete', 'openstackfloatingippool/workers', '--timeout=60s']);
    expect(gone.code, gone.stderr).toBe(0);
    expect((await server.kubectl(['get', 'ipaddresses', '-o', 'name'])).stdout).toBe('');
    expect((await census.ours()).counts).toEqual(noResources);
    const fips = await census.clients.neutron.listFloatingIps();
    expect(fips.map((fip) => ({ address: fip.floating_ip_address, port: fip.port_id }))).toEqual([{ address: userAddress, port: null }]);
  }, 240_000);
});
