/**
 * The Neutron router actuator: the cluster's way out through its external
 * gateway, and the interfaces that join the cluster subnets to it.
 *
 * The interfaces are a list of ports, read apart from the router, but Neutron
 * bumps a router's revision_number whenever an interface is added to it or
 * removed (its RouterPort rows revise the router; Neutron's revision plugin
 * tests exactly that). So a router read at the revision its interfaces were
 * last listed at vouches for them, and a resync reads the router alone.
 */
import { OpenStackError, type NeutronClient, type Port, type Router } from '../../openstack/index.js';
import { absentOn404, ownerTags, type ResourceActuator } from './actuator.js';
import { adoptableOf, canonicalAddress, ensureOwnerTags, readById, createTagged, withOwnerMark } from './neutron.js';

export interface RouterDesired {
  name: string;
  description?: string;
  /** Omitted: a router without gateway (no external network). */
  external_gateway_info?: { network_id: string; external_fixed_ips?: { subnet_id?: string; ip_address?: string }[] };
  /** Subnets that must have an interface on this router (created by postCreate, one PUT add_router_interface each, only when missing). */
  interfaceSubnetIds: string[];
}

type DesiredGateway = RouterDesired['external_gateway_info'];
type WantedIp = { subnet_id?: string; ip_address?: string };

/** Device owners of router interfaces (legacy, DVR, HA); the gateway port is not among them. */
const interfaceOwners = ['network:router_interface', 'network:router_interface_distributed', 'network:ha_router_replicated_interface'];

/** Routers are ACTIVE within the create on ML2/OVS and OVN; anything else is a backend still catching up. */
const settleRequeueMs = 5_000;

export function routerActuator(neutron: NeutronClient): ResourceActuator<RouterDesired, Router> {
  const interfacesOf = (router: Router) => neutron.listPorts({ device_id: router.id, device_owner: interfaceOwners });

  /** Sets the gateway only when it differs, and refreshes the router from the answer so describe() shows the new addresses. */
  async function ensureGateway(router: Router, desired: DesiredGateway): Promise<void> {
    if (gatewayMatches(router.external_gateway_info, desired)) return;
    Object.assign(router, await neutron.updateRouter(router.id, { external_gateway_info: desired ?? null }));
  }

  /** Routers this actuator has just created: they have no interface yet, and listing one would only confirm that. */
  const justCreated = new WeakSet<Router>();
  const listedInterfaces = interfacesListed(neutron);

  async function ensureInterfaces(router: Router, subnetIds: readonly string[]): Promise<void> {
    if (subnetIds.length === 0) return;
    const attached = justCreated.has(router) ? new Set<string>() : await attachedSubnets(router);
    let added = false;
    for (const subnetId of new Set(subnetIds)) {
      if (attached.has(subnetId)) continue;
      await addInterface(router, subnetId);
      added = true;
    }
    // An add moved the revision past the one read; the next resync lists the interfaces and remembers that.
    if (!added && router.revision_number !== undefined) listedInterfaces.set(router.id, { revision: router.revision_number, subnetIds: attached });
  }

  /**
   * The subnets with an interface on the router: as last listed when the router still has the
   * revision it had then, else listed now. The router was read before this, so any change since
   * that read moved its revision on and the next read will list again.
   */
  async function attachedSubnets(router: Router): Promise<Set<string>> {
    const listed = listedInterfaces.get(router.id);
    if (listed !== undefined && listed.revision === router.revision_number) return listed.subnetIds;
    return subnetsOf(await interfacesOf(router));
  }

  async function addInterface(router: Router, subnetId: string): Promise<void> {
    try {
      await neutron.addInterface(router.id, { subnet_id: subnetId });
    } catch (error) {
      // The session repeats a PUT after a transient failure; if the first attempt had landed, the repeat answers 400
      // ("already has a port on subnet"), so a 400 is a failure only when the interface is really missing.
      if (!(error instanceof OpenStackError) || error.kind !== 'BadRequest') throw error;
      if (!subnetsOf(await interfacesOf(router)).has(subnetId)) throw error;
    }
  }

  return {
    kind: 'router',
    getById: (id) => absentOn404(neutron.getRouter(id)),
    readMany: readById(neutron, 'router', (filters) => neutron.listRouters(filters)),
    findAdoptable: (name, owner) => adoptableOf(neutron.listRouters({ name }), owner),
    async create(desired, owner) {
      const tags = ownerTags(owner);
      const { name, description, external_gateway_info } = desired;
      const router = await createTagged(neutron, 'routers', tags, (tagged) =>
        neutron.createRouter({ name, description: withOwnerMark(description, owner), external_gateway_info, ...tagged }),
      );
      justCreated.add(router);
      return router;
    },
    async postCreate(router, desired, owner) {
      await ensureOwnerTags(neutron, 'routers', router, owner);
      await ensureGateway(router, desired.external_gateway_info);
      await ensureInterfaces(router, desired.interfaceSubnetIds);
      return { done: true };
    },
    readiness(router) {
      if (router.status === 'ACTIVE') return { ready: true };
      if (router.status === 'ERROR') return { failed: 'Neutron reports status ERROR' };
      return { waitingFor: `router ${router.id} to become ACTIVE (now ${router.status})`, requeueAfterMs: settleRequeueMs };
    },
    async delete(router) {
      // The router is ours and so are its interfaces; Neutron refuses to delete a router that still has any.
      listedInterfaces.delete(router.id);
      for (const port of await interfacesOf(router)) await absentOn404(neutron.removeInterface(router.id, { port_id: port.id }));
      await neutron.deleteRouter(router.id);
      return { done: true };
    },
    // What makes Neutron refuse to remove an interface: floating IPs reached through it, and routes whose next hop it holds.
    async blockers(router) {
      const floatingIps = await neutron.listFloatingIps({ router_id: router.id });
      return [
        ...floatingIps.map((fip) => `floating IP ${fip.floating_ip_address} (${fip.id}) on port ${fip.port_id ?? 'none'}`),
        ...(router.routes ?? []).map((route) => `route to ${route.destination} via ${route.nexthop}`),
      ];
    },
    describe: (router) => ({
      id: router.id,
      name: router.name,
      status: router.status,
      admin_state_up: router.admin_state_up,
      external_network_id: router.external_gateway_info?.network_id ?? null,
      ips: (router.external_gateway_info?.external_fixed_ips ?? []).map((ip) => ip.ip_address),
    }),
  };
}

/** What a router's interfaces were when last listed: the router's revision then, and the subnets they joined. */
interface ListedInterfaces {
  revision: number;
  subnetIds: Set<string>;
}

/** By router ID, per cloud connection, so it outlives the pass (each pass makes its actuator); a restart lists again. */
const listedByClient = new WeakMap<NeutronClient, Map<string, ListedInterfaces>>();

function interfacesListed(neutron: NeutronClient): Map<string, ListedInterfaces> {
  let listed = listedByClient.get(neutron);
  if (listed === undefined) {
    listed = new Map();
    listedByClient.set(neutron, listed);
  }
  return listed;
}

function subnetsOf(ports: readonly Port[]): Set<string> {
  return new Set(ports.flatMap((port) => port.fixed_ips.map((ip) => ip.subnet_id)));
}

/** Addresses count only where the desired gateway names them; Neutron picks the rest. */
function gatewayMatches(current: Router['external_gateway_info'], desired: DesiredGateway): boolean {
  if (desired === undefined) return current === null;
  if (current === null || current.network_id !== desired.network_id) return false;
  return desired.external_fixed_ips === undefined || ipsMatch(current.external_fixed_ips ?? [], desired.external_fixed_ips);
}

/** One current address for each wanted one; wanted addresses are placed first, so a subnet-only entry cannot take their place. */
function ipsMatch(current: readonly { subnet_id: string; ip_address: string }[], wanted: readonly WantedIp[]): boolean {
  if (current.length !== wanted.length) return false;
  const unclaimed = [...current];
  const specificFirst = [...wanted].sort((a, b) => Number(b.ip_address !== undefined) - Number(a.ip_address !== undefined));
  return specificFirst.every((want) => {
    const at = unclaimed.findIndex(
      (ip) =>
        (want.ip_address === undefined || ip.ip_address === canonicalAddress(want.ip_address)) &&
        (want.subnet_id === undefined || ip.subnet_id === want.subnet_id),
    );
    if (at >= 0) unclaimed.splice(at, 1);
    return at >= 0;
  });
}
