/** The Octavia listener actuator: one per API server port, with the allowed CIDRs users may change later. */
import type { Listener, OctaviaClient } from '../../openstack/index.js';
import { absentOn404, type ResourceActuator } from './actuator.js';
import { claimBelow, createBelow, createTags, lookupTags, ownedOrCapo, deleteBelow, parentOf, servingReadiness, updateBelow } from './octavia.js';

/** Octavia's own field names. */
export interface ListenerDesired {
  name: string;
  loadbalancer_id: string;
  protocol: 'TCP' | 'HTTP' | 'HTTPS' | 'UDP';
  protocol_port: number;
  /**
   * Omitted: left as they are, for clouds that do not support them (API
   * before v2.12, the OVN provider). Empty: everyone may connect.
   */
  allowed_cidrs?: string[];
  /** Extra user tags besides the owner tags. */
  tags?: string[];
}

export function listenerActuator(octavia: OctaviaClient): ResourceActuator<ListenerDesired, Listener> {
  return {
    kind: 'listener',
    getById: (id) => absentOn404(octavia.getListener(id)),
    findAdoptable: async (name, owner) => ownedOrCapo(await octavia.listListeners({ name, ...lookupTags(owner) }), owner),
    create: ({ tags, ...desired }, owner) =>
      createBelow(octavia, desired.loadbalancer_id, () => octavia.createListener({ ...desired, tags: createTags(owner, tags) })),
    async postCreate(listener, desired, owner) {
      const claimed = await claimBelow(octavia, desired.loadbalancer_id, 'listener', listener, owner, (tags) => octavia.updateListener(listener.id, { tags }));
      if (claimed) return claimed;
      if (desired.allowed_cidrs === undefined || sameCidrs(listener.allowed_cidrs ?? [], desired.allowed_cidrs)) return { done: true };
      const allowed = desired.allowed_cidrs;
      return updateBelow(octavia, desired.loadbalancer_id, 'listener', listener, 'its allowed CIDRs', () =>
        octavia.updateListener(listener.id, { allowed_cidrs: allowed }),
      );
    },
    readiness: (listener) => servingReadiness('listener', listener),
    delete: (listener) =>
      deleteBelow(
        octavia,
        'listener',
        listener,
        () => octavia.deleteListener(listener.id),
        async () => parentOf('listener', listener, 'load balancer', listener.loadbalancers),
      ),
    describe: (listener) => ({
      id: listener.id,
      name: listener.name ?? '',
      provisioning_status: listener.provisioning_status,
      protocol: listener.protocol,
      protocol_port: listener.protocol_port,
      allowed_cidrs: listener.allowed_cidrs ?? [],
    }),
  };
}

/** Octavia keeps the order it was given and shows no CIDRs as null; neither is a difference. */
function sameCidrs(current: readonly string[], desired: readonly string[]): boolean {
  const wanted = new Set(desired);
  const have = new Set(current);
  return wanted.size === have.size && [...wanted].every((cidr) => have.has(cidr));
}
