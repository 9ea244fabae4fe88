/**
 * The bastion of a Ready example cluster, changed by its user: a new flavor
 * replaces the server (new ID, old one gone from Nova) and moves the same
 * floating IP to it; disabling the bastion deletes the server, its floating
 * IP and its security group. Nothing of ours is left behind at any step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isNotFound } from '../../../src/openstack/index.js';
import type { TestServer } from '../../../harness/test-server.js';
import { CloudCensus, noResources } from '../../../harness/census.js';
import { startExampleServer, type ExampleServer } from './examples.js';
import { expectedInventoryChange, expectedResources, readManifests, withoutRules, type Manifest } from './expected.js';
import { apply, deleteWithoutWaiting, getObject, waitForDeletion, waitForObject, waitForReady } from '../../../harness/cluster-flow.js';

const condition = z.looseObject({ type: z.string(), status: z.string(), observedGeneration: z.number().optional() });
const clusterView = z.looseObject({
  metadata: z.looseObject({ generation: z.number() }),
  status: z
    .looseObject({
      bastion: z.looseObject({ id: z.string().optional(), floatingIP: z.string().optional() }).optional(),
      bastionSecurityGroup: z.looseObject({ id: z.string() }).optional(),
      conditions: z.array(condition).optional(),
    })
    .default({}),
});
type ClusterView = z.infer<typeof clusterView>;

const clusterRef = 'openstackcluster/demo';
const bastionSecurityGroupName = 'k8s-cluster-default-demo-secgroup-bastion';

let server: TestServer;
let manifests: string;
let parsed: Manifest[];
let census: CloudCensus;

let example: ExampleServer;

beforeAll(async () => {
  example = await startExampleServer();
  ({ server, manifests } = example);
  parsed = await readManifests(manifests);
  census = await CloudCensus.open(server.cloud!);
  await apply(server.kubectl, manifests);
  await waitForReady(server.kubectl, 'demo', 120);
});

afterAll(async () => {
  census?.close();
  await example?.stop();
});

async function readCluster(): Promise<ClusterView> {
  return clusterView.parse(await getObject(server.kubectl, clusterRef));
}

/** Ready for the current spec, not still for the one before the change. */
function readyForCurrentSpec(cluster: ClusterView): boolean {
  const ready = cluster.status.conditions?.find((candidate) => candidate.type === 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === cluster.metadata.generation;
}

async function patchCluster(patch: object): Promise<void> {
  const result = await server.kubectl(['patch', clusterRef, '--type=merge', '-p', JSON.stringify(patch)]);
  if (result.code !== 0) throw new Error(`kubectl patch ${clusterRef} failed: ${result.stderr}`);
}

/** The example's manifests with the bastion disabled, for the resource count that goes with it. */
function withBastionDisabled(documents: readonly Manifest[]): Manifest[] {
  return documents.map((document) => {
    if (document.kind !== 'OpenStackCluster') return document;
    const spec = z.looseObject({ bastion: z.looseObject({}) }).parse(document.spec);
    return { ...document, spec: { ...spec, bastion: { ...spec.bastion, enabled: false } } };
  });
}

async function expectResourcesOf(documents: readonly Manifest[]): Promise<void> {
  const expected = expectedResources(documents);
  const observed = await census.ours();
  expect.soft(observed.duplicates).toEqual([]);
  expect.soft(observed.counts).toEqual(expected);
  expect.soft(withoutRules(census.sinceBaseline())).toEqual(expectedInventoryChange(expected));
}

async function serverExists(id: string): Promise<boolean> {
  try {
    await census.clients.nova.getServer(id);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

describe('changing the bastion of a Ready cluster', () => {
  it('replaces the server on a spec change and moves its floating IP to the new one', async () => {
    const before = await readCluster();
    const oldId = before.status.bastion?.id;
    const address = before.status.bastion?.floatingIP;
    expect(oldId).toBeDefined();
    expect(address).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const [fipBefore] = await census.clients.neutron.listFloatingIps({ floating_ip_address: address });

    await patchCluster({ spec: { bastion: { spec: { flavor: { filter: { name: 'm1.small' } } } } } });
    const after = clusterView.parse(
      await waitForObject(
        server.kubectl,
        clusterRef,
        'bastion replacement',
        (object) => {
          const cluster = clusterView.parse(object);
          return cluster.status.bastion?.id !== undefined && cluster.status.bastion.id !== oldId && readyForCurrentSpec(cluster);
        },
        120,
      ),
    );
    const newId = after.status.bastion!.id!;

    expect(await serverExists(oldId!)).toBe(false);
    const replacement = await census.clients.nova.getServer(newId);
    expect(replacement.status).toBe('ACTIVE');
    expect(replacement.flavor.original_name).toBe('m1.small');

    expect(after.status.bastion?.floatingIP).toBe(address);
    const [fip] = await census.clients.neutron.listFloatingIps({ floating_ip_address: address });
    expect(fip?.id, 'the same floating IP, not a new one with the same address').toBe(fipBefore?.id);
    expect(fip?.port_id).toBeTruthy();
    expect((await census.clients.neutron.getPort(fip!.port_id!)).device_id).toBe(newId);

    await expectResourcesOf(parsed);
  }, 180_000);

  it('deletes the server, its floating IP and its security group when disabled', async () => {
    const before = await readCluster();
    const bastionId = before.status.bastion?.id;
    const address = before.status.bastion?.floatingIP;
    expect(bastionId).toBeDefined();

    await patchCluster({ spec: { bastion: { enabled: false } } });
    const after = clusterView.parse(
      await waitForObject(
        server.kubectl,
        clusterRef,
        'bastion removal',
        (object) => {
          const cluster = clusterView.parse(object);
          return cluster.status.bastion === undefined && readyForCurrentSpec(cluster);
        },
        120,
      ),
    );
    // Ready for the new spec means the bastion is gone with everything it had; each leftover is reported.
    expect.soft(after.status.bastionSecurityGroup, 'status.bastionSecurityGroup once Ready').toBeUndefined();
    expect.soft(await serverExists(bastionId!), 'the bastion server').toBe(false);
    expect.soft(await census.clients.neutron.listSecurityGroups({ name: bastionSecurityGroupName }), 'the bastion security group').toEqual([]);
    expect.soft(await census.clients.neutron.listFloatingIps({ floating_ip_address: address }), 'the bastion floating IP').toEqual([]);
    await expectResourcesOf(withBastionDisabled(parsed));
  }, 180_000);

  it('leaves nothing behind when the cluster is deleted', async () => {
    await deleteWithoutWaiting(server.kubectl, manifests);
    await waitForDeletion(server.kubectl, 120);
    expect((await census.ours()).counts).toEqual(noResources);
    expect(census.sinceBaseline()).toEqual({});
  }, 180_000);
});
