import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../../src/simulator/host.js';
import { createNeutronSimulator } from '../../../src/simulator/neutron/index.js';
import { createOctaviaSimulator } from '../../../src/simulator/octavia/index.js';
import { call, endpoint, login, start, waitFor, type Session } from '../helpers.js';

let sim: Simulator;
let demo: Session;
let admin: Session;
let lbaas: string;
let neutron: string;
let network: { id: string; subnetId: string };

const octavia = (session: Session, method: string, path: string, body?: unknown) => call(session, method, `${lbaas}${path}`, body);

const singular: Record<string, string> = {
  loadbalancers: 'loadbalancer',
  listeners: 'listener',
  pools: 'pool',
  members: 'member',
  healthmonitors: 'healthmonitor',
};

async function untilActive(collection: string, id: string) {
  return waitFor(async () => {
    const res = await octavia(demo, 'GET', `/${collection}/${id}`);
    const object = res.body[singular[collection.split('/').at(-1)!]!];
    return object?.provisioning_status === 'ACTIVE' ? object : undefined;
  });
}

async function untilGone(path: string) {
  await waitFor(async () => ((await octavia(demo, 'GET', path)).status === 404 ? true : undefined));
}

async function createLb(spec: Record<string, unknown> = {}) {
  const res = await octavia(demo, 'POST', '/loadbalancers', { loadbalancer: { vip_subnet_id: network.subnetId, ...spec } });
  if (res.status !== 201) throw new Error(`LB create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.loadbalancer as Record<string, any>;
}

async function deleteLb(id: string) {
  expect((await octavia(demo, 'DELETE', `/loadbalancers/${id}?cascade=true`)).status).toBe(204);
  await untilGone(`/loadbalancers/${id}`);
}

beforeAll(async () => {
  sim = await start({ services: [createNeutronSimulator, createOctaviaSimulator] });
  demo = await login(sim);
  admin = await login(sim, 'admin');
  lbaas = `${endpoint(demo, 'load-balancer')}/v2/lbaas`;
  neutron = `${endpoint(demo, 'network')}/v2.0`;
  const net = await call(demo, 'POST', `${neutron}/networks`, { network: { name: 'lb-net' } });
  const subnet = await call(demo, 'POST', `${neutron}/subnets`, { subnet: { network_id: net.body.network.id, cidr: '10.10.0.0/24', ip_version: 4 } });
  network = { id: net.body.network.id, subnetId: subnet.body.subnet.id };
});
afterAll(async () => {
  await sim.close();
});

describe('octavia', () => {
  it('answers a batch update of 100,000 members in one pass: a repeated address is refused with nothing changed, distinct ones are one change', async () => {
    const lb = await createLb({ name: 'batch-bound' });
    await untilActive('loadbalancers', lb.id);
    const listener = (await octavia(demo, 'POST', '/listeners', { listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 7000 } })).body.listener;
    await untilActive('loadbalancers', lb.id);
    const pool = (await octavia(demo, 'POST', '/pools', { pool: { listener_id: listener.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' } })).body.pool;
    await untilActive('loadbalancers', lb.id);
    // 100,000 distinct addresses in 10.64.0.0/10; a scan of the batch per member would take minutes.
    const members = Array.from({ length: 100_000 }, (_, index) => ({
      address: `10.${64 + (index >> 16)}.${(index >> 8) & 255}.${index & 255}`,
      protocol_port: 80,
    }));
    const repeated = await octavia(demo, 'PUT', `/pools/${pool.id}/members?additive_only=true`, { members: [...members, members[0]] });
    expect(repeated.status).toBe(409);
    expect(repeated.body.faultstring).toBe(`Another member on this pool is already using ip ${members[0]!.address} on protocol_port 80`);
    expect((await octavia(demo, 'GET', `/loadbalancers/${lb.id}`)).body.loadbalancer.provisioning_status).toBe('ACTIVE');
    const accepted = await octavia(demo, 'PUT', `/pools/${pool.id}/members?additive_only=true`, { members });
    expect(accepted.status).toBe(202);
    expect((await octavia(demo, 'GET', `/pools/${pool.id}`)).body.pool).toMatchObject({ provisioning_status: 'PENDING_UPDATE' });
    await untilActive('loadbalancers', lb.id);
    await deleteLb(lb.id);
  }, 60_000);

  it('serves its version document without a token and its API under /v2 and /v2.0', async () => {
    const root = await fetch(`${sim.url}/load-balancer/`);
    expect(root.status).toBe(200);
    const versions = ((await root.json()) as { versions: { id: string; status: string; links: { href: string }[] }[] }).versions;
    expect(versions.at(-1)).toMatchObject({ id: 'v2.26', status: 'CURRENT', links: [{ href: `${sim.url}/load-balancer/v2`, rel: 'self' }] });
    expect(versions.find((v) => v.id === 'v2.12')?.status).toBe('SUPPORTED');
    expect((await call(demo, 'GET', `${endpoint(demo, 'load-balancer')}/v2.0/lbaas/loadbalancers`)).body).toEqual({
      loadbalancers: [],
      loadbalancers_links: [],
    });
  });

  it('creates a load balancer with a Neutron VIP port: PENDING_CREATE, then ACTIVE, operating_status OFFLINE', async () => {
    const lb = await createLb({ name: 'web', tags: ['k8s'] });
    expect(lb).toMatchObject({
      name: 'web',
      description: '',
      provisioning_status: 'PENDING_CREATE',
      operating_status: 'OFFLINE',
      provider: 'amphora',
      vip_subnet_id: network.subnetId,
      vip_network_id: network.id,
      project_id: demo.projectId,
      listeners: [],
      pools: [],
      tags: ['k8s'],
      flavor_id: null,
      availability_zone: null,
      updated_at: null,
    });
    expect(lb.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    const port = (await call(demo, 'GET', `${neutron}/ports/${lb.vip_port_id}`)).body.port;
    expect(port).toMatchObject({ name: `octavia-lb-${lb.id}`, device_owner: 'Octavia', device_id: `lb-${lb.id}`, admin_state_up: false, status: 'DOWN' });
    expect(port.fixed_ips).toEqual([{ subnet_id: network.subnetId, ip_address: lb.vip_address }]);

    const pendingListener = await octavia(demo, 'POST', '/listeners', { listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 6443 } });
    expect(pendingListener.status).toBe(409);
    expect(pendingListener.body).toEqual({ faultcode: 'Client', faultstring: `Load Balancer ${lb.id} is immutable and cannot be updated.`, debuginfo: null });
    const pendingUpdate = await octavia(demo, 'PUT', `/loadbalancers/${lb.id}`, { loadbalancer: { description: 'x' } });
    expect(pendingUpdate.status).toBe(409);
    expect(pendingUpdate.body.faultstring).toBe(`Invalid state PENDING_CREATE of loadbalancer resource ${lb.id}`);

    const active = await untilActive('loadbalancers', lb.id);
    expect(active.operating_status).toBe('OFFLINE');
    expect(active.updated_at).not.toBeNull();
    const updated = await octavia(demo, 'PUT', `/loadbalancers/${lb.id}`, { loadbalancer: { description: 'api' } });
    expect(updated.body.loadbalancer).toMatchObject({ description: 'api', provisioning_status: 'PENDING_UPDATE' });
    await untilActive('loadbalancers', lb.id);

    await deleteLb(lb.id);
    expect((await call(demo, 'GET', `${neutron}/ports/${lb.vip_port_id}`)).status).toBe(404);
  });

  it('cascades provisioning status through listener, pool, member and health monitor', async () => {
    const lb = await createLb({ name: 'chain' });
    await untilActive('loadbalancers', lb.id);

    const listener = (
      await octavia(demo, 'POST', '/listeners', {
        listener: { name: 'chain-6443', loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 6443, allowed_cidrs: ['10.0.0.0/8'] },
      })
    ).body.listener;
    expect(listener).toMatchObject({
      provisioning_status: 'PENDING_CREATE',
      operating_status: 'OFFLINE',
      loadbalancers: [{ id: lb.id }],
      connection_limit: -1,
      timeout_client_data: 50000,
      allowed_cidrs: ['10.0.0.0/8'],
      default_pool_id: null,
    });
    expect((await octavia(demo, 'GET', `/loadbalancers/${lb.id}`)).body.loadbalancer.provisioning_status).toBe('PENDING_UPDATE');
    await untilActive('listeners', listener.id);
    await untilActive('loadbalancers', lb.id);

    const duplicate = await octavia(demo, 'POST', '/listeners', { listener: { loadbalancer_id: lb.id, protocol: 'HTTP', protocol_port: 6443 } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.faultstring).toBe('Another Listener on this Load Balancer is already using protocol TCP and protocol_port 6443');
    const mismatch = await octavia(demo, 'POST', '/pools', { pool: { listener_id: listener.id, protocol: 'UDP', lb_algorithm: 'ROUND_ROBIN' } });
    expect(mismatch.body.faultstring).toBe("Validation failure: The pool protocol 'UDP' is invalid while the listener protocol is 'TCP'.");

    const pool = (
      await octavia(demo, 'POST', '/pools', { pool: { name: 'chain-pool', listener_id: listener.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' } })
    ).body.pool;
    expect(pool).toMatchObject({ provisioning_status: 'PENDING_CREATE', listeners: [{ id: listener.id }], loadbalancers: [{ id: lb.id }], members: [] });
    // As in real Zed, only the GET of a pool carries healthmonitor_id.
    expect(pool).not.toHaveProperty('healthmonitor_id');
    const listenerNow = (await octavia(demo, 'GET', `/listeners/${listener.id}`)).body.listener;
    expect(listenerNow).toMatchObject({ provisioning_status: 'PENDING_UPDATE', default_pool_id: pool.id });
    await untilActive('pools', pool.id);
    await untilActive('loadbalancers', lb.id);

    const member = (
      await octavia(demo, 'POST', `/pools/${pool.id}/members`, {
        member: { name: 'm1', address: '10.10.0.50', protocol_port: 6443, subnet_id: network.subnetId },
      })
    ).body.member;
    expect(member).toMatchObject({ provisioning_status: 'PENDING_CREATE', operating_status: 'NO_MONITOR', weight: 1, backup: false });
    expect((await octavia(demo, 'GET', `/pools/${pool.id}`)).body.pool.provisioning_status).toBe('PENDING_UPDATE');
    const busy = await octavia(demo, 'POST', `/pools/${pool.id}/members`, { member: { address: '10.10.0.51', protocol_port: 6443 } });
    expect(busy.status).toBe(409);
    expect(busy.body.faultstring).toBe(`Pool ${pool.id} is immutable and cannot be updated.`);
    await untilActive(`pools/${pool.id}/members`, member.id);
    await untilActive('loadbalancers', lb.id);
    const sameMember = await octavia(demo, 'POST', `/pools/${pool.id}/members`, { member: { address: '10.10.0.50', protocol_port: 6443 } });
    expect(sameMember.body.faultstring).toBe('Another member on this pool is already using ip 10.10.0.50 on protocol_port 6443');

    const monitor = (
      await octavia(demo, 'POST', '/healthmonitors', {
        healthmonitor: { name: 'chain-hm', pool_id: pool.id, type: 'TCP', delay: 10, timeout: 5, max_retries: 5, max_retries_down: 3 },
      })
    ).body.healthmonitor;
    expect(monitor).toMatchObject({
      provisioning_status: 'PENDING_CREATE',
      operating_status: 'OFFLINE',
      http_method: null,
      url_path: null,
      pools: [{ id: pool.id }],
    });
    const activeMonitor = await untilActive('healthmonitors', monitor.id);
    expect(activeMonitor.operating_status).toBe('ONLINE');
    await untilActive('loadbalancers', lb.id);
    const second = await octavia(demo, 'POST', '/healthmonitors', { healthmonitor: { pool_id: pool.id, type: 'HTTP', delay: 10, timeout: 5, max_retries: 5 } });
    expect(second.status).toBe(409);
    expect(second.body.faultstring).toBe('This pool already has a health monitor');

    const tree = (await octavia(demo, 'GET', `/loadbalancers/${lb.id}/status`)).body.statuses.loadbalancer;
    expect(tree.listeners[0].pools[0]).toMatchObject({
      id: pool.id,
      health_monitor: { id: monitor.id, type: 'TCP' },
      members: [{ id: member.id, address: '10.10.0.50', operating_status: 'NO_MONITOR' }],
    });
    expect((await octavia(demo, 'GET', `/loadbalancers/${lb.id}`)).body.loadbalancer).toMatchObject({
      listeners: [{ id: listener.id }],
      pools: [{ id: pool.id }],
    });

    const withChildren = await octavia(demo, 'DELETE', `/loadbalancers/${lb.id}`);
    expect(withChildren.status).toBe(400);
    expect(withChildren.body.faultstring).toBe(`Validation failure: Cannot delete Load Balancer ${lb.id} - it has children`);

    expect((await octavia(demo, 'DELETE', `/healthmonitors/${monitor.id}`)).status).toBe(204);
    expect((await octavia(demo, 'GET', `/healthmonitors/${monitor.id}`)).body.healthmonitor.provisioning_status).toBe('PENDING_DELETE');
    await untilGone(`/healthmonitors/${monitor.id}`);
    await untilActive('loadbalancers', lb.id);
    expect((await octavia(demo, 'GET', `/pools/${pool.id}`)).body.pool.healthmonitor_id).toBeNull();

    expect((await octavia(demo, 'DELETE', `/loadbalancers/${lb.id}?cascade=true`)).status).toBe(204);
    expect((await octavia(demo, 'GET', `/loadbalancers/${lb.id}`)).body.loadbalancer.provisioning_status).toBe('PENDING_DELETE');
    await untilGone(`/loadbalancers/${lb.id}`);
    expect((await octavia(demo, 'GET', `/pools/${pool.id}`)).status).toBe(404);
    expect(sim.inventory()['load-balancer']).toEqual({ loadbalancers: 0, listeners: 0, pools: 0, members: 0, healthmonitors: 0 });
  });

  it('keeps each load balancer’s children to itself: its view, its pool’s, a cascade delete and the quota count of its project', async () => {
    const populated = (name: string, address: string) => ({
      name,
      listeners: [
        {
          name: `${name}-listener`,
          protocol: 'TCP',
          protocol_port: 6443,
          default_pool: {
            name: `${name}-pool`,
            protocol: 'TCP',
            lb_algorithm: 'ROUND_ROBIN',
            members: [{ address, protocol_port: 6443 }],
            healthmonitor: { type: 'TCP', delay: 10, timeout: 5, max_retries: 3 },
          },
        },
      ],
    });
    const [a, b] = [await createLb(populated('apart-a', '10.10.0.70')), await createLb(populated('apart-b', '10.10.0.71'))];
    const adminNet = await call(admin, 'POST', `${neutron}/networks`, { network: { name: 'admin-lb-net' } });
    const adminSubnet = await call(admin, 'POST', `${neutron}/subnets`, {
      subnet: { network_id: adminNet.body.network.id, cidr: '10.20.0.0/24', ip_version: 4 },
    });
    const elsewhere = (await octavia(admin, 'POST', '/loadbalancers', { loadbalancer: { vip_subnet_id: adminSubnet.body.subnet.id } })).body.loadbalancer;
    for (const lb of [a!, b!]) await untilActive('loadbalancers', lb.id);
    const adminActive = async () =>
      (await octavia(admin, 'GET', `/loadbalancers/${elsewhere.id}`)).body.loadbalancer?.provisioning_status === 'ACTIVE' ? true : undefined;
    await waitFor(adminActive);

    const children = async (lb: Record<string, any>) => {
      const view = (await octavia(demo, 'GET', `/loadbalancers/${lb.id}`)).body.loadbalancer;
      const pool = (await octavia(demo, 'GET', `/pools/${view.pools[0].id}`)).body.pool;
      const members = (await octavia(demo, 'GET', `/pools/${pool.id}/members`)).body.members;
      return { listeners: view.listeners, pool, members };
    };
    const ofA = await children(a!);
    const ofB = await children(b!);
    for (const [lb, of, address] of [
      [a!, ofA, '10.10.0.70'],
      [b!, ofB, '10.10.0.71'],
    ] as const) {
      expect(of.listeners).toEqual([{ id: lb.listeners[0].id }]);
      expect(of.pool).toMatchObject({ name: `${lb.name}-pool`, listeners: of.listeners, healthmonitor_id: expect.any(String) });
      expect(of.members).toEqual([expect.objectContaining({ address })]);
      expect(of.pool.members).toEqual([{ id: of.members[0].id }]);
    }

    // Three load balancers exist, one of them in another project: a quota of three leaves room for one more of demo's.
    sim.setQuota('demo', 'load_balancer', 3);
    try {
      const third = await createLb();
      expect((await octavia(demo, 'POST', '/loadbalancers', { loadbalancer: { vip_subnet_id: network.subnetId } })).status).toBe(403);
      await untilActive('loadbalancers', third.id);
      await deleteLb(third.id);
    } finally {
      sim.setQuota('demo', 'load_balancer', Infinity);
    }

    await deleteLb(a!.id);
    expect(await children(b!)).toEqual(ofB);
    expect((await octavia(demo, 'GET', `/pools/${ofA.pool.id}/members`)).status).toBe(404);
    expect((await octavia(demo, 'GET', `/healthmonitors/${ofA.pool.healthmonitor_id}`)).status).toBe(404);
    await deleteLb(b!.id);
    expect((await octavia(admin, 'DELETE', `/loadbalancers/${elsewhere.id}`)).status).toBe(204);
    await waitFor(async () => ((await octavia(admin, 'GET', `/loadbalancers/${elsewhere.id}`)).status === 404 ? true : undefined));
    expect(sim.inventory()['load-balancer']).toEqual({ loadbalancers: 0, listeners: 0, pools: 0, members: 0, healthmonitors: 0 });
    expect((await call(admin, 'DELETE', `${neutron}/networks/${adminNet.body.network.id}`)).status).toBe(204);
  });

  it('takes the VIP from a network or from a user port, and keeps a user port on delete', async () => {
    const byNetwork = await createLb({ vip_network_id: network.id, vip_subnet_id: undefined });
    expect(byNetwork.vip_subnet_id).toBe(network.subnetId);
    const port = (await call(demo, 'POST', `${neutron}/ports`, { port: { network_id: network.id, name: 'my-vip' } })).body.port;
    const byPort = await createLb({ vip_port_id: port.id, vip_subnet_id: undefined });
    expect(byPort).toMatchObject({ vip_port_id: port.id, vip_address: port.fixed_ips[0].ip_address, vip_network_id: network.id });
    await untilActive('loadbalancers', byPort.id);
    await untilActive('loadbalancers', byNetwork.id);
    await deleteLb(byPort.id);
    await deleteLb(byNetwork.id);
    expect((await call(demo, 'GET', `${neutron}/ports/${port.id}`)).status).toBe(200);
    await call(demo, 'DELETE', `${neutron}/ports/${port.id}`);
  });

  it('rejects bad requests in Octavia’s format', async () => {
    const noVip = await octavia(demo, 'POST', '/loadbalancers', { loadbalancer: { name: 'x' } });
    expect(noVip.status).toBe(400);
    expect(noVip.body).toEqual({
      faultcode: 'Client',
      faultstring: 'Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.',
      debuginfo: null,
    });
    const badProvider = await octavia(demo, 'POST', '/loadbalancers', { loadbalancer: { vip_subnet_id: network.subnetId, provider: 'ovn' } });
    expect(badProvider.body.faultstring).toBe("Provider 'ovn' is not enabled.");
    const badSubnet = await octavia(demo, 'POST', '/loadbalancers', { loadbalancer: { vip_subnet_id: '11111111-2222-3333-4444-555555555555' } });
    expect(badSubnet.body.faultstring).toBe('Subnet 11111111-2222-3333-4444-555555555555 not found.');
    const missing = await octavia(demo, 'GET', '/loadbalancers/11111111-2222-3333-4444-555555555555');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ faultcode: 'Client', faultstring: 'Load Balancer 11111111-2222-3333-4444-555555555555 not found.', debuginfo: null });
    const mandatory = await octavia(demo, 'POST', '/listeners', { listener: { protocol: 'TCP', protocol_port: 80 } });
    expect(mandatory.body.faultstring).toBe("Invalid input for field/attribute loadbalancer_id. Value: 'None'. Mandatory field missing.");
    expect((await call(demo, 'GET', `${endpoint(demo, 'load-balancer')}/v2/octavia/amphorae`)).status).toBe(403);
    expect(sim.inventory()['load-balancer']?.loadbalancers).toBe(0);
  });

  it('refuses callers without a load-balancer role, as Octavia’s Zed policy does', async () => {
    const identity = endpoint(demo, 'identity');
    const credential = await call(demo, 'POST', `${identity}/v3/users/${demo.userId}/application_credentials`, {
      application_credential: { name: 'member-only', roles: [{ name: 'member' }] },
    });
    expect(credential.status).toBe(201);
    const auth = await fetch(`${identity}/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { id: credential.body.application_credential.id, secret: credential.body.application_credential.secret },
          },
        },
      }),
    });
    const token = auth.headers.get('x-subject-token')!;
    const denied = await call(token, 'GET', `${lbaas}/loadbalancers`);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ faultcode: 'Client', faultstring: 'Policy does not allow this request to be performed.', debuginfo: null });
    expect((await call(token, 'POST', `${lbaas}/loadbalancers`, { loadbalancer: { vip_subnet_id: network.subnetId } })).status).toBe(403);
  });

  it('accepts the octavia provider alias and lists providers, flavors and quotas', async () => {
    expect((await octavia(demo, 'GET', '/providers')).body.providers.map((p: { name: string }) => p.name)).toEqual(['amphora', 'octavia']);
    expect((await octavia(demo, 'GET', '/flavors')).body).toEqual({ flavors: [], flavors_links: [] });
    expect((await octavia(demo, 'GET', `/quotas/${demo.projectId}`)).body.quota).toMatchObject({
      load_balancer: -1,
      listener: -1,
      pool: -1,
      member: -1,
      health_monitor: -1,
    });
    const lb = await createLb({ provider: 'octavia' });
    expect(lb.provider).toBe('octavia');
    await untilActive('loadbalancers', lb.id);
    const amphorae = (await call(admin, 'GET', `${endpoint(admin, 'load-balancer')}/v2/octavia/amphorae`)).body.amphorae;
    expect(amphorae).toEqual([expect.objectContaining({ loadbalancer_id: lb.id, role: 'STANDALONE', status: 'ALLOCATED', ha_port_id: lb.vip_port_id })]);
    await deleteLb(lb.id);
  });

  it('enforces the load balancer quota', async () => {
    sim.setQuota('demo', 'load_balancer', 1);
    try {
      const lb = await createLb();
      const over = await octavia(demo, 'POST', '/loadbalancers', { loadbalancer: { vip_subnet_id: network.subnetId } });
      expect(over.status).toBe(403);
      expect(over.body).toEqual({ faultcode: 'Client', faultstring: 'Quota has been met for resources: Load Balancer', debuginfo: null });
      expect((await octavia(demo, 'GET', `/quotas/${demo.projectId}`)).body.quota.load_balancer).toBe(1);
      await untilActive('loadbalancers', lb.id);
      await deleteLb(lb.id);
    } finally {
      sim.setQuota('demo', 'load_balancer', Infinity);
    }
    const put = await octavia(admin, 'PUT', `/quotas/${demo.projectId}`, { quota: { listener: 5 } });
    expect(put.status).toBe(202);
    expect(put.body.quota.listener).toBe(5);
    expect((await octavia(demo, 'PUT', `/quotas/${demo.projectId}`, { quota: { listener: 50 } })).status).toBe(403);
    expect((await octavia(admin, 'DELETE', `/quotas/${demo.projectId}`)).status).toBe(202);
  });

  it('filters by name, tags, vip_port_id, provisioning_status and project, and pages', async () => {
    const a = await createLb({ name: 'f-a', tags: ['x', 'y'] });
    const b = await createLb({ name: 'f-b', tags: ['x'] });
    const c = await createLb({ name: 'f-c' });
    const names = async (query: string) =>
      (await octavia(demo, 'GET', `/loadbalancers?${query}`)).body.loadbalancers.map((lb: { name: string }) => lb.name).sort();
    expect(await names('name=f-a')).toEqual(['f-a']);
    expect(await names('tags=x')).toEqual(['f-a', 'f-b']);
    expect(await names('tags=x,y')).toEqual(['f-a']);
    expect(await names('tags-any=y&tags-any=nope')).toEqual(['f-a']);
    expect(await names('not-tags=x')).toEqual(['f-c']);
    expect(await names(`vip_port_id=${b.vip_port_id}`)).toEqual(['f-b']);
    expect(await names(`project_id=${demo.projectId}`)).toEqual(['f-a', 'f-b', 'f-c']);
    expect((await octavia(demo, 'GET', `/loadbalancers?project_id=${admin.projectId}`)).status).toBe(403);
    expect((await octavia(admin, 'GET', `/loadbalancers?project_id=${demo.projectId}`)).body.loadbalancers).toHaveLength(3);

    const page = (await octavia(demo, 'GET', '/loadbalancers?limit=2')).body;
    expect(page.loadbalancers.map((lb: { id: string }) => lb.id)).toEqual([a.id, b.id]);
    expect(page.loadbalancers_links).toEqual([{ rel: 'next', href: expect.stringContaining(`marker=${b.id}`) }]);
    const rest = (await octavia(demo, 'GET', `/loadbalancers?limit=2&marker=${b.id}`)).body.loadbalancers;
    expect(rest.map((lb: { id: string }) => lb.id)).toEqual([c.id]);
    const fields = (await octavia(demo, 'GET', `/loadbalancers/${a.id}?fields=id&fields=name`)).body.loadbalancer;
    expect(fields).toEqual({ id: a.id, name: 'f-a' });

    // Filtered once every status has settled: a filter read while they move would race the transitions.
    for (const lb of [a, b, c]) await untilActive('loadbalancers', lb.id);
    expect(await names('provisioning_status=ACTIVE')).toEqual(expect.arrayContaining(['f-a', 'f-b', 'f-c']));
    expect((await names('provisioning_status=PENDING_CREATE')).filter((name: string) => ['f-a', 'f-b', 'f-c'].includes(name))).toEqual([]);
    for (const lb of [a, b, c]) await deleteLb(lb.id);
  });
});
