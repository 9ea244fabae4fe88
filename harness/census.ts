/**
 * What the reconciler holds in a simulated cloud, seen as a user of the
 * cloud sees it: everything carrying our owner tag, listed through the
 * OpenStack API with the identity the example cluster uses, and the
 * simulator's own inventory against a baseline taken before the run (which
 * also catches what the services create on our behalf, untagged: router
 * ports, load balancer VIP ports, security group rules).
 */
import { createServiceClients, loadCloud, OpenStackSession, type ServiceClients } from '../src/openstack/index.js';
import type { Simulator } from '../src/simulator/host.js';

/** The prefix of `capo-apiserver:owner=<uid>`, the tag adoption looks up. */
const ownerTagPrefix = 'capo-apiserver:owner=';

export const resourceKinds = [
  'networks',
  'subnets',
  'routers',
  'securityGroups',
  'floatingIps',
  'ports',
  'trunks',
  'servers',
  'loadBalancers',
  'listeners',
  'pools',
  'healthMonitors',
  'members',
  'images',
] as const;
export type ResourceKind = (typeof resourceKinds)[number];
export type ResourceCounts = Record<ResourceKind, number>;

export const noResources = Object.fromEntries(resourceKinds.map((kind) => [kind, 0])) as ResourceCounts;

interface Tagged {
  id: string;
  name?: string | null;
  tags?: readonly string[];
}

/** A name one owner holds more than once: what adoption exists to prevent. */
export interface Duplicate {
  kind: ResourceKind;
  name: string;
  owner: string;
  ids: string[];
}

export interface Census {
  counts: ResourceCounts;
  duplicates: Duplicate[];
}

/** Where each kind lives in its service's API, to pick its requests out of a session log. */
export const collectionPaths: Record<ResourceKind, string> = {
  networks: '/v2.0/networks',
  subnets: '/v2.0/subnets',
  routers: '/v2.0/routers',
  securityGroups: '/v2.0/security-groups',
  floatingIps: '/v2.0/floatingips',
  ports: '/v2.0/ports',
  trunks: '/v2.0/trunks',
  servers: '/servers',
  loadBalancers: '/lbaas/loadbalancers',
  listeners: '/lbaas/listeners',
  pools: '/lbaas/pools',
  healthMonitors: '/lbaas/healthmonitors',
  members: '/members',
  images: '/v2/images',
};

type Inventory = ReturnType<Simulator['inventory']>;

/** The identity of examples/ (project demo), as clouds.yaml entry `simulator` of the simulator. */
const exampleCloudName = 'simulator';

function ownerOf(resource: Tagged): string | undefined {
  return resource.tags?.find((tag) => tag.startsWith(ownerTagPrefix))?.slice(ownerTagPrefix.length);
}

function flatten(inventory: Inventory): Map<string, number> {
  const flat = new Map<string, number>();
  for (const [service, counts] of Object.entries(inventory)) {
    for (const [resource, count] of Object.entries(counts ?? {})) flat.set(`${service}.${resource}`, count);
  }
  return flat;
}

export class CloudCensus {
  private constructor(
    private readonly sim: Simulator,
    private readonly session: OpenStackSession,
    /** The example cluster's project, as the reconciler sees it. */
    readonly clients: ServiceClients,
    private readonly baseline: Map<string, number>,
  ) {}

  /**
   * Connects as the example's identity and takes the baseline. Neutron makes
   * a project's `default` security group on first need, as any user's first
   * `openstack security group list` does; it is made here so that it
   * belongs to the baseline rather than looking like something we left.
   */
  static async open(sim: Simulator): Promise<CloudCensus> {
    const session = await OpenStackSession.create(loadCloud({ cloudsYaml: sim.cloudsYaml(exampleCloudName), cloudName: exampleCloudName }));
    const clients = createServiceClients(session);
    await clients.neutron.listSecurityGroups();
    return new CloudCensus(sim, session, clients, flatten(sim.inventory()));
  }

  /** Every resource of ours by kind, and the names held twice. Faults must be off: a census does not retry a 409. */
  async ours(): Promise<Census> {
    const listed = await this.listOurs();
    const counts = {} as ResourceCounts;
    const duplicates: Duplicate[] = [];
    for (const kind of resourceKinds) {
      const held = new Map<string, Duplicate>();
      for (const resource of listed[kind]) {
        const owner = ownerOf(resource);
        const name = resource.name ?? '';
        const key = JSON.stringify([name, owner]);
        const entry = held.get(key) ?? { kind, name, owner: owner!, ids: [] };
        entry.ids.push(resource.id);
        held.set(key, entry);
      }
      counts[kind] = [...held.values()].reduce((sum, entry) => sum + entry.ids.length, 0);
      duplicates.push(...[...held.values()].filter((entry) => entry.ids.length > 1));
    }
    return { counts, duplicates };
  }

  /** The IDs of every resource of ours, by kind. Faults must be off. */
  async ourIds(): Promise<Record<ResourceKind, string[]>> {
    const listed = await this.listOurs();
    return Object.fromEntries(resourceKinds.map((kind) => [kind, listed[kind].map((resource) => resource.id)])) as unknown as Record<ResourceKind, string[]>;
  }

  /** Every resource carrying an owner tag, by kind. */
  private async listOurs(): Promise<Record<ResourceKind, readonly Tagged[]>> {
    const { neutron, nova, octavia, glance } = this.clients;
    const pools = await octavia.listPools();
    const members = (await Promise.all(pools.map((pool) => octavia.listMembers(pool.id)))).flat();
    const listed: Record<ResourceKind, readonly Tagged[]> = {
      networks: await neutron.listNetworks(),
      subnets: await neutron.listSubnets(),
      routers: await neutron.listRouters(),
      securityGroups: await neutron.listSecurityGroups(),
      // A floating IP has no name; the reconciler puts it in the description.
      floatingIps: (await neutron.listFloatingIps()).map((fip) => ({ ...fip, name: fip.description })),
      ports: await neutron.listPorts(),
      trunks: await neutron.listTrunks(),
      servers: await nova.listServers(),
      loadBalancers: await octavia.listLoadBalancers(),
      listeners: await octavia.listListeners(),
      pools,
      healthMonitors: await octavia.listHealthMonitors(),
      members,
      images: await glance.listImages(),
    };
    return Object.fromEntries(resourceKinds.map((kind) => [kind, listed[kind].filter((resource) => ownerOf(resource) !== undefined)])) as unknown as Record<
      ResourceKind,
      readonly Tagged[]
    >;
  }

  /** Simulator inventory minus the baseline, e.g. `{"network.ports": 10}`; entries that did not change are left out. */
  sinceBaseline(): Record<string, number> {
    const now = flatten(this.sim.inventory());
    const changes: Record<string, number> = {};
    for (const key of new Set([...now.keys(), ...this.baseline.keys()])) {
      const delta = (now.get(key) ?? 0) - (this.baseline.get(key) ?? 0);
      if (delta !== 0) changes[key] = delta;
    }
    return changes;
  }

  close(): void {
    this.session.close();
  }
}
