/**
 * The Octavia load balancer actuator: the API server's VIP. It answers the
 * create at once in PENDING_CREATE and the amphora takes a minute or two;
 * ERROR (a failed amphora build) is reported as such rather than waited out,
 * which is what CAPO did (#1114).
 */
import { OpenStackError, type CreateListenerInGraph, type LoadBalancer, type OctaviaClient } from '../../openstack/index.js';
import { absentOn404, ownerTag, ownerTagOf, readGroup, type Owner, type ResourceActuator } from './actuator.js';
import { createTags, isBusyConflict, lookupTags, octaviaRequeueMs, ownedOrCapo, provisioningReadiness, servingReadiness } from './octavia.js';

/** Octavia's own field names, so the create body is the desired state as is. */
export interface LoadBalancerDesired {
  name: string;
  vip_subnet_id?: string;
  vip_network_id?: string;
  vip_address?: string;
  provider?: string;
  flavor_id?: string;
  availability_zone?: string;
  description?: string;
  /** Extra user tags besides the owner tags (Octavia takes tags in the create body). */
  tags?: string[];
  /**
   * Created with the load balancer in one request (Octavia's fully populated
   * create): one provisioning transition for the whole tree instead of one
   * per child. Each object gets the owner tags too. A cloud that refuses it
   * gets the load balancer alone, and the children come one by one.
   */
  listeners?: CreateListenerInGraph[];
}

export function loadBalancerActuator(octavia: OctaviaClient): ResourceActuator<LoadBalancerDesired, LoadBalancer> {
  return {
    kind: 'load balancer',
    getById: (id) => absentOn404(octavia.getLoadBalancer(id)),
    // Octavia filters an attribute on one value (a repeated `id` is no list of IDs); each load balancer carries its owner's tag, so a list of any of those tags finds them all.
    // Not at resync: a child still PENDING_CREATE under a load balancer read ACTIVE is judged stuck, so the read must not predate the child (the status tree vouches at resync anyway).
    readMany: {
      group: readGroup(octavia, 'load balancer'),
      read: (targets) => octavia.listLoadBalancers({ 'tags-any': targets.map((target) => ownerTagOf(target.ownerUid)) }),
      onlyForLooks: true,
    },
    findAdoptable: async (name, owner) => ownedOrCapo(await octavia.listLoadBalancers({ name, ...lookupTags(owner) }), owner),
    async create({ tags, listeners, ...desired }, owner) {
      const alone = { ...desired, tags: createTags(owner, tags) };
      if (listeners === undefined || listeners.length === 0) return octavia.createLoadBalancer(alone);
      try {
        return await octavia.createLoadBalancer({ ...alone, listeners: listeners.map((listener) => withOwnerTags(listener, owner)) });
      } catch (error) {
        // "Provider ... does not support a requested option": nothing was created.
        if (!(error instanceof OpenStackError && error.status === 501)) throw error;
        return octavia.createLoadBalancer(alone);
      }
    },
    // An adopted load balancer (CAPO's) gets the owner tags once it accepts changes.
    async postCreate(lb, _desired, owner) {
      if ((lb.tags ?? []).includes(ownerTag(owner))) return { done: true };
      const pending = provisioningReadiness('load balancer', lb);
      if ('waitingFor' in pending) return pending;
      try {
        Object.assign(lb, await octavia.updateLoadBalancerTags(lb.id, createTags(owner, lb.tags ?? [])));
      } catch (error) {
        if (!isBusyConflict(error)) throw error;
      }
      return { waitingFor: `load balancer ${lb.id} to apply its owner tags`, requeueAfterMs: octaviaRequeueMs };
    },
    readiness: (lb) => servingReadiness('load balancer', lb),
    async delete(lb) {
      const gone = { waitingFor: `load balancer ${lb.id} to be deleted`, requeueAfterMs: octaviaRequeueMs };
      // Octavia refuses to delete a load balancer in any PENDING_* state; PENDING_DELETE means ours is under way.
      if (lb.provisioning_status.startsWith('PENDING_')) return gone;
      try {
        // Listeners, pools, members and monitors go with it, so nobody has to delete them one change at a time.
        await octavia.deleteLoadBalancer(lb.id, { cascade: true });
      } catch (error) {
        // It turned PENDING_* after we read it (a member added meanwhile): try again once that is done.
        if (!isBusyConflict(error)) throw error;
      }
      return gone;
    },
    describe: (lb) => ({
      id: lb.id,
      name: lb.name ?? '',
      provisioning_status: lb.provisioning_status,
      operating_status: lb.operating_status,
      vip_address: lb.vip_address,
      vip_port_id: lb.vip_port_id,
      vip_subnet_id: lb.vip_subnet_id,
      vip_network_id: lb.vip_network_id,
      provider: lb.provider,
      flavor_id: lb.flavor_id,
      availability_zone: lb.availability_zone,
    }),
  };
}

function withOwnerTags(listener: CreateListenerInGraph, owner: Owner): CreateListenerInGraph {
  const pool = listener.default_pool;
  return {
    ...listener,
    tags: createTags(owner, listener.tags),
    ...(pool === undefined
      ? {}
      : {
          default_pool: {
            ...pool,
            tags: createTags(owner, pool.tags),
            ...(pool.healthmonitor === undefined ? {} : { healthmonitor: { ...pool.healthmonitor, tags: createTags(owner, pool.healthmonitor.tags) } }),
          },
        }),
  };
}
