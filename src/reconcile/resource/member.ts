/**
 * The Octavia pool member actuator: one control-plane machine's address in
 * the API server's pool. Octavia addresses members only below their pool,
 * so an actuator serves one pool. A member cannot change its address or
 * port: a machine whose address changed gets a new member, never a stale one.
 */
import { isNotFound, type Member, type OctaviaClient } from '../../openstack/index.js';
import type { MemberBatches } from '../member-batches.js';
import { absentOn404, readGroup, type Owner, type ResourceActuator } from './actuator.js';
import {
  claimBelow,
  createBelow,
  createTags,
  lookupTags,
  ownedOrCapo,
  deleteBelow,
  loadBalancerOfPool,
  octaviaRequeueMs,
  servingReadiness,
  waitAfterRefusal,
} from './octavia.js';

/** Octavia's own field names. */
export interface MemberDesired {
  name: string;
  /** The pool the actuator serves; a different one is a programming error. */
  pool_id: string;
  /** The pool's load balancer, asked about when Octavia refuses a change. */
  loadbalancer_id: string;
  address: string;
  protocol_port: number;
  /** Only when the member is not on the VIP's subnet. */
  subnet_id?: string;
  /** Extra user tags besides the owner tags. */
  tags?: string[];
}

/**
 * `poolId`: the pool whose members this actuator finds, creates and deletes. A 404 of the pool (or its load balancer) on removal
 * means the members went with it. With `batches`, a create goes with the other members wanted in the pool (member-batches.ts).
 */
export function memberActuator(octavia: OctaviaClient, poolId: string, batches?: MemberBatches): ResourceActuator<MemberDesired, Member> {
  // With batches, lookups share a list of the pool and changes take it back (member-batches.ts).
  const findAdoptable = async (name: string, owner: Owner) =>
    ownedOrCapo(
      batches ? await batches.named(octavia, poolId, name) : ((await absentOn404(octavia.listMembers(poolId, { name, ...lookupTags(owner) }))) ?? []),
      owner,
    );
  const changing = <T>(name: string | undefined, change: () => Promise<T>): Promise<T> =>
    batches ? batches.changing(poolId, name === undefined ? [] : [name], change) : change();
  return {
    kind: 'member',
    getById: (id) => absentOn404(octavia.getMember(poolId, id)),
    // A pool's members are one short list; with the pool gone, each member's own read tells.
    readMany: { group: readGroup(octavia, `member of ${poolId}`), read: async () => (await absentOn404(octavia.listMembers(poolId))) ?? [] },
    findAdoptable,
    async create({ pool_id, loadbalancer_id, tags, ...desired }, owner) {
      if (pool_id !== poolId) throw new Error(`member "${desired.name}" is meant for pool ${pool_id}, but this actuator serves pool ${poolId}`);
      const member = { ...desired, tags: createTags(owner, tags) };
      if (!batches) return createBelow(octavia, loadbalancer_id, () => octavia.createMember(poolId, member));
      const created = await createBelow(octavia, loadbalancer_id, () => batches.send(octavia, loadbalancer_id, poolId, member));
      if (created) return created;
      // A batch update answers without its members: ours is found as after a lost response.
      const [listed] = await findAdoptable(desired.name, owner);
      if (!listed) throw new Error(`Octavia accepted the batch update of pool ${poolId} but lists no member "${desired.name}"`);
      return listed;
    },
    async postCreate(member, desired, owner) {
      const claimed = await claimBelow(octavia, desired.loadbalancer_id, 'member', member, owner, (tags) =>
        changing(member.name ?? undefined, () => octavia.updateMemberTags(poolId, member.id, tags)),
      );
      if (claimed) return claimed;
      if (!movedFrom(member, desired)) return { done: true };
      const replacing = `member ${member.id} at ${endpoint(member)} to be deleted, to be created again at ${endpoint(desired)}`;
      if (member.provisioning_status.startsWith('PENDING_'))
        return { waitingFor: `${replacing} (now ${member.provisioning_status})`, requeueAfterMs: octaviaRequeueMs };
      try {
        await changing(member.name ?? undefined, () => octavia.deleteMember(poolId, member.id));
      } catch (error) {
        if (!isNotFound(error)) return waitAfterRefusal(octavia, desired.loadbalancer_id, error);
      }
      // The engine finds it gone on a later pass and creates the new one.
      return { waitingFor: replacing, requeueAfterMs: octaviaRequeueMs };
    },
    readiness: (member) => servingReadiness('member', member),
    delete: (member) =>
      deleteBelow(
        octavia,
        'member',
        member,
        () => changing(member.name ?? undefined, () => octavia.deleteMember(poolId, member.id)),
        () => loadBalancerOfPool(octavia, poolId),
      ),
    describe: (member) => ({
      id: member.id,
      name: member.name ?? '',
      provisioning_status: member.provisioning_status,
      operating_status: member.operating_status,
      address: member.address,
      protocol_port: member.protocol_port,
      subnet_id: member.subnet_id,
    }),
  };
}

/** Address, port and (when one is asked for) subnet are fixed for a member's life. */
function movedFrom(member: Member, desired: MemberDesired): boolean {
  if (member.address !== desired.address || member.protocol_port !== desired.protocol_port) return true;
  return desired.subnet_id !== undefined && member.subnet_id !== desired.subnet_id;
}

function endpoint(target: { address: string; protocol_port: number }): string {
  return target.address.includes(':') ? `[${target.address}]:${target.protocol_port}` : `${target.address}:${target.protocol_port}`;
}
