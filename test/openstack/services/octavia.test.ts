import { describe, expect, it } from 'vitest';
import { OctaviaClient } from '../../../src/openstack/services/octavia.js';
import { RecordingTransport } from './recording-transport.js';

const project = 'e3cd678b11784734bc366148aa37580e';
const stamps = { created_at: '2026-08-01T10:00:00', updated_at: null };

const loadBalancer = {
  id: '607226db-27ef-4d41-ae89-f2a800e9c2db',
  name: 'k8s-clusterapi-cluster-default-demo-kubeapi',
  description: 'Created by cluster-api-provider-openstack cluster default-demo',
  provisioning_status: 'PENDING_CREATE',
  operating_status: 'OFFLINE',
  admin_state_up: true,
  project_id: project,
  tenant_id: project,
  vip_address: '10.6.0.50',
  vip_port_id: 'b4ca07d1-a31e-43e2-891a-7d14f419f342',
  vip_subnet_id: 'b930d7f6-ceb7-40a0-8b81-a425dd994ccf',
  vip_network_id: 'ae34051f-aa6c-4c75-abf5-50dc9ac99ef3',
  vip_qos_policy_id: null,
  vip_vnic_type: 'normal',
  additional_vips: [],
  listeners: [],
  pools: [],
  provider: 'amphora',
  flavor_id: null,
  availability_zone: null,
  tags: ['cluster-a'],
  ...stamps,
};

const listener = {
  id: '023f2e34-7806-443b-bfae-16c324569a3d',
  name: `${loadBalancer.name}-6443`,
  description: '',
  provisioning_status: 'PENDING_CREATE',
  operating_status: 'OFFLINE',
  admin_state_up: true,
  protocol: 'TCP',
  protocol_port: 6443,
  connection_limit: -1,
  default_tls_container_ref: null,
  sni_container_refs: [],
  project_id: project,
  default_pool_id: null,
  l7policies: [],
  insert_headers: {},
  loadbalancers: [{ id: loadBalancer.id }],
  timeout_client_data: 50000,
  timeout_member_connect: 5000,
  timeout_member_data: 50000,
  timeout_tcp_inspect: 0,
  tags: [],
  client_ca_tls_container_ref: null,
  client_authentication: 'NONE',
  client_crl_container_ref: null,
  allowed_cidrs: null,
  tls_ciphers: null,
  tls_versions: null,
  alpn_protocols: null,
  hsts_max_age: null,
  ...stamps,
};

const pool = {
  id: '4029d267-3983-4224-a3d0-afb3fe16a2cd',
  name: `${loadBalancer.name}-6443`,
  description: '',
  provisioning_status: 'PENDING_CREATE',
  operating_status: 'OFFLINE',
  admin_state_up: true,
  protocol: 'TCP',
  lb_algorithm: 'ROUND_ROBIN',
  session_persistence: null,
  project_id: project,
  loadbalancers: [{ id: loadBalancer.id }],
  listeners: [{ id: listener.id }],
  members: [],
  healthmonitor_id: null,
  tls_enabled: false,
  tags: [],
  ...stamps,
};

const member = {
  id: '957a1ace-1bd2-449b-8455-820b6e4b63f3',
  name: `${loadBalancer.name}-6443-demo-control-plane-x1`,
  operating_status: 'NO_MONITOR',
  provisioning_status: 'PENDING_CREATE',
  admin_state_up: true,
  address: '10.6.0.12',
  protocol_port: 6443,
  weight: 1,
  backup: false,
  subnet_id: null,
  project_id: project,
  monitor_address: null,
  monitor_port: null,
  tags: [],
  ...stamps,
};

const monitor = {
  id: '8bbfa7b5-c8a1-4b11-a9b2-1ebf8e53be75',
  name: `${loadBalancer.name}-6443`,
  type: 'TCP',
  delay: 10,
  timeout: 5,
  max_retries: 5,
  max_retries_down: 3,
  http_method: null,
  url_path: null,
  expected_codes: null,
  admin_state_up: true,
  pools: [{ id: pool.id }],
  project_id: project,
  provisioning_status: 'PENDING_CREATE',
  operating_status: 'OFFLINE',
  tags: [],
  ...stamps,
};

function client(): { octavia: OctaviaClient; transport: RecordingTransport } {
  const transport = new RecordingTransport();
  return { octavia: new OctaviaClient(transport), transport };
}

describe('OctaviaClient load balancers', () => {
  it('lists by name, tags and VIP port', async () => {
    const { octavia, transport } = client();
    transport.reply({ loadbalancers: [loadBalancer], loadbalancers_links: [] });
    const found = await octavia.listLoadBalancers({ name: loadBalancer.name, tags: ['cluster-a', 'x'], vip_port_id: loadBalancer.vip_port_id });
    expect(transport.last).toEqual({
      service: 'load-balancer',
      method: 'GET',
      path: '/v2/lbaas/loadbalancers',
      idempotent: true,
      query: { name: loadBalancer.name, vip_port_id: loadBalancer.vip_port_id, tags: 'cluster-a,x' },
    });
    expect(found[0]!.vip_port_id).toBe(loadBalancer.vip_port_id);
  });

  it('creates with VIP subnet, address, provider, flavor, AZ and tags', async () => {
    const { octavia, transport } = client();
    transport.reply({ loadbalancer: loadBalancer }, 201);
    const created = await octavia.createLoadBalancer({
      name: loadBalancer.name,
      description: loadBalancer.description,
      vip_subnet_id: loadBalancer.vip_subnet_id,
      vip_address: '10.6.0.50',
      provider: 'amphora',
      flavor_id: 'f1',
      availability_zone: 'az1',
      tags: ['cluster-a'],
    });
    expect(created.provisioning_status).toBe('PENDING_CREATE');
    expect(transport.last).toEqual({
      service: 'load-balancer',
      method: 'POST',
      path: '/v2/lbaas/loadbalancers',
      idempotent: false,
      body: {
        loadbalancer: {
          name: loadBalancer.name,
          description: loadBalancer.description,
          vip_subnet_id: loadBalancer.vip_subnet_id,
          vip_address: '10.6.0.50',
          provider: 'amphora',
          flavor_id: 'f1',
          availability_zone: 'az1',
          tags: ['cluster-a'],
        },
      },
    });
  });

  it('gets, and deletes with and without cascade', async () => {
    const { octavia, transport } = client();
    transport
      .reply({ loadbalancer: { ...loadBalancer, provisioning_status: 'ACTIVE', operating_status: 'ONLINE' } })
      .reply(undefined, 204)
      .reply(undefined, 204);
    expect((await octavia.getLoadBalancer(loadBalancer.id)).provisioning_status).toBe('ACTIVE');
    await octavia.deleteLoadBalancer(loadBalancer.id, { cascade: true });
    expect(transport.last).toEqual({
      service: 'load-balancer',
      method: 'DELETE',
      path: `/v2/lbaas/loadbalancers/${loadBalancer.id}`,
      idempotent: true,
      query: { cascade: true },
    });
    await octavia.deleteLoadBalancer(loadBalancer.id);
    expect(transport.last).toEqual({ service: 'load-balancer', method: 'DELETE', path: `/v2/lbaas/loadbalancers/${loadBalancer.id}`, idempotent: true });
  });
});

describe('OctaviaClient listeners, pools, members and monitors', () => {
  it('covers listeners, including allowed_cidrs updates', async () => {
    const { octavia, transport } = client();
    transport
      .reply({ listeners: [listener], listeners_links: [] })
      .reply({ listener }, 201)
      .reply({ listener: { ...listener, allowed_cidrs: ['10.0.0.0/8'] } })
      .reply({ listener })
      .reply(undefined, 204);
    await octavia.listListeners({ loadbalancer_id: loadBalancer.id, name: listener.name });
    expect(transport.last.query).toEqual({ loadbalancer_id: loadBalancer.id, name: listener.name });
    await octavia.createListener({
      name: listener.name,
      protocol: 'TCP',
      protocol_port: 6443,
      loadbalancer_id: loadBalancer.id,
      allowed_cidrs: ['10.0.0.0/8'],
      tags: [],
    });
    expect(transport.last).toMatchObject({
      method: 'POST',
      path: '/v2/lbaas/listeners',
      body: {
        listener: { name: listener.name, protocol: 'TCP', protocol_port: 6443, loadbalancer_id: loadBalancer.id, allowed_cidrs: ['10.0.0.0/8'], tags: [] },
      },
    });
    const updated = await octavia.updateListener(listener.id, { allowed_cidrs: ['10.0.0.0/8'] });
    expect(updated.allowed_cidrs).toEqual(['10.0.0.0/8']);
    expect(transport.last).toMatchObject({
      method: 'PUT',
      path: `/v2/lbaas/listeners/${listener.id}`,
      body: { listener: { allowed_cidrs: ['10.0.0.0/8'] } },
      idempotent: true,
    });
    expect((await octavia.getListener(listener.id)).allowed_cidrs).toBeNull();
    await octavia.deleteListener(listener.id);
    expect(transport.last).toMatchObject({ method: 'DELETE', path: `/v2/lbaas/listeners/${listener.id}` });
  });

  it('covers pools', async () => {
    const { octavia, transport } = client();
    transport
      .reply({ pool }, 201)
      .reply({ pools: [pool], pools_links: [] })
      .reply({ pool })
      .reply(undefined, 204);
    await octavia.createPool({ name: pool.name, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN', listener_id: listener.id, tags: [] });
    expect(transport.last).toMatchObject({
      method: 'POST',
      path: '/v2/lbaas/pools',
      body: { pool: { name: pool.name, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN', listener_id: listener.id, tags: [] } },
    });
    expect((await octavia.listPools({ name: pool.name, loadbalancer_id: loadBalancer.id }))[0]!.healthmonitor_id).toBeNull();
    expect(transport.last.query).toEqual({ name: pool.name, loadbalancer_id: loadBalancer.id });
    await octavia.getPool(pool.id);
    await octavia.deletePool(pool.id);
    expect(transport.last).toMatchObject({ method: 'DELETE', path: `/v2/lbaas/pools/${pool.id}`, idempotent: true });
  });

  it('covers members below their pool', async () => {
    const { octavia, transport } = client();
    transport
      .reply({ members: [member], members_links: [] })
      .reply({ member }, 201)
      .reply({ member })
      .reply(undefined, 204);
    await octavia.listMembers(pool.id, { name: member.name });
    expect(transport.last).toMatchObject({ path: `/v2/lbaas/pools/${pool.id}/members`, query: { name: member.name } });
    await octavia.createMember(pool.id, { name: member.name, address: '10.6.0.12', protocol_port: 6443, tags: [] });
    expect(transport.last).toMatchObject({
      method: 'POST',
      path: `/v2/lbaas/pools/${pool.id}/members`,
      body: { member: { name: member.name, address: '10.6.0.12', protocol_port: 6443, tags: [] } },
      idempotent: false,
    });
    expect((await octavia.getMember(pool.id, member.id)).operating_status).toBe('NO_MONITOR');
    expect(transport.last.path).toBe(`/v2/lbaas/pools/${pool.id}/members/${member.id}`);
    await octavia.deleteMember(pool.id, member.id);
    expect(transport.last).toMatchObject({ method: 'DELETE', path: `/v2/lbaas/pools/${pool.id}/members/${member.id}`, idempotent: true });
  });

  it('covers health monitors', async () => {
    const { octavia, transport } = client();
    transport
      .reply({ healthmonitor: monitor }, 201)
      .reply({ healthmonitors: [monitor] })
      .reply({ healthmonitor: monitor })
      .reply({ healthmonitor: { ...monitor, delay: 20 } })
      .reply(undefined, 204);
    await octavia.createHealthMonitor({ name: monitor.name, pool_id: pool.id, type: 'TCP', delay: 10, timeout: 5, max_retries: 5, max_retries_down: 3 });
    expect(transport.last).toMatchObject({
      method: 'POST',
      path: '/v2/lbaas/healthmonitors',
      body: { healthmonitor: { name: monitor.name, pool_id: pool.id, type: 'TCP', delay: 10, timeout: 5, max_retries: 5, max_retries_down: 3 } },
    });
    await octavia.listHealthMonitors({ name: monitor.name });
    expect(transport.last.query).toEqual({ name: monitor.name });
    await octavia.getHealthMonitor(monitor.id);
    expect((await octavia.updateHealthMonitor(monitor.id, { delay: 20 })).delay).toBe(20);
    expect(transport.last).toMatchObject({ method: 'PUT', body: { healthmonitor: { delay: 20 } }, idempotent: true });
    await octavia.deleteHealthMonitor(monitor.id);
    expect(transport.last).toMatchObject({ method: 'DELETE', path: `/v2/lbaas/healthmonitors/${monitor.id}` });
  });
});

describe('OctaviaClient discovery', () => {
  it('lists providers, flavors and API versions', async () => {
    const { octavia, transport } = client();
    transport
      .reply({
        providers: [
          { name: 'amphora', description: 'The Octavia Amphora driver.' },
          { name: 'octavia', description: 'Deprecated alias of the Octavia Amphora driver.' },
        ],
      })
      .reply({ flavors: [{ id: 'f1', name: 'small', description: '', enabled: true, flavor_profile_id: 'fp' }], flavors_links: [] })
      .reply({
        versions: [
          { id: 'v2.0', status: 'SUPPORTED', updated: '2016-12-11T00:00:00Z', links: [] },
          { id: 'v2.27', status: 'CURRENT', updated: '2023-05-05T00:00:00Z', links: [] },
        ],
      });
    expect((await octavia.listProviders()).map((p) => p.name)).toEqual(['amphora', 'octavia']);
    expect(transport.last.path).toBe('/v2/lbaas/providers');
    expect((await octavia.listFlavors())[0]!.name).toBe('small');
    expect(transport.last.path).toBe('/v2/lbaas/flavors');
    expect((await octavia.listVersions()).at(-1)!.id).toBe('v2.27');
    expect(transport.last.path).toBe('/');
  });
});
