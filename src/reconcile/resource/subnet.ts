/** The Neutron subnet actuator. Subnets have no status: one that exists is ready. */
import type { AllocationPool, NeutronClient, Subnet } from '../../openstack/index.js';
import { absentOn404, ownerTags, type ResourceActuator } from './actuator.js';
import { adoptableOf, ensureOwnerTags, portHolders, readById, createTagged, withOwnerMark } from './neutron.js';

/** Neutron's own field names, so the create body is the desired state as is. */
export interface SubnetDesired {
  name: string;
  network_id: string;
  cidr: string;
  ip_version: 4 | 6;
  description?: string;
  dns_nameservers?: readonly string[];
  allocation_pools?: readonly AllocationPool[];
  /** null: no gateway; omitted: Neutron takes the first address. */
  gateway_ip?: string | null;
}

export function subnetActuator(neutron: NeutronClient): ResourceActuator<SubnetDesired, Subnet> {
  return {
    kind: 'subnet',
    getById: (id) => absentOn404(neutron.getSubnet(id)),
    readMany: readById(neutron, 'subnet', (filters) => neutron.listSubnets(filters)),
    findAdoptable: (name, owner) => adoptableOf(neutron.listSubnets({ name }), owner),
    async create(desired, owner) {
      const tags = ownerTags(owner);
      return createTagged(neutron, 'subnets', tags, (tagged) =>
        neutron.createSubnet({ ...desired, ...tagged, description: withOwnerMark(desired.description, owner) }),
      );
    },
    postCreate: (subnet, _desired, owner) => ensureOwnerTags(neutron, 'subnets', subnet, owner),
    readiness: () => ({ ready: true }),
    async delete(subnet) {
      await neutron.deleteSubnet(subnet.id);
      return { done: true };
    },
    blockers: async (subnet) => portHolders(await neutron.listPorts({ fixed_ips: [{ subnet_id: subnet.id }] })),
    describe: (subnet) => ({
      id: subnet.id,
      name: subnet.name,
      network_id: subnet.network_id,
      cidr: subnet.cidr,
      ip_version: subnet.ip_version,
      gateway_ip: subnet.gateway_ip,
      dns_nameservers: subnet.dns_nameservers,
    }),
  };
}
