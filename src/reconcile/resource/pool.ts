/** The Octavia pool actuator: the listener's default pool, which the control-plane machines join as members. */
import type { OctaviaClient, Pool } from '../../openstack/index.js';
import { absentOn404, type ResourceActuator } from './actuator.js';
import { claimBelow, createBelow, createTags, lookupTags, ownedOrCapo, deleteBelow, parentOf, servingReadiness } from './octavia.js';

/** Octavia's own field names. */
export interface PoolDesired {
  name: string;
  listener_id: string;
  /** The listener's load balancer, asked about when Octavia refuses the create. */
  loadbalancer_id: string;
  protocol: 'TCP' | 'HTTP' | 'HTTPS' | 'UDP' | 'PROXY';
  /** The amphora provider has no SOURCE_IP_PORT; OVN has nothing else. */
  lb_algorithm: 'ROUND_ROBIN' | 'LEAST_CONNECTIONS' | 'SOURCE_IP' | 'SOURCE_IP_PORT';
  /** Extra user tags besides the owner tags. */
  tags?: string[];
}

export function poolActuator(octavia: OctaviaClient): ResourceActuator<PoolDesired, Pool> {
  return {
    kind: 'pool',
    getById: (id) => absentOn404(octavia.getPool(id)),
    findAdoptable: async (name, owner) => ownedOrCapo(await octavia.listPools({ name, ...lookupTags(owner) }), owner),
    create: (desired, owner) =>
      createBelow(octavia, desired.loadbalancer_id, () =>
        // Created through the listener, which makes it the listener's default pool in the same change.
        octavia.createPool({
          name: desired.name,
          listener_id: desired.listener_id,
          protocol: desired.protocol,
          lb_algorithm: desired.lb_algorithm,
          tags: createTags(owner, desired.tags),
        }),
      ),
    postCreate: async (pool, desired, owner) =>
      (await claimBelow(octavia, desired.loadbalancer_id, 'pool', pool, owner, (tags) => octavia.updatePoolTags(pool.id, tags))) ?? { done: true },
    readiness: (pool) => servingReadiness('pool', pool),
    // Its members and monitor go with it.
    delete: (pool) =>
      deleteBelow(
        octavia,
        'pool',
        pool,
        () => octavia.deletePool(pool.id),
        async () => parentOf('pool', pool, 'load balancer', pool.loadbalancers),
      ),
    describe: (pool) => ({
      id: pool.id,
      name: pool.name ?? '',
      provisioning_status: pool.provisioning_status,
      protocol: pool.protocol,
      lb_algorithm: pool.lb_algorithm,
      listeners: pool.listeners?.map((listener) => listener.id) ?? [],
      members: pool.members?.map((member) => member.id) ?? [],
      healthmonitor_id: pool.healthmonitor_id,
    }),
  };
}
