/**
 * Neutron's database: every object by id (in creation order, which is the
 * order Neutron lists them in without a sort key), plus what all resource
 * modules share: timestamps and revisions, quotas, visibility, MACs.
 */
import { randomInt } from 'node:crypto';
import type { SimulatorContext } from '../framework.js';
import { parseSnapshot, refill } from '../snapshots.js';
import { notFound, overQuota, type NeutronError } from './errors.js';
import type { Caller, FloatingIp, Network, Port, Router, SecurityGroup, SecurityGroupRule, Standard, Subnet, Trunk } from './model.js';
import { neutronSnapshotSchema, type NeutronSnapshot } from './snapshot.js';

/** neutron.conf [quotas] defaults; ministack raises the demo project's (the host seeds those). */
export const DEFAULT_QUOTAS: Record<QuotaResource, number> = {
  network: 100,
  subnet: 100,
  port: 500,
  router: 10,
  floatingip: 50,
  security_group: 10,
  security_group_rule: 100,
};

export type QuotaResource = 'network' | 'subnet' | 'port' | 'router' | 'floatingip' | 'security_group' | 'security_group_rule';
export const QUOTA_RESOURCES = Object.keys(DEFAULT_QUOTAS) as QuotaResource[];

/** What a simulated Neutron has beyond ministack's Zed. */
export interface NeutronOptions {
  /** The `tag-creation` extension (Neutron 2024.1 on): every taggable resource takes its tags in the create body. */
  tagCreation?: boolean;
}

/** Timestamps as Neutron's standard attributes render them: seconds, UTC, 'Z'. */
const stamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export class Store {
  readonly networks = new Map<string, Network>();
  readonly subnets = new Map<string, Subnet>();
  readonly ports = new Map<string, Port>();
  readonly routers = new Map<string, Router>();
  readonly securityGroups = new Map<string, SecurityGroup>();
  readonly rules = new Map<string, SecurityGroupRule>();
  /** The rules of each group, in creation order: a group's view shows them, and a list of groups renders every group. */
  private readonly rulesByGroup = new Map<string, Map<string, SecurityGroupRule>>();
  readonly floatingIps = new Map<string, FloatingIp>();
  readonly trunks = new Map<string, Trunk>();
  private readonly usedVnis = new Set<number>();
  private standardAttrIds = 0;

  constructor(
    readonly ctx: SimulatorContext,
    readonly options: NeutronOptions = {},
  ) {}

  now(): string {
    return stamp(this.ctx.clock.now());
  }

  /** Every object, for a state file; live objects, so it is serialised before anything changes. */
  snapshot(): NeutronSnapshot {
    return {
      networks: [...this.networks.values()],
      subnets: [...this.subnets.values()],
      ports: [...this.ports.values()],
      routers: [...this.routers.values()],
      securityGroups: [...this.securityGroups.values()],
      rules: [...this.rules.values()],
      floatingIps: [...this.floatingIps.values()],
      trunks: [...this.trunks.values()],
      standardAttrIds: this.standardAttrIds,
    };
  }

  /** Replaces everything (the seeded `public` network included) with a snapshot's objects, and rebuilds the indexes. */
  restore(snapshot: unknown): void {
    const data = parseSnapshot('neutron', neutronSnapshotSchema, snapshot);
    refill(this.networks, data.networks);
    refill(this.subnets, data.subnets);
    refill(this.ports, data.ports);
    refill(this.routers, data.routers);
    refill(this.securityGroups, data.securityGroups);
    refill(this.floatingIps, data.floatingIps);
    refill(this.trunks, data.trunks);
    this.rules.clear();
    this.rulesByGroup.clear();
    for (const rule of data.rules) this.addRule(rule);
    this.usedVnis.clear();
    for (const network of data.networks) if (network.networkType === 'vxlan' && network.segmentationId !== null) this.usedVnis.add(network.segmentationId);
    this.standardAttrIds = data.standardAttrIds;
  }

  nextStandardAttrId(): number {
    return ++this.standardAttrIds;
  }

  standard(projectId: string, description: string, tags: string[], revision: number): Standard {
    const now = this.now();
    return { id: this.ctx.newId(), projectId, description, tags: [...tags], createdAt: now, updatedAt: now, revision };
  }

  /** Every committed change bumps the revision and the update time. */
  touch(obj: { revision: number; updatedAt: string }): void {
    obj.revision += 1;
    obj.updatedAt = this.now();
  }

  addRule(rule: SecurityGroupRule): void {
    this.rules.set(rule.id, rule);
    const ofGroup = this.rulesByGroup.get(rule.securityGroupId) ?? new Map<string, SecurityGroupRule>();
    this.rulesByGroup.set(rule.securityGroupId, ofGroup.set(rule.id, rule));
  }

  removeRule(rule: SecurityGroupRule): void {
    this.rules.delete(rule.id);
    const ofGroup = this.rulesByGroup.get(rule.securityGroupId);
    ofGroup?.delete(rule.id);
    if (ofGroup?.size === 0) this.rulesByGroup.delete(rule.securityGroupId);
  }

  rulesOf(groupId: string): SecurityGroupRule[] {
    return [...(this.rulesByGroup.get(groupId)?.values() ?? [])];
  }

  quotaLimit(projectId: string, resource: QuotaResource): number {
    return this.ctx.quota(projectId, resource, DEFAULT_QUOTAS[resource]);
  }

  usage(projectId: string, resource: QuotaResource): number {
    const count = (map: Map<string, { projectId: string }>) => [...map.values()].filter((o) => o.projectId === projectId).length;
    switch (resource) {
      case 'network':
        return count(this.networks);
      case 'subnet':
        return count(this.subnets);
      case 'port':
        return count(this.ports);
      case 'router':
        return count(this.routers);
      case 'floatingip':
        return count(this.floatingIps);
      case 'security_group':
        return count(this.securityGroups);
      case 'security_group_rule':
        return count(this.rules);
    }
  }

  /** Raises OverQuota when `adding` more would exceed the project's limit (objects Neutron owns have no project and no quota). */
  checkQuota(projectId: string, resource: QuotaResource, adding = 1): void {
    if (!projectId) return;
    const limit = this.quotaLimit(projectId, resource);
    // Unlimited (stored as Infinity): nothing to count, and counting is a walk over every object of the kind.
    if (limit === Infinity) return;
    if (this.usage(projectId, resource) + adding > limit) throw overQuota(resource);
  }

  /** Neutron's base_mac fa:16:3e:00:00:00 with three random octets, unique here. */
  newMac(): string {
    // One walk per address tried, without building a set of all of them: a drawn address is almost never taken.
    const taken = (mac: string) => {
      for (const port of this.ports.values()) if (port.macAddress === mac) return true;
      return false;
    };
    for (;;) {
      const tail = [randomInt(256), randomInt(256), randomInt(256)].map((b) => b.toString(16).padStart(2, '0'));
      const mac = `fa:16:3e:${tail.join(':')}`;
      if (!taken(mac)) return mac;
    }
  }

  /** A VNI from ministack's vni_ranges 1:10000. */
  allocateVni(): number {
    for (let vni = 1; vni <= 10000; vni += 1) {
      if (!this.usedVnis.has(vni)) {
        this.usedVnis.add(vni);
        return vni;
      }
    }
    throw new Error('no free VXLAN VNI');
  }

  releaseVni(network: Network): void {
    if (network.networkType === 'vxlan' && network.segmentationId !== null) this.usedVnis.delete(network.segmentationId);
  }

  // Visibility, as the legacy policies and the RBAC query filters decide it.

  canSeeNetwork(caller: Caller, n: Network): boolean {
    return caller.isAdmin || n.projectId === caller.projectId || n.shared || n.external;
  }

  canSeeSubnet(caller: Caller, s: Subnet): boolean {
    if (caller.isAdmin || s.projectId === caller.projectId) return true;
    return this.networks.get(s.networkId)?.shared ?? false;
  }

  /** Owners see their ports; network owners see every port on their networks. */
  canSeePort(caller: Caller, p: Port): boolean {
    if (caller.isAdmin || p.projectId === caller.projectId) return true;
    return this.networks.get(p.networkId)?.projectId === caller.projectId;
  }

  owns(caller: Caller, o: { projectId: string }): boolean {
    return caller.isAdmin || o.projectId === caller.projectId;
  }

  /** A security group rule is visible to its owner and to the group's owner. */
  canSeeRule(caller: Caller, r: SecurityGroupRule): boolean {
    if (this.owns(caller, r)) return true;
    return this.securityGroups.get(r.securityGroupId)?.projectId === caller.projectId;
  }

  /** Neutron answers what the caller may not see as if it did not exist. */
  private visible<T>(items: Map<string, T>, id: string, canSee: (item: T) => boolean, missing: (id: string) => NeutronError): T {
    const item = items.get(id);
    if (!item || !canSee(item)) throw missing(id);
    return item;
  }

  network(caller: Caller, id: string): Network {
    return this.visible(this.networks, id, (n) => this.canSeeNetwork(caller, n), notFound.network);
  }

  subnet(caller: Caller, id: string): Subnet {
    return this.visible(this.subnets, id, (s) => this.canSeeSubnet(caller, s), notFound.subnet);
  }

  port(caller: Caller, id: string): Port {
    return this.visible(this.ports, id, (p) => this.canSeePort(caller, p), notFound.port);
  }

  router(caller: Caller, id: string): Router {
    return this.visible(this.routers, id, (r) => this.owns(caller, r), notFound.router);
  }

  securityGroup(caller: Caller, id: string): SecurityGroup {
    return this.visible(this.securityGroups, id, (g) => this.owns(caller, g), notFound.securityGroup);
  }

  rule(caller: Caller, id: string): SecurityGroupRule {
    return this.visible(this.rules, id, (r) => this.canSeeRule(caller, r), notFound.securityGroupRule);
  }

  floatingIp(caller: Caller, id: string): FloatingIp {
    return this.visible(this.floatingIps, id, (f) => this.owns(caller, f), notFound.floatingIp);
  }

  trunk(caller: Caller, id: string): Trunk {
    return this.visible(this.trunks, id, (t) => this.owns(caller, t), notFound.trunk);
  }

  subnetsOf(networkId: string): Subnet[] {
    return [...this.subnets.values()].filter((s) => s.networkId === networkId);
  }

  portsOf(networkId: string): Port[] {
    return [...this.ports.values()].filter((p) => p.networkId === networkId);
  }

  trunkOfParent(portId: string): Trunk | undefined {
    return [...this.trunks.values()].find((t) => t.portId === portId);
  }

  trunkOfSubport(portId: string): Trunk | undefined {
    return [...this.trunks.values()].find((t) => t.subPorts.some((s) => s.port_id === portId));
  }
}
