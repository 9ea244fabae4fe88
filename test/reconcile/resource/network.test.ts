/**
 * The network and subnet actuators driven by the engine against the
 * OpenStack simulator, through a real session: crash windows are simulated
 * by calling the actuator directly or by withholding the record, and every
 * HTTP attempt is read from the session log to prove what was (not) sent.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServiceClients, loadCloud, OpenStackSession, type NeutronClient, type SessionOptions } from '../../../src/openstack/index.js';
import { startSimulator, type Simulator } from '../../../src/simulator/host.js';
import { neutronWith } from '../../../src/simulator/neutron/index.js';
import { ownerTags, type Owner } from '../../../src/reconcile/resource/actuator.js';
import { classify, ensure, remove, ResourceTerminalError, retryAfterMs } from '../../../src/reconcile/resource/engine.js';
import { networkActuator, type NetworkDesired } from '../../../src/reconcile/resource/network.js';
import { subnetActuator } from '../../../src/reconcile/resource/subnet.js';
import { withOwnerMark } from '../../../src/reconcile/resource/neutron.js';

let sim: Simulator;
/** Session log lines (`openstack network POST /v2.0/networks 201 3ms …`) and `record <id>` markers, in order. */
let events: string[] = [];
const sessions: OpenStackSession[] = [];
let neutron: NeutronClient;

beforeAll(async () => {
  sim = await startSimulator({ transitionDelayMs: 20 });
  neutron = await connect();
});

afterEach(() => {
  sim.faults.clear();
  events = [];
});

afterAll(async () => {
  for (const session of sessions) session.close();
  await sim?.close();
});

async function connect(options: SessionOptions = {}): Promise<NeutronClient> {
  const cloud = loadCloud({ cloudsYaml: sim.cloudsYaml(), cloudName: 'simulator' });
  const session = await OpenStackSession.create(cloud, { sleep: async () => undefined, logger: (line) => events.push(line), ...options });
  sessions.push(session);
  return createServiceClients(session).neutron;
}

function newOwner(name = 'demo'): Owner {
  return { uid: randomUUID(), namespace: 'default', name, kind: 'OpenStackCluster' };
}

function desiredNetwork(): NetworkDesired {
  return {
    name: `k8s-clusterapi-cluster-default-${randomUUID().slice(0, 8)}`,
    mtu: 1400,
    port_security_enabled: true,
    admin_state_up: true,
    description: 'test',
  };
}

const record = async (id: string) => void events.push(`record ${id}`);
const requests = (method: string, path: string) => events.filter((line) => line.startsWith(`openstack network ${method} ${path}`));
/**
 * Neutron requests as `METHOD path` and records, in order; tokens and the extensions (whether a create may carry its
 * tags) are left out, since only the first test asks for them.
 */
const trace = () =>
  events
    .filter((line) => !line.startsWith('openstack identity') && !line.startsWith('openstack network GET /v2.0/extensions '))
    .map((line) => (line.startsWith('record ') ? line : line.split(' ').slice(2, 4).join(' ')));
const networkCount = () => sim.inventory().network?.networks ?? 0;

describe('ensure a network', () => {
  it('creates, tags and records the ID before readiness; a second ensure with that ID only reads it', async () => {
    const networks = networkActuator(neutron);
    const owner = newOwner();
    const desired = desiredNetwork();
    const before = networkCount();

    const first = await ensure(networks, { recordedId: undefined, desired, owner, record });
    expect(first).toMatchObject({ ready: true, found: 'created' });
    const id = first.resource.id;
    // One adoption list, the POST, the tag PUT, then the record: nothing is sent between create and record.
    expect(trace()).toEqual([`GET /v2.0/networks?name=${desired.name}`, 'POST /v2.0/networks', `PUT /v2.0/networks/${id}/tags`, `record ${id}`]);
    expect(first.resource.tags).toEqual(ownerTags(owner));
    expect(networks.describe(first.resource)).toMatchObject({ id, name: desired.name, status: 'ACTIVE', mtu: 1400 });

    events = [];
    const second = await ensure(networks, { recordedId: id, desired, owner, record });
    expect(second).toMatchObject({ ready: true, found: 'recorded', resource: { id } });
    expect(events).toEqual([expect.stringMatching(new RegExp(`^openstack network GET /v2.0/networks/${id} 200`))]);
    expect(networkCount()).toBe(before + 1);
  });

  it('adopts by name and owner tag after a crash between create and record, without a second POST', async () => {
    const networks = networkActuator(neutron);
    const owner = newOwner();
    const desired = desiredNetwork();
    const orphan = await networks.create(desired, owner);
    const before = networkCount();
    events = [];

    const result = await ensure(networks, { recordedId: undefined, desired, owner, record });
    expect(result).toMatchObject({ ready: true, found: 'adopted', resource: { id: orphan.id } });
    expect(events).toContain(`record ${orphan.id}`);
    expect(requests('POST', '/v2.0/networks')).toEqual([]);
    expect(networkCount()).toBe(before);
  });

  it('leaves a same-named network of another owner, or an untagged one, alone and creates its own', async () => {
    const networks = networkActuator(neutron);
    const desired = desiredNetwork();
    const theirs = await networks.create(desired, newOwner());
    const users = await neutron.createNetwork({ name: desired.name });
    const owner = newOwner();

    const result = await ensure(networks, { recordedId: undefined, desired, owner, record });
    expect(result.found).toBe('created');
    expect(result.resource.id).not.toBe(theirs.id);
    expect(result.resource.id).not.toBe(users.id);
    expect((await neutron.listNetworks({ name: desired.name })).map((n) => n.id).sort()).toEqual([theirs.id, users.id, result.resource.id].sort());

    // Removing ours deletes only ours.
    expect(await remove(networks, { recordedId: result.resource.id, name: desired.name, owner })).toEqual({ deleted: true });
    expect((await neutron.listNetworks({ name: desired.name })).map((n) => n.id).sort()).toEqual([theirs.id, users.id].sort());
  });

  it('refuses to pick between two adoptable networks, naming both, without creating a third', async () => {
    const networks = networkActuator(neutron);
    const owner = newOwner();
    const desired = desiredNetwork();
    const a = await networks.create(desired, owner);
    const b = await networks.create(desired, owner);
    events = [];

    const error = await ensure(networks, { recordedId: undefined, desired, owner, record }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResourceTerminalError);
    expect(error).toMatchObject({ reason: 'Ambiguous', ids: expect.arrayContaining([a.id, b.id]) });
    expect((error as Error).message).toContain(a.id);
    expect((error as Error).message).toContain(b.id);
    expect(classify(error)).toBe('terminal');
    expect(requests('POST', '/v2.0/networks')).toEqual([]);

    // Deletion is not ambiguous: every copy carrying our tag goes.
    expect(await remove(networks, { recordedId: undefined, name: desired.name, owner })).toEqual({ deleted: true });
    expect(await neutron.listNetworks({ name: desired.name })).toEqual([]);
  });

  it('records the ID even when tagging fails, and tags it on the next pass', async () => {
    const noRetries = await connect({ retries: 0 });
    const networks = networkActuator(noRetries);
    const owner = newOwner();
    const desired = desiredNetwork();
    const before = networkCount();
    // Both the PUT inside create and the one in the post-create step.
    sim.faults.add({ service: 'network', method: 'PUT', path: '/tags$', status: 503, times: 2 });

    const error = await ensure(networks, { recordedId: undefined, desired, owner, record }).catch((e: unknown) => e);
    expect(classify(error)).toBe('transient');
    const recorded = events.filter((line) => line.startsWith('record ')).map((line) => line.slice('record '.length));
    expect(recorded).toHaveLength(1);
    expect(networkCount()).toBe(before + 1);

    const retried = await ensure(networks, { recordedId: recorded[0], desired, owner, record });
    expect(retried).toMatchObject({ ready: true, found: 'recorded' });
    expect((await neutron.getNetwork(recorded[0])).tags).toEqual(ownerTags(owner));
    expect(networkCount()).toBe(before + 1);
  });

  it('classifies a 503 on create as transient and creates exactly one network on the retry', async () => {
    const networks = networkActuator(neutron);
    const owner = newOwner();
    const desired = desiredNetwork();
    const before = networkCount();
    sim.faults.add({ service: 'network', method: 'POST', path: '^/v2.0/networks$', status: 503, times: 1 });

    const error = await ensure(networks, { recordedId: undefined, desired, owner, record }).catch((e: unknown) => e);
    expect(classify(error)).toBe('transient');
    // The session never repeats a POST that reached the service.
    expect(requests('POST', '/v2.0/networks')).toHaveLength(1);
    expect(networkCount()).toBe(before);

    const retried = await ensure(networks, { recordedId: undefined, desired, owner, record });
    expect(retried.found).toBe('created');
    // Whatever the first POST did, the retry looked for it first.
    expect(requests('GET', `/v2.0/networks?name=${desired.name}`)).toHaveLength(2);
    expect(networkCount()).toBe(before + 1);
  });

  it('passes on the Retry-After of a 429', async () => {
    const networks = networkActuator(neutron);
    sim.faults.add({ service: 'network', method: 'POST', path: '^/v2.0/networks$', status: 429, retryAfterSeconds: 30, times: 1 });
    const error = await ensure(networks, { recordedId: undefined, desired: desiredNetwork(), owner: newOwner(), record }).catch((e: unknown) => e);
    expect(classify(error)).toBe('transient');
    expect(retryAfterMs(error)).toBe(30_000);
  });

  it('says when the recorded network is gone, then replaces it or refuses to, as told', async () => {
    const networks = networkActuator(neutron);
    const owner = newOwner();
    const desired = desiredNetwork();
    const first = await ensure(networks, { recordedId: undefined, desired, owner, record });
    await neutron.deleteNetwork(first.resource.id);
    events = [];

    const refused = await ensure(networks, { recordedId: first.resource.id, desired, owner, record, ifGone: 'fail' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ reason: 'Gone', ids: [first.resource.id] });
    expect(requests('POST', '/v2.0/networks')).toEqual([]);

    const replaced = await ensure(networks, { recordedId: first.resource.id, desired, owner, record });
    expect(replaced).toMatchObject({ ready: true, found: 'created', goneId: first.resource.id });
    expect(events).toContain(`record ${replaced.resource.id}`);
  });
});

describe('a create whose tagging never happened', () => {
  it('is adopted by the owner mark in its description, tagged, and never duplicated', async () => {
    const owner = newOwner();
    const desired = desiredNetwork();
    // What a crash between the POST and the tag PUT leaves: our name and owner mark, no tags.
    const orphan = await neutron.createNetwork({ name: desired.name, description: withOwnerMark(desired.description, owner) });
    const before = networkCount();
    const adopted = await ensure(networkActuator(neutron), { recordedId: undefined, desired, owner, record });
    expect(adopted).toMatchObject({ found: 'adopted', ready: true });
    expect(adopted.resource.id).toBe(orphan.id);
    expect((await neutron.getNetwork(orphan.id)).tags).toEqual(expect.arrayContaining(ownerTags(owner)));
    expect(networkCount()).toBe(before);
  });

  it('is removed by the owner it names, and another owner never touches it', async () => {
    const owner = newOwner();
    const desired = desiredNetwork();
    const orphan = await neutron.createNetwork({ name: desired.name, description: withOwnerMark(desired.description, owner) });
    expect(await remove(networkActuator(neutron), { recordedId: undefined, name: desired.name, owner: newOwner() })).toEqual({ deleted: true });
    expect((await neutron.getNetwork(orphan.id)).id).toBe(orphan.id);
    expect(await remove(networkActuator(neutron), { recordedId: undefined, name: desired.name, owner })).toEqual({ deleted: true });
    await expect(neutron.getNetwork(orphan.id)).rejects.toMatchObject({ kind: 'NotFound' });
  });
});

describe('remove', () => {
  it('deletes the network; a second remove finds nothing and sends no DELETE', async () => {
    const networks = networkActuator(neutron);
    const owner = newOwner();
    const desired = desiredNetwork();
    const { resource } = await ensure(networks, { recordedId: undefined, desired, owner, record });
    const before = networkCount();

    expect(await remove(networks, { recordedId: resource.id, name: desired.name, owner })).toEqual({ deleted: true });
    expect(networkCount()).toBe(before - 1);
    events = [];
    expect(await remove(networks, { recordedId: resource.id, name: desired.name, owner })).toEqual({ deleted: true });
    expect(requests('GET', `/v2.0/networks/${resource.id}`)[0]).toMatch(/ 404 /);
    expect(requests('DELETE', '/v2.0/networks')).toEqual([]);
  });

  it('counts a 404 on DELETE (someone else deleted it meanwhile) as done', async () => {
    const networks = networkActuator(neutron);
    const owner = newOwner();
    const desired = desiredNetwork();
    const { resource } = await ensure(networks, { recordedId: undefined, desired, owner, record });
    sim.faults.add({ service: 'network', method: 'DELETE', path: `/v2.0/networks/${resource.id}$`, status: 404, times: 1 });
    expect(await remove(networks, { recordedId: resource.id, name: desired.name, owner })).toEqual({ deleted: true });
  });

  it('finds and deletes a network whose ID never reached status', async () => {
    const networks = networkActuator(neutron);
    const owner = newOwner();
    const desired = desiredNetwork();
    const orphan = await networks.create(desired, owner);
    expect(await remove(networks, { recordedId: undefined, name: desired.name, owner })).toEqual({ deleted: true });
    expect(events.filter((line) => line.includes(`DELETE /v2.0/networks/${orphan.id} 204`))).toHaveLength(1);
  });

  it('reports which port blocks the subnet and the network, and finishes once it is gone', async () => {
    const networks = networkActuator(neutron);
    const subnets = subnetActuator(neutron);
    const owner = newOwner();
    const desired = desiredNetwork();
    const network = (await ensure(networks, { recordedId: undefined, desired, owner, record })).resource;
    const subnetDesired = { name: desired.name, network_id: network.id, cidr: '10.6.0.0/24', ip_version: 4 as const, dns_nameservers: ['8.8.8.8'] };
    const subnet = await ensure(subnets, { recordedId: undefined, desired: subnetDesired, owner, record });
    expect(subnet).toMatchObject({ ready: true, found: 'created', resource: { network_id: network.id, cidr: '10.6.0.0/24', tags: ownerTags(owner) } });
    const port = await neutron.createPort({ network_id: network.id, name: 'leaked-machine-port' });

    const subnetBlocked = await remove(subnets, { recordedId: subnet.resource.id, name: desired.name, owner });
    expect(subnetBlocked).toMatchObject({ requeueAfterMs: 15_000 });
    expect('blockedBy' in subnetBlocked && subnetBlocked.blockedBy).toMatch(
      new RegExp(`^subnet ${subnet.resource.id} cannot be deleted yet \\(SubnetInUse: .*\\); held by port ${port.id} "leaked-machine-port" \\(unattached\\)$`),
    );
    const networkBlocked = await remove(networks, { recordedId: network.id, name: desired.name, owner });
    expect('blockedBy' in networkBlocked && networkBlocked.blockedBy).toMatch(
      new RegExp(`^network ${network.id} cannot be deleted yet \\(NetworkInUse: .*one or more ports still in use.*\\); held by port ${port.id} `),
    );

    await neutron.deletePort(port.id);
    expect(await remove(subnets, { recordedId: subnet.resource.id, name: desired.name, owner })).toEqual({ deleted: true });
    expect(await remove(networks, { recordedId: network.id, name: desired.name, owner })).toEqual({ deleted: true });
  });
});

describe('ensure a subnet', () => {
  it('adopts a subnet created before a crash, and treats a missing network as terminal', async () => {
    const networks = networkActuator(neutron);
    const subnets = subnetActuator(neutron);
    const owner = newOwner();
    const desired = desiredNetwork();
    const network = (await ensure(networks, { recordedId: undefined, desired, owner, record })).resource;
    const subnetDesired = { name: desired.name, network_id: network.id, cidr: '10.7.0.0/24', ip_version: 4 as const, gateway_ip: null };
    const orphan = await subnets.create(subnetDesired, owner);

    const adopted = await ensure(subnets, { recordedId: undefined, desired: subnetDesired, owner, record });
    expect(adopted).toMatchObject({ ready: true, found: 'adopted', resource: { id: orphan.id, gateway_ip: null } });

    const error = await ensure(subnets, { recordedId: undefined, desired: { ...subnetDesired, name: 'other', network_id: randomUUID() }, owner, record }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ kind: 'NotFound' });
    expect(classify(error)).toBe('terminal');

    expect(await remove(networks, { recordedId: network.id, name: desired.name, owner })).toEqual({ deleted: true });
    // The network took its subnet along; the subnet's own remove has nothing left to do.
    expect(await remove(subnets, { recordedId: orphan.id, name: desired.name, owner })).toEqual({ deleted: true });
  });
});

describe('on a Neutron with tag-creation', () => {
  it('creates a network and its subnet carrying their owner tags: one POST each, no tag PUT', async () => {
    const modern = await startSimulator({ transitionDelayMs: 20, services: [neutronWith({ tagCreation: true })] });
    const cloud = loadCloud({ cloudsYaml: modern.cloudsYaml(), cloudName: 'simulator' });
    const lines: string[] = [];
    const session = await OpenStackSession.create(cloud, { sleep: async () => undefined, logger: (line) => lines.push(line) });
    try {
      const client = createServiceClients(session).neutron;
      const owner = newOwner();
      const desired = desiredNetwork();
      const network = await ensure(networkActuator(client), { recordedId: undefined, desired, owner, record: async () => undefined });
      const subnet = await ensure(subnetActuator(client), {
        recordedId: undefined,
        desired: { name: desired.name, network_id: network.resource.id, cidr: '10.6.0.0/24', ip_version: 4 },
        owner,
        record: async () => undefined,
      });
      expect(lines.filter((line) => line.startsWith('openstack network ')).map((line) => line.split(' ').slice(2, 4).join(' '))).toEqual([
        `GET /v2.0/networks?name=${desired.name}`,
        'GET /v2.0/extensions',
        'POST /v2.0/networks',
        `GET /v2.0/subnets?name=${desired.name}`,
        'POST /v2.0/subnets',
      ]);
      expect((await client.getNetwork(network.resource.id)).tags).toEqual(ownerTags(owner));
      expect((await client.getSubnet(subnet.resource.id)).tags).toEqual(ownerTags(owner));
    } finally {
      session.close();
      await modern.close();
    }
  });
});
