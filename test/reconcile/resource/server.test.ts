/**
 * The server actuator driven by the engine against the OpenStack simulator
 * through a real session. Ports, volumes and server groups are made the way
 * the caller would make them beforehand; every HTTP attempt is read from
 * the session log to prove what was (not) sent.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Network, Server } from '../../../src/openstack/index.js';
import { TerminalError } from '../../../src/reconcile/runtime/controller.js';
import { ownerTag, ownerTags, type Owner } from '../../../src/reconcile/resource/actuator.js';
import { classify, ensure, remove, ResourceTerminalError } from '../../../src/reconcile/resource/engine.js';
import { serverActuator, serverAddresses, type ServerDesired } from '../../../src/reconcile/resource/server.js';
import { volumeActuator } from '../../../src/reconcile/resource/volume.js';
import { newOwner, seededImageId, SimulatedCompute } from './simulated-compute.js';

const bench = SimulatedCompute.forThisFile();
let network: Network;
let imageId: string;

beforeAll(async () => {
  const { neutron } = bench.clients;
  network = await neutron.createNetwork({ name: 'machines' });
  await neutron.createSubnet({ network_id: network.id, cidr: '10.8.0.0/24', ip_version: 4 });
  imageId = await seededImageId(bench.clients);
  bench.forget();
});

const servers = () => serverActuator(bench.clients.nova);

/** Contains a dot, which Nova's name filter would read as "any character" unless escaped. */
const newName = () => `worker-${randomUUID().slice(0, 8)}.0`;

async function newPort(name: string): Promise<string> {
  return (await bench.clients.neutron.createPort({ network_id: network.id, name })).id;
}

async function readyServer(desired: ServerDesired, owner: Owner, recordedId?: string): Promise<Server> {
  return (await bench.ensureReady(servers(), desired, owner, recordedId)).resource;
}

const serverCount = () => bench.sim.inventory().compute?.servers ?? 0;
const volumeCount = () => bench.sim.inventory()['block-storage']?.volumes ?? 0;

describe('ensure a server', () => {
  it('creates it on the given ports with tags, metadata, user data, zone and group, records it at once, and requeues while it builds', async () => {
    const owner = newOwner();
    const name = newName();
    const portId = await newPort(`${name}-0`);
    const group = await bench.clients.nova.createServerGroup({ name: `${name}-group`, policy: 'soft-anti-affinity' });
    const userData = Buffer.from('#cloud-config\nruncmd: [kubeadm join]\n').toString('base64');
    const desired: ServerDesired = {
      name,
      flavorRef: '1',
      imageRef: imageId,
      portIds: [portId],
      user_data: userData,
      metadata: { 'cluster-name': 'demo' },
      tags: ['team-blue', ownerTag(owner)],
      config_drive: true,
      availability_zone: 'nova',
      serverGroupId: group.id,
    };
    bench.forget();

    const first = await ensure(servers(), { recordedId: undefined, desired, owner, record: bench.record });
    const id = first.resource.id;
    expect(first).toMatchObject({ ready: false, found: 'created', requeueAfterMs: 4_000 });
    expect(!first.ready && first.waitingFor).toBe(`server ${id} to become ACTIVE (now BUILD)`);
    // One adoption list with the anchored, escaped name and the owner tag, the POST, then the record.
    const query = new URLSearchParams({ tags: ownerTag(owner), name: `^${name.replace('.', '\\.')}$` }).toString();
    expect(bench.trace()).toEqual([`GET /servers/detail?${query}`, 'POST /servers', `record ${id}`]);

    const server = await readyServer(desired, owner, id);
    expect(server).toMatchObject({ id, status: 'ACTIVE', metadata: { 'cluster-name': 'demo' }, 'OS-EXT-AZ:availability_zone': 'nova' });
    // The owner tags first, the user's own once, even when it repeats one of ours.
    expect(server.tags).toEqual([...ownerTags(owner), 'team-blue']);
    expect(servers().describe(server)).toMatchObject({ id, name, status: 'ACTIVE', flavor: 'm1.tiny', image: imageId, task_state: null });
    const seenByAdmin = await bench.admin.nova.getServer(id);
    expect(seenByAdmin['OS-EXT-SRV-ATTR:user_data']).toBe(userData);
    expect(seenByAdmin.config_drive).toBe('True');
    expect((await bench.clients.nova.getServerGroup(group.id)).members).toEqual([id]);
    const port = await bench.clients.neutron.getPort(portId);
    expect(port.device_id).toBe(id);
    expect(serverAddresses(server)).toEqual([
      { type: 'InternalIP', address: port.fixed_ips[0]!.ip_address },
      { type: 'InternalDNS', address: name },
    ]);

    // Once recorded, a pass costs one GET.
    bench.forget();
    expect(await ensure(servers(), { recordedId: id, desired, owner, record: bench.record })).toMatchObject({ ready: true, found: 'recorded' });
    expect(bench.trace()).toEqual([`GET /servers/${id}`]);

    await bench.removeAll(servers(), name, owner, id);
  });

  it('reports a server Nova could not place as failed, with its fault, and still deletes it', async () => {
    const owner = newOwner();
    const group = await bench.clients.nova.createServerGroup({ name: 'strict', policy: 'anti-affinity' });
    // The simulated cloud has one compute host, which strict anti-affinity lets hold one member.
    const placed: ServerDesired = { name: newName(), flavorRef: '1', imageRef: imageId, portIds: [await newPort('placed')], serverGroupId: group.id };
    await readyServer(placed, owner);
    const unplaceable: ServerDesired = { ...placed, name: newName(), portIds: [await newPort('unplaceable')] };

    const failure = await readyServer(unplaceable, owner).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ResourceTerminalError);
    expect(failure).toMatchObject({ reason: 'Failed', resourceKind: 'server' });
    expect((failure as Error).message).toMatch(/^server \S+ failed: No valid host was found\. There are not enough hosts available\.$/);
    expect(classify(failure)).toBe('terminal');
    // The failed server was recorded, so it cannot leak.
    const failedId = (failure as ResourceTerminalError).ids[0]!;
    expect(bench.events).toContain(`record ${failedId}`);
    expect(servers().describe(await bench.clients.nova.getServer(failedId))).toMatchObject({
      status: 'ERROR',
      fault: expect.stringContaining('No valid host'),
    });

    await bench.removeAll(servers(), unplaceable.name, owner, failedId);
    expect(await bench.clients.nova.findServersByName(unplaceable.name)).toEqual([]);
    // The port was the caller's: Nova leaves it, unbound.
    expect(await bench.clients.neutron.getPort(unplaceable.portIds[0]!)).toMatchObject({ device_id: '' });
    await bench.removeAll(servers(), placed.name, owner);
  });

  it('adopts only a same-named server carrying the owner tag, and removing it leaves the others', async () => {
    const owner = newOwner();
    const name = newName();
    const desired: ServerDesired = { name, flavorRef: '1', imageRef: imageId, portIds: [] };
    const users = await bench.clients.nova.createServer({ name, flavorRef: '1', imageRef: imageId, networks: 'none' });
    const theirs = await servers().create(desired, newOwner());
    // Tagged as ours but named differently: only an unanchored or unescaped name filter would match these.
    const longer = await servers().create({ ...desired, name: `${name}-1` }, owner);
    const dotMatch = await servers().create({ ...desired, name: name.replace('.', 'x') }, owner);
    bench.forget();

    const created = await ensure(servers(), { recordedId: undefined, desired, owner, record: bench.record });
    expect(created.found).toBe('created');
    expect(bench.requests('POST /servers')).toHaveLength(1);
    expect([users.id, theirs.id, longer.id, dotMatch.id]).not.toContain(created.resource.id);

    // A create whose ID never reached status is found again by tag and name, without a second POST.
    bench.forget();
    const adopted = await ensure(servers(), { recordedId: undefined, desired, owner, record: bench.record });
    expect(adopted).toMatchObject({ found: 'adopted', resource: { id: created.resource.id } });
    expect(bench.requests('POST /servers')).toEqual([]);

    await bench.removeAll(servers(), name, owner);
    const left = (await bench.clients.nova.listServers()).map((server) => server.id);
    expect(left).toEqual(expect.arrayContaining([users.id, theirs.id, longer.id, dotMatch.id]));
    expect(left).not.toContain(created.resource.id);
    for (const server of [users, theirs, longer, dotMatch]) await bench.clients.nova.deleteServer(server.id);
  });

  it('refuses to replace a recorded server that is gone when told to fail, without creating one', async () => {
    const owner = newOwner();
    const desired: ServerDesired = { name: newName(), flavorRef: '1', imageRef: imageId, portIds: [] };
    const server = await readyServer(desired, owner);
    await bench.removeAll(servers(), desired.name, owner, server.id);
    bench.forget();

    const refused = await ensure(servers(), { recordedId: server.id, desired, owner, record: bench.record, ifGone: 'fail' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ResourceTerminalError);
    expect(refused).toMatchObject({ reason: 'Gone', ids: [server.id] });
    expect(bench.trace()).toEqual([`GET /servers/${server.id}`]);
  });

  it('refuses a server with no root or two roots, and contradicting group hints, before sending anything', async () => {
    const owner = newOwner();
    const base = { name: newName(), flavorRef: '1', portIds: [] };
    const cases: [ServerDesired, RegExp][] = [
      [base, /give either an image or a root volume \(bootIndex 0\) to boot from/],
      [{ ...base, imageRef: imageId, volumes: [{ id: randomUUID(), bootIndex: 0 }] }, /not both/],
      [
        { ...base, imageRef: imageId, serverGroupId: randomUUID(), schedulerHints: { group: randomUUID() } },
        /the scheduler hint group \S+ contradicts server group/,
      ],
    ];
    for (const [desired, message] of cases) {
      const error = await servers()
        .create(desired, owner)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TerminalError);
      expect((error as Error).message).toMatch(message);
    }
    expect(bench.trace()).toEqual([]);
  });
});

describe('remove a server', () => {
  it('deletes it and waits until Nova no longer has it; the ports stay, unbound; a later remove sends nothing', async () => {
    const owner = newOwner();
    const portId = await newPort('deleted-machine');
    const desired: ServerDesired = { name: newName(), flavorRef: '1', imageRef: imageId, portIds: [portId] };
    const server = await readyServer(desired, owner);
    const before = serverCount();
    bench.forget();

    const outcomes = await bench.removeAll(servers(), desired.name, owner, server.id);
    expect(outcomes[0]).toEqual({
      waitingFor: `server ${server.id} to be deleted`,
      requeueAfterMs: 5_000,
      transition: { kind: 'server deletion', id: server.id },
    });
    expect(outcomes.at(-1)).toEqual({ deleted: true });
    // Passes that find the deletion still running do not send it again.
    expect(bench.requests(`DELETE /servers/${server.id}`)).toHaveLength(1);
    expect(serverCount()).toBe(before - 1);
    expect(await bench.clients.neutron.getPort(portId)).toMatchObject({ device_id: '', device_owner: '' });

    bench.forget();
    expect(await remove(servers(), { recordedId: server.id, name: desired.name, owner })).toEqual({ deleted: true });
    expect(bench.requests('DELETE')).toEqual([]);
  });
});

describe('boot from volume', () => {
  it('boots from a root volume made beforehand, with a data volume and a local disk; the attached volume cannot be deleted until the server is gone', async () => {
    const volumes = volumeActuator(bench.clients.cinder);
    const owner = newOwner();
    const name = newName();
    const volumesBefore = volumeCount();
    const root = (await bench.ensureReady(volumes, { name: `${name}-root`, size: 1, imageRef: imageId }, owner)).resource;
    const data = (await bench.ensureReady(volumes, { name: `${name}-etcd`, size: 1 }, owner)).resource;
    expect(root).toMatchObject({ status: 'available', bootable: 'true' });

    const desired: ServerDesired = {
      name,
      flavorRef: '1',
      portIds: [await newPort(`${name}-0`)],
      volumes: [
        { id: root.id, bootIndex: 0 },
        { id: data.id, tag: 'etcd' },
      ],
      ephemeral: [{ sizeGiB: 1, name: 'scratch' }],
    };
    const server = await readyServer(desired, owner);
    expect(server.image).toBe('');
    expect(servers().describe(server)).toMatchObject({ image: null, volumes_attached: expect.arrayContaining([root.id, data.id]) });
    expect((await bench.clients.cinder.getVolume(root.id)).attachments).toEqual([expect.objectContaining({ server_id: server.id, device: '/dev/vda' })]);

    const blocked = await remove(volumes, { recordedId: root.id, name: root.name!, owner });
    expect(blocked).toMatchObject({ requeueAfterMs: 15_000 });
    expect('blockedBy' in blocked && blocked.blockedBy).toMatch(
      new RegExp(`^volume ${root.id} cannot be deleted yet \\(badRequest: Invalid volume: .*attached.*\\); held by server ${server.id} at /dev/vda$`),
    );
    expect(await bench.clients.cinder.getVolume(root.id)).toMatchObject({ status: 'in-use' });

    // Nova leaves the volumes (delete_on_termination false): their own actuator removes them once detached.
    await bench.removeAll(servers(), name, owner, server.id);
    for (const volume of [root, data]) expect((await bench.removeAll(volumes, volume.name!, owner, volume.id)).at(-1)).toEqual({ deleted: true });
    expect(volumeCount()).toBe(volumesBefore);
  });
});

describe('serverAddresses', () => {
  const address = (addr: string, type: string) => ({ addr, version: addr.includes(':') ? 6 : 4, 'OS-EXT-IPS:type': type });
  const server = (addresses: Server['addresses']): Server => ({ id: 'id', name: 'worker-0', status: 'ACTIVE', addresses, metadata: {}, image: '', flavor: {} });

  it('orders networks by name and IPv4 before IPv6, maps fixed and floating, and ends with the name', () => {
    const addresses = serverAddresses(
      server({
        'z-storage': [address('fd00::5', 'fixed'), address('10.9.0.5', 'fixed')],
        'a-cluster': [address('2001:db8::7', 'fixed'), address('10.8.0.7', 'fixed'), address('172.24.4.9', 'floating'), address('10.8.0.8', 'fixed')],
        'm-other': [{ addr: '192.0.2.1', version: 4 }],
      }),
    );
    expect(addresses).toEqual([
      { type: 'InternalIP', address: '10.8.0.7' },
      { type: 'ExternalIP', address: '172.24.4.9' },
      { type: 'InternalIP', address: '10.8.0.8' },
      { type: 'InternalIP', address: '2001:db8::7' },
      { type: 'InternalIP', address: '10.9.0.5' },
      { type: 'InternalIP', address: 'fd00::5' },
      { type: 'InternalDNS', address: 'worker-0' },
    ]);
  });

  it('gives only the name for a server without addresses', () => {
    expect(serverAddresses(server({}))).toEqual([{ type: 'InternalDNS', address: 'worker-0' }]);
  });
});

describe('server readiness', () => {
  const withStatus = (status: string, extra: Partial<Server> = {}): Server => ({
    id: 's1',
    name: 'n',
    status,
    addresses: {},
    metadata: {},
    image: '',
    flavor: {},
    ...extra,
  });

  it('waits through transitional states, fails on ERROR or deletion by others, and leaves stable states to the caller', () => {
    expect(servers().readiness(withStatus('REBOOT', { 'OS-EXT-STS:task_state': 'rebooting' }))).toEqual({
      waitingFor: 'server s1 to become ACTIVE (now REBOOT, rebooting)',
      requeueAfterMs: 4_000,
      // Timed by the wait schedule, whatever the task state: a reboot on this cloud takes about as long as the last.
      transition: { kind: 'server REBOOT', id: 's1' },
    });
    expect(servers().readiness(withStatus('ERROR'))).toEqual({ failed: 'Nova reports status ERROR without a fault' });
    expect(servers().readiness(withStatus('SOFT_DELETED'))).toMatchObject({ failed: expect.stringContaining('SOFT_DELETED') });
    for (const stable of ['SHUTOFF', 'PAUSED', 'SUSPENDED', 'SHELVED_OFFLOADED', 'VERIFY_RESIZE'])
      expect(servers().readiness(withStatus(stable))).toEqual({ ready: true });
  });
});
