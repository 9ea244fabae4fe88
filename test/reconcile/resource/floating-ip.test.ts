/**
 * The floating IP actuator against the simulator: found again by
 * description and owner tag, associated only when the association differs,
 * and a user's floating IP never adopted, tagged or deleted.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Port } from '../../../src/openstack/index.js';
import { ownerTags } from '../../../src/reconcile/resource/actuator.js';
import { ensure, remove } from '../../../src/reconcile/resource/engine.js';
import { findUserFloatingIp, floatingIpActuator, type FloatingIpDesired } from '../../../src/reconcile/resource/floating-ip.js';
import { withOwnerMark } from '../../../src/reconcile/resource/neutron.js';
import { networkWithSubnet, newOwner, publicNetworkId, SimulatedNeutron, uniqueName } from './simulated-neutron.js';

const bench = SimulatedNeutron.forThisFile();
let publicId: string;
/** Two ports on a subnet a router connects to the external network, so floating IPs can be associated with them. */
let ports: [Port, Port];

beforeAll(async () => {
  publicId = await publicNetworkId(bench.neutron);
  const { network, subnet } = await networkWithSubnet(bench.neutron, '10.40.0.0/24');
  const router = await bench.neutron.createRouter({ name: uniqueName('router'), external_gateway_info: { network_id: publicId } });
  await bench.neutron.addInterface(router.id, { subnet_id: subnet.id });
  ports = [
    await bench.neutron.createPort({ network_id: network.id, name: 'lb-vip' }),
    await bench.neutron.createPort({ network_id: network.id, name: 'machine-0' }),
  ];
  bench.forget();
});

const desiredFip = (fields: Partial<FloatingIpDesired> = {}): FloatingIpDesired => ({
  name: uniqueName('k8s-clusterapi-cluster-default-api'),
  floating_network_id: publicId,
  ...fields,
});

describe('ensure a floating IP', () => {
  it('creates it associated, tags and records it; a second pass only reads it', async () => {
    const fips = floatingIpActuator(bench.neutron);
    const owner = newOwner();
    const desired = desiredFip({ port_id: ports[0].id });

    const first = await ensure(fips, { recordedId: undefined, desired, owner, record: bench.record });
    expect(first).toMatchObject({ ready: true, found: 'created' });
    const id = first.resource.id;
    expect(bench.trace()).toEqual([
      `GET /v2.0/floatingips?${new URLSearchParams({ description: withOwnerMark(desired.name, owner) })}`,
      'POST /v2.0/floatingips',
      `PUT /v2.0/floatingips/${id}/tags`,
      `record ${id}`,
    ]);
    expect(first.resource.tags).toEqual(ownerTags(owner));
    expect(fips.describe(first.resource)).toMatchObject({
      id,
      name: desired.name,
      floating_network_id: publicId,
      floating_ip_address: expect.stringMatching(/^172\.24\.4\./),
      port_id: ports[0].id,
      fixed_ip_address: ports[0].fixed_ips[0]!.ip_address,
      status: 'ACTIVE',
    });

    bench.forget();
    expect(await ensure(fips, { recordedId: id, desired, owner, record: bench.record })).toMatchObject({ ready: true, found: 'recorded' });
    expect(bench.trace()).toEqual([`GET /v2.0/floatingips/${id}`]);
    expect(await remove(fips, { recordedId: id, name: desired.name, owner })).toEqual({ deleted: true });
  });

  it('associates, moves and disassociates only when the association differs, and leaves it alone when none is desired', async () => {
    const fips = floatingIpActuator(bench.neutron);
    const owner = newOwner();
    const unassociated = desiredFip({ port_id: null });
    const { resource } = await ensure(fips, { recordedId: undefined, desired: unassociated, owner, record: bench.record });
    expect(resource).toMatchObject({ port_id: null, status: 'DOWN' });
    const pass = async (desired: FloatingIpDesired) => {
      bench.forget();
      const ensured = await ensure(fips, { recordedId: resource.id, desired, owner, record: bench.record });
      return { ensured, mutations: bench.mutations() };
    };
    const put = `PUT /v2.0/floatingips/${resource.id}`;

    const associated = await pass({ ...unassociated, port_id: ports[0].id });
    expect(associated.mutations).toEqual([put]);
    // Refreshed from the PUT's answer: ready and described without another read.
    expect(associated.ensured).toMatchObject({ ready: true, resource: { port_id: ports[0].id, status: 'ACTIVE' } });
    expect((await pass({ ...unassociated, port_id: ports[0].id })).mutations).toEqual([]);

    const moved = await pass({ ...unassociated, port_id: ports[1].id, fixed_ip_address: ports[1].fixed_ips[0]!.ip_address });
    expect(moved.mutations).toEqual([put]);
    expect((await bench.neutron.getFloatingIp(resource.id)).port_id).toBe(ports[1].id);

    // Omitted: another object owns the association.
    expect((await pass({ ...unassociated, port_id: undefined })).mutations).toEqual([]);

    const dropped = await pass(unassociated);
    expect(dropped.mutations).toEqual([put]);
    expect(dropped.ensured).toMatchObject({ ready: true, resource: { port_id: null } });
    expect((await bench.neutron.getFloatingIp(resource.id)).port_id).toBeNull();
    expect(await remove(fips, { recordedId: resource.id, name: unassociated.name, owner })).toEqual({ deleted: true });
  });

  it('waits for an associated floating IP to turn ACTIVE, and fails on ERROR', async () => {
    const fips = floatingIpActuator(bench.neutron);
    const owner = newOwner();
    const { resource } = await ensure(fips, { recordedId: undefined, desired: desiredFip({ port_id: ports[1].id }), owner, record: bench.record });
    expect(fips.readiness({ ...resource, status: 'DOWN' })).toEqual({
      waitingFor: `floating IP ${resource.floating_ip_address} to become ACTIVE on port ${ports[1].id} (now DOWN)`,
      requeueAfterMs: 3_000,
    });
    expect(fips.readiness({ ...resource, port_id: null, status: 'DOWN' })).toEqual({ ready: true });
    expect(fips.readiness({ ...resource, status: 'ERROR' })).toEqual({ failed: 'Neutron reports status ERROR' });
    await bench.neutron.deleteFloatingIp(resource.id);
  });

  it('adopts by description and owner tag only, leaving an untagged one with the same description alone', async () => {
    const fips = floatingIpActuator(bench.neutron);
    const owner = newOwner();
    const desired = desiredFip();
    const users = await bench.neutron.createFloatingIp({ floating_network_id: publicId, description: desired.name });
    const orphan = await fips.create(desired, owner);
    bench.forget();

    const adopted = await ensure(fips, { recordedId: undefined, desired, owner, record: bench.record });
    expect(adopted).toMatchObject({ found: 'adopted', resource: { id: orphan.id } });
    expect(bench.requests('POST /v2.0/floatingips')).toEqual([]);

    expect(await remove(fips, { recordedId: orphan.id, name: desired.name, owner })).toEqual({ deleted: true });
    expect((await bench.neutron.listFloatingIps({ description: desired.name })).map((fip) => fip.id)).toEqual([users.id]);
    expect((await bench.neutron.getFloatingIp(users.id)).tags).toEqual([]);
    await bench.neutron.deleteFloatingIp(users.id);
  });
});

describe("a user's floating IP", () => {
  it('is found by address for association, while ours is not', async () => {
    const users = await bench.neutron.createFloatingIp({ floating_network_id: publicId, description: 'reserved for the API' });
    expect(await findUserFloatingIp(bench.neutron, users.floating_ip_address)).toMatchObject({ id: users.id });

    const ours = await floatingIpActuator(bench.neutron).create(desiredFip(), newOwner());
    expect(await findUserFloatingIp(bench.neutron, ours.floating_ip_address)).toBeUndefined();
    expect(await findUserFloatingIp(bench.neutron, '172.24.4.249')).toBeUndefined();
    await bench.neutron.deleteFloatingIp(users.id);
    await bench.neutron.deleteFloatingIp(ours.id);
  });

  it('is never deleted, even when its ID was recorded as ours', async () => {
    const fips = floatingIpActuator(bench.neutron);
    const owner = newOwner();
    const users = await bench.neutron.createFloatingIp({ floating_network_id: publicId, port_id: ports[0].id });
    bench.forget();

    expect(await remove(fips, { recordedId: users.id, name: uniqueName('gone'), owner })).toEqual({ deleted: true });
    expect(bench.mutations()).toEqual([]);
    expect(await bench.neutron.getFloatingIp(users.id)).toMatchObject({ port_id: ports[0].id, tags: [] });
    await bench.neutron.deleteFloatingIp(users.id);
  });
});

describe('remove a floating IP', () => {
  it('counts a 404 on DELETE as done', async () => {
    expect(await bench.removeWhileDeleteAnswers404(floatingIpActuator(bench.neutron), desiredFip(), 'floatingips')).toEqual({ deleted: true });
    expect(bench.requests('DELETE /v2.0/floatingips/')).toHaveLength(1);
  });
});
