/**
 * The Neutron floating IP actuator. Floating IPs have no name, so the
 * desired name goes into the description, and adoption matches the
 * description together with the owner tag.
 *
 * A floating IP without an owner tag is a user's (CAPO deleted users'
 * addresses along with clusters): it is never adopted, tagged or deleted
 * here, not even when its ID was recorded. findUserFloatingIp finds one for
 * association.
 */
import { OpenStackError, type FloatingIp, type NeutronClient, type UpdateFloatingIp } from '../../openstack/index.js';
import { absentOn404, carriesOwnerTag, ownerTags, type ResourceActuator } from './actuator.js';
import { adoptableOf, ensureOwnerTags, readById, createTagged, withoutOwnerMark, withOwnerMark } from './neutron.js';

export interface FloatingIpDesired {
  /** Stored in the description; the adoption lookup filters on description + owner tag. */
  name: string;
  floating_network_id: string;
  /** A specific address requested by the user (Neutron's default policy allows that to admins only). */
  floating_ip_address?: string;
  /**
   * An address asked for where the policy allows it, else any: the one a floating IP deleted behind
   * our back had, so an endpoint holds for admins and still heals for everyone else.
   */
  preferred_ip_address?: string;
  /**
   * A port: associate with it (postCreate moves the address when it is elsewhere). null: keep it
   * unassociated. Omitted: leave the association alone, for when another object associates it.
   */
  port_id?: string | null;
  /** Which of the port's addresses (IPv4: Neutron floats nothing else), when it has several. */
  fixed_ip_address?: string;
}

/** Association is asynchronous on real clouds; the L3 agent or OVN takes a second or two to program it. */
const associationRequeueMs = 3_000;

export function floatingIpActuator(neutron: NeutronClient): ResourceActuator<FloatingIpDesired, FloatingIp> {
  return {
    kind: 'floating IP',
    getById: (id) => absentOn404(neutron.getFloatingIp(id)),
    readMany: readById(neutron, 'floating IP', (filters) => neutron.listFloatingIps(filters)),
    // The description (name plus owner mark) is exact, so one filtered list finds ours, tagged or not.
    async findAdoptable(name, owner, desired) {
      const ours = await adoptableOf(neutron.listFloatingIps({ description: withOwnerMark(name, owner) }), owner);
      if (ours.length > 0 || !owner.adopt || !desired?.port_id) return ours;
      // CAPO's floating IP has no name to find it by: it is the one on the port (the load balancer's VIP, the bastion's).
      return adoptableOf(neutron.listFloatingIps({ port_id: desired.port_id }), owner);
    },
    async create(desired, owner) {
      const tags = ownerTags(owner);
      const createAt = (address: string | undefined) =>
        createTagged(neutron, 'floatingips', tags, (tagged) =>
          neutron.createFloatingIp({
            floating_network_id: desired.floating_network_id,
            floating_ip_address: address,
            description: withOwnerMark(desired.name, owner),
            port_id: desired.port_id ?? undefined,
            fixed_ip_address: desired.port_id ? desired.fixed_ip_address : undefined,
            ...tagged,
          }),
        );
      if (desired.floating_ip_address !== undefined || desired.preferred_ip_address === undefined) return createAt(desired.floating_ip_address);
      try {
        return await createAt(desired.preferred_ip_address);
      } catch (error) {
        // Refused by policy (create_floatingip:floating_ip_address), or taken: nothing was made, so any address will do.
        if (error instanceof OpenStackError && (error.kind === 'Forbidden' || error.kind === 'Conflict')) return createAt(undefined);
        throw error;
      }
    },
    async postCreate(fip, desired, owner) {
      await ensureOwnerTags(neutron, 'floatingips', fip, owner);
      // An adopted one (CAPO's) takes our description too, so it is found again like one we made.
      const description = withOwnerMark(desired.name, owner);
      if (fip.description !== description) Object.assign(fip, await neutron.updateFloatingIp(fip.id, { description }));
      if (desired.port_id === undefined || associatedAsDesired(fip, desired)) return { done: true };
      // Refreshed in place, so readiness and describe() see the new association without another read.
      Object.assign(fip, await neutron.updateFloatingIp(fip.id, association(desired)));
      return { done: true };
    },
    readiness(fip) {
      if (fip.status === 'ERROR') return { failed: 'Neutron reports status ERROR' };
      // Unassociated floating IPs stay DOWN for good.
      if (fip.port_id === null || fip.status === 'ACTIVE') return { ready: true };
      return {
        waitingFor: `floating IP ${fip.floating_ip_address} to become ACTIVE on port ${fip.port_id} (now ${fip.status})`,
        requeueAfterMs: associationRequeueMs,
      };
    },
    async delete(fip) {
      // Untagged means a user's, even when a status recorded its ID: leaving it is all there is to do.
      if (!carriesOwnerTag(fip.tags)) return { done: true };
      await neutron.deleteFloatingIp(fip.id);
      return { done: true };
    },
    describe: (fip) => ({
      id: fip.id,
      name: withoutOwnerMark(fip.description ?? ''),
      floating_ip_address: fip.floating_ip_address,
      floating_network_id: fip.floating_network_id,
      status: fip.status,
      port_id: fip.port_id,
      fixed_ip_address: fip.fixed_ip_address,
      router_id: fip.router_id ?? null,
    }),
  };
}

/**
 * The floating IP holding `address` when a user made it (it carries no owner
 * tag), for the caller to associate without owning it; undefined when the
 * address is not allocated, or is capo-apiserver's.
 */
export async function findUserFloatingIp(neutron: NeutronClient, address: string): Promise<FloatingIp | undefined> {
  const found = await neutron.listFloatingIps({ floating_ip_address: address });
  return found.find((fip) => !carriesOwnerTag(fip.tags));
}

function association(desired: FloatingIpDesired): UpdateFloatingIp {
  return desired.port_id ? { port_id: desired.port_id, fixed_ip_address: desired.fixed_ip_address } : { port_id: null };
}

function associatedAsDesired(fip: FloatingIp, desired: FloatingIpDesired): boolean {
  if (fip.port_id !== (desired.port_id ?? null)) return false;
  return desired.fixed_ip_address === undefined || fip.fixed_ip_address === desired.fixed_ip_address;
}
