/**
 * Each resource family created and deleted through the real session against
 * the OpenStack simulator, so request shapes and response schemas are
 * checked against services that enforce them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil } from '../../../harness/poll.js';
import { isNotFound, loadCloud, OpenStackSession } from '../../../src/openstack/index.js';
import { createServiceClients, type ServiceClients } from '../../../src/openstack/services/index.js';
import type { ServiceType } from '../../../src/openstack/transport.js';
import { defaultServices, startSimulator, type Simulator } from '../../../src/simulator/host.js';
import { createNeutronSimulator } from '../../../src/simulator/neutron/index.js';
import { createNovaSimulator } from '../../../src/simulator/nova/index.js';
import { createOctaviaSimulator } from '../../../src/simulator/octavia/index.js';

let simulator: Simulator;
let session: OpenStackSession;
let clients: ServiceClients;
let projectId: string;

beforeAll(async () => {
  // Named explicitly so this test does not depend on which services the host hosts by default (a Set, as the defaults may name them too).
  const services = [...new Set([...defaultServices, createNeutronSimulator, createNovaSimulator, createOctaviaSimulator])];
  simulator = await startSimulator({ transitionDelayMs: 20, services });
  session = await OpenStackSession.create(loadCloud({ cloudsYaml: simulator.cloudsYaml('sim'), cloudName: 'sim' }), { sleep: async () => undefined });
  clients = createServiceClients(session);
  projectId = (await session.authenticate()).projectId;
});

afterAll(async () => {
  session?.close();
  await simulator?.close();
});

/** Polls `read` until `done` holds for its result, as a reconciler's requeues would. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const reached = await pollUntil(
    'a state the test waits for',
    async () => {
      const value = await read();
      return done(value) ? { value } : undefined;
    },
    { timeoutMs },
  );
  return reached.value;
}

async function gone(read: () => Promise<unknown>): Promise<void> {
  await until(
    () =>
      read().then(
        () => false,
        (error: unknown) => {
          if (isNotFound(error)) return true;
          throw error;
        },
      ),
    (isGone) => isGone,
  );
}

function expectNoLeaks(service: ServiceType, before: Record<string, number> | undefined): void {
  expect(simulator.inventory()[service]).toEqual(before);
}

describe('service clients against the simulator', () => {
  it('Glance: finds the seeded image by name and tags, and gets it', async () => {
    const [image] = await clients.glance.findImages({ name: 'ubuntu-22.04' });
    expect(image?.status).toBe('active');
    expect(await clients.glance.findImages({ name: 'ubuntu-22.04', tags: ['no-such-tag'] })).toEqual([]);
    expect((await clients.glance.getImage(image!.id)).os_distro).toBe('ubuntu');
  });

  it('Cinder: creates a volume, waits for it, finds it, deletes it; reads types, zones, limits and quotas', async () => {
    const { cinder } = clients;
    const before = simulator.inventory()['block-storage'];
    const created = await cinder.createVolume({ size: 1, name: 'svc-test-vol', metadata: { owner: 'svc-test' } });
    expect(created.status).toBe('creating');
    await until(
      () => cinder.getVolume(created.id),
      (volume) => volume.status === 'available',
    );
    expect((await cinder.listVolumes({ name: 'svc-test-vol', metadata: { owner: 'svc-test' } })).map((v) => v.id)).toEqual([created.id]);
    expect(await cinder.listVolumes({ metadata: { owner: 'someone-else' } })).toEqual([]);
    expect((await cinder.listVolumeTypes()).length).toBeGreaterThan(0);
    expect((await cinder.listAvailabilityZones()).some((zone) => zone.zoneState.available)).toBe(true);
    expect((await cinder.getLimits()).totalVolumesUsed).toBeGreaterThan(0);
    expect((await cinder.getQuotas(projectId)).volumes?.in_use).toBeGreaterThan(0);
    await cinder.deleteVolume(created.id);
    await gone(() => cinder.getVolume(created.id));
    expectNoLeaks('block-storage', before);
  });

  it('Neutron: network, subnet, router with interface, security group and rule, port, floating IP, trunk, tags and quotas', async () => {
    const { neutron } = clients;
    // Neutron creates the project's default security group on first use; let that happen before counting.
    await neutron.listSecurityGroups();
    const before = simulator.inventory().network;
    const [external] = await neutron.findExternalNetworks();
    expect(external).toBeDefined();

    const network = await neutron.createNetwork({ name: 'svc-test-net', admin_state_up: true });
    await neutron.replaceTags('networks', network.id, ['svc-test', 'owner-1']);
    expect((await neutron.listNetworks({ tags: ['svc-test', 'owner-1'] })).map((n) => n.id)).toEqual([network.id]);
    expect(await neutron.listNetworks({ name: 'svc-test-net', 'not-tags-any': ['owner-1'] })).toEqual([]);
    await neutron.addTag('networks', network.id, 'extra');
    await neutron.removeTag('networks', network.id, 'extra');
    expect((await neutron.updateNetwork(network.id, { description: 'updated' })).description).toBe('updated');

    const subnet = await neutron.createSubnet({
      network_id: network.id,
      name: 'svc-test-net',
      cidr: '10.77.0.0/24',
      ip_version: 4,
      dns_nameservers: ['8.8.8.8'],
      allocation_pools: [{ start: '10.77.0.10', end: '10.77.0.100' }],
    });
    expect((await neutron.listSubnets({ network_id: network.id, cidr: '10.77.0.0/24' })).map((s) => s.id)).toEqual([subnet.id]);
    expect((await neutron.updateSubnet(subnet.id, { dns_nameservers: ['1.1.1.1'] })).dns_nameservers).toEqual(['1.1.1.1']);

    const router = await neutron.createRouter({ name: 'svc-test-router', external_gateway_info: { network_id: external!.id } });
    expect(router.external_gateway_info?.network_id).toBe(external!.id);
    const added = await neutron.addInterface(router.id, { subnet_id: subnet.id });
    expect((await neutron.listPorts({ device_id: router.id })).map((p) => p.id)).toContain(added.port_id);

    const group = await neutron.createSecurityGroup({ name: 'svc-test-sg', description: 'Cluster API managed group' });
    const rule = await neutron.createSecurityGroupRule({
      security_group_id: group.id,
      direction: 'ingress',
      protocol: 'tcp',
      port_range_min: 6443,
      port_range_max: 6443,
      remote_ip_prefix: '0.0.0.0/0',
    });
    expect((await neutron.listSecurityGroupRules({ security_group_id: group.id })).map((r) => r.id)).toContain(rule.id);
    expect((await neutron.listSecurityGroups({ name: 'svc-test-sg' })).map((g) => g.id)).toEqual([group.id]);

    const port = await neutron.createPort({
      network_id: network.id,
      name: 'svc-test-port',
      fixed_ips: [{ subnet_id: subnet.id }],
      security_groups: [group.id],
      allowed_address_pairs: [{ ip_address: '10.77.0.200' }],
    });
    const address = port.fixed_ips[0]!.ip_address;
    expect((await neutron.listPorts({ network_id: network.id, fixed_ips: [{ ip_address: address }] })).map((p) => p.id)).toEqual([port.id]);
    await neutron.updatePort(port.id, { description: 'updated' });

    const floatingIp = await neutron.createFloatingIp({ floating_network_id: external!.id, description: 'svc-test' });
    await neutron.updateFloatingIp(floatingIp.id, { port_id: port.id });
    expect((await neutron.listFloatingIps({ port_id: port.id })).map((f) => f.id)).toEqual([floatingIp.id]);
    await neutron.updateFloatingIp(floatingIp.id, { port_id: null });
    expect((await neutron.getFloatingIp(floatingIp.id)).port_id).toBeNull();

    const subPort = await neutron.createPort({ network_id: network.id, name: 'svc-test-subport' });
    const trunk = await neutron.createTrunk({ name: 'svc-test-port', port_id: port.id });
    expect((await neutron.addSubports(trunk.id, [{ port_id: subPort.id, segmentation_type: 'vlan', segmentation_id: 101 }])).sub_ports).toHaveLength(1);
    expect((await neutron.listTrunks({ port_id: port.id })).map((t) => t.id)).toEqual([trunk.id]);
    expect((await neutron.removeSubports(trunk.id, [subPort.id])).sub_ports).toEqual([]);

    expect((await neutron.getQuotas(projectId)).network?.used).toBeGreaterThan(0);

    await neutron.deleteTrunk(trunk.id);
    await neutron.deleteFloatingIp(floatingIp.id);
    await neutron.deletePort(subPort.id);
    await neutron.deletePort(port.id);
    await neutron.deleteSecurityGroupRule(rule.id);
    await neutron.deleteSecurityGroup(group.id);
    await neutron.removeInterface(router.id, { subnet_id: subnet.id });
    await neutron.deleteRouter(router.id);
    await neutron.deleteSubnet(subnet.id);
    await neutron.deleteNetwork(network.id);
    await gone(() => neutron.getNetwork(network.id));
    expectNoLeaks('network', before);
  });

  it('Nova: server group, server on a port with tags and metadata, interfaces, volume attachment; flavors, zones, limits', async () => {
    const { nova, neutron, glance, cinder } = clients;
    const before = simulator.inventory().compute;
    const flavor = await nova.findFlavorByName('m1.tiny');
    expect(flavor).toBeDefined();
    expect((await nova.getFlavor(flavor!.id)).name).toBe('m1.tiny');
    const [image] = await glance.findImages({ name: 'ubuntu-22.04' });
    expect((await nova.listAvailabilityZones()).some((zone) => zone.zoneState.available)).toBe(true);
    expect(await nova.listKeypairs()).toEqual(expect.any(Array));

    const group = await nova.createServerGroup({ name: 'svc-test-group', policy: 'anti-affinity' });
    expect((await nova.listServerGroups()).map((g) => g.id)).toContain(group.id);

    const network = await neutron.createNetwork({ name: 'svc-test-nova-net' });
    const subnet = await neutron.createSubnet({ network_id: network.id, cidr: '10.78.0.0/24', ip_version: 4 });
    const port = await neutron.createPort({ network_id: network.id, name: 'svc-test-server-0' });
    const created = await nova.createServer(
      {
        name: 'svc-test-server',
        flavorRef: flavor!.id,
        imageRef: image!.id,
        networks: [{ port: port.id }],
        user_data: Buffer.from('#cloud-config\n').toString('base64'),
        metadata: { owner: 'svc-test' },
        tags: ['svc-test'],
      },
      { group: group.id },
    );
    const server = await until(
      () => nova.getServer(created.id),
      (s) => s.status !== 'BUILD',
    );
    expect(server.status).toBe('ACTIVE');
    expect((await nova.findServersByName('svc-test-server')).map((s) => s.id)).toEqual([created.id]);
    expect((await nova.listServers({ tags: ['svc-test'] })).map((s) => s.id)).toEqual([created.id]);
    expect(await nova.replaceServerTags(created.id, ['svc-test', 'b'])).toEqual(expect.arrayContaining(['svc-test', 'b']));
    await nova.addServerTag(created.id, 'c');
    await nova.removeServerTag(created.id, 'c');
    expect(await nova.listServerTags(created.id)).toEqual(expect.arrayContaining(['svc-test', 'b']));
    expect(await nova.updateServerMetadata(created.id, { extra: '1' })).toEqual({ owner: 'svc-test', extra: '1' });
    await nova.deleteServerMetadataItem(created.id, 'extra');
    expect(await nova.replaceServerMetadata(created.id, { owner: 'svc-test' })).toEqual({ owner: 'svc-test' });
    expect((await nova.getServerMetadata(created.id)).owner).toBe('svc-test');
    expect((await nova.listInterfaces(created.id)).map((i) => i.port_id)).toEqual([port.id]);

    const volume = await cinder.createVolume({ size: 1, name: 'svc-test-data' });
    await until(
      () => cinder.getVolume(volume.id),
      (v) => v.status === 'available',
    );
    await nova.attachVolume(created.id, { volumeId: volume.id });
    await until(
      () => cinder.getVolume(volume.id),
      (v) => v.status === 'in-use',
    );
    expect((await nova.listVolumeAttachments(created.id)).map((a) => a.volumeId)).toEqual([volume.id]);
    await nova.detachVolume(created.id, volume.id);
    await until(
      () => cinder.getVolume(volume.id),
      (v) => v.status === 'available',
    );

    const limits = await nova.getLimits();
    expect(limits.totalInstancesUsed).toBeGreaterThan(0);

    await nova.deleteServer(created.id);
    await gone(() => nova.getServer(created.id));
    await nova.deleteServerGroup(group.id);
    await cinder.deleteVolume(volume.id);
    await gone(() => cinder.getVolume(volume.id));
    await neutron.deletePort(port.id);
    await neutron.deleteSubnet(subnet.id);
    await neutron.deleteNetwork(network.id);
    expectNoLeaks('compute', before);
  });

  it('Octavia: load balancer, listener, pool, member, health monitor, cascade delete; providers and flavors', async () => {
    const { octavia, neutron } = clients;
    const before = simulator.inventory()['load-balancer'];
    expect((await octavia.listProviders()).map((p) => p.name)).toContain('amphora');
    expect(await octavia.listFlavors()).toEqual(expect.any(Array));
    const network = await neutron.createNetwork({ name: 'svc-test-lb-net' });
    const subnet = await neutron.createSubnet({ network_id: network.id, cidr: '10.79.0.0/24', ip_version: 4 });
    const active = (id: string) =>
      until(
        () => octavia.getLoadBalancer(id),
        (lb) => lb.provisioning_status === 'ACTIVE',
      );

    const lb = await octavia.createLoadBalancer({ name: 'svc-test-lb', vip_subnet_id: subnet.id, tags: ['svc-test'] });
    await active(lb.id);
    expect((await octavia.listLoadBalancers({ name: 'svc-test-lb', tags: ['svc-test'] })).map((l) => l.id)).toEqual([lb.id]);
    const listener = await octavia.createListener({ name: 'svc-test-lb-6443', protocol: 'TCP', protocol_port: 6443, loadbalancer_id: lb.id });
    await active(lb.id);
    await octavia.updateListener(listener.id, { allowed_cidrs: ['10.0.0.0/8'] });
    await active(lb.id);
    expect((await octavia.getListener(listener.id)).allowed_cidrs).toEqual(['10.0.0.0/8']);
    const pool = await octavia.createPool({ name: 'svc-test-lb-6443', protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN', listener_id: listener.id });
    await active(lb.id);
    const member = await octavia.createMember(pool.id, { name: 'svc-test-member', address: '10.79.0.20', protocol_port: 6443 });
    await active(lb.id);
    expect((await octavia.listMembers(pool.id, { name: 'svc-test-member' })).map((m) => m.id)).toEqual([member.id]);
    const monitor = await octavia.createHealthMonitor({ name: 'svc-test-lb-6443', pool_id: pool.id, type: 'TCP', delay: 10, timeout: 5, max_retries: 5 });
    await active(lb.id);
    expect((await octavia.getHealthMonitor(monitor.id)).pools?.[0]?.id).toBe(pool.id);

    await octavia.deleteLoadBalancer(lb.id, { cascade: true });
    await gone(() => octavia.getLoadBalancer(lb.id));
    await neutron.deleteSubnet(subnet.id);
    await neutron.deleteNetwork(network.id);
    expectNoLeaks('load-balancer', before);
  });
});
