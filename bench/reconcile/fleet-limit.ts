/**
 * The physical limit of a fleet run (bench:sharded): many clusters on one cloud whose API front
 * serves a bounded number of requests at once. However a reconciler orders its work, the run takes
 * at least the longer of two bounds:
 *   - the cloud's throughput: the fewest calls that make what the run made, each holding one of
 *     the front's slots for its service's latency, spread over every slot at once;
 *   - one cluster's dependent chain: figure 1's physical limit (critical-path.ts) for the run's
 *     cluster shape, which no cluster beats however idle the cloud.
 * A small run is bound by the chain, a large one by the cloud.
 *
 * The fewest calls are counted from the resources the run made (the cloud's inventory before and
 * after), as figure 1's limit counts them: each load balancer one fully populated create, each pool's
 * members one batch, one read per transition to see it over. Lookups of cloud-wide names (external
 * network, flavors, images, extensions) are left out: a fleet needs them once, not per cluster.
 * Keystone is left out too: tokens are issued once per session, and not behind the front.
 */
import type { CloudProfile, RequestLatency } from './cloud.js';
import { criticalPath, physicalLimitSteps, type ClusterShape, type CriticalPath } from './critical-path.js';

type Service = keyof RequestLatency;

/** Calls the run needs `units` times, each time `reads` and `writes` to one service. */
export interface FewestCalls {
  what: string;
  units: number;
  service: Service;
  reads: number;
  writes: number;
}

/**
 * Kinds whose resources cost no call of their own: the cloud makes them inside another call
 * (ports of load balancer VIPs, router interfaces and gateways, floating IPs; a load balancer's
 * tree; Neutron's default rules) or they are counted with another kind (servers' ports, pools'
 * members, the rules' bulk creates).
 */
const madeByOtherCalls = new Set([
  'network ports',
  'network securityGroupRules',
  'load-balancer listeners',
  'load-balancer healthmonitors',
  'load-balancer members',
]);

/** The fewest calls that make `created` (`<service> <kind>` to how many the run made, as inventoryDelta gives it) for `clusters` clusters on `profile`'s cloud. */
function fewestCalls(created: [string, number][], clusters: number, profile: CloudProfile): FewestCalls[] {
  const made = (key: string) => Math.max(0, created.find(([kind]) => kind === key)?.[1] ?? 0);
  // Zed's Neutron takes no tags in a create body: one more PUT per tagged resource.
  const tag = profile.neutron?.tagCreation ? 0 : 1;
  const tags = tag > 0 ? ', tags' : '';
  /** Kinds counted by a row, so whatever else the run made shows up below. */
  const counted = new Set(madeByOtherCalls);
  const row = (kind: string, what: string, service: Service, reads: number, writes: number, units = made(kind)): FewestCalls => {
    counted.add(kind);
    return { what, units, service, reads, writes };
  };
  const rows: FewestCalls[] = [
    row('network networks', `network: create${tags}`, 'network', 0, 1 + tag),
    row('network subnets', `subnet: create${tags}`, 'network', 0, 1 + tag),
    row('network routers', `router: create with its gateway${tags}, add the subnet`, 'network', 0, 2 + tag),
    row('network securityGroups', `security group: create${tags}`, 'network', 0, 1 + tag),
    // One bulk create takes rules of several groups: a cluster's rules need one once its groups exist.
    row('network securityGroups', "a cluster's security group rules: one bulk create", 'network', 0, 1, Math.min(clusters, made('network securityGroups'))),
    row('network floatingIps', `floating IP: create on its port${tags}`, 'network', 0, 1 + tag),
    row('compute servers', `server's port: create${tags}`, 'network', 0, 1 + tag),
    row('compute servers', 'server: create, one read seeing it ACTIVE', 'compute', 1, 1),
    row('load-balancer loadbalancers', 'load balancer: one fully populated create, one read seeing it ACTIVE', 'load-balancer', 1, 1),
    row(
      'load-balancer pools',
      'pool: its members in one batch, one read seeing the load balancer ACTIVE again',
      'load-balancer',
      1,
      1,
      Math.min(made('load-balancer pools'), made('load-balancer members')),
    ),
    row('image images', 'image: create, upload', 'image', 0, 2),
  ];
  // Whatever else the run made cost at least its create; named, so a new kind shows up in the output.
  for (const [key, count] of created) {
    const service = key.slice(0, key.indexOf(' '));
    if (count > 0 && !counted.has(key) && service in profile.latency && service !== 'identity')
      rows.push({ what: `${key}: a create each (not modelled)`, units: count, service: service as Service, reads: 0, writes: 1 });
  }
  return rows.filter((candidate) => candidate.units > 0);
}

/** Milliseconds a row's calls hold the front's slots, all units together. */
export function cloudMs(row: FewestCalls, profile: CloudProfile): number {
  const { read, write } = profile.latency[row.service];
  return row.units * (row.reads * read + row.writes * write);
}

export interface FleetLimit {
  fewest: FewestCalls[];
  /** The calls in `fewest`, all units. */
  calls: number;
  /** The fewest calls' time in the cloud spread over the front's slots. */
  throughputMs: number;
  /** One cluster's dependent chain (figure 1's physical limit for the shape). */
  chain: CriticalPath;
  limitMs: number;
  boundBy: 'throughput' | 'chain';
}

/** The limit of `clusters` clusters of `shape` that made `created`, on a cloud serving `maxInFlight` requests at once. */
export function fleetLimit(profile: CloudProfile, shape: ClusterShape, created: [string, number][], clusters: number, maxInFlight: number): FleetLimit {
  const fewest = fewestCalls(created, clusters, profile);
  const calls = fewest.reduce((sum, row) => sum + row.units * (row.reads + row.writes), 0);
  const throughputMs = fewest.reduce((sum, row) => sum + cloudMs(row, profile), 0) / maxInFlight;
  const chain = criticalPath(physicalLimitSteps(profile, shape));
  const boundBy = throughputMs > chain.totalMs ? 'throughput' : 'chain';
  return { fewest, calls, throughputMs, chain, limitMs: Math.max(throughputMs, chain.totalMs), boundBy };
}
