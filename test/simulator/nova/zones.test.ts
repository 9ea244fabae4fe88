/**
 * A simulated cloud with three availability zones, one compute host each:
 * Nova and Cinder list the zones, a server asked into a zone lands on its
 * host, anti-affinity spreads a group over the hosts and refuses a fourth
 * member, and a volume is created in the zone it names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../../src/simulator/host.js';
import { call, endpoint, login, start, waitFor, type Session } from '../helpers.js';

let sim: Simulator;
let demo: Session;
let admin: Session;
let compute: string;
let volumes: string;
let imageId: string;
let networkId: string;

const zones = ['az-1', 'az-2', 'az-3'];
const nova = (session: Session, method: string, path: string, body?: unknown) =>
  call(session, method, `${compute}${path}`, body, { 'OpenStack-API-Version': 'compute 2.79' });

async function boot(name: string, extra: Record<string, unknown> = {}, server: Record<string, unknown> = {}): Promise<string> {
  const res = await nova(demo, 'POST', '/servers', {
    server: { name, flavorRef: '1', imageRef: imageId, networks: [{ uuid: networkId }], ...server },
    ...extra,
  });
  if (res.status !== 202) throw new Error(`boot failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.server.id as string;
}

async function settled(id: string): Promise<Record<string, any>> {
  return waitFor(async () => {
    const server = (await call(admin, 'GET', `${compute}/servers/${id}`, undefined, { 'OpenStack-API-Version': 'compute 2.79' })).body.server;
    return server.status === 'ACTIVE' || server.status === 'ERROR' ? server : undefined;
  });
}

async function deleteAll(ids: string[]): Promise<void> {
  for (const id of ids) await nova(demo, 'DELETE', `/servers/${id}`);
  for (const id of ids) await waitFor(async () => ((await nova(demo, 'GET', `/servers/${id}`)).status === 404 ? true : undefined));
}

beforeAll(async () => {
  sim = await start({ availabilityZones: zones, transitionDelayMs: 10 });
  demo = await login(sim);
  admin = await login(sim, 'admin');
  compute = endpoint(demo, 'compute');
  volumes = endpoint(demo, 'volumev3');
  imageId = (await call(demo, 'GET', `${endpoint(demo, 'image')}/v2/images?name=ubuntu-22.04`)).body.images[0].id;
  networkId = (await call(demo, 'POST', `${endpoint(demo, 'network')}/v2.0/networks`, { network: { name: 'zoned' } })).body.network.id;
  await call(demo, 'POST', `${endpoint(demo, 'network')}/v2.0/subnets`, { subnet: { network_id: networkId, cidr: '10.9.0.0/24', ip_version: 4 } });
});

afterAll(async () => {
  await sim?.close();
});

describe('a simulated cloud with three availability zones', () => {
  it('lists the zones in Nova and in Cinder, with one compute host in each', async () => {
    const listed = (await nova(demo, 'GET', '/os-availability-zone')).body.availabilityZoneInfo;
    expect(listed.map((zone: { zoneName: string }) => zone.zoneName)).toEqual(zones);
    const detail = (await nova(admin, 'GET', '/os-availability-zone/detail')).body.availabilityZoneInfo;
    expect(Object.fromEntries(detail.map((zone: { zoneName: string; hosts: Record<string, unknown> }) => [zone.zoneName, Object.keys(zone.hosts)]))).toEqual({
      internal: ['ministack'],
      'az-1': ['ministack'],
      'az-2': ['ministack-2'],
      'az-3': ['ministack-3'],
    });
    const cinder = (await call(demo, 'GET', `${volumes}/os-availability-zone`)).body.availabilityZoneInfo;
    expect(cinder.map((zone: { zoneName: string }) => zone.zoneName)).toEqual(zones);
  });

  it('places a server in the zone it asks for, and refuses a zone the cloud does not have', async () => {
    const id = await boot('in-az-2', {}, { availability_zone: 'az-2' });
    const server = await settled(id);
    expect(server).toMatchObject({ status: 'ACTIVE', 'OS-EXT-AZ:availability_zone': 'az-2', 'OS-EXT-SRV-ATTR:host': 'ministack-2' });
    const ports = (await call(admin, 'GET', `${endpoint(admin, 'network')}/v2.0/ports?device_id=${id}`)).body.ports;
    expect(ports[0]).toMatchObject({ device_owner: 'compute:az-2', 'binding:host_id': 'ministack-2' });
    const refused = await nova(demo, 'POST', '/servers', {
      server: { name: 'nowhere', flavorRef: '1', imageRef: imageId, networks: 'none', availability_zone: 'az-9' },
    });
    expect(refused.body).toEqual({ badRequest: { code: 400, message: 'The requested availability zone is not available' } });
    await deleteAll([id]);
  });

  it('spreads an anti-affinity group over the three hosts and refuses a fourth member', async () => {
    const group = (await nova(demo, 'POST', '/os-server-groups', { server_group: { name: 'control-plane', policy: 'anti-affinity' } })).body.server_group;
    const hints = { 'os:scheduler_hints': { group: group.id } };
    const members: string[] = [];
    for (const name of ['cp-0', 'cp-1', 'cp-2']) {
      members.push(await boot(name, hints));
      await settled(members.at(-1)!);
    }
    const placed = await Promise.all(members.map(settled));
    expect(placed.map((server) => server.status)).toEqual(['ACTIVE', 'ACTIVE', 'ACTIVE']);
    expect(new Set(placed.map((server) => server['OS-EXT-SRV-ATTR:host'])).size).toBe(3);
    expect(placed.map((server) => server['OS-EXT-AZ:availability_zone']).sort()).toEqual(zones);
    const fourth = await boot('cp-3', hints);
    expect(await settled(fourth)).toMatchObject({ status: 'ERROR', fault: { message: 'No valid host was found. There are not enough hosts available.' } });
    await deleteAll([...members, fourth]);
    expect((await nova(demo, 'DELETE', `/os-server-groups/${group.id}`)).status).toBe(204);
  });

  it('creates a volume in the zone it names, by default in the first', async () => {
    const zoned = (await call(demo, 'POST', `${volumes}/volumes`, { volume: { size: 1, availability_zone: 'az-3' } })).body.volume;
    expect(zoned.availability_zone).toBe('az-3');
    const unzoned = (await call(demo, 'POST', `${volumes}/volumes`, { volume: { size: 1 } })).body.volume;
    expect(unzoned.availability_zone).toBe('az-1');
    const refused = await call(demo, 'POST', `${volumes}/volumes`, { volume: { size: 1, availability_zone: 'az-9' } });
    expect(refused.status).toBe(400);
    for (const volume of [zoned, unzoned]) {
      await waitFor(async () => ((await call(demo, 'GET', `${volumes}/volumes/${volume.id}`)).body.volume.status === 'available' ? true : undefined));
      expect((await call(demo, 'DELETE', `${volumes}/volumes/${volume.id}`)).status).toBe(202);
    }
  });
});
