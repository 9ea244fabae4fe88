/**
 * The trunk actuator against the simulator: created on a machine's parent
 * port and tagged, ready while DOWN, and on a refused delete the server on
 * the parent port and the sub-ports named.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Network } from '../../../src/openstack/index.js';
import { ownerTags } from '../../../src/reconcile/resource/actuator.js';
import { ensure, remove } from '../../../src/reconcile/resource/engine.js';
import { trunkActuator, type TrunkDesired } from '../../../src/reconcile/resource/trunk.js';
import { networkWithSubnet, newOwner, SimulatedNeutron, uniqueName } from './simulated-neutron.js';

const bench = SimulatedNeutron.forThisFile();
let network: Network;

beforeAll(async () => {
  ({ network } = await networkWithSubnet(bench.neutron, '10.60.0.0/24'));
  bench.forget();
});

async function desiredTrunk(): Promise<TrunkDesired> {
  const name = uniqueName('machine-0-trunk');
  const parent = await bench.neutron.createPort({ network_id: network.id, name });
  bench.forget();
  return { name, port_id: parent.id, description: 'Created by capo-apiserver' };
}

describe('ensure a trunk', () => {
  it('creates, tags and records it; DOWN is ready; a second pass only reads it', async () => {
    const trunks = trunkActuator(bench.neutron);
    const owner = newOwner();
    const desired = await desiredTrunk();

    const first = await ensure(trunks, { recordedId: undefined, desired, owner, record: bench.record });
    expect(first).toMatchObject({ ready: true, found: 'created', resource: { status: 'DOWN', port_id: desired.port_id } });
    const id = first.resource.id;
    expect(bench.trace()).toEqual([`GET /v2.0/trunks?name=${desired.name}`, 'POST /v2.0/trunks', `PUT /v2.0/trunks/${id}/tags`, `record ${id}`]);
    expect(first.resource.tags).toEqual(ownerTags(owner));
    expect(trunks.describe(first.resource)).toEqual({ id, name: desired.name, port_id: desired.port_id, status: 'DOWN', admin_state_up: true, sub_ports: [] });
    expect(trunks.readiness({ ...first.resource, status: 'ERROR' })).toEqual({ failed: 'Neutron reports status ERROR: the driver failed to wire the trunk' });

    bench.forget();
    expect(await ensure(trunks, { recordedId: id, desired, owner, record: bench.record })).toMatchObject({ ready: true, found: 'recorded' });
    expect(bench.trace()).toEqual([`GET /v2.0/trunks/${id}`]);
  });

  it('adopts only a trunk carrying the owner tag', async () => {
    const trunks = trunkActuator(bench.neutron);
    const owner = newOwner();
    const desired = await desiredTrunk();
    const orphan = await trunks.create(desired, owner);
    bench.forget();
    expect(await ensure(trunks, { recordedId: undefined, desired, owner, record: bench.record })).toMatchObject({
      found: 'adopted',
      resource: { id: orphan.id },
    });
    expect(bench.requests('POST /v2.0/trunks')).toEqual([]);

    // Another owner's name lookup passes it by and creates its own, which the parent port cannot take.
    const error = await ensure(trunks, { recordedId: undefined, desired, owner: newOwner(), record: bench.record }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'Conflict', fault: 'ParentPortInUse' });
    expect(await remove(trunks, { recordedId: undefined, name: desired.name, owner: newOwner() })).toEqual({ deleted: true });
    expect(await trunks.getById(orphan.id)).toBeDefined();
  });
});

describe('remove a trunk', () => {
  it('deletes it with its sub-ports and a bound parent, leaving the ports', async () => {
    const trunks = trunkActuator(bench.neutron);
    const owner = newOwner();
    const desired = await desiredTrunk();
    const { resource } = await ensure(trunks, { recordedId: undefined, desired, owner, record: bench.record });
    const sub = await bench.neutron.createPort({ network_id: network.id, name: uniqueName('vlan-100') });
    await bench.neutron.addSubports(resource.id, [{ port_id: sub.id, segmentation_type: 'vlan', segmentation_id: 100 }]);
    await bench.admin.updatePort(desired.port_id, {
      device_id: 'c0ffee00-0000-4000-8000-000000000002',
      device_owner: 'compute:nova',
      'binding:host_id': 'compute-1',
    });

    expect(await remove(trunks, { recordedId: resource.id, name: desired.name, owner })).toEqual({ deleted: true });
    expect(await trunks.getById(resource.id)).toBeUndefined();
    expect(await bench.neutron.getPort(sub.id)).toMatchObject({ id: sub.id });
  });

  it('names the server on the parent port and the sub-ports when Neutron refuses the delete', async () => {
    const trunks = trunkActuator(bench.neutron);
    const owner = newOwner();
    const desired = await desiredTrunk();
    const sub = await bench.neutron.createPort({ network_id: network.id, name: uniqueName('vlan-200') });
    const server = 'c0ffee00-0000-4000-8000-000000000003';
    await bench.admin.updatePort(desired.port_id, { device_id: server, device_owner: 'compute:nova', 'binding:host_id': 'compute-1' });
    // A disabled trunk is one Neutron refuses to delete (409 TrunkDisabled).
    const disabled = await bench.neutron.createTrunk({
      ...desired,
      admin_state_up: false,
      sub_ports: [{ port_id: sub.id, segmentation_type: 'vlan', segmentation_id: 200 }],
    });
    await bench.neutron.replaceTags('trunks', disabled.id, ownerTags(owner));

    const blocked = await remove(trunks, { recordedId: disabled.id, name: desired.name, owner });
    expect(blocked).toEqual({
      blockedBy: `trunk ${disabled.id} cannot be deleted yet (TrunkDisabled: Trunk ${disabled.id} is currently disabled.); held by port ${desired.port_id} "${desired.name}" (compute:nova ${server}), sub-port ${sub.id} (vlan 200)`,
      requeueAfterMs: 15_000,
    });
    expect(await trunks.getById(disabled.id)).toBeDefined();
  });

  it('counts a 404 on DELETE as done', async () => {
    expect(await bench.removeWhileDeleteAnswers404(trunkActuator(bench.neutron), await desiredTrunk(), 'trunks')).toEqual({ deleted: true });
  });
});
