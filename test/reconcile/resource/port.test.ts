/**
 * The port actuator against the simulator: tagged with the owner and user
 * tags, ready as soon as it exists, changed afterwards only in its tags,
 * and a trunk holding it named when Neutron refuses the delete.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Network, Subnet } from '../../../src/openstack/index.js';
import { TerminalError } from '../../../src/reconcile/runtime/controller.js';
import { ownerTag, ownerTags } from '../../../src/reconcile/resource/actuator.js';
import { classify, ensure, remove } from '../../../src/reconcile/resource/engine.js';
import { portActuator, type PortDesired } from '../../../src/reconcile/resource/port.js';
import { networkWithSubnet, newOwner, SimulatedNeutron, uniqueName } from './simulated-neutron.js';

const bench = SimulatedNeutron.forThisFile();
let network: Network;
let subnet: Subnet;

beforeAll(async () => {
  ({ network, subnet } = await networkWithSubnet(bench.neutron, '10.50.0.0/24'));
  bench.forget();
});

const desiredPort = (fields: Partial<PortDesired> = {}): PortDesired => ({
  name: uniqueName('machine-0'),
  network_id: network.id,
  description: 'Created by capo-apiserver',
  ...fields,
});

describe('ensure a port', () => {
  it('creates it with the owner and user tags and records it; DOWN is ready; a second pass only reads it', async () => {
    const ports = portActuator(bench.neutron);
    const owner = newOwner();
    const desired = desiredPort({
      fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.50.0.10' }],
      allowed_address_pairs: [{ ip_address: '10.50.0.200' }],
      tags: ['team-a', ownerTag(owner)],
    });

    const first = await ensure(ports, { recordedId: undefined, desired, owner, record: bench.record });
    expect(first).toMatchObject({ ready: true, found: 'created', resource: { status: 'DOWN' } });
    const id = first.resource.id;
    expect(bench.trace()).toEqual([`GET /v2.0/ports?name=${desired.name}`, 'POST /v2.0/ports', `PUT /v2.0/ports/${id}/tags`, `record ${id}`]);
    expect(first.resource.tags).toEqual([...ownerTags(owner), 'team-a']);
    expect(ports.describe(first.resource)).toMatchObject({
      id,
      name: desired.name,
      network_id: network.id,
      ips: ['10.50.0.10'],
      device_id: '',
      trunk_id: null,
    });
    expect(first.resource.allowed_address_pairs).toEqual([{ ip_address: '10.50.0.200', mac_address: first.resource.mac_address }]);

    bench.forget();
    expect(await ensure(ports, { recordedId: id, desired, owner, record: bench.record })).toMatchObject({ ready: true, found: 'recorded' });
    expect(bench.trace()).toEqual([`GET /v2.0/ports/${id}`]);
    expect(await remove(ports, { recordedId: id, name: desired.name, owner })).toEqual({ deleted: true });
  });

  it('changes nothing but missing tags on a port a server uses, whatever else the desired state says', async () => {
    const ports = portActuator(bench.neutron);
    const owner = newOwner();
    const desired = desiredPort();
    const { resource } = await ensure(ports, { recordedId: undefined, desired, owner, record: bench.record });
    const bound = await bench.admin.updatePort(resource.id, {
      device_id: 'c0ffee00-0000-4000-8000-000000000001',
      device_owner: 'compute:nova',
      'binding:host_id': 'compute-1',
    });
    expect(bound.status).toBe('ACTIVE');

    bench.forget();
    const changed: PortDesired = { ...desired, admin_state_up: false, allowed_address_pairs: [{ ip_address: '10.50.0.201' }], tags: ['team-b'] };
    await ensure(ports, { recordedId: resource.id, desired: changed, owner, record: bench.record });
    expect(bench.mutations()).toEqual([`PUT /v2.0/ports/${resource.id}/tags`]);
    const after = await bench.neutron.getPort(resource.id);
    expect(after).toMatchObject({ admin_state_up: true, allowed_address_pairs: [], device_owner: 'compute:nova', tags: [...ownerTags(owner), 'team-b'] });

    bench.forget();
    await ensure(ports, { recordedId: resource.id, desired: changed, owner, record: bench.record });
    expect(bench.mutations()).toEqual([]);
    // A server using the port does not stop Neutron from deleting it.
    expect(await remove(ports, { recordedId: resource.id, name: desired.name, owner })).toEqual({ deleted: true });
  });

  it('refuses a tag Neutron cannot hold before creating anything', async () => {
    const ports = portActuator(bench.neutron);
    const desired = desiredPort({ tags: ['x'.repeat(61)] });
    const error = await ensure(ports, { recordedId: undefined, desired, owner: newOwner(), record: bench.record }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TerminalError);
    expect((error as Error).message).toBe(`port "${desired.name}": tag "${'x'.repeat(61)}" is not allowed; Neutron takes tags of 1 to 60 characters`);
    expect(classify(error)).toBe('terminal');
    expect(bench.requests('POST')).toEqual([]);
  });

  it('adopts only a port carrying the owner tag, and never deletes a same-named untagged one', async () => {
    const ports = portActuator(bench.neutron);
    const owner = newOwner();
    const desired = desiredPort();
    const users = await bench.neutron.createPort({ network_id: network.id, name: desired.name });
    const orphan = await ports.create(desired, owner);
    bench.forget();

    expect(await ensure(ports, { recordedId: undefined, desired, owner, record: bench.record })).toMatchObject({
      found: 'adopted',
      resource: { id: orphan.id },
    });
    expect(bench.requests('POST /v2.0/ports')).toEqual([]);
    expect(await remove(ports, { recordedId: undefined, name: desired.name, owner })).toEqual({ deleted: true });
    expect((await bench.neutron.listPorts({ name: desired.name })).map((port) => port.id)).toEqual([users.id]);
    await bench.neutron.deletePort(users.id);
  });
});

describe('remove a port', () => {
  it('is blocked while it is the parent of a trunk, naming the trunk, and finishes once the trunk is gone', async () => {
    const ports = portActuator(bench.neutron);
    const owner = newOwner();
    const desired = desiredPort();
    const { resource } = await ensure(ports, { recordedId: undefined, desired, owner, record: bench.record });
    const trunk = await bench.neutron.createTrunk({ port_id: resource.id, name: desired.name });

    const blocked = await remove(ports, { recordedId: resource.id, name: desired.name, owner });
    expect(blocked).toMatchObject({ requeueAfterMs: 15_000 });
    expect('blockedBy' in blocked && blocked.blockedBy).toBe(
      `port ${resource.id} cannot be deleted yet (PortInUseAsTrunkParent: Port ${resource.id} is currently a parent port for trunk ${trunk.id}.); held by trunk ${trunk.id} (as its parent port)`,
    );

    await bench.neutron.deleteTrunk(trunk.id);
    expect(await remove(ports, { recordedId: resource.id, name: desired.name, owner })).toEqual({ deleted: true });
    expect(await ports.getById(resource.id)).toBeUndefined();
  });

  it('counts a 404 on DELETE as done', async () => {
    expect(await bench.removeWhileDeleteAnswers404(portActuator(bench.neutron), desiredPort(), 'ports')).toEqual({ deleted: true });
  });
});
