/**
 * The Octavia health monitor actuator. Its timings are the one part of the
 * load balancer CAPO lets users change afterwards, so they are kept in line.
 */
import type { HealthMonitor, OctaviaClient } from '../../openstack/index.js';
import { absentOn404, type ResourceActuator } from './actuator.js';
import {
  claimBelow,
  createBelow,
  createTags,
  lookupTags,
  ownedOrCapo,
  deleteBelow,
  loadBalancerOfPool,
  parentOf,
  servingReadiness,
  updateBelow,
} from './octavia.js';

/** Octavia's own field names. */
export interface HealthMonitorDesired {
  name: string;
  pool_id: string;
  /** The pool's load balancer, asked about when Octavia refuses a change. */
  loadbalancer_id: string;
  type: 'TCP' | 'HTTP' | 'HTTPS' | 'PING' | 'UDP-CONNECT';
  delay: number;
  timeout: number;
  max_retries: number;
  max_retries_down: number;
  /** Extra user tags besides the owner tags. */
  tags?: string[];
}

const timings = ['delay', 'timeout', 'max_retries', 'max_retries_down'] as const;

export function healthMonitorActuator(octavia: OctaviaClient): ResourceActuator<HealthMonitorDesired, HealthMonitor> {
  return {
    kind: 'health monitor',
    getById: (id) => absentOn404(octavia.getHealthMonitor(id)),
    findAdoptable: async (name, owner) => ownedOrCapo(await octavia.listHealthMonitors({ name, ...lookupTags(owner) }), owner),
    create: ({ loadbalancer_id, tags, ...desired }, owner) =>
      createBelow(octavia, loadbalancer_id, () => octavia.createHealthMonitor({ ...desired, tags: createTags(owner, tags) })),
    async postCreate(monitor, desired, owner) {
      const claimed = await claimBelow(octavia, desired.loadbalancer_id, 'health monitor', monitor, owner, (tags) =>
        octavia.updateHealthMonitor(monitor.id, { tags }),
      );
      if (claimed) return claimed;
      if (timings.every((field) => monitor[field] === desired[field])) return { done: true };
      const changes = { delay: desired.delay, timeout: desired.timeout, max_retries: desired.max_retries, max_retries_down: desired.max_retries_down };
      return updateBelow(octavia, desired.loadbalancer_id, 'health monitor', monitor, 'its new timings', () =>
        octavia.updateHealthMonitor(monitor.id, changes),
      );
    },
    readiness: (monitor) => servingReadiness('health monitor', monitor),
    delete: (monitor) =>
      deleteBelow(
        octavia,
        'health monitor',
        monitor,
        () => octavia.deleteHealthMonitor(monitor.id),
        () => loadBalancerOfPool(octavia, parentOf('health monitor', monitor, 'pool', monitor.pools)),
      ),
    describe: (monitor) => ({
      id: monitor.id,
      name: monitor.name ?? '',
      provisioning_status: monitor.provisioning_status,
      operating_status: monitor.operating_status,
      type: monitor.type,
      delay: monitor.delay,
      timeout: monitor.timeout,
      max_retries: monitor.max_retries,
      max_retries_down: monitor.max_retries_down,
    }),
  };
}
