/**
 * Issue 47, M6, the dashboard's JSON API: a cluster's page and the overview show an object of another
 * kind than the OpenStackCluster (machines, servers, the ClusterExtension's variables, Events, ORC
 * Images, Cluster API's Cluster) only to a caller that may list that kind in the namespace; what is
 * left out is named in the summary's `hidden`, and its source is not even read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed, teamAObjects, teamBObjects } from '../../harness/inventory-fixtures.js';
import { startInventoryServer, tokens, type InventoryServer } from '../../harness/inventory-server.js';
import type { JsonObject } from '../../src/storage/interface.js';
import type { ClusterPageData, TreeNode } from '../../src/dashboard/view-types.js';

let server: InventoryServer;
const reads: string[] = [];
const events: JsonObject[] = [];

beforeAll(async () => {
  server = await startInventoryServer({
    dashboard: {
      readClusterApiCluster: async (namespace, name) => {
        reads.push(`Cluster ${namespace}/${name}`);
        return { name, paused: false, phase: 'Provisioned' };
      },
      readOrcImage: async (namespace, name) => {
        reads.push(`Image ${namespace}/${name}`);
        return { name, id: 'glance-1', state: 'Available', ready: true };
      },
      readEvents: async (namespace) => {
        reads.push(`Events ${namespace}`);
        return events;
      },
    },
  });
  const objects = teamAObjects(2).map((object: any) => {
    if (object.kind === 'OpenStackMachine' && object.metadata.name === 'c1-cp-0') object.spec.image = { imageRef: { name: 'ubuntu-orc' } };
    return object;
  });
  await seed(server, [...objects, ...teamBObjects()]);
  const machine = await server.request('GET', '/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/team-a/openstackmachines/c1-cp-0', {
    token: server.adminToken,
  });
  events.push({
    involvedObject: { kind: 'OpenStackMachine', name: 'c1-cp-0', uid: machine.body.metadata.uid },
    type: 'Warning',
    reason: 'ResourceVanished',
    message: 'port c1-cp-0-0 was deleted behind our back',
    count: 1,
    firstTimestamp: '2026-01-01T00:00:00Z',
    lastTimestamp: '2026-01-01T00:00:00Z',
  });
});

afterAll(async () => {
  await server?.close();
});

const page = async (token: string) => {
  const answer = await server.request('GET', '/dashboard/api/namespaces/team-a/clusters/c1', { token });
  expect(answer.status).toBe(200);
  return answer.body as ClusterPageData;
};
const kinds = (node: TreeNode): string[] => [node.kind, ...node.children.flatMap(kinds)];
/** The tree holds c1's three machines with their servers. */
const expectMachinesAndServers = (tree: TreeNode) => {
  const shown = kinds(tree);
  expect(shown.filter((kind) => kind === 'OpenStackMachine')).toHaveLength(3);
  expect(shown.filter((kind) => kind === 'OpenStackServer')).toHaveLength(3);
  return shown;
};
const everyKindHidden = [
  'clusterextensions.extensions.capo-apiserver.io',
  'clusters.cluster.x-k8s.io',
  'events',
  'images.openstack.k-orc.cloud',
  'openstackmachines.infrastructure.cluster.x-k8s.io',
  'openstackservers.infrastructure.cluster.x-k8s.io',
];

describe('a caller allowed only OpenStackClusters', () => {
  it("sees the cluster's page without its machines, servers, variables, Events, Images or Cluster, and none of them is read", async () => {
    reads.length = 0;
    const detail = await page(tokens.alice);
    expect(detail.tree.kind).toBe('OpenStackCluster');
    const shown = kinds(detail.tree);
    for (const kind of ['Cluster', 'OpenStackMachine', 'OpenStackServer', 'Image', 'Port', 'Volume']) expect(shown).not.toContain(kind);
    expect(detail.variables).toBeUndefined();
    expect(detail.events).toBeUndefined();
    expect(detail.drift).toBeUndefined();
    expect(detail.timeline.map((span) => span.object)).toEqual(['OpenStackCluster c1']);
    expect(detail.summary).toMatchObject({ machines: 0, machinesReady: 0, missingVariables: [], hidden: everyKindHidden });
    expect(JSON.stringify(detail)).not.toMatch(/c1-cp-0|c1-md-00|ubuntu-orc/);
    expect(reads).toEqual([]);
  });

  it('sees the overview row without machine counts or variables, marked hidden', async () => {
    const answer = await server.request('GET', '/dashboard/api/clusters', { token: tokens.alice });
    expect(answer.body.clusters).toEqual([
      expect.objectContaining({ namespace: 'team-a', name: 'c1', machines: 0, missingVariables: [], hidden: everyKindHidden }),
    ]);
    expect(JSON.stringify(answer.body)).not.toMatch(/c1-cp-0|c1-md-00/);
  });

  it('is refused the inventory download', async () => {
    const answer = await server.request('GET', '/dashboard/api/namespaces/team-a/clusters/c1/inventory', { token: tokens.alice });
    expect(answer.status).toBe(403);
    expect(answer.body.message).toMatch(/^openstacknodes.extensions.capo-apiserver.io is forbidden: User "alice" cannot list/);
  });
});

describe('callers allowed more', () => {
  it('shows everything to a caller allowed every kind in the namespace', async () => {
    reads.length = 0;
    const detail = await page(tokens.bob);
    expect(detail.tree.kind).toBe('Cluster');
    expect(expectMachinesAndServers(detail.tree)).toContain('Image');
    expect(detail.variables?.status?.vars).toMatchObject({ openstack_region_name: 'RegionOne' });
    expect(detail.events).toMatchObject([{ object: 'OpenStackMachine c1-cp-0', reason: 'ResourceVanished' }]);
    expect(detail.summary.machines).toBe(3);
    expect(detail.summary.hidden).toBeUndefined();
    expect(reads.sort()).toEqual(['Cluster team-a/c1', 'Events team-a', 'Image team-a/ubuntu-orc']);
    const download = await server.request('GET', '/dashboard/api/namespaces/team-a/clusters/c1/inventory', { token: tokens.bob });
    expect(Object.keys(download.body._meta.hostvars)).toEqual(['c1-cp-0', 'c1-md-000', 'c1-md-001', 'c1-bastion']);
  });

  it('shows each kind by its own right: machines, servers and variables, but not Events, Images or the Cluster', async () => {
    reads.length = 0;
    const detail = await page(tokens.erin);
    expect(detail.tree.kind).toBe('OpenStackCluster');
    expect(expectMachinesAndServers(detail.tree)).not.toContain('Image');
    expect(detail.variables).toBeDefined();
    expect(detail.events).toBeUndefined();
    expect(detail.summary.hidden).toEqual(['clusters.cluster.x-k8s.io', 'events', 'images.openstack.k-orc.cloud']);
    expect(reads).toEqual([]);
  });

  it('shows the admin every cluster whole in the overview', async () => {
    const answer = await server.request('GET', '/dashboard/api/clusters', { token: server.adminToken });
    expect(answer.body.clusters.map((row: any) => [row.name, row.machines, row.hidden])).toEqual([
      ['c1', 3, undefined],
      ['c2', 1, undefined],
    ]);
  });
});
