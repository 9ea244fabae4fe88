/**
 * The service without the host: its router on a bare express app (the
 * caller set as the host would, in res.locals.auth) and the peer API Nova
 * and Octavia use through ctx.peers.network.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobFiles } from '../../../src/simulator/blob-files.js';
import { SimulatorError, type SimulatedService, type SimulatorContext, type TokenScope } from '../../../src/simulator/framework.js';
import { createNeutronSimulator } from '../../../src/simulator/neutron/index.js';

const projects: Record<string, string> = { admin: 'a0000000000000000000000000000001', demo: 'd0000000000000000000000000000002' };
const quotas = new Map<string, number>();
const ctx: SimulatorContext = {
  clock: { now: () => Date.now(), after: () => undefined },
  baseUrl: () => base,
  newId: () => randomUUID(),
  quota: (project, resource, defaultLimit = Infinity) => quotas.get(`${project}/${resource}`) ?? defaultLimit,
  setQuota: (project, resource, limit) => void quotas.set(`${project}/${resource}`, limit),
  projectIdByName: (name) => projects[name],
  transitionDelayMs: 0,
  availabilityZones: ['nova'],
  peers: {},
  blobs: BlobFiles.temporary(),
  imageSizeCap: 0,
};

const scope = (name: 'admin' | 'demo'): TokenScope => ({
  token: `token-${name}`,
  userId: `user-${name}`,
  userName: name,
  projectId: projects[name]!,
  projectName: name,
  domainId: 'default',
  roles: name === 'admin' ? ['admin'] : ['member', 'reader'],
  expiresAt: Date.now() + 3_600_000,
});

let base = '';
let server: Server;
let service: SimulatedService;

beforeAll(async () => {
  service = createNeutronSimulator(ctx);
  const app = express();
  app.use(express.json());
  app.use(service.prefix, (req, res, next) => {
    res.locals.auth = scope(req.get('x-test-user') === 'admin' ? 'admin' : 'demo');
    next();
  });
  app.use(service.prefix, service.router());
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await ctx.blobs.close();
});

async function api(method: string, path: string, body?: unknown, user: 'admin' | 'demo' = 'demo') {
  const res = await fetch(`${base}/network/v2.0${path}`, {
    method,
    headers: { 'x-test-user': user, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const peer = () => ctx.peers.network!;

function thrown(fn: () => unknown): SimulatorError {
  try {
    fn();
  } catch (error) {
    if (error instanceof SimulatorError) return error;
    throw error;
  }
  throw new Error('expected a SimulatorError');
}

describe('the service object', () => {
  it('describes itself per the framework contract', () => {
    expect(service).toMatchObject({ type: 'network', name: 'neutron', prefix: '/network' });
    expect(service.publicPaths?.some((p) => p.test('/'))).toBe(true);
    expect(service.formatError(404)).toEqual({ NeutronError: { type: 'HTTPNotFound', message: 'The resource could not be found.', detail: '' } });
    expect(service.formatError(503, 'down for maintenance')).toEqual({
      NeutronError: { type: 'HTTPServiceUnavailable', message: 'down for maintenance', detail: '' },
    });
    expect(service.formatError(500)).toEqual({
      NeutronError: { type: 'HTTPInternalServerError', message: 'Request Failed: internal server error while processing your request.', detail: '' },
    });
  });

  it('counts live resources, seed included', async () => {
    const before = service.inventory();
    expect(before).toMatchObject({ networks: 1, subnets: 1, routers: 0, floatingIps: 0, trunks: 0 });
    const net = await api('POST', '/networks', { network: { name: 'counted' } });
    expect(service.inventory().networks).toBe(before.networks! + 1);
    await api('DELETE', `/networks/${net.body.network.id}`);
    expect(service.inventory().networks).toBe(before.networks);
  });
});

describe('ctx.peers.network', () => {
  let network: string;
  let subnet: string;

  beforeAll(async () => {
    network = (await api('POST', '/networks', { network: { name: 'vm-net' } })).body.network.id;
    subnet = (await api('POST', '/subnets', { subnet: { network_id: network, ip_version: 4, cidr: '192.168.10.0/29' } })).body.subnet.id;
  });

  it('creates a port for a server as the user would, with the default group', async () => {
    const port = peer().createPort(projects.demo!, { network_id: network, name: 'vm-0', device_id: 'srv-1', device_owner: 'compute:nova' });
    expect(port).toMatchObject({
      name: 'vm-0',
      network_id: network,
      project_id: projects.demo,
      device_id: 'srv-1',
      device_owner: 'compute:nova',
      status: 'DOWN',
      admin_state_up: true,
      fixed_ips: [{ subnet_id: subnet, ip_address: '192.168.10.2' }],
      'binding:host_id': '',
      'binding:vif_type': 'unbound',
    });
    const groups = await api('GET', '/security-groups?name=default');
    expect(port.security_groups).toEqual([groups.body.security_groups[0].id]);
    expect(peer().getPort(port.id)).toEqual(port);
    expect(
      peer()
        .listPorts({ device_id: 'srv-1' })
        .map((p) => p.id),
    ).toEqual([port.id]);
  });

  it('binds a port to ACTIVE and unbinds it to DOWN', async () => {
    const port = peer().createPort(projects.demo!, { network_id: network, admin_state_up: true });
    const bound = peer().updatePort(port.id, {
      'binding:host_id': 'ministack',
      device_id: 'srv-2',
      device_owner: 'compute:nova',
      'binding:vif_type': 'ignored',
    });
    expect(bound).toMatchObject({ status: 'ACTIVE', 'binding:host_id': 'ministack', 'binding:vif_type': 'ovs', device_id: 'srv-2' });
    const shown = await api('GET', `/ports/${port.id}`, undefined, 'admin');
    expect(shown.body.port).toMatchObject({ status: 'ACTIVE', 'binding:host_id': 'ministack', revision_number: 2 });
    const unbound = peer().updatePort(port.id, { 'binding:host_id': '', device_id: '', device_owner: '' });
    expect(unbound).toMatchObject({ status: 'DOWN', 'binding:vif_type': 'unbound', device_id: '' });
    peer().deletePort(port.id);
    expect(peer().getPort(port.id)).toBeUndefined();
  });

  it('throws SimulatorErrors carrying Neutron’s exception names', async () => {
    const adminNet = (await api('POST', '/networks', { network: { name: 'admin-net' } }, 'admin')).body.network.id;
    const foreign = thrown(() => peer().createPort(projects.demo!, { network_id: adminNet }));
    expect(foreign).toMatchObject({ status: 404, kind: 'NetworkNotFound', message: `Network ${adminNet} could not be found.` });
    const missing = '12345678-0000-4000-8000-000000000000';
    expect(thrown(() => peer().deletePort(missing))).toMatchObject({ status: 404, kind: 'PortNotFound' });
    expect(thrown(() => peer().updatePort(missing, { name: 'x' }))).toMatchObject({ status: 404, kind: 'PortNotFound' });

    const filled: string[] = [];
    let failure: unknown;
    while (!failure && filled.length < 10) {
      try {
        filled.push(peer().createPort(projects.demo!, { network_id: network }).id);
      } catch (error) {
        failure = error;
      }
    }
    expect(failure).toBeInstanceOf(SimulatorError);
    expect(failure).toMatchObject({ status: 409, kind: 'IpAddressGenerationFailure', message: `No more IP addresses available on network ${network}.` });
    for (const id of filled) peer().deletePort(id);

    ctx.setQuota(projects.demo!, 'port', 0);
    expect(thrown(() => peer().createPort(projects.demo!, { network_id: network }))).toMatchObject({
      status: 409,
      kind: 'OverQuota',
      message: "Quota exceeded for resources: ['port'].",
    });
    quotas.delete(`${projects.demo}/port`);
  });

  it('shows networks, subnets and the floating IPs of a port', async () => {
    const publicNet = (await api('GET', '/networks?name=public')).body.networks[0];
    expect(peer().getNetwork(publicNet.id)).toEqual({
      id: publicNet.id,
      name: 'public',
      project_id: projects.admin,
      status: 'ACTIVE',
      shared: true,
      'router:external': true,
      subnets: publicNet.subnets,
      mtu: 1500,
    });
    expect(peer().getSubnet(subnet)).toEqual({
      id: subnet,
      name: '',
      network_id: network,
      project_id: projects.demo,
      cidr: '192.168.10.0/29',
      ip_version: 4,
      gateway_ip: '192.168.10.1',
    });
    expect(peer().getNetwork('nope')).toBeUndefined();
    expect(peer().getSubnet('nope')).toBeUndefined();

    const router = (await api('POST', '/routers', { router: { external_gateway_info: { network_id: publicNet.id } } })).body.router;
    await api('PUT', `/routers/${router.id}/add_router_interface`, { subnet_id: subnet });
    const port = peer().createPort(projects.demo!, { network_id: network, device_id: 'srv-3', device_owner: 'compute:nova' });
    expect(peer().floatingIpsOfPort(port.id)).toEqual([]);
    const fip = (await api('POST', '/floatingips', { floatingip: { floating_network_id: publicNet.id, port_id: port.id } })).body.floatingip;
    expect(peer().floatingIpsOfPort(port.id)).toEqual([
      { id: fip.id, floating_ip_address: fip.floating_ip_address, fixed_ip_address: port.fixed_ips[0]!.ip_address, port_id: port.id },
    ]);

    // Nova deleting a server's port releases the floating IP; a router port stays protected.
    peer().deletePort(port.id);
    expect((await api('GET', `/floatingips/${fip.id}`)).body.floatingip).toMatchObject({ port_id: null, status: 'DOWN' });
    const routerPort = peer().listPorts({ device_id: router.id, device_owner: 'network:router_interface' })[0]!;
    expect(thrown(() => peer().deletePort(routerPort.id))).toMatchObject({ status: 409, kind: 'ServicePortInUse' });
  });
});
