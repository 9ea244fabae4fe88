/**
 * Quota headroom: for each resource the cluster creates, the project's limit
 * minus what it already uses must cover what the cluster needs. One call per
 * service (Nova and Cinder limits, Neutron quota details, Octavia's quota
 * plus a count of the project's load balancers, since Octavia reports no
 * usage). A limit of -1 is unlimited and passes; a limit the cloud does not
 * report, or a quota API the credentials may not read, is a warning.
 */
import type { Flavor, OpenStackError } from '../openstack/index.js';
import type { CheckContext } from './context.js';
import { findFlavor } from './flavors.js';
import { outcome, type Outcome } from './outcome.js';
import type { PreflightCheck } from './report.js';
import type { Demand, FlavorRequirement } from './requirements.js';

interface QuotaLine {
  /** As the message names it: `cores`, `RAM`, `floating IPs`. */
  resource: string;
  /** undefined: not reported; negative: unlimited. */
  limit: number | undefined;
  used: number;
  needed: number;
  unit?: 'MiB' | 'GiB';
  /** What to do besides raising the quota. */
  otherwise: string;
}

function quotaCheck(line: QuotaLine): PreflightCheck {
  const name = `quota ${line.resource}`;
  const amount = (n: number) => (line.unit === undefined ? String(n) : `${n} ${line.unit}`);
  const needs = `cluster needs ${amount(line.needed)}`;
  if (line.limit === undefined) {
    return { name, status: 'warn', message: `${line.resource} quota: not reported by the cloud, ${needs}; check it with \`openstack quota show\`` };
  }
  if (line.limit < 0) return { name, status: 'pass', message: `${line.resource} quota: unlimited, ${needs}` };
  const free = Math.max(0, line.limit - line.used);
  if (free >= line.needed) return { name, status: 'pass', message: `${line.resource} quota: ${amount(free)} of ${amount(line.limit)} free, ${needs}` };
  return { name, status: 'fail', message: `${line.resource} quota: ${amount(free)} free, ${needs} — raise the quota or ${line.otherwise}` };
}

/** Lines the cluster needs none of are left out: they cannot fail and would only lengthen the report. */
function quotaChecks(lines: QuotaLine[]): PreflightCheck[] {
  return lines.filter((line) => line.needed > 0).map(quotaCheck);
}

function unreadable(service: string, resources: string, error: OpenStackError): PreflightCheck {
  return {
    name: `quota ${service}`,
    status: 'warn',
    message: `${resources} quotas could not be read (${error.message}); check them with \`openstack quota show\``,
  };
}

function undecided(resource: string, reason: string): PreflightCheck {
  return { name: `quota ${resource}`, status: 'warn', message: `${resource} quota: ${reason}` };
}

/** Instances from Nova's limits; cores and RAM need the flavors' sizes too, from the shared flavor list. */
export async function computeQuota(
  context: CheckContext,
  flavors: FlavorRequirement[],
  flavorList: Promise<Outcome<Flavor[]>>,
  demand: Demand,
): Promise<PreflightCheck[]> {
  if (demand.instances === 0) return [];
  const [limits, listed] = await Promise.all([outcome(context.clients.nova.getLimits()), flavorList]);
  if (!limits.ok) return [unreadable('compute', 'Compute (Nova)', limits.error)];
  const absolute = limits.value;
  const instances: QuotaLine = {
    resource: 'instances',
    limit: absolute.maxTotalInstances,
    used: absolute.totalInstancesUsed ?? 0,
    needed: demand.instances,
    otherwise: 'run fewer machines',
  };
  const sized = listed.ok ? flavors.map((flavor) => ({ flavor: findFlavor(listed.value, flavor), servers: flavor.servers })) : [];
  if (!listed.ok || sized.some((entry) => entry.flavor === undefined)) {
    const reason = 'cannot tell what the cluster needs until every flavor is found';
    return [...quotaChecks([instances]), undecided('cores', reason), undecided('RAM', reason)];
  }
  const total = (size: (flavor: Flavor) => number) => sized.reduce((sum, entry) => sum + size(entry.flavor!) * entry.servers, 0);
  return quotaChecks([
    instances,
    { resource: 'cores', limit: absolute.maxTotalCores, used: absolute.totalCoresUsed ?? 0, needed: total((f) => f.vcpus), otherwise: 'use a smaller flavor' },
    {
      resource: 'RAM',
      limit: absolute.maxTotalRAMSize,
      used: absolute.totalRAMUsed ?? 0,
      needed: total((f) => f.ram),
      unit: 'MiB',
      otherwise: 'use a smaller flavor',
    },
  ]);
}

const neutronResources: { key: string; resource: string; demand: keyof Demand; otherwise: string }[] = [
  { key: 'network', resource: 'networks', demand: 'networks', otherwise: 'use an existing network (spec.network)' },
  { key: 'subnet', resource: 'subnets', demand: 'subnets', otherwise: 'use existing subnets (spec.subnets)' },
  { key: 'router', resource: 'routers', demand: 'routers', otherwise: 'use an existing router (spec.router)' },
  { key: 'port', resource: 'ports', demand: 'ports', otherwise: 'delete unused ports' },
  { key: 'security_group', resource: 'security groups', demand: 'securityGroups', otherwise: 'delete unused security groups' },
  { key: 'security_group_rule', resource: 'security group rules', demand: 'securityGroupRules', otherwise: 'delete unused security group rules' },
  {
    key: 'floatingip',
    resource: 'floating IPs',
    demand: 'floatingIps',
    otherwise: 'release unused floating IPs (or set spec.apiServer.enableFloatingIP: false)',
  },
];

/** Neutron's quota details (the quota_details extension): limit, use and reservations per resource. */
export async function networkQuota(context: CheckContext, demand: Demand): Promise<PreflightCheck[]> {
  if (neutronResources.every((entry) => demand[entry.demand] === 0)) return [];
  const details = await outcome(context.clients.neutron.getQuotas(context.scope.projectId));
  if (!details.ok) return [unreadable('network', 'Network (Neutron)', details.error)];
  return quotaChecks(
    neutronResources.map((entry) => {
      const usage = details.value[entry.key];
      return {
        resource: entry.resource,
        limit: usage?.limit,
        used: (usage?.used ?? 0) + (usage?.reserved ?? 0),
        needed: demand[entry.demand],
        otherwise: entry.otherwise,
      };
    }),
  );
}

export async function blockStorageQuota(context: CheckContext, demand: Demand): Promise<PreflightCheck[]> {
  if (demand.volumes === 0) return [];
  const limits = await outcome(context.clients.cinder.getLimits());
  if (!limits.ok) return [unreadable('block storage', 'Block storage (Cinder)', limits.error)];
  const absolute = limits.value;
  return quotaChecks([
    {
      resource: 'volumes',
      limit: absolute.maxTotalVolumes,
      used: absolute.totalVolumesUsed ?? 0,
      needed: demand.volumes,
      otherwise: 'boot from local disk (drop rootVolume)',
    },
    {
      resource: 'volume storage',
      limit: absolute.maxTotalVolumeGigabytes,
      used: absolute.totalGigabytesUsed ?? 0,
      needed: demand.volumeGiB,
      unit: 'GiB',
      otherwise: 'use smaller volumes',
    },
  ]);
}

/** Octavia has quotas but reports no usage, so the project's load balancers are counted. */
export async function loadBalancerQuota(context: CheckContext, demand: Demand): Promise<PreflightCheck[]> {
  if (demand.loadBalancers === 0) return [];
  const projectId = context.scope.projectId;
  const [quota, existing] = await Promise.all([
    outcome(context.clients.octavia.getQuota(projectId)),
    outcome(context.clients.octavia.listLoadBalancers({ project_id: projectId })),
  ]);
  if (!quota.ok) return [unreadable('load balancer', 'Load balancer (Octavia)', quota.error)];
  if (!existing.ok) return [unreadable('load balancer', 'Load balancer (Octavia)', existing.error)];
  const limit = quota.value.load_balancer ?? quota.value.loadbalancer ?? undefined;
  return quotaChecks([
    { resource: 'load balancers', limit, used: existing.value.length, needed: demand.loadBalancers, otherwise: 'delete unused load balancers' },
  ]);
}
