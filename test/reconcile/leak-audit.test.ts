/**
 * The leak audit against the simulated cloud with the example cluster Ready: resources marked for
 * an owner that is gone (a server, a port, a volume by its metadata) are found, in the cloud the
 * example's identity names; everything the cluster's live objects made, and what a user made
 * without our mark, is not. The cleanup deletes what is still a leak, dependents first, and
 * refuses what is not one, whatever the caller names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, waitForReady } from '../../harness/cluster-flow.js';
import { createServiceClients, loadCloud, OpenStackSession, type ServiceClients } from '../../src/openstack/index.js';
import { startExampleServer, type ExampleServer } from './flows/examples.js';

const goneOwner = '00000000-0000-4000-8000-00000000dead';
const goneTag = `capo-apiserver:owner=${goneOwner}`;
/** What another management plane in the same project tags its resources with. */
const otherInstallationTag = 'capo-apiserver:installation=0123456789abcdef';

describe('the leak audit', () => {
  let example: ExampleServer;
  let session: OpenStackSession;
  let cloud: ServiceClients;
  const left: { servers: string; ports: string; volumes: string; userNetwork: string; otherInstallations: string } = {
    servers: '',
    ports: '',
    volumes: '',
    userNetwork: '',
    otherInstallations: '',
  };
  /** The tag this installation puts on what it creates, read from the cluster's network. */
  let ourInstallationTag = '';

  beforeAll(async () => {
    example = await startExampleServer();
    await apply(example.server.kubectl, example.manifests);
    await waitForReady(example.server.kubectl, 'demo', 150);
    session = await OpenStackSession.create(loadCloud({ cloudsYaml: example.server.cloud!.cloudsYaml(), cloudName: 'simulator' }));
    cloud = createServiceClients(session);
    const network = await cloud.neutron.createNetwork({ name: 'users-own' });
    left.userNetwork = network.id;
    const port = await cloud.neutron.createPort({ network_id: network.id, name: 'left-port' });
    const clusterNetwork = (await example.server.kubectl(['get', 'openstackcluster', 'demo', '-o', 'jsonpath={.status.network.id}'])).stdout;
    ourInstallationTag = (await cloud.neutron.getNetwork(clusterNetwork)).tags?.find((tag) => tag.startsWith('capo-apiserver:installation=')) ?? '';
    // Ours: tagged by this installation, as everything it makes is.
    await cloud.neutron.replaceTags('ports', port.id, [goneTag, ourInstallationTag]);
    left.ports = port.id;
    const others = await cloud.neutron.createPort({ network_id: network.id, name: 'other-installations-port' });
    await cloud.neutron.replaceTags('ports', others.id, [goneTag, otherInstallationTag]);
    left.otherInstallations = others.id;
    const [flavor] = await cloud.nova.listFlavors();
    const [image] = (await cloud.glance.listImages()).filter((candidate) => candidate.status === 'active');
    left.servers = (await cloud.nova.createServer({ name: 'left-server', flavorRef: flavor!.id, imageRef: image!.id, networks: 'none', tags: [goneTag] })).id;
    left.volumes = (await cloud.cinder.createVolume({ size: 1, name: 'left-volume', metadata: { 'capo-apiserver-owner': goneOwner } })).id;
  }, 240_000);

  afterAll(async () => {
    session?.close();
    await example?.stop();
  });

  it('tags what it creates with its installation, kept in storage', () => {
    expect(ourInstallationTag).toMatch(/^capo-apiserver:installation=[0-9a-f]{16}$/);
  });

  it('finds what is marked for an owner that is gone, and nothing of the live cluster, of users or of another installation', async () => {
    const audit = await example.server.reconciler!.leaks();
    expect(audit.otherInstallations).toBe(1);
    expect(audit.failed).toEqual([]);
    expect(audit.clouds).toEqual(['default/demo-cloud-config:openstack']);
    expect(audit.leaks.map(({ kind, id, ownerUid }) => ({ kind, id, ownerUid })).sort((a, b) => a.kind.localeCompare(b.kind))).toEqual([
      { kind: 'ports', id: left.ports, ownerUid: goneOwner },
      { kind: 'servers', id: left.servers, ownerUid: goneOwner },
      { kind: 'volumes', id: left.volumes, ownerUid: goneOwner },
    ]);
    expect(audit.leaks.map((leak) => leak.id)).not.toContain(left.otherInstallations);
    expect(audit.leaks.every((leak) => leak.cloud === 'default/demo-cloud-config:openstack')).toBe(true);
  });

  it('deletes only what is still a leak, whatever it is asked to delete', async () => {
    const clusterNetwork = (await example.server.kubectl(['get', 'openstackcluster', 'demo', '-o', 'jsonpath={.status.network.id}'])).stdout;
    expect(clusterNetwork).not.toBe('');
    const outcomes = await example.server.reconciler!.cleanUpLeaks([
      { kind: 'volumes', id: left.volumes },
      { kind: 'networks', id: clusterNetwork },
      { kind: 'networks', id: left.userNetwork },
      { kind: 'ports', id: left.ports },
      { kind: 'ports', id: left.otherInstallations },
      { kind: 'servers', id: left.servers },
      { kind: 'flavors', id: 'anything' },
    ]);
    // Dependents first: the server before the port, volumes after both; what is no leak is refused.
    // Nova and Cinder delete in the background: the audit below sees them go.
    expect(outcomes.map(({ kind, id, outcome }) => ({ kind, id, outcome }))).toEqual([
      { kind: 'servers', id: left.servers, outcome: expect.stringMatching(/^(deleted|deleting)$/) },
      { kind: 'ports', id: left.ports, outcome: 'deleted' },
      { kind: 'ports', id: left.otherInstallations, outcome: 'not a leak' },
      { kind: 'networks', id: clusterNetwork, outcome: 'not a leak' },
      { kind: 'networks', id: left.userNetwork, outcome: 'not a leak' },
      { kind: 'volumes', id: left.volumes, outcome: expect.stringMatching(/^(deleted|deleting)$/) },
      { kind: 'flavors', id: 'anything', outcome: 'not a leak' },
    ]);
    expect((await cloud.neutron.getNetwork(clusterNetwork)).id).toBe(clusterNetwork);
    expect((await cloud.neutron.getNetwork(left.userNetwork)).id).toBe(left.userNetwork);
    expect((await cloud.neutron.getPort(left.otherInstallations)).id).toBe(left.otherInstallations);
    await expect.poll(async () => (await example.server.reconciler!.leaks()).leaks, { timeout: 20_000 }).toEqual([]);
  });
});
