import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCinderSimulator } from '../../../src/simulator/cinder/index.js';
import { createGlanceSimulator } from '../../../src/simulator/glance/index.js';
import type { Simulator } from '../../../src/simulator/host.js';
import { createNeutronSimulator } from '../../../src/simulator/neutron/index.js';
import { createNovaSimulator } from '../../../src/simulator/nova/index.js';
import { call, endpoint, login, start, waitFor, type Session } from '../helpers.js';

let sim: Simulator;
let demo: Session;
let admin: Session;
let compute: string;
let neutron: string;
let imageId: string;
let net: { networkId: string; subnetId: string };

const mv = (version: string) => ({ 'OpenStack-API-Version': `compute ${version}` });
const nova = (session: Session, method: string, path: string, body?: unknown, version = '2.79') =>
  call(session, method, `${compute}${path}`, body, mv(version));

async function boot(session: Session, server: Record<string, unknown>, extra: Record<string, unknown> = {}, version = '2.79') {
  const res = await nova(
    session,
    'POST',
    '/servers',
    { server: { name: 'vm', flavorRef: '1', imageRef: imageId, networks: [{ uuid: net.networkId }], ...server }, ...extra },
    version,
  );
  if (res.status !== 202) throw new Error(`boot failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.server.id as string;
}

async function untilStatus(session: Session, id: string, status: string, version = '2.79') {
  return waitFor(async () => {
    const res = await nova(session, 'GET', `/servers/${id}`, undefined, version);
    return res.body.server?.status === status ? res.body.server : undefined;
  });
}

/** A port as an admin sees it (with binding:host_id), or undefined once it is gone. */
async function portOf(id: string) {
  const res = await call(admin, 'GET', `${neutron}/ports/${id}`);
  return res.status === 200 ? res.body.port : undefined;
}

async function untilGone(session: Session, id: string) {
  await waitFor(async () => ((await nova(session, 'GET', `/servers/${id}`)).status === 404 ? true : undefined));
}

beforeAll(async () => {
  sim = await start({ services: [createGlanceSimulator, createCinderSimulator, createNeutronSimulator, createNovaSimulator] });
  demo = await login(sim);
  admin = await login(sim, 'admin');
  compute = endpoint(demo, 'compute');
  neutron = `${endpoint(demo, 'network')}/v2.0`;
  const images = await call(demo, 'GET', `${endpoint(demo, 'image')}/v2/images?name=ubuntu-22.04`);
  imageId = images.body.images[0].id;
  const network = (await call(demo, 'POST', `${neutron}/networks`, { network: { name: 'private' } })).body.network;
  const subnet = (await call(demo, 'POST', `${neutron}/subnets`, { subnet: { network_id: network.id, cidr: '10.0.0.0/24', ip_version: 4 } })).body.subnet;
  net = { networkId: network.id, subnetId: subnet.id };
});
afterAll(async () => {
  await sim.close();
});

describe('nova versions and microversions', () => {
  it('serves the version documents without a token', async () => {
    const root = await fetch(`${sim.url}/compute/`);
    expect(root.status).toBe(200);
    const versions = (await root.json()) as { versions: { id: string; version: string; min_version: string }[] };
    expect(versions.versions.map((v) => v.id)).toEqual(['v2.0', 'v2.1']);
    const v21 = (await (await fetch(`${sim.url}/compute/v2.1/`)).json()) as { version: Record<string, unknown> };
    expect(v21.version).toMatchObject({ id: 'v2.1', status: 'CURRENT', version: '2.93', min_version: '2.1' });
    expect(compute).toBe(`${sim.url}/compute/v2.1`);
  });

  it('negotiates and echoes the microversion', async () => {
    const plain = await call(demo, 'GET', `${compute}/flavors`);
    expect(plain.headers.get('x-openstack-nova-api-version')).toBe('2.1');
    expect(plain.headers.get('openstack-api-version')).toBe('compute 2.1');
    const modern = await nova(demo, 'GET', '/flavors', undefined, '2.60');
    expect(modern.headers.get('openstack-api-version')).toBe('compute 2.60');
    const legacy = await call(demo, 'GET', `${compute}/flavors`, undefined, { 'X-OpenStack-Nova-API-Version': '2.38' });
    expect(legacy.headers.get('x-openstack-nova-api-version')).toBe('2.38');
    const latest = await nova(demo, 'GET', '/flavors', undefined, 'latest');
    expect(latest.headers.get('x-openstack-nova-api-version')).toBe('2.93');
    expect(latest.headers.get('vary')).toContain('OpenStack-API-Version');

    const tooNew = await nova(demo, 'GET', '/flavors', undefined, '2.94');
    expect(tooNew.status).toBe(406);
    expect(tooNew.body).toEqual({ computeFault: { code: 406, message: 'Version 2.94 is not supported by the API. Minimum is 2.1 and maximum is 2.93.' } });
    const garbage = await nova(demo, 'GET', '/flavors', undefined, '2.x');
    expect(garbage.status).toBe(400);
    expect(garbage.body.badRequest.message).toBe('API Version String 2.x is of invalid format. Must be of format MajorNum.MinorNum.');
  });
});

describe('nova servers', () => {
  it('builds a server: BUILD then ACTIVE with a bound Nova-owned port, then deletes it and its port', async () => {
    const res = await nova(demo, 'POST', '/servers', {
      server: { name: 'web-1', flavorRef: '2', imageRef: imageId, networks: [{ uuid: net.networkId }], metadata: { role: 'web' } },
    });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`${compute}/servers/${res.body.server.id}`);
    expect(res.body.server).toMatchObject({ 'OS-DCF:diskConfig': 'MANUAL', security_groups: [{ name: 'default' }] });
    expect(res.body.server.adminPass).toMatch(/^\w{12}$/);
    const id = res.body.server.id;

    const building = (await nova(demo, 'GET', `/servers/${id}`)).body.server;
    expect(building).toMatchObject({ status: 'BUILD', 'OS-EXT-STS:vm_state': 'building', 'OS-EXT-STS:task_state': 'scheduling', addresses: {}, hostId: '' });
    expect(building).not.toHaveProperty('OS-EXT-SRV-ATTR:host');

    const active = await untilStatus(demo, id, 'ACTIVE');
    expect(active).toMatchObject({
      name: 'web-1',
      tenant_id: demo.projectId,
      user_id: demo.userId,
      metadata: { role: 'web' },
      image: { id: imageId },
      flavor: { original_name: 'm1.small', vcpus: 1, ram: 2048, disk: 20, swap: 0, ephemeral: 0, extra_specs: {} },
      'OS-EXT-STS:vm_state': 'active',
      'OS-EXT-STS:task_state': null,
      'OS-EXT-STS:power_state': 1,
      'OS-EXT-AZ:availability_zone': 'nova',
      progress: 0,
      key_name: null,
    });
    expect(active['OS-SRV-USG:launched_at']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
    expect(active.hostId).toMatch(/^[0-9a-f]{56}$/);
    const [address] = active.addresses.private;
    expect(address).toMatchObject({ version: 4, 'OS-EXT-IPS:type': 'fixed' });
    expect(address.addr).toMatch(/^10\.0\.0\.\d+$/);
    const [port] = (await call(admin, 'GET', `${neutron}/ports?device_id=${id}`)).body.ports;
    expect(port).toMatchObject({ status: 'ACTIVE', device_owner: 'compute:nova', 'binding:host_id': 'ministack' });

    const asAdmin = (await nova(admin, 'GET', `/servers/${id}`)).body.server;
    expect(asAdmin).toMatchObject({
      'OS-EXT-SRV-ATTR:host': 'ministack',
      'OS-EXT-SRV-ATTR:hypervisor_hostname': 'ministack',
      'OS-EXT-SRV-ATTR:root_device_name': '/dev/vda',
    });
    expect(asAdmin['OS-EXT-SRV-ATTR:instance_name']).toMatch(/^instance-[0-9a-f]{8}$/);

    expect((await nova(demo, 'DELETE', `/servers/${id}`)).status).toBe(204);
    const deleting = (await nova(demo, 'GET', `/servers/${id}`)).body.server;
    expect(deleting).toMatchObject({ status: 'ACTIVE', 'OS-EXT-STS:task_state': 'deleting' });
    await untilGone(demo, id);
    const gone = await nova(demo, 'GET', `/servers/${id}`);
    expect(gone.body).toEqual({ itemNotFound: { code: 404, message: `Instance ${id} could not be found.` } });
    expect(await portOf(port.id)).toBeUndefined();
  });

  it('binds a user port and leaves it, unbound, after the server is deleted', async () => {
    const port = (await call(demo, 'POST', `${neutron}/ports`, { port: { network_id: net.networkId, name: 'mine' } })).body.port;
    const id = await boot(demo, { name: 'with-port', networks: [{ port: port.id }] });
    const conflict = await nova(demo, 'POST', '/servers', { server: { name: 'again', flavorRef: '1', imageRef: imageId, networks: [{ port: port.id }] } });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ conflictingRequest: { code: 409, message: `Port ${port.id} is still in use.` } });
    await untilStatus(demo, id, 'ACTIVE');
    expect(await portOf(port.id)).toMatchObject({ device_id: id, status: 'ACTIVE' });
    const interfaces = await nova(demo, 'GET', `/servers/${id}/os-interface`);
    expect(interfaces.body.interfaceAttachments).toEqual([
      expect.objectContaining({ port_id: port.id, net_id: net.networkId, port_state: 'ACTIVE', mac_addr: port.mac_address, tag: null }),
    ]);
    await nova(demo, 'DELETE', `/servers/${id}`);
    await untilGone(demo, id);
    expect(await portOf(port.id)).toMatchObject({ device_id: '', device_owner: '', status: 'DOWN' });
    expect((await call(demo, 'DELETE', `${neutron}/ports/${port.id}`)).status).toBe(204);
  });

  it('answers 400 for a missing image, flavor, keypair or network, in Nova words', async () => {
    const body = (server: Record<string, unknown>) => ({ server: { name: 'bad', flavorRef: '1', imageRef: imageId, networks: 'none', ...server } });
    const noImage = await nova(demo, 'POST', '/servers', body({ imageRef: '11111111-2222-3333-4444-555555555555' }));
    expect(noImage.body).toEqual({ badRequest: { code: 400, message: 'Can not find requested image' } });
    const noFlavor = await nova(demo, 'POST', '/servers', body({ flavorRef: '99' }));
    expect(noFlavor.body).toEqual({ badRequest: { code: 400, message: 'Flavor 99 could not be found.' } });
    const noKey = await nova(demo, 'POST', '/servers', body({ key_name: 'nope' }));
    expect(noKey.body).toEqual({ badRequest: { code: 400, message: 'Invalid key_name provided.' } });
    const noNetwork = await nova(demo, 'POST', '/servers', body({ networks: [{ uuid: '11111111-2222-3333-4444-555555555555' }] }));
    expect(noNetwork.body.badRequest.message).toBe('Network 11111111-2222-3333-4444-555555555555 could not be found.');
    const networksRequired = await nova(demo, 'POST', '/servers', { server: { name: 'bad', flavorRef: '1', imageRef: imageId } }, '2.37');
    expect(networksRequired.status).toBe(400);
    expect(networksRequired.body.badRequest.message).toContain("'networks' is a required property");
    const tagsTooEarly = await nova(demo, 'POST', '/servers', body({ tags: ['a'] }), '2.51');
    expect(tagsTooEarly.body.badRequest.message).toContain("Additional properties are not allowed ('tags' was unexpected)");
    const userData = await nova(demo, 'POST', '/servers', body({ user_data: 'not base64!' }));
    expect(userData.status).toBe(400);
    expect(sim.inventory().compute?.servers).toBe(0);
  });

  it('puts a second anti-affinity member into ERROR with No valid host', async () => {
    const group = await nova(demo, 'POST', '/os-server-groups', { server_group: { name: 'spread', policy: 'anti-affinity' } }, '2.64');
    expect(group.body.server_group).toEqual({
      id: expect.any(String),
      name: 'spread',
      policy: 'anti-affinity',
      rules: {},
      members: [],
      project_id: demo.projectId,
      user_id: demo.userId,
    });
    const groupId = group.body.server_group.id;
    const hints = { 'os:scheduler_hints': { group: groupId } };
    const first = await boot(demo, { name: 'aa-1' }, hints);
    await untilStatus(demo, first, 'ACTIVE');
    const second = await boot(demo, { name: 'aa-2' }, hints);
    const failed = await untilStatus(demo, second, 'ERROR');
    expect(failed.fault).toEqual({ code: 500, created: expect.any(String), message: 'No valid host was found. There are not enough hosts available.' });
    expect(failed['OS-EXT-STS:vm_state']).toBe('error');
    expect(failed.addresses).toEqual({});
    expect((await nova(demo, 'GET', `/servers/${first}`, undefined, '2.71')).body.server.server_groups).toEqual([groupId]);
    const members = (await nova(demo, 'GET', `/os-server-groups/${groupId}`)).body.server_group.members;
    expect(members.sort()).toEqual([first, second].sort());
    const legacy = (await nova(demo, 'GET', `/os-server-groups/${groupId}`, undefined, '2.1')).body.server_group;
    expect(legacy).toMatchObject({ policies: ['anti-affinity'], metadata: {} });
    expect(legacy).not.toHaveProperty('project_id');

    expect((await nova(demo, 'DELETE', `/servers/${second}`)).status).toBe(204);
    expect((await nova(demo, 'GET', `/servers/${second}`)).status).toBe(404);
    await nova(demo, 'DELETE', `/servers/${first}`);
    await untilGone(demo, first);
    expect((await nova(demo, 'DELETE', `/os-server-groups/${groupId}`)).status).toBe(204);
    expect((await nova(demo, 'GET', `/os-server-groups/${groupId}`)).body).toEqual({
      itemNotFound: { code: 404, message: `Instance group ${groupId} could not be found.` },
    });
  });

  it('enforces the instances quota with Nova’s message', async () => {
    sim.setQuota('demo', 'instances', 1);
    try {
      const id = await boot(demo, { name: 'q-1', networks: 'none' });
      const over = await nova(demo, 'POST', '/servers', { server: { name: 'q-2', flavorRef: '1', imageRef: imageId, networks: 'none' } });
      expect(over.status).toBe(403);
      expect(over.body).toEqual({ forbidden: { code: 403, message: 'Quota exceeded for instances: Requested 1, but already used 1 of 1 instances' } });
      const limits = (await nova(demo, 'GET', '/limits')).body.limits.absolute;
      expect(limits).toMatchObject({
        maxTotalInstances: 1,
        totalInstancesUsed: 1,
        totalCoresUsed: 1,
        totalRAMUsed: 512,
        maxTotalCores: 400,
        maxServerMeta: 128,
        maxServerGroups: 10,
      });
      expect(limits).not.toHaveProperty('maxPersonality');
      await nova(demo, 'DELETE', `/servers/${id}`);
      await untilGone(demo, id);
    } finally {
      sim.setQuota('demo', 'instances', Infinity);
    }
  });

  it('lists with name, status, tag, changes-since filters and pages with servers_links', async () => {
    const before = new Date().toISOString();
    const a = await boot(demo, { name: 'list-a', tags: ['x', 'y'], networks: 'none' });
    const b = await boot(demo, { name: 'list-b', tags: ['x'], networks: 'none' });
    const c = await boot(demo, { name: 'other-c', networks: 'none' });
    await Promise.all([a, b, c].map((id) => untilStatus(demo, id, 'ACTIVE')));
    const names = async (query: string) => (await nova(demo, 'GET', `/servers/detail?${query}`)).body.servers.map((s: { name: string }) => s.name).sort();

    expect(await names('name=^list-')).toEqual(['list-a', 'list-b']);
    expect(await names('name=^list-a$')).toEqual(['list-a']);
    expect(await names('status=ACTIVE&name=list')).toEqual(['list-a', 'list-b']);
    expect(await names('status=BUILD&name=list')).toEqual([]);
    expect(await names('tags=x,y')).toEqual(['list-a']);
    expect(await names('tags-any=y,x')).toEqual(['list-a', 'list-b']);
    expect(await names('not-tags=x&name=list')).toEqual([]);
    expect(await names('not-tags-any=y&name=list')).toEqual(['list-b']);
    expect(await names(`changes-since=${encodeURIComponent(before)}`)).toEqual(['list-a', 'list-b', 'other-c']);
    expect((await nova(demo, 'GET', '/servers?status=WHATEVER')).status).toBe(400);

    const page1 = await nova(demo, 'GET', '/servers?limit=2');
    expect(page1.body.servers.map((s: { id: string }) => s.id)).toEqual([c, b]);
    expect(page1.body.servers[0]).toEqual({ id: c, name: 'other-c', links: expect.any(Array) });
    const next = page1.body.servers_links[0];
    expect(next.rel).toBe('next');
    expect(next.href).toContain(`marker=${b}`);
    const page2 = await call(demo, 'GET', next.href, undefined, mv('2.79'));
    expect(page2.body.servers.map((s: { id: string }) => s.id)).toEqual([a]);
    expect((await nova(demo, 'GET', '/servers?marker=nope')).body).toEqual({ badRequest: { code: 400, message: 'marker [nope] not found' } });

    for (const id of [a, b, c]) await nova(demo, 'DELETE', `/servers/${id}`);
    for (const id of [a, b, c]) await untilGone(demo, id);
    const deleted = (await nova(demo, 'GET', `/servers/detail?changes-since=${encodeURIComponent(before)}`)).body.servers;
    expect(deleted.map((s: { status: string }) => s.status)).toEqual(['DELETED', 'DELETED', 'DELETED']);
  });

  it('manages tags and metadata on a server', async () => {
    const id = await boot(demo, { name: 'tagged', networks: 'none', tags: ['a'] });
    const early = await nova(demo, 'PUT', `/servers/${id}/tags/b`);
    expect(early.status).toBe(409);
    expect(early.body.conflictingRequest.message).toBe(`Cannot 'update tag' instance ${id} while it is in vm_state building`);
    await untilStatus(demo, id, 'ACTIVE');
    expect((await nova(demo, 'PUT', `/servers/${id}/tags/b`)).status).toBe(201);
    expect((await nova(demo, 'PUT', `/servers/${id}/tags/b`)).status).toBe(204);
    expect((await nova(demo, 'GET', `/servers/${id}/tags`)).body).toEqual({ tags: ['a', 'b'] });
    expect((await nova(demo, 'GET', `/servers/${id}/tags/a`)).status).toBe(204);
    expect((await nova(demo, 'GET', `/servers/${id}/tags/zzz`)).status).toBe(404);
    expect((await nova(demo, 'PUT', `/servers/${id}/tags`, { tags: ['p', 'q'] })).body).toEqual({ tags: ['p', 'q'] });
    expect((await nova(demo, 'DELETE', `/servers/${id}/tags/p`)).status).toBe(204);
    expect((await nova(demo, 'GET', `/servers/${id}`)).body.server.tags).toEqual(['q']);
    expect((await nova(demo, 'GET', `/servers/${id}/tags`, undefined, '2.25')).status).toBe(404);
    expect((await nova(demo, 'DELETE', `/servers/${id}/tags`)).status).toBe(204);

    expect((await nova(demo, 'POST', `/servers/${id}/metadata`, { metadata: { k1: 'v1' } })).body).toEqual({ metadata: { k1: 'v1' } });
    expect((await nova(demo, 'PUT', `/servers/${id}/metadata/k2`, { meta: { k2: 'v2' } })).body).toEqual({ meta: { k2: 'v2' } });
    expect((await nova(demo, 'GET', `/servers/${id}/metadata`)).body).toEqual({ metadata: { k1: 'v1', k2: 'v2' } });
    expect((await nova(demo, 'PUT', `/servers/${id}/metadata/k3`, { meta: { other: 'x' } })).body.badRequest.message).toBe('Request body and URI mismatch');
    expect((await nova(demo, 'DELETE', `/servers/${id}/metadata/k1`)).status).toBe(204);
    expect((await nova(demo, 'GET', `/servers/${id}/metadata/k1`)).body).toEqual({ itemNotFound: { code: 404, message: 'Metadata item was not found' } });
    expect((await nova(demo, 'PUT', `/servers/${id}/metadata`, { metadata: { only: 'this' } })).body).toEqual({ metadata: { only: 'this' } });

    await nova(demo, 'DELETE', `/servers/${id}`);
    await untilGone(demo, id);
  });

  it('stops, starts and reboots, and refuses actions in the wrong state', async () => {
    const id = await boot(demo, { name: 'power', networks: 'none' });
    await untilStatus(demo, id, 'ACTIVE');
    expect((await nova(demo, 'POST', `/servers/${id}/action`, { 'os-stop': null })).status).toBe(202);
    const stopped = await untilStatus(demo, id, 'SHUTOFF');
    expect(stopped['OS-EXT-STS:power_state']).toBe(4);
    const again = await nova(demo, 'POST', `/servers/${id}/action`, { 'os-stop': null });
    expect(again.body).toEqual({ conflictingRequest: { code: 409, message: `Cannot 'stop' instance ${id} while it is in vm_state stopped` } });
    await nova(demo, 'POST', `/servers/${id}/action`, { 'os-start': null });
    await untilStatus(demo, id, 'ACTIVE');
    await nova(demo, 'POST', `/servers/${id}/action`, { reboot: { type: 'HARD' } });
    expect((await nova(demo, 'GET', `/servers/${id}`)).body.server.status).toBe('HARD_REBOOT');
    await untilStatus(demo, id, 'ACTIVE');
    expect((await nova(demo, 'POST', `/servers/${id}/action`, { frobnicate: {} })).body.badRequest.message).toBe('There is no such action: frobnicate');
    await nova(demo, 'DELETE', `/servers/${id}`);
    await untilGone(demo, id);
  });

  it('boots from a volume created from the image and deletes it on termination', async () => {
    const res = await nova(demo, 'POST', '/servers', {
      server: {
        name: 'bfv',
        flavorRef: '1',
        imageRef: '',
        networks: 'none',
        block_device_mapping_v2: [
          { source_type: 'image', destination_type: 'volume', uuid: imageId, volume_size: 5, boot_index: 0, delete_on_termination: true },
        ],
      },
    });
    expect(res.status).toBe(202);
    const id = res.body.server.id;
    const active = await untilStatus(demo, id, 'ACTIVE');
    expect(active.image).toBe('');
    const [attached] = active['os-extended-volumes:volumes_attached'];
    expect(attached).toEqual({ id: expect.any(String), delete_on_termination: true });
    const volumes = `${endpoint(demo, 'block-storage')}/volumes`;
    const volume = await waitFor(async () => {
      const v = (await call(demo, 'GET', `${volumes}/${attached.id}`)).body.volume;
      return v.status === 'in-use' ? v : undefined;
    });
    expect(volume).toMatchObject({ size: 5, bootable: 'true' });
    const attachments = (await nova(demo, 'GET', `/servers/${id}/os-volume_attachments`)).body.volumeAttachments;
    expect(attachments).toEqual([{ id: attached.id, volumeId: attached.id, serverId: id, device: '/dev/vda', tag: null, delete_on_termination: true }]);
    const root = await nova(demo, 'DELETE', `/servers/${id}/os-volume_attachments/${attached.id}`);
    expect(root.body.badRequest.message).toBe('Cannot detach a root device volume');

    await nova(demo, 'DELETE', `/servers/${id}`);
    await untilGone(demo, id);
    await waitFor(async () => ((await call(demo, 'GET', `${volumes}/${attached.id}`)).status === 404 ? true : undefined));
  });

  it('attaches and detaches volumes and interfaces on a running server', async () => {
    const id = await boot(demo, { name: 'hotplug', networks: 'none' });
    await untilStatus(demo, id, 'ACTIVE');
    const volumes = `${endpoint(demo, 'block-storage')}/volumes`;
    const volumeId = (await call(demo, 'POST', volumes, { volume: { size: 1, name: 'data' } })).body.volume.id;
    await waitFor(async () => ((await call(demo, 'GET', `${volumes}/${volumeId}`)).body.volume.status === 'available' ? true : undefined));

    const attach = await nova(demo, 'POST', `/servers/${id}/os-volume_attachments`, { volumeAttachment: { volumeId } });
    expect(attach.body.volumeAttachment).toEqual({ id: volumeId, serverId: id, volumeId, device: '/dev/vdb', tag: null, delete_on_termination: false });
    await waitFor(async () => ((await call(demo, 'GET', `${volumes}/${volumeId}`)).body.volume.status === 'in-use' ? true : undefined));
    const latest = (await nova(demo, 'GET', `/servers/${id}/os-volume_attachments/${volumeId}`, undefined, '2.89')).body.volumeAttachment;
    expect(latest).not.toHaveProperty('id');
    expect(latest).toMatchObject({ volumeId, attachment_id: expect.any(String), bdm_uuid: expect.any(String) });
    expect((await nova(demo, 'DELETE', `/servers/${id}/os-volume_attachments/${volumeId}`)).status).toBe(202);
    await waitFor(async () => ((await call(demo, 'GET', `${volumes}/${volumeId}`)).body.volume.status === 'available' ? true : undefined));

    const added = await nova(demo, 'POST', `/servers/${id}/os-interface`, { interfaceAttachment: { net_id: net.networkId } });
    expect(added.status).toBe(200);
    const portId = added.body.interfaceAttachment.port_id;
    expect(await portOf(portId)).toMatchObject({ device_id: id, status: 'ACTIVE' });
    expect(Object.keys((await nova(demo, 'GET', `/servers/${id}`)).body.server.addresses)).toEqual(['private']);
    expect((await nova(demo, 'DELETE', `/servers/${id}/os-interface/${portId}`)).status).toBe(202);
    expect(await portOf(portId)).toBeUndefined();
    expect((await nova(demo, 'DELETE', `/servers/${id}/os-interface/${portId}`)).status).toBe(404);

    await nova(demo, 'DELETE', `/servers/${id}`);
    await untilGone(demo, id);
    await call(demo, 'DELETE', `${volumes}/${volumeId}`);
  });
});

describe('nova flavors, keypairs, availability zones', () => {
  it('lists the seeded flavors with microversioned fields', async () => {
    const detail = (await nova(demo, 'GET', '/flavors/detail', undefined, '2.1')).body.flavors;
    expect(detail.map((f: { name: string }) => f.name)).toEqual(['m1.tiny', 'm1.small', 'm1.medium', 'm1.large']);
    expect(detail[0]).toMatchObject({ id: '1', ram: 512, disk: 1, vcpus: 1, swap: '', 'os-flavor-access:is_public': true, 'OS-FLV-EXT-DATA:ephemeral': 0 });
    expect(detail[0]).not.toHaveProperty('extra_specs');
    const modern = (await nova(demo, 'GET', '/flavors/3', undefined, '2.75')).body.flavor;
    expect(modern).toMatchObject({ name: 'm1.medium', vcpus: 2, ram: 4096, disk: 40, swap: 0, description: null, extra_specs: {} });
    expect((await nova(demo, 'GET', '/flavors/42')).body).toEqual({ itemNotFound: { code: 404, message: 'Flavor 42 could not be found.' } });
    expect((await nova(demo, 'GET', '/flavors/1/os-extra_specs')).body).toEqual({ extra_specs: {} });
  });

  it('lets only an admin create and delete a flavor, with its ephemeral disk', async () => {
    const body = { flavor: { name: 'm1.ephemeral', ram: 3072, vcpus: 3, disk: 25, 'OS-FLV-EXT-DATA:ephemeral': 10 } };
    expect((await nova(demo, 'POST', '/flavors', body)).body).toEqual({
      forbidden: { code: 403, message: "Policy doesn't allow os_compute_api:os-flavor-manage:create to be performed." },
    });
    const created = await nova(admin, 'POST', '/flavors', body, '2.75');
    expect(created.status).toBe(200);
    expect(created.body.flavor).toMatchObject({
      name: 'm1.ephemeral',
      ram: 3072,
      vcpus: 3,
      disk: 25,
      'OS-FLV-EXT-DATA:ephemeral': 10,
      swap: 0,
      'os-flavor-access:is_public': true,
    });
    const id = created.body.flavor.id as string;
    expect((await nova(demo, 'GET', `/flavors/${id}`)).body.flavor).toMatchObject({ name: 'm1.ephemeral', 'OS-FLV-EXT-DATA:ephemeral': 10 });
    expect((await nova(admin, 'POST', '/flavors', body)).body).toEqual({
      conflictingRequest: { code: 409, message: 'Flavor with name m1.ephemeral already exists.' },
    });
    expect((await nova(admin, 'POST', '/flavors', { flavor: { name: 'no-ram', vcpus: 1, disk: 0 } })).status).toBe(400);
    expect((await nova(demo, 'DELETE', `/flavors/${id}`)).status).toBe(403);
    expect((await nova(admin, 'DELETE', `/flavors/${id}`)).status).toBe(202);
    expect((await nova(demo, 'GET', `/flavors/${id}`)).status).toBe(404);
  });

  it('generates, imports, lists and deletes keypairs', async () => {
    const generated = await nova(demo, 'POST', '/os-keypairs', { keypair: { name: 'gen' } }, '2.1');
    expect(generated.status).toBe(200);
    expect(generated.body.keypair).toMatchObject({ name: 'gen', user_id: demo.userId });
    expect(generated.body.keypair.private_key).toContain('BEGIN RSA PRIVATE KEY');
    expect(generated.body.keypair.public_key).toMatch(/^ssh-rsa AAAA\S+ Generated-by-Nova$/);
    expect(generated.body.keypair.fingerprint).toMatch(/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/);

    const imported = await nova(demo, 'POST', '/os-keypairs', { keypair: { name: 'imp', public_key: generated.body.keypair.public_key } }, '2.2');
    expect(imported.status).toBe(201);
    expect(imported.body.keypair).toEqual({
      name: 'imp',
      public_key: generated.body.keypair.public_key,
      fingerprint: generated.body.keypair.fingerprint,
      type: 'ssh',
      user_id: demo.userId,
    });
    const duplicate = await nova(demo, 'POST', '/os-keypairs', { keypair: { name: 'imp', public_key: generated.body.keypair.public_key } });
    expect(duplicate.body).toEqual({ conflictingRequest: { code: 409, message: "Key pair 'imp' already exists." } });
    const broken = await nova(demo, 'POST', '/os-keypairs', { keypair: { name: 'bad', public_key: 'ssh-rsa nope' } });
    expect(broken.body).toEqual({ badRequest: { code: 400, message: 'Keypair data is invalid: failed to generate fingerprint' } });
    expect((await nova(demo, 'POST', '/os-keypairs', { keypair: { name: 'gen2' } }, '2.92')).status).toBe(400);

    const list = (await nova(demo, 'GET', '/os-keypairs')).body.keypairs;
    expect(list.map((k: { keypair: { name: string } }) => k.keypair.name)).toEqual(['gen', 'imp']);
    const shown = (await nova(demo, 'GET', '/os-keypairs/imp')).body.keypair;
    expect(shown).toMatchObject({ name: 'imp', deleted: false, type: 'ssh', user_id: demo.userId, id: expect.any(Number) });
    expect((await nova(admin, 'GET', '/os-keypairs')).body.keypairs).toEqual([]);

    const id = await boot(demo, { name: 'keyed', key_name: 'imp', networks: 'none' });
    expect((await untilStatus(demo, id, 'ACTIVE')).key_name).toBe('imp');
    await nova(demo, 'DELETE', `/servers/${id}`);

    expect((await nova(demo, 'DELETE', '/os-keypairs/imp')).status).toBe(204);
    expect((await nova(demo, 'DELETE', '/os-keypairs/gen', undefined, '2.1')).status).toBe(202);
    expect((await nova(demo, 'GET', '/os-keypairs/gen')).body).toEqual({
      itemNotFound: { code: 404, message: `Keypair gen not found for user ${demo.userId}` },
    });
    await untilGone(demo, id);
  });

  it('reports the nova availability zone', async () => {
    expect((await nova(demo, 'GET', '/os-availability-zone')).body).toEqual({
      availabilityZoneInfo: [{ zoneName: 'nova', zoneState: { available: true }, hosts: null }],
    });
    expect((await nova(demo, 'GET', '/os-availability-zone/detail')).status).toBe(403);
    const detail = (await nova(admin, 'GET', '/os-availability-zone/detail')).body.availabilityZoneInfo;
    expect(detail.find((z: { zoneName: string }) => z.zoneName === 'nova').hosts.ministack).toHaveProperty('nova-compute');
  });

  it('leaves nothing behind', () => {
    expect(sim.inventory().compute).toEqual({ servers: 0, keypairs: 0, server_groups: 0 });
  });
});
