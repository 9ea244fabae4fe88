/** The Neutron network actuator: the first resource a managed cluster creates and the last it deletes. */
import type { Network, NeutronClient } from '../../openstack/index.js';
import { absentOn404, ownerTags, type ResourceActuator } from './actuator.js';
import { adoptableOf, ensureOwnerTags, portHolders, readById, createTagged, withOwnerMark } from './neutron.js';

/** Neutron's own field names, so the create body is the desired state as is. */
export interface NetworkDesired {
  name: string;
  description?: string;
  mtu?: number;
  port_security_enabled?: boolean;
  admin_state_up?: boolean;
}

/** ML2 networks turn ACTIVE within the create on most backends; an SDN backend may take a few seconds. */
const settleRequeueMs = 5_000;

export function networkActuator(neutron: NeutronClient): ResourceActuator<NetworkDesired, Network> {
  return {
    kind: 'network',
    getById: (id) => absentOn404(neutron.getNetwork(id)),
    readMany: readById(neutron, 'network', (filters) => neutron.listNetworks(filters)),
    findAdoptable: (name, owner) => adoptableOf(neutron.listNetworks({ name }), owner),
    async create(desired, owner) {
      const tags = ownerTags(owner);
      return createTagged(neutron, 'networks', tags, (tagged) =>
        neutron.createNetwork({ ...desired, ...tagged, description: withOwnerMark(desired.description, owner) }),
      );
    },
    postCreate: (network, _desired, owner) => ensureOwnerTags(neutron, 'networks', network, owner),
    readiness(network) {
      if (network.status === 'ACTIVE') return { ready: true };
      // An administratively down network reports DOWN for good.
      if (network.status === 'DOWN' && !network.admin_state_up) return { ready: true };
      if (network.status === 'ERROR') return { failed: 'Neutron reports status ERROR' };
      return { waitingFor: `network ${network.id} to become ACTIVE (now ${network.status})`, requeueAfterMs: settleRequeueMs };
    },
    async delete(network) {
      // Synchronous in Neutron; the subnets and DHCP ports go with the network.
      await neutron.deleteNetwork(network.id);
      return { done: true };
    },
    blockers: async (network) => portHolders(await neutron.listPorts({ network_id: network.id })),
    describe: (network) => ({
      id: network.id,
      name: network.name,
      status: network.status,
      admin_state_up: network.admin_state_up,
      mtu: network.mtu,
      port_security_enabled: network.port_security_enabled,
      subnets: network.subnets,
    }),
  };
}
