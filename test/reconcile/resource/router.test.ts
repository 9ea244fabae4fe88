/**
 * The router actuator driven by the engine against the simulator: gateway
 * and interfaces set only when they differ, interfaces removed before the
 * router on delete, and what keeps an interface in use named.
 */
import { describe, expect, it } from 'vitest';
import type { NeutronClient, RouterInterfaceSpec } from '../../../src/openstack/index.js';
import { ownerTags } from '../../../src/reconcile/resource/actuator.js';
import { classify, ensure, remove } from '../../../src/reconcile/resource/engine.js';
import { routerActuator, type RouterDesired } from '../../../src/reconcile/resource/router.js';
import { networkWithSubnet, newOwner, publicNetworkId, SimulatedNeutron, uniqueName } from './simulated-neutron.js';

const bench = SimulatedNeutron.forThisFile();
const interfaceQuery =
  'device_owner=network%3Arouter_interface&device_owner=network%3Arouter_interface_distributed&device_owner=network%3Aha_router_replicated_interface';
const routerCount = () => bench.sim.inventory().network?.routers ?? 0;

async function desiredRouter(subnetIds: string[], gateway = true): Promise<RouterDesired> {
  return {
    name: uniqueName('k8s-clusterapi-cluster-default'),
    description: 'cluster router',
    ...(gateway ? { external_gateway_info: { network_id: await publicNetworkId(bench.neutron) } } : {}),
    interfaceSubnetIds: subnetIds,
  };
}

async function interfaceSubnets(routerId: string): Promise<string[]> {
  const ports = await bench.neutron.listPorts({ device_id: routerId, device_owner: 'network:router_interface' });
  return ports.flatMap((port) => port.fixed_ips.map((ip) => ip.subnet_id)).sort();
}

describe('ensure a router', () => {
  it('creates it with its gateway, tags and records it, then adds the interface without listing the new router; a second pass only reads', async () => {
    const routers = routerActuator(bench.neutron);
    const owner = newOwner();
    const { subnet } = await networkWithSubnet(bench.neutron, '10.20.0.0/24');
    const desired = await desiredRouter([subnet.id]);
    bench.forget();

    const first = await ensure(routers, { recordedId: undefined, desired, owner, record: bench.record });
    expect(first).toMatchObject({ ready: true, found: 'created' });
    const id = first.resource.id;
    expect(bench.trace()).toEqual([
      `GET /v2.0/routers?name=${desired.name}`,
      'POST /v2.0/routers',
      `PUT /v2.0/routers/${id}/tags`,
      `record ${id}`,
      // A router just created has no interface to list.
      `PUT /v2.0/routers/${id}/add_router_interface`,
    ]);
    expect(first.resource.tags).toEqual(ownerTags(owner));
    expect(await interfaceSubnets(id)).toEqual([subnet.id]);
    const description = routers.describe(first.resource);
    expect(description).toMatchObject({ id, name: desired.name, status: 'ACTIVE', external_network_id: desired.external_gateway_info?.network_id });
    expect(description.ips).toEqual([expect.stringMatching(/^172\.24\.4\.\d+$/)]);

    bench.forget();
    const second = await ensure(routers, { recordedId: id, desired, owner, record: bench.record });
    expect(second).toMatchObject({ ready: true, found: 'recorded' });
    expect(bench.trace()).toEqual([`GET /v2.0/routers/${id}`, `GET /v2.0/ports?device_id=${id}&${interfaceQuery}`]);
  });

  it('lists the interfaces again only when the router read has moved past the revision they were listed at', async () => {
    const routers = routerActuator(bench.neutron);
    const owner = newOwner();
    const { subnet } = await networkWithSubnet(bench.neutron, '10.28.0.0/24');
    const desired = await desiredRouter([subnet.id]);
    const { resource } = await ensure(routers, { recordedId: undefined, desired, owner, record: bench.record });
    const id = resource.id;
    const listInterfaces = `GET /v2.0/ports?device_id=${id}&${interfaceQuery}`;
    const pass = async () => {
      bench.forget();
      await ensure(routerActuator(bench.neutron), { recordedId: id, desired, owner, record: bench.record });
      return bench.trace();
    };

    // The add moved the revision on from the one the create answered: the next pass lists, the one after reads the router alone.
    expect(await pass()).toEqual([`GET /v2.0/routers/${id}`, listInterfaces]);
    expect(await pass()).toEqual([`GET /v2.0/routers/${id}`]);

    // Removed behind our back: Neutron bumps the router's revision, so the pass lists and puts it back.
    await bench.neutron.removeInterface(id, { subnet_id: subnet.id });
    expect(await pass()).toEqual([`GET /v2.0/routers/${id}`, listInterfaces, `PUT /v2.0/routers/${id}/add_router_interface`]);
    expect(await interfaceSubnets(id)).toEqual([subnet.id]);
    expect(await pass()).toEqual([`GET /v2.0/routers/${id}`, listInterfaces]);

    // Any other change to the router moves its revision too, and costs one listing.
    await bench.neutron.updateRouter(id, { description: 'renamed by hand' });
    expect(await pass()).toEqual([`GET /v2.0/routers/${id}`, listInterfaces]);
    expect(await pass()).toEqual([`GET /v2.0/routers/${id}`]);
  });

  it('reads no ports when no interface is wanted', async () => {
    const routers = routerActuator(bench.neutron);
    const owner = newOwner();
    const desired = await desiredRouter([], false);
    const { resource } = await ensure(routers, { recordedId: undefined, desired, owner, record: bench.record });
    bench.forget();
    await ensure(routers, { recordedId: resource.id, desired, owner, record: bench.record });
    expect(bench.trace()).toEqual([`GET /v2.0/routers/${resource.id}`]);
  });

  it('adopts only a router carrying the owner tag, never a same-named untagged one, and never deletes that one', async () => {
    const routers = routerActuator(bench.neutron);
    const owner = newOwner();
    const desired = await desiredRouter([], false);
    const users = await bench.neutron.createRouter({ name: desired.name });
    const orphan = await routers.create(desired, owner);
    const before = routerCount();
    bench.forget();

    const adopted = await ensure(routers, { recordedId: undefined, desired, owner, record: bench.record });
    expect(adopted).toMatchObject({ found: 'adopted', resource: { id: orphan.id } });
    expect(bench.requests('POST /v2.0/routers')).toEqual([]);
    expect(routerCount()).toBe(before);

    expect(await remove(routers, { recordedId: undefined, name: desired.name, owner })).toEqual({ deleted: true });
    expect((await bench.neutron.listRouters({ name: desired.name })).map((router) => router.id)).toEqual([users.id]);
  });

  it('sets, moves and removes the gateway only when it differs from the desired one', async () => {
    const routers = routerActuator(bench.admin);
    const owner = newOwner();
    const withoutGateway = await desiredRouter([], false);
    const { resource } = await ensure(routers, { recordedId: undefined, desired: withoutGateway, owner, record: bench.record });
    expect(resource.external_gateway_info).toBeNull();

    const publicId = await publicNetworkId(bench.admin);
    const pinned: RouterDesired = { ...withoutGateway, external_gateway_info: { network_id: publicId, external_fixed_ips: [{ ip_address: '172.24.4.201' }] } };
    bench.forget();
    const gatewaySet = await ensure(routers, { recordedId: resource.id, desired: pinned, owner, record: bench.record });
    expect(bench.mutations()).toEqual([`PUT /v2.0/routers/${resource.id}`]);
    // The answer of the PUT refreshed the resource the caller describes.
    expect(routers.describe(gatewaySet.resource)).toMatchObject({ external_network_id: publicId, ips: ['172.24.4.201'] });

    bench.forget();
    await ensure(routers, { recordedId: resource.id, desired: pinned, owner, record: bench.record });
    // Naming only the network accepts whatever address the gateway has.
    await ensure(routers, {
      recordedId: resource.id,
      desired: { ...withoutGateway, external_gateway_info: { network_id: publicId } },
      owner,
      record: bench.record,
    });
    expect(bench.mutations()).toEqual([]);

    const moved: RouterDesired = { ...withoutGateway, external_gateway_info: { network_id: publicId, external_fixed_ips: [{ ip_address: '172.24.4.202' }] } };
    await ensure(routers, { recordedId: resource.id, desired: moved, owner, record: bench.record });
    expect(routers.describe((await routers.getById(resource.id))!).ips).toEqual(['172.24.4.202']);

    bench.forget();
    await ensure(routers, { recordedId: resource.id, desired: withoutGateway, owner, record: bench.record });
    expect(bench.mutations()).toEqual([`PUT /v2.0/routers/${resource.id}`]);
    expect((await routers.getById(resource.id))?.external_gateway_info).toBeNull();
  });

  it('adds only the interfaces that are missing, keeping one added by hand', async () => {
    const routers = routerActuator(bench.neutron);
    const owner = newOwner();
    const a = await networkWithSubnet(bench.neutron, '10.21.0.0/24');
    const b = await networkWithSubnet(bench.neutron, '10.22.0.0/24');
    const c = await networkWithSubnet(bench.neutron, '10.23.0.0/24');
    const desired = await desiredRouter([a.subnet.id]);
    const { resource } = await ensure(routers, { recordedId: undefined, desired, owner, record: bench.record });
    await bench.neutron.addInterface(resource.id, { subnet_id: c.subnet.id });

    bench.forget();
    await ensure(routers, {
      recordedId: resource.id,
      desired: { ...desired, interfaceSubnetIds: [a.subnet.id, b.subnet.id, b.subnet.id] },
      owner,
      record: bench.record,
    });
    expect(bench.mutations()).toEqual([`PUT /v2.0/routers/${resource.id}/add_router_interface`]);
    expect(await interfaceSubnets(resource.id)).toEqual([a.subnet.id, b.subnet.id, c.subnet.id].sort());
  });

  it('accepts the 400 of a repeated add whose first attempt landed, and still fails a real 400', async () => {
    // What the session does when the response to a PUT that landed is lost: send it again.
    const repeating = Object.create(bench.neutron, {
      addInterface: {
        value: async (routerId: string, spec: RouterInterfaceSpec) => {
          await bench.neutron.addInterface(routerId, spec);
          return bench.neutron.addInterface(routerId, spec);
        },
      },
    }) as NeutronClient;
    const routers = routerActuator(repeating);
    const owner = newOwner();
    const { subnet } = await networkWithSubnet(bench.neutron, '10.24.0.0/24');
    const desired = await desiredRouter([subnet.id]);
    const created = await ensure(routers, { recordedId: undefined, desired, owner, record: bench.record });
    expect(created.ready).toBe(true);
    expect(bench.requests(`PUT /v2.0/routers/${created.resource.id}/add_router_interface`)).toHaveLength(2);
    expect(await interfaceSubnets(created.resource.id)).toEqual([subnet.id]);

    // A subnet overlapping one the router reaches is refused for real.
    const overlapping = await networkWithSubnet(bench.neutron, '10.24.0.0/25');
    const error = await ensure(routerActuator(bench.neutron), {
      recordedId: created.resource.id,
      desired: { ...desired, interfaceSubnetIds: [overlapping.subnet.id] },
      owner,
      record: bench.record,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'BadRequest' });
    expect(String((error as Error).message)).toContain('overlaps');
    expect(classify(error)).toBe('terminal');
  });
});

describe('remove a router', () => {
  it('removes every interface, then the router; its subnets are free again', async () => {
    const routers = routerActuator(bench.neutron);
    const owner = newOwner();
    const a = await networkWithSubnet(bench.neutron, '10.25.0.0/24');
    const b = await networkWithSubnet(bench.neutron, '10.26.0.0/24');
    const desired = await desiredRouter([a.subnet.id, b.subnet.id]);
    const { resource } = await ensure(routers, { recordedId: undefined, desired, owner, record: bench.record });
    const before = routerCount();
    bench.forget();

    expect(await remove(routers, { recordedId: resource.id, name: desired.name, owner })).toEqual({ deleted: true });
    const mutations = bench.mutations();
    expect(mutations).toHaveLength(3);
    expect(mutations.slice(0, 2)).toEqual([
      `PUT /v2.0/routers/${resource.id}/remove_router_interface`,
      `PUT /v2.0/routers/${resource.id}/remove_router_interface`,
    ]);
    expect(mutations[2]).toBe(`DELETE /v2.0/routers/${resource.id}`);
    expect(routerCount()).toBe(before - 1);
    await bench.neutron.deleteNetwork(a.network.id);
    await bench.neutron.deleteNetwork(b.network.id);
  });

  it('is blocked by a floating IP reached through an interface, naming it, and finishes once it is gone', async () => {
    const routers = routerActuator(bench.neutron);
    const owner = newOwner();
    const { network, subnet } = await networkWithSubnet(bench.neutron, '10.27.0.0/24');
    const desired = await desiredRouter([subnet.id]);
    const { resource } = await ensure(routers, { recordedId: undefined, desired, owner, record: bench.record });
    const port = await bench.neutron.createPort({ network_id: network.id, name: 'machine-0' });
    const fip = await bench.neutron.createFloatingIp({ floating_network_id: await publicNetworkId(bench.neutron), port_id: port.id });

    const blocked = await remove(routers, { recordedId: resource.id, name: desired.name, owner });
    expect(blocked).toMatchObject({ requeueAfterMs: 15_000 });
    expect('blockedBy' in blocked && blocked.blockedBy).toMatch(
      new RegExp(
        `^router ${resource.id} cannot be deleted yet \\(RouterInterfaceInUseByFloatingIP: .*\\); held by floating IP ${fip.floating_ip_address.replaceAll('.', '\\.')} \\(${fip.id}\\) on port ${port.id}$`,
      ),
    );
    expect(await routers.getById(resource.id)).toBeDefined();

    await bench.neutron.deleteFloatingIp(fip.id);
    expect(await remove(routers, { recordedId: resource.id, name: desired.name, owner })).toEqual({ deleted: true });
    expect(await routers.getById(resource.id)).toBeUndefined();
  });

  it('counts a 404 on DELETE as done', async () => {
    expect(await bench.removeWhileDeleteAnswers404(routerActuator(bench.neutron), await desiredRouter([], false), 'routers')).toEqual({ deleted: true });
  });
});
