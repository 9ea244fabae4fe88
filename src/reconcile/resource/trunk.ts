/**
 * The Neutron trunk actuator: a machine port that carries VLAN sub-ports.
 * The trunk's status follows the server binding its parent port (DOWN until
 * then), so a trunk is usable as soon as it exists.
 */
import type { NeutronClient, Trunk } from '../../openstack/index.js';
import { absentOn404, ownerTags, type ResourceActuator } from './actuator.js';
import { adoptableOf, ensureOwnerTags, portHolders, createTagged, withOwnerMark } from './neutron.js';

/** Neutron's own field names, so the create body is the desired state as is. */
export interface TrunkDesired {
  name: string;
  port_id: string;
  description?: string;
}

export function trunkActuator(neutron: NeutronClient): ResourceActuator<TrunkDesired, Trunk> {
  return {
    kind: 'trunk',
    getById: (id) => absentOn404(neutron.getTrunk(id)),
    findAdoptable: (name, owner) => adoptableOf(neutron.listTrunks({ name }), owner),
    async create(desired, owner) {
      const tags = ownerTags(owner);
      return createTagged(neutron, 'trunks', tags, (tagged) =>
        neutron.createTrunk({ ...desired, ...tagged, description: withOwnerMark(desired.description, owner) }),
      );
    },
    postCreate: (trunk, _desired, owner) => ensureOwnerTags(neutron, 'trunks', trunk, owner),
    readiness: (trunk) => (trunk.status === 'ERROR' ? { failed: 'Neutron reports status ERROR: the driver failed to wire the trunk' } : { ready: true }),
    async delete(trunk) {
      // The sub-port memberships go with the trunk; the sub-ports themselves stay.
      await neutron.deleteTrunk(trunk.id);
      return { done: true };
    },
    // Drivers that cannot untrunk a bound port refuse the delete until the server is gone; sub-ports are named for context.
    async blockers(trunk) {
      const parent = await absentOn404(neutron.getPort(trunk.port_id));
      const server = parent !== undefined && parent.device_id !== '' ? portHolders([parent]) : [];
      return [...server, ...trunk.sub_ports.map((sub) => `sub-port ${sub.port_id} (${sub.segmentation_type} ${sub.segmentation_id})`)];
    },
    describe: (trunk) => ({
      id: trunk.id,
      name: trunk.name,
      port_id: trunk.port_id,
      status: trunk.status,
      admin_state_up: trunk.admin_state_up,
      sub_ports: trunk.sub_ports.map((sub) => sub.port_id),
    }),
  };
}
