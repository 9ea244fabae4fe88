/**
 * Simulated Neutron (Zed, ML2 as ministack configures it): networks,
 * subnets, ports, routers, security groups, floating IPs, trunks, tags and
 * quotas, with Neutron's validation, policies and error bodies. Seeds
 * ministack's external network `public` (flat, shared, 172.24.4.0/24
 * without DHCP), and installs `ctx.peers.network` for Nova and Octavia.
 */
import type { PeerNetwork, PeerPort, PeerPortSpec, PeerSubnet, SimulatedService, SimulatorContext, SimulatorPeers } from '../framework.js';
import { formatNeutronError } from './errors.js';
import type { Caller, Port } from './model.js';
import { createNetwork } from './networks.js';
import { createPort, deletePort, portView, updatePort } from './ports.js';
import { neutronRouter } from './routes.js';
import { Store, type NeutronOptions } from './store.js';

export type { NeutronOptions } from './store.js';
import { createSubnet } from './subnets.js';

type NetworkPeer = NonNullable<SimulatorPeers['network']>;

function peerPort(s: Store, admin: Caller, p: Port): PeerPort {
  const view = portView(s, admin, p);
  return {
    id: p.id,
    name: p.name,
    network_id: p.networkId,
    project_id: p.projectId,
    mac_address: p.macAddress,
    fixed_ips: p.fixedIps.map((f) => ({ ...f })),
    device_id: p.deviceId,
    device_owner: p.deviceOwner,
    status: p.status,
    admin_state_up: p.adminStateUp,
    security_groups: [...p.securityGroups],
    'binding:host_id': p.hostId,
    'binding:vif_type': view['binding:vif_type'] as string,
  };
}

/** Nova and Octavia act on Neutron with their own service credentials, except port creation, which is on the user's behalf. */
function networkPeer(s: Store): NetworkPeer {
  const admin = (projectId = ''): Caller => ({ projectId, isAdmin: true, roles: ['admin'] });
  return {
    createPort(projectId: string, spec: PeerPortSpec) {
      const user: Caller = { projectId, isAdmin: false, roles: ['member'] };
      return peerPort(s, admin(), createPort(s, user, { port: spec }));
    },
    getPort(id) {
      const p = s.ports.get(id);
      return p && peerPort(s, admin(), p);
    },
    listPorts(filter) {
      const wanted = Object.entries(filter) as [keyof PeerPort, unknown][];
      return [...s.ports.values()].map((p) => peerPort(s, admin(), p)).filter((p) => wanted.every(([k, v]) => p[k] === v));
    },
    updatePort(id, changes) {
      // The VIF type follows from the binding host; Neutron never takes it from a client.
      const { 'binding:vif_type': _vifType, ...writable } = changes;
      return peerPort(s, admin(), updatePort(s, admin(), id, { port: writable }));
    },
    deletePort(id) {
      deletePort(s, admin(), id);
    },
    getNetwork(id): PeerNetwork | undefined {
      const n = s.networks.get(id);
      return (
        n && {
          id: n.id,
          name: n.name,
          project_id: n.projectId,
          status: 'ACTIVE',
          shared: n.shared,
          'router:external': n.external,
          subnets: s.subnetsOf(n.id).map((sub) => sub.id),
          mtu: n.mtu,
        }
      );
    },
    getSubnet(id): PeerSubnet | undefined {
      const sub = s.subnets.get(id);
      return (
        sub && {
          id: sub.id,
          name: sub.name,
          network_id: sub.networkId,
          project_id: sub.projectId,
          cidr: sub.cidr,
          ip_version: sub.ipVersion,
          gateway_ip: sub.gatewayIp,
        }
      );
    },
    floatingIpsOfPort(portId) {
      return [...s.floatingIps.values()]
        .filter((f) => f.portId === portId)
        .map((f) => ({ id: f.id, floating_ip_address: f.floatingIpAddress, fixed_ip_address: f.fixedIpAddress, port_id: f.portId }));
    },
  };
}

/** ministack's up.sh: the admin-owned external network every project can use. */
function seed(s: Store, ctx: SimulatorContext): void {
  const adminProject = ctx.projectIdByName('admin');
  if (!adminProject) throw new Error("Neutron's seed data needs Keystone's 'admin' project");
  const admin: Caller = { projectId: adminProject, isAdmin: true, roles: ['admin'] };
  const network = createNetwork(s, admin, {
    network: { name: 'public', 'router:external': true, shared: true, 'provider:network_type': 'flat', 'provider:physical_network': 'public' },
  });
  createSubnet(s, admin, {
    subnet: {
      name: 'public-subnet',
      network_id: network.id,
      ip_version: 4,
      cidr: '172.24.4.0/24',
      gateway_ip: '172.24.4.1',
      enable_dhcp: false,
      allocation_pools: [{ start: '172.24.4.10', end: '172.24.4.250' }],
    },
  });
}

const PREFIX = '/network';

/** A factory for a simulated Neutron with what `options` adds to Zed, for SimulatorOptions.services. */
export function neutronWith(options: NeutronOptions): (ctx: SimulatorContext) => SimulatedService {
  return (ctx) => createNeutronSimulator(ctx, options);
}

export function createNeutronSimulator(ctx: SimulatorContext, options: NeutronOptions = {}): SimulatedService {
  const store = new Store(ctx, options);
  seed(store, ctx);
  ctx.peers.network = networkPeer(store);
  return {
    type: 'network',
    name: 'neutron',
    prefix: PREFIX,
    publicPaths: [/^\/?$/],
    router: () => neutronRouter(store, PREFIX),
    formatError: formatNeutronError,
    state: { snapshot: () => store.snapshot(), restore: (snapshot) => store.restore(snapshot) },
    inventory: () => ({
      networks: store.networks.size,
      subnets: store.subnets.size,
      ports: store.ports.size,
      routers: store.routers.size,
      securityGroups: store.securityGroups.size,
      securityGroupRules: store.rules.size,
      floatingIps: store.floatingIps.size,
      trunks: store.trunks.size,
    }),
  };
}
