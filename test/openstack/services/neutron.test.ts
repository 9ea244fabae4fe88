import { describe, expect, it } from 'vitest';
import { OpenStackError } from '../../../src/openstack/errors.js';
import { NeutronClient } from '../../../src/openstack/services/neutron.js';
import { RecordingTransport } from './recording-transport.js';

const project = '0bd18306d801447bb457a46252d82d13';
const stamps = { created_at: '2026-08-01T10:00:00Z', updated_at: '2026-08-01T10:00:01Z', revision_number: 2 };

const network = {
  id: 'ae34051f-aa6c-4c75-abf5-50dc9ac99ef3',
  name: 'k8s-clusterapi-cluster-default-demo',
  status: 'ACTIVE',
  admin_state_up: true,
  subnets: ['b930d7f6-ceb7-40a0-8b81-a425dd994ccf'],
  tenant_id: project,
  project_id: project,
  shared: false,
  'router:external': false,
  mtu: 1442,
  port_security_enabled: true,
  availability_zone_hints: [],
  availability_zones: ['nova'],
  ipv4_address_scope: null,
  ipv6_address_scope: null,
  l2_adjacency: true,
  'provider:network_type': 'geneve',
  dns_domain: '',
  qos_policy_id: null,
  description: '',
  tags: ['cluster-a'],
  ...stamps,
};

const externalNetwork = { ...network, id: 'e1', name: 'public', 'router:external': true, is_default: true, tags: [] };

const subnet = {
  id: 'b930d7f6-ceb7-40a0-8b81-a425dd994ccf',
  name: 'k8s-clusterapi-cluster-default-demo',
  network_id: network.id,
  tenant_id: project,
  project_id: project,
  cidr: '10.6.0.0/24',
  ip_version: 4,
  gateway_ip: '10.6.0.1',
  enable_dhcp: true,
  dns_nameservers: ['8.8.8.8'],
  allocation_pools: [{ start: '10.6.0.2', end: '10.6.0.254' }],
  host_routes: [],
  ipv6_address_mode: null,
  ipv6_ra_mode: null,
  subnetpool_id: null,
  service_types: [],
  dns_publish_fixed_ip: null,
  description: 'Created by cluster-api-provider-openstack cluster default-demo',
  tags: [],
  ...stamps,
};

const router = {
  id: 'f8a44de0-fc8e-45df-93c7-f79bf3b01c95',
  name: 'k8s-clusterapi-cluster-default-demo',
  status: 'ACTIVE',
  admin_state_up: true,
  external_gateway_info: {
    network_id: externalNetwork.id,
    enable_snat: true,
    external_fixed_ips: [{ subnet_id: 'ext-sub', ip_address: '172.24.4.6' }],
  },
  routes: [],
  distributed: false,
  ha: false,
  flavor_id: null,
  availability_zone_hints: [],
  availability_zones: ['nova'],
  project_id: project,
  tenant_id: project,
  description: '',
  tags: [],
  ...stamps,
};

const port = {
  id: '2dc46bcc-d1f2-4077-b99e-91ee28afaff0',
  name: 'demo-md-0-abcde-0',
  network_id: network.id,
  tenant_id: project,
  project_id: project,
  mac_address: 'fa:16:3e:58:42:ed',
  admin_state_up: true,
  status: 'DOWN',
  device_id: '',
  device_owner: '',
  fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.6.0.12' }],
  allowed_address_pairs: [{ ip_address: '10.6.0.200', mac_address: 'fa:16:3e:58:42:ed' }],
  extra_dhcp_opts: [],
  security_groups: ['sg-worker'],
  port_security_enabled: true,
  'binding:vnic_type': 'normal',
  'binding:profile': {},
  'binding:vif_type': 'unbound',
  'binding:vif_details': {},
  dns_name: '',
  dns_assignment: [],
  data_plane_status: null,
  propagate_uplink_status: false,
  qos_policy_id: null,
  qos_network_policy_id: null,
  resource_request: null,
  ip_allocation: 'immediate',
  description: '',
  tags: ['cluster-a'],
  ...stamps,
};

const rule = {
  id: 'r1',
  security_group_id: 'sg-cp',
  direction: 'ingress',
  ethertype: 'IPv4',
  protocol: 'tcp',
  port_range_min: 6443,
  port_range_max: 6443,
  remote_ip_prefix: '0.0.0.0/0',
  remote_group_id: null,
  remote_address_group_id: null,
  normalized_cidr: '0.0.0.0/0',
  belongs_to_default_sg: false,
  description: 'Kubernetes API',
  project_id: project,
  tenant_id: project,
  ...stamps,
};

const egressRule = {
  ...rule,
  id: 'r0',
  direction: 'egress',
  protocol: null,
  port_range_min: null,
  port_range_max: null,
  remote_ip_prefix: null,
  normalized_cidr: null,
  description: null,
};

const securityGroup = {
  id: 'sg-cp',
  name: 'k8s-cluster-default-demo-secgroup-controlplane',
  description: 'Cluster API managed group',
  stateful: true,
  shared: false,
  security_group_rules: [egressRule, rule],
  project_id: project,
  tenant_id: project,
  tags: [],
  ...stamps,
};

const floatingIp = {
  id: '2f245a7b-796b-4f26-9cf9-9e82d248fda7',
  floating_ip_address: '172.24.4.228',
  floating_network_id: externalNetwork.id,
  router_id: null,
  port_id: null,
  fixed_ip_address: null,
  status: 'DOWN',
  port_details: null,
  port_forwardings: [],
  dns_domain: '',
  dns_name: '',
  qos_policy_id: null,
  description: 'Created by cluster-api-provider-openstack cluster default-demo',
  project_id: project,
  tenant_id: project,
  tags: [],
  ...stamps,
};

const trunk = {
  id: '114a26b1-d124-4835-bb4f-021d3d886023',
  name: 'demo-md-0-abcde-0',
  port_id: port.id,
  status: 'DOWN',
  admin_state_up: true,
  sub_ports: [],
  description: '',
  project_id: project,
  tenant_id: project,
  tags: [],
  ...stamps,
};

function client(): { neutron: NeutronClient; transport: RecordingTransport } {
  const transport = new RecordingTransport();
  return { neutron: new NeutronClient(transport), transport };
}

describe('NeutronClient networks', () => {
  it('lists with filters: router:external, name, project, and comma-joined tag filters', async () => {
    const { neutron, transport } = client();
    transport.reply({ networks: [network] });
    const networks = await neutron.listNetworks({
      name: network.name,
      'router:external': false,
      project_id: project,
      tags: ['cluster-a', 'owner-uid'],
      'tags-any': ['x'],
      'not-tags': ['y'],
      'not-tags-any': ['z', 'w'],
    });
    expect(transport.last).toEqual({
      service: 'network',
      method: 'GET',
      path: '/v2.0/networks',
      idempotent: true,
      query: {
        name: network.name,
        'router:external': false,
        project_id: project,
        tags: 'cluster-a,owner-uid',
        'tags-any': 'x',
        'not-tags': 'y',
        'not-tags-any': 'z,w',
      },
    });
    expect(networks).toHaveLength(1);
    expect(networks[0]!.id).toBe(network.id);
    expect(networks[0]!.mtu).toBe(1442);
    // Unknown fields survive parsing, for status.resource-style mirroring.
    expect(networks[0]!['provider:network_type']).toBe('geneve');
  });

  it('finds external networks with router:external=true and nothing else', async () => {
    const { neutron, transport } = client();
    transport.reply({ networks: [externalNetwork] });
    const found = await neutron.findExternalNetworks();
    expect(transport.last.query).toEqual({ 'router:external': true });
    expect(found[0]!.is_default).toBe(true);
  });

  it('gets, creates, updates and deletes', async () => {
    const { neutron, transport } = client();
    transport
      .reply({ network })
      .reply({ network }, 201)
      .reply({ network: { ...network, mtu: 1400 } })
      .reply(undefined, 204);
    expect((await neutron.getNetwork(network.id)).name).toBe(network.name);
    await neutron.createNetwork({ name: network.name, admin_state_up: true, port_security_enabled: false, mtu: 1400 });
    expect((await neutron.updateNetwork(network.id, { mtu: 1400 })).mtu).toBe(1400);
    await neutron.deleteNetwork(network.id);
    expect(transport.calls.map(({ method, path, body, idempotent }) => ({ method, path, body, idempotent }))).toEqual([
      { method: 'GET', path: `/v2.0/networks/${network.id}`, body: undefined, idempotent: true },
      {
        method: 'POST',
        path: '/v2.0/networks',
        body: { network: { name: network.name, admin_state_up: true, port_security_enabled: false, mtu: 1400 } },
        idempotent: false,
      },
      { method: 'PUT', path: `/v2.0/networks/${network.id}`, body: { network: { mtu: 1400 } }, idempotent: true },
      { method: 'DELETE', path: `/v2.0/networks/${network.id}`, body: undefined, idempotent: true },
    ]);
    expect(transport.calls.every((call) => call.microversion === undefined)).toBe(true);
  });

  it('rejects, without a request, a tag filter that would split into two tags', async () => {
    const { neutron, transport } = client();
    await expect(neutron.listNetworks({ tags: ['a,b'] })).rejects.toMatchObject({ kind: 'BadRequest' });
    expect(transport.calls).toHaveLength(0);
  });

  it('escapes ids in paths', async () => {
    const { neutron, transport } = client();
    transport.reply({ network });
    await neutron.getNetwork('a/b?c');
    expect(transport.last.path).toBe('/v2.0/networks/a%2Fb%3Fc');
  });
});

describe('NeutronClient subnets', () => {
  it('lists by network and CIDR', async () => {
    const { neutron, transport } = client();
    transport.reply({ subnets: [subnet, { ...subnet, id: 's2', gateway_ip: null }] });
    const subnets = await neutron.listSubnets({ network_id: network.id, cidr: '10.6.0.0/24', tags: ['t'] });
    expect(transport.last.query).toEqual({ network_id: network.id, cidr: '10.6.0.0/24', tags: 't' });
    expect(subnets.map((s) => s.gateway_ip)).toEqual(['10.6.0.1', null]);
  });

  it('creates with CIDR, version, DNS, pools and gateway; updates DNS; deletes', async () => {
    const { neutron, transport } = client();
    transport.reply({ subnet }, 201).reply({ subnet }).reply({ subnet }).reply(undefined, 204);
    const created = await neutron.createSubnet({
      network_id: network.id,
      name: subnet.name,
      cidr: '10.6.0.0/24',
      ip_version: 4,
      dns_nameservers: ['8.8.8.8'],
      allocation_pools: [{ start: '10.6.0.2', end: '10.6.0.254' }],
      gateway_ip: null,
      description: subnet.description,
    });
    expect(created.allocation_pools).toEqual([{ start: '10.6.0.2', end: '10.6.0.254' }]);
    expect(transport.last.body).toEqual({
      subnet: {
        network_id: network.id,
        name: subnet.name,
        cidr: '10.6.0.0/24',
        ip_version: 4,
        dns_nameservers: ['8.8.8.8'],
        allocation_pools: [{ start: '10.6.0.2', end: '10.6.0.254' }],
        gateway_ip: null,
        description: subnet.description,
      },
    });
    await neutron.getSubnet(subnet.id);
    await neutron.updateSubnet(subnet.id, { dns_nameservers: ['1.1.1.1'] });
    expect(transport.last).toMatchObject({
      method: 'PUT',
      path: `/v2.0/subnets/${subnet.id}`,
      body: { subnet: { dns_nameservers: ['1.1.1.1'] } },
      idempotent: true,
    });
    await neutron.deleteSubnet(subnet.id);
    expect(transport.last).toMatchObject({ method: 'DELETE', path: `/v2.0/subnets/${subnet.id}`, idempotent: true });
  });
});

describe('NeutronClient routers', () => {
  it('creates with an external gateway, clears it on update, lists and deletes', async () => {
    const { neutron, transport } = client();
    transport
      .reply({ router }, 201)
      .reply({ router: { ...router, external_gateway_info: null } })
      .reply({ routers: [router] })
      .reply({ router })
      .reply(undefined, 204);
    const created = await neutron.createRouter({ name: router.name, description: 'd', external_gateway_info: { network_id: externalNetwork.id } });
    expect(created.external_gateway_info?.external_fixed_ips?.[0]?.ip_address).toBe('172.24.4.6');
    expect(transport.last).toMatchObject({
      method: 'POST',
      path: '/v2.0/routers',
      idempotent: false,
      body: { router: { name: router.name, description: 'd', external_gateway_info: { network_id: externalNetwork.id } } },
    });
    const updated = await neutron.updateRouter(router.id, { external_gateway_info: null });
    expect(updated.external_gateway_info).toBeNull();
    expect(transport.last.body).toEqual({ router: { external_gateway_info: null } });
    await neutron.listRouters({ name: router.name });
    expect(transport.last.query).toEqual({ name: router.name });
    await neutron.getRouter(router.id);
    await neutron.deleteRouter(router.id);
    expect(transport.last).toMatchObject({ method: 'DELETE', path: `/v2.0/routers/${router.id}` });
  });

  it('adds and removes interfaces by subnet or port with unwrapped answers', async () => {
    const { neutron, transport } = client();
    const answer = {
      id: router.id,
      network_id: network.id,
      port_id: 'p-if',
      subnet_id: subnet.id,
      subnet_ids: [subnet.id],
      project_id: project,
      tenant_id: project,
      tags: [],
    };
    transport.reply(answer).reply(answer);
    const added = await neutron.addInterface(router.id, { subnet_id: subnet.id });
    expect(added.port_id).toBe('p-if');
    expect(transport.last).toEqual({
      service: 'network',
      method: 'PUT',
      path: `/v2.0/routers/${router.id}/add_router_interface`,
      body: { subnet_id: subnet.id },
      idempotent: true,
    });
    await neutron.removeInterface(router.id, { port_id: 'p-if' });
    expect(transport.last).toMatchObject({ method: 'PUT', path: `/v2.0/routers/${router.id}/remove_router_interface`, body: { port_id: 'p-if' } });
  });
});

describe('NeutronClient ports', () => {
  it('lists with device, owner (repeated), network, name, tag and fixed-IP filters', async () => {
    const { neutron, transport } = client();
    transport.reply({ ports: [port] });
    const ports = await neutron.listPorts({
      device_id: 'server-1',
      device_owner: ['network:router_interface', 'network:router_interface_distributed'],
      network_id: network.id,
      name: port.name,
      tags: ['cluster-a'],
      fixed_ips: [{ ip_address: '10.6.0.12' }, { subnet_id: subnet.id }],
    });
    expect(transport.last.query).toEqual({
      device_id: 'server-1',
      device_owner: ['network:router_interface', 'network:router_interface_distributed'],
      network_id: network.id,
      name: port.name,
      tags: 'cluster-a',
      fixed_ips: ['ip_address=10.6.0.12', `subnet_id=${subnet.id}`],
    });
    expect(ports[0]!.fixed_ips[0]!.ip_address).toBe('10.6.0.12');
    expect(ports[0]!['binding:vnic_type']).toBe('normal');
  });

  it('creates with fixed IPs, groups, address pairs, binding fields, tags and value_specs merged in', async () => {
    const { neutron, transport } = client();
    transport.reply({ port }, 201);
    await neutron.createPort({
      network_id: network.id,
      name: port.name,
      description: 'Created by cluster-api-provider-openstack cluster default-demo',
      fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.6.0.12' }],
      security_groups: ['sg-worker'],
      allowed_address_pairs: [{ ip_address: '10.6.0.200' }],
      port_security_enabled: true,
      'binding:vnic_type': 'direct',
      'binding:profile': { capabilities: ['switchdev'] },
      tags: ['cluster-a'],
      value_specs: { dns_name: 'node-1', numa_affinity_policy: 'preferred' },
    });
    expect(transport.last).toEqual({
      service: 'network',
      method: 'POST',
      path: '/v2.0/ports',
      idempotent: false,
      body: {
        port: {
          network_id: network.id,
          name: port.name,
          description: 'Created by cluster-api-provider-openstack cluster default-demo',
          fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.6.0.12' }],
          security_groups: ['sg-worker'],
          allowed_address_pairs: [{ ip_address: '10.6.0.200' }],
          port_security_enabled: true,
          'binding:vnic_type': 'direct',
          'binding:profile': { capabilities: ['switchdev'] },
          tags: ['cluster-a'],
          dns_name: 'node-1',
          numa_affinity_policy: 'preferred',
        },
      },
    });
  });

  it('refuses value_specs that would override a modelled field, before sending', async () => {
    const { neutron, transport } = client();
    await expect(neutron.createPort({ network_id: 'n', name: 'a', value_specs: { name: 'b' } })).rejects.toBeInstanceOf(OpenStackError);
    expect(transport.calls).toHaveLength(0);
  });

  it('gets, updates and deletes', async () => {
    const { neutron, transport } = client();
    transport
      .reply({ port: { ...port, trunk_details: { trunk_id: trunk.id, sub_ports: [] } } })
      .reply({ port })
      .reply(undefined, 204);
    expect((await neutron.getPort(port.id)).trunk_details?.trunk_id).toBe(trunk.id);
    await neutron.updatePort(port.id, { allowed_address_pairs: [{ ip_address: '10.6.0.201' }] });
    expect(transport.last).toMatchObject({
      method: 'PUT',
      path: `/v2.0/ports/${port.id}`,
      body: { port: { allowed_address_pairs: [{ ip_address: '10.6.0.201' }] } },
      idempotent: true,
    });
    await neutron.deletePort(port.id);
    expect(transport.last).toMatchObject({ method: 'DELETE', path: `/v2.0/ports/${port.id}`, idempotent: true });
  });
});

describe('NeutronClient security groups', () => {
  it('covers groups and rules', async () => {
    const { neutron, transport } = client();
    transport
      .reply({ security_groups: [securityGroup] })
      .reply({ security_group: securityGroup }, 201)
      .reply({ security_group: securityGroup })
      .reply({ security_group: { ...securityGroup, description: 'x' } })
      .reply(undefined, 204)
      .reply({ security_group_rules: [egressRule, rule] })
      .reply({ security_group_rule: rule }, 201)
      .reply(undefined, 204);
    const groups = await neutron.listSecurityGroups({ name: securityGroup.name, project_id: project });
    expect(transport.last.query).toEqual({ name: securityGroup.name, project_id: project });
    expect(groups[0]!.security_group_rules?.[0]?.protocol).toBeNull();
    await neutron.createSecurityGroup({ name: securityGroup.name, description: 'Cluster API managed group' });
    expect(transport.last).toMatchObject({
      method: 'POST',
      path: '/v2.0/security-groups',
      body: { security_group: { name: securityGroup.name, description: 'Cluster API managed group' } },
    });
    await neutron.getSecurityGroup('sg-cp');
    expect(transport.last.path).toBe('/v2.0/security-groups/sg-cp');
    await neutron.updateSecurityGroup('sg-cp', { description: 'x' });
    expect(transport.last).toMatchObject({ method: 'PUT', body: { security_group: { description: 'x' } } });
    await neutron.deleteSecurityGroup('sg-cp');
    const rules = await neutron.listSecurityGroupRules({ security_group_id: 'sg-cp' });
    expect(transport.last).toMatchObject({ path: '/v2.0/security-group-rules', query: { security_group_id: 'sg-cp' } });
    expect(rules.map((r) => r.port_range_min)).toEqual([null, 6443]);
    await neutron.createSecurityGroupRule({
      security_group_id: 'sg-cp',
      direction: 'ingress',
      ethertype: 'IPv4',
      protocol: 'tcp',
      port_range_min: 6443,
      port_range_max: 6443,
      remote_ip_prefix: '0.0.0.0/0',
      description: 'Kubernetes API',
    });
    expect(transport.last).toMatchObject({
      method: 'POST',
      path: '/v2.0/security-group-rules',
      idempotent: false,
      body: { security_group_rule: { security_group_id: 'sg-cp', port_range_max: 6443 } },
    });
    await neutron.deleteSecurityGroupRule('r1');
    expect(transport.last).toMatchObject({ method: 'DELETE', path: '/v2.0/security-group-rules/r1', idempotent: true });
  });
});

describe('NeutronClient floating IPs', () => {
  it('lists by address, port, description, network and tags; creates; associates; disassociates; deletes', async () => {
    const { neutron, transport } = client();
    const associated = { ...floatingIp, port_id: port.id, fixed_ip_address: '10.6.0.12', router_id: router.id, status: 'ACTIVE' };
    transport
      .reply({ floatingips: [floatingIp] })
      .reply({ floatingip: floatingIp }, 201)
      .reply({ floatingip: associated })
      .reply({ floatingip: floatingIp })
      .reply({ floatingip: floatingIp })
      .reply(undefined, 204);
    await neutron.listFloatingIps({
      floating_ip_address: '172.24.4.228',
      port_id: port.id,
      description: floatingIp.description,
      floating_network_id: externalNetwork.id,
      tags: ['cluster-api-provider-openstack-fip-pool-pool1'],
    });
    expect(transport.last.query).toEqual({
      floating_ip_address: '172.24.4.228',
      port_id: port.id,
      description: floatingIp.description,
      floating_network_id: externalNetwork.id,
      tags: 'cluster-api-provider-openstack-fip-pool-pool1',
    });
    await neutron.createFloatingIp({ floating_network_id: externalNetwork.id, description: floatingIp.description });
    expect(transport.last).toMatchObject({
      method: 'POST',
      path: '/v2.0/floatingips',
      body: { floatingip: { floating_network_id: externalNetwork.id, description: floatingIp.description } },
    });
    expect((await neutron.updateFloatingIp(floatingIp.id, { port_id: port.id })).status).toBe('ACTIVE');
    expect(transport.last).toMatchObject({
      method: 'PUT',
      path: `/v2.0/floatingips/${floatingIp.id}`,
      body: { floatingip: { port_id: port.id } },
      idempotent: true,
    });
    await neutron.updateFloatingIp(floatingIp.id, { port_id: null });
    expect(transport.last.body).toEqual({ floatingip: { port_id: null } });
    expect((await neutron.getFloatingIp(floatingIp.id)).port_id).toBeNull();
    await neutron.deleteFloatingIp(floatingIp.id);
    expect(transport.last).toMatchObject({ method: 'DELETE', path: `/v2.0/floatingips/${floatingIp.id}` });
  });
});

describe('NeutronClient trunks', () => {
  it('covers trunks and subports (whose answers have no envelope)', async () => {
    const { neutron, transport } = client();
    const withSub = { ...trunk, sub_ports: [{ port_id: 'sub-1', segmentation_type: 'vlan', segmentation_id: 101 }] };
    transport
      .reply({ trunks: [trunk] })
      .reply({ trunk }, 201)
      .reply({ trunk })
      .reply(withSub)
      .reply(trunk)
      .reply(undefined, 204);
    await neutron.listTrunks({ name: trunk.name, port_id: port.id });
    expect(transport.last.query).toEqual({ name: trunk.name, port_id: port.id });
    await neutron.createTrunk({ name: trunk.name, port_id: port.id, description: 'd' });
    expect(transport.last).toMatchObject({ method: 'POST', path: '/v2.0/trunks', body: { trunk: { name: trunk.name, port_id: port.id, description: 'd' } } });
    await neutron.getTrunk(trunk.id);
    const added = await neutron.addSubports(trunk.id, [{ port_id: 'sub-1', segmentation_type: 'vlan', segmentation_id: 101 }]);
    expect(added.sub_ports).toHaveLength(1);
    expect(transport.last).toMatchObject({
      method: 'PUT',
      path: `/v2.0/trunks/${trunk.id}/add_subports`,
      body: { sub_ports: [{ port_id: 'sub-1', segmentation_type: 'vlan', segmentation_id: 101 }] },
      idempotent: true,
    });
    await neutron.removeSubports(trunk.id, ['sub-1']);
    expect(transport.last).toMatchObject({ method: 'PUT', path: `/v2.0/trunks/${trunk.id}/remove_subports`, body: { sub_ports: [{ port_id: 'sub-1' }] } });
    await neutron.deleteTrunk(trunk.id);
    expect(transport.last).toMatchObject({ method: 'DELETE', path: `/v2.0/trunks/${trunk.id}` });
  });
});

describe('NeutronClient tags, extensions and quotas', () => {
  it('replaces, adds and removes tags on any taggable collection', async () => {
    const { neutron, transport } = client();
    transport
      .reply({ tags: ['a', 'b'] })
      .reply(undefined, 201)
      .reply(undefined, 204);
    expect(await neutron.replaceTags('security-groups', 'sg-cp', ['a', 'b'])).toEqual(['a', 'b']);
    expect(transport.last).toEqual({
      service: 'network',
      method: 'PUT',
      path: '/v2.0/security-groups/sg-cp/tags',
      body: { tags: ['a', 'b'] },
      idempotent: true,
    });
    await neutron.addTag('floatingips', 'f1', 'owner uid/1');
    expect(transport.last).toEqual({ service: 'network', method: 'PUT', path: '/v2.0/floatingips/f1/tags/owner%20uid%2F1', idempotent: true });
    await neutron.removeTag('ports', 'p1', 'a');
    expect(transport.last).toEqual({ service: 'network', method: 'DELETE', path: '/v2.0/ports/p1/tags/a', idempotent: true });
  });

  it('lists extensions', async () => {
    const { neutron, transport } = client();
    transport.reply({
      extensions: [
        {
          alias: 'standard-attr-tag',
          name: 'Tag support for resources with standard attribute',
          description: '',
          updated: '2017-01-01T00:00:00-00:00',
          links: [],
        },
      ],
    });
    expect((await neutron.listExtensions()).map((e) => e.alias)).toEqual(['standard-attr-tag']);
    expect(transport.last.path).toBe('/v2.0/extensions');
  });

  it('tells where a create may carry its tags, reading the extensions once, and again after a failed read', async () => {
    const extension = (alias: string) => ({ alias, name: alias, description: '', updated: '2024-01-30T00:00:00-00:00', links: [] });
    const zed = client();
    zed.transport.reply({ extensions: [extension('standard-attr-tag'), extension('trunk')] });
    expect(await zed.neutron.createTakesTags()).toBe(false);
    expect(await zed.neutron.createTakesTags()).toBe(false);
    expect(zed.transport.calls.map((call) => call.path)).toEqual(['/v2.0/extensions']);

    const caracal = client();
    caracal.transport.reply({ extensions: [extension('standard-attr-tag'), extension('tag-creation')] });
    // Creates at once share the one read.
    expect(await Promise.all([caracal.neutron.createTakesTags(), caracal.neutron.createTakesTags()])).toEqual([true, true]);
    expect(caracal.transport.calls).toHaveLength(1);

    // No answer queued: the read fails, the answer is the PUT-after way, and the next create asks again.
    const flaky = client();
    expect(await flaky.neutron.createTakesTags()).toBe(false);
    flaky.transport.reply({ extensions: [extension('tag-creation')] });
    expect(await flaky.neutron.createTakesTags()).toBe(true);
    expect(flaky.transport.calls).toHaveLength(2);
  });

  it('reads quota details per resource', async () => {
    const { neutron, transport } = client();
    transport.reply({
      quota: {
        network: { used: 3, limit: 100, reserved: 0 },
        port: { used: 12, limit: -1, reserved: 1 },
        security_group: { used: 4, limit: 10, reserved: 0 },
      },
    });
    const quotas = await neutron.getQuotas(project);
    expect(transport.last).toMatchObject({ method: 'GET', path: `/v2.0/quotas/${project}/details`, idempotent: true });
    expect(quotas.security_group).toEqual({ used: 4, limit: 10, reserved: 0 });
    expect(quotas.port!.limit).toBe(-1);
  });
});
