/**
 * What a cluster needs from its cloud before anything is created: the images
 * and flavors its servers boot from, its external network, Octavia, and how
 * many of each quota-bound resource it will create. Derived from the
 * v1beta2 (storage) specs of an OpenStackCluster and its machines.
 */
import type { z } from 'zod';
import { openStackClusterSpec } from '../api/infrastructure/v1beta2/openstackcluster.js';
import { openStackMachineSpec } from '../api/infrastructure/v1beta2/openstackmachine.js';
import { desiredRules, type RuleContext } from '../capo/security-group-rules.js';
import type { SecurityGroupRole } from '../capo/names.js';

/** CAPO's ImageParam after defaulting; ORC image references are checked by ORC, not here. */
export type ImageRequirement = { id: string } | { filter: { name?: string; tags?: string[] } };

export type FlavorReference = { id: string } | { name: string };

/** A flavor and how many servers boot with it, so cores and RAM follow from the flavor's size. */
export type FlavorRequirement = FlavorReference & { servers: number };

/** What the cluster will create, for quota headroom. Cores and RAM come from `flavors`, whose sizes only the cloud knows. */
export interface Demand {
  instances: number;
  volumes: number;
  volumeGiB: number;
  networks: number;
  subnets: number;
  routers: number;
  ports: number;
  securityGroups: number;
  securityGroupRules: number;
  floatingIps: number;
  loadBalancers: number;
}

export interface PreflightRequirements {
  images: ImageRequirement[];
  flavors: FlavorRequirement[];
  /** undefined: discover (exactly one external network must exist); null: external network disabled. */
  externalNetwork: { id: string } | { filter: Record<string, unknown> } | null | undefined;
  /** Octavia must be in the catalog and answer. */
  loadBalancer: boolean;
  demand: Demand;
}

type ClusterSpec = z.output<typeof openStackClusterSpec>;
type MachineSpec = z.output<typeof openStackMachineSpec>;
type ManagedSecurityGroups = NonNullable<ClusterSpec['managedSecurityGroups']>;

/** CAPO's default apiServer.port. */
const defaultApiServerPort = 6443;

/** Requirements of an OpenStackCluster spec (v1beta2 storage JSON) plus its machines' specs; throws on an invalid spec. */
export function requirementsOf(clusterSpec: unknown, machineSpecs: unknown[]): PreflightRequirements {
  const cluster = parseClusterSpec(clusterSpec, 'OpenStackCluster spec');
  const machines = machineSpecs.map((spec, index) => parseMachineSpec(spec, `machine spec ${index + 1}`));
  const bastion = cluster.bastion?.enabled === true ? cluster.bastion.spec : undefined;
  const servers = bastion === undefined ? machines : [...machines, bastion];
  const externalNetwork = externalNetworkOf(cluster);
  const loadBalancer = cluster.apiServer?.managedLoadBalancer?.enabled === true;
  return {
    images: distinct(servers.flatMap(imageOf)),
    flavors: flavorsOf(servers),
    externalNetwork,
    loadBalancer,
    demand: demandOf(cluster, servers, { bastion: bastion !== undefined, external: externalNetwork !== null, loadBalancer }),
  };
}

/** Throws an error naming `what` and the first invalid fields. */
export function parseClusterSpec(value: unknown, what: string): ClusterSpec {
  return parseSpec(openStackClusterSpec, value, what);
}

export function parseMachineSpec(value: unknown, what: string): MachineSpec {
  return parseSpec(openStackMachineSpec, value, what);
}

function parseSpec<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.slice(0, 3).map((issue) => `${issue.path.length === 0 ? '(spec)' : issue.path.join('.')}: ${issue.message}`);
  const more = result.error.issues.length > 3 ? ` (+${result.error.issues.length - 3} more)` : '';
  throw new Error(`${what} is not valid: ${issues.join('; ')}${more}`);
}

function externalNetworkOf(cluster: ClusterSpec): PreflightRequirements['externalNetwork'] {
  if (cluster.enableExternalNetwork === false) return null;
  const param = cluster.externalNetwork;
  if (param?.id !== undefined) return { id: param.id };
  if (param?.filter !== undefined) return { filter: param.filter as Record<string, unknown> };
  return undefined;
}

function imageOf(server: MachineSpec): ImageRequirement[] {
  const { id, filter } = server.image;
  if (id !== undefined) return [{ id }];
  if (filter === undefined) return [];
  return [{ filter: { ...(filter.name === undefined ? {} : { name: filter.name }), ...(filter.tags === undefined ? {} : { tags: filter.tags }) } }];
}

function flavorOf(server: MachineSpec): FlavorReference | undefined {
  const { id, filter } = server.flavor;
  if (id !== undefined) return { id };
  return filter?.name === undefined ? undefined : { name: filter.name };
}

function flavorsOf(servers: MachineSpec[]): FlavorRequirement[] {
  const byKey = new Map<string, FlavorRequirement>();
  for (const server of servers) {
    const flavor = flavorOf(server);
    if (flavor === undefined) continue;
    const key = JSON.stringify(flavor);
    const known = byKey.get(key);
    if (known === undefined) byKey.set(key, { ...flavor, servers: 1 });
    else known.servers += 1;
  }
  return [...byKey.values()];
}

function distinct<T>(items: T[]): T[] {
  const byKey = new Map(items.map((item) => [JSON.stringify(item), item]));
  return [...byKey.values()];
}

interface Shape {
  bastion: boolean;
  external: boolean;
  loadBalancer: boolean;
}

function demandOf(cluster: ClusterSpec, servers: MachineSpec[], shape: Shape): Demand {
  const managedSubnets = cluster.managedSubnets ?? [];
  const networks = managedSubnets.length > 0 ? 1 : 0;
  // CAPO creates a router only for a network it creates, and only with an external network to route to.
  const routers = networks > 0 && shape.external && cluster.router === undefined ? 1 : 0;
  const routerInterfaces = networks > 0 && (routers > 0 || cluster.router !== undefined) ? 1 : 0;
  const volumes = servers.flatMap(volumesOf);
  const apiServerFloatingIp = shape.external && cluster.apiServer?.enableFloatingIP !== false && cluster.apiServer?.floatingIP === undefined;
  const bastionFloatingIp = shape.bastion && shape.external && cluster.bastion?.floatingIP === undefined;
  const poolFloatingIps = servers.filter((server) => server.floatingIPPoolRef !== undefined).length;
  const groups = cluster.managedSecurityGroups;
  return {
    instances: servers.length,
    volumes: volumes.length,
    volumeGiB: volumes.reduce((sum, size) => sum + size, 0),
    networks,
    subnets: managedSubnets.length,
    routers,
    // Every server port, the load balancer VIP, the router interface, and the network's DHCP port.
    ports: servers.reduce((sum, server) => sum + Math.max(1, server.ports?.length ?? 0), 0) + (shape.loadBalancer ? 1 : 0) + routerInterfaces + networks,
    securityGroups: groups === undefined ? 0 : shape.bastion ? 3 : 2,
    securityGroupRules: groups === undefined ? 0 : managedRuleCount(groups, cluster, shape.bastion),
    floatingIps: (apiServerFloatingIp ? 1 : 0) + (bastionFloatingIp ? 1 : 0) + poolFloatingIps,
    loadBalancers: shape.loadBalancer ? 1 : 0,
  };
}

/** Sizes in GiB of the Cinder volumes a server gets; local block devices use no volume quota. */
function volumesOf(server: MachineSpec): number[] {
  const root = server.rootVolume === undefined ? [] : [server.rootVolume.sizeGiB];
  const additional = (server.additionalBlockDevices ?? []).filter((device) => device.storage.type === 'Volume').map((device) => device.sizeGiB);
  return [...root, ...additional];
}

/**
 * The rules the reconciler will want in the managed groups, counted from the
 * same rule set it creates them from. Group IDs and the CIDRs of existing
 * subnets are not known yet; only how many there are matters here.
 */
function managedRuleCount(groups: ManagedSecurityGroups, cluster: ClusterSpec, bastion: boolean): number {
  const managedSubnets = cluster.managedSubnets ?? [];
  const subnetCidrs =
    managedSubnets.length > 0
      ? managedSubnets.map((subnet) => subnet.cidr).filter((cidr) => !cidr.includes(':'))
      : Array.from({ length: Math.max(1, cluster.subnets?.length ?? 0) }, (_, index) => `existing subnet ${index}`);
  const context: RuleContext = {
    groups: { controlplane: 'controlplane', worker: 'worker', ...(bastion ? { bastion: 'bastion' } : {}) },
    apiServerPorts: [cluster.apiServer?.port ?? defaultApiServerPort, ...(cluster.apiServer?.managedLoadBalancer?.additionalPorts ?? [])],
    subnetCidrs,
  };
  const roles: SecurityGroupRole[] = bastion ? ['controlplane', 'worker', 'bastion'] : ['controlplane', 'worker'];
  return roles.reduce((sum, role) => sum + desiredRules(role, groups, context).length, 0);
}
