/**
 * The Neutron port actuator, for machine ports. A port is usable as soon as
 * it exists (it stays DOWN until a server binds it), and once a server uses
 * it nothing but its tags is ever changed here.
 */
import type { NeutronClient, Port } from '../../openstack/index.js';
import { TerminalError } from '../runtime/controller.js';
import { absentOn404, maxTagLength, ownerTags, type ResourceActuator } from './actuator.js';
import { adoptableOf, ensureOwnerTags, readById, createTagged, withOwnerMark } from './neutron.js';

/** Neutron's own field names, so the create body is the desired state without the tags. */
export interface PortDesired {
  name: string;
  network_id: string;
  description?: string;
  fixed_ips?: { subnet_id?: string; ip_address?: string }[];
  security_groups?: string[];
  allowed_address_pairs?: { ip_address: string; mac_address?: string }[];
  port_security_enabled?: boolean;
  admin_state_up?: boolean;
  mac_address?: string;
  'binding:vnic_type'?: string;
  'binding:profile'?: Record<string, unknown>;
  'binding:host_id'?: string;
  propagate_uplink_status?: boolean;
  value_specs?: Record<string, unknown>;
  /** Extra user tags besides the owner tags. */
  tags?: string[];
}

export function portActuator(neutron: NeutronClient): ResourceActuator<PortDesired, Port> {
  return {
    kind: 'port',
    getById: (id) => absentOn404(neutron.getPort(id)),
    readMany: readById(neutron, 'port', (filters) => neutron.listPorts(filters)),
    findAdoptable: (name, owner) => adoptableOf(neutron.listPorts({ name }), owner),
    async create(desired, owner) {
      const { tags: extra = [], ...port } = desired;
      // Checked before the POST: one bad user tag would fail the create, or the tag PUT after it, owner tags included, and leave the port unadoptable.
      const tags = [...new Set([...ownerTags(owner), ...checkedTags(extra, desired.name)])];
      return createTagged(neutron, 'ports', tags, (tagged) => neutron.createPort({ ...port, ...tagged, description: withOwnerMark(port.description, owner) }));
    },
    postCreate: (port, desired, owner) => ensureOwnerTags(neutron, 'ports', port, owner, desired.tags),
    readiness: () => ({ ready: true }),
    async delete(port) {
      await neutron.deletePort(port.id);
      return { done: true };
    },
    // Neutron refuses to delete a port while a trunk holds it; a server using it does not stop the delete.
    async blockers(port) {
      const holders: string[] = [];
      if (port.trunk_details) holders.push(`trunk ${port.trunk_details.trunk_id} (as its parent port)`);
      if (port.device_owner === 'trunk:subport') holders.push(`trunk ${port.device_id} (as a sub-port)`);
      return holders;
    },
    describe: (port) => ({
      id: port.id,
      name: port.name,
      network_id: port.network_id,
      status: port.status,
      mac_address: port.mac_address,
      ips: port.fixed_ips.map((ip) => ip.ip_address),
      device_id: port.device_id,
      device_owner: port.device_owner,
      security_groups: port.security_groups ?? [],
      trunk_id: port.trunk_details?.trunk_id ?? null,
    }),
  };
}

function checkedTags(tags: readonly string[], portName: string): readonly string[] {
  const bad = tags.find((tag) => tag === '' || tag.length > maxTagLength);
  if (bad !== undefined) throw new TerminalError(`port "${portName}": tag "${bad}" is not allowed; Neutron takes tags of 1 to ${maxTagLength} characters`);
  return tags;
}
