/**
 * Lookups, views and the provisioning state machine shared by Octavia's
 * routes. Every create, update or delete below a load balancer locks it
 * (PENDING_UPDATE, with the affected listeners and pool) until the amphora
 * driver "finishes" ctx.transitionDelayMs later, exactly one change at a time.
 */
import { SimulatorError, type SimulatorContext } from '../framework.js';
import { immutable, notFound, resourceNames } from './errors.js';
import { octaviaTime, requireReader, requireWriter, type Caller, type Kind, type OctaviaQuirks, type OctaviaStore, type Resource } from './model.js';

const quotaKeys: Record<Kind, string> = {
  loadbalancer: 'load_balancer',
  listener: 'listener',
  pool: 'pool',
  member: 'member',
  healthmonitor: 'health_monitor',
};

type Change = 'CREATE' | 'UPDATE' | 'DELETE';

/** One object's part in a transition; a deleted one leaves its store with what hangs off it (`removeResource`). */
export interface Changed {
  target: Resource;
  change: Change;
}

export class OctaviaState {
  constructor(
    readonly store: OctaviaStore,
    readonly ctx: SimulatorContext,
    readonly quirks: OctaviaQuirks = {},
  ) {}

  find(kind: Kind, id: string): Resource {
    const found = this.store[kind].get(id);
    if (!found) throw notFound(resourceNames[kind], id);
    return found;
  }

  /** Found first, then the caller's rights checked: a missing object is a 404 for anyone. */
  readable(kind: Kind, id: string, caller: Caller): Resource {
    const found = this.find(kind, id);
    requireReader(caller, found.projectId);
    return found;
  }

  writable(kind: Kind, id: string, caller: Caller): Resource {
    const found = this.find(kind, id);
    requireWriter(caller, found.projectId);
    return found;
  }

  loadBalancerOf(resource: Resource): Resource {
    return this.find('loadbalancer', resource.lbId);
  }

  listenersOfLb(lbId: string): Resource[] {
    return this.store.listener.ofLoadBalancer(lbId);
  }

  poolsOfLb(lbId: string): Resource[] {
    return this.store.pool.ofLoadBalancer(lbId);
  }

  /** Listeners using the pool as their default pool. */
  listenersOfPool(poolId: string): Resource[] {
    const pool = this.store.pool.get(poolId);
    return pool ? this.listenersOfLb(pool.lbId).filter((l) => l.attrs.default_pool_id === poolId) : [];
  }

  membersOfPool(poolId: string): Resource[] {
    return this.store.member.ofPool(poolId);
  }

  monitorOfPool(poolId: string): Resource | undefined {
    return this.store.healthmonitor.ofPool(poolId)[0];
  }

  /** check_quota_met: `count` more objects of this kind would take the project over its limit. */
  checkQuota(kind: Kind, projectId: string, count = 1): void {
    const used = this.store[kind].countInProject(projectId);
    if (used + count > this.ctx.quota(projectId, quotaKeys[kind])) {
      throw new SimulatorError(403, `Quota has been met for resources: ${resourceNames[kind]}`);
    }
  }

  /** The load balancer's own update/delete: LBPendingStateError unless it is in an allowed state. */
  lockLoadBalancer(lb: Resource, allowed = ['ACTIVE']): void {
    if (!allowed.includes(lb.provisioningStatus)) {
      throw new SimulatorError(409, `Invalid state ${lb.provisioningStatus} of loadbalancer resource ${lb.id}`);
    }
  }

  /** A child's change: the pool (for members and monitors) and then the load balancer must be ACTIVE. */
  lockParents(lb: Resource, pool?: Resource): void {
    if (pool && pool.provisioningStatus !== 'ACTIVE') throw immutable(resourceNames.pool, pool.id);
    if (lb.provisioningStatus !== 'ACTIVE') throw immutable(resourceNames.loadbalancer, lb.id);
  }

  private lockParentsOf(child: Resource): void {
    this.lockParents(this.loadBalancerOf(child), child.poolId === undefined ? undefined : this.find('pool', child.poolId));
  }

  /** What a change to `target` holds in PENDING_UPDATE: its load balancer, the listeners using its pool, and that pool. */
  private parentsOf(target: Resource): Resource[] {
    switch (target.kind) {
      case 'loadbalancer':
        return [];
      case 'listener':
        return [this.loadBalancerOf(target)];
      case 'pool':
        return [this.loadBalancerOf(target), ...this.listenersOfPool(target.id)];
      case 'member':
      case 'healthmonitor': {
        const pool = this.find('pool', target.poolId!);
        return [this.loadBalancerOf(pool), ...this.listenersOfPool(pool.id), pool];
      }
    }
  }

  /**
   * A new listener or pool of a load balancer, or member or monitor of a
   * pool, in the parent's project. It is stored but not yet in transition,
   * so that the caller can link it (a listener's default pool) first.
   */
  addChild(kind: Exclude<Kind, 'loadbalancer'>, parent: Resource, attrs: Record<string, unknown>, operatingStatus = 'OFFLINE'): Resource {
    const child: Resource = {
      kind,
      id: this.ctx.newId(),
      projectId: parent.projectId,
      lbId: parent.lbId,
      ...(parent.kind === 'pool' ? { poolId: parent.id } : {}),
      attrs,
      provisioningStatus: 'PENDING_CREATE',
      operatingStatus,
      createdAt: this.ctx.clock.now(),
      updatedAt: null,
    };
    this.store[kind].add(child);
    return child;
  }

  /**
   * A PUT on a child: `checks.unlocked` runs before its parents are locked and
   * `checks.locked` after. Each route keeps its own order because it decides
   * whether a bad request or a 409 (immutable parent) wins when both apply.
   */
  updateChild(child: Resource, attrs: Record<string, unknown>, checks: { unlocked?: () => void; locked?: () => void } = {}): void {
    checks.unlocked?.();
    this.lockParentsOf(child);
    checks.locked?.();
    child.attrs = attrs;
    this.transition(child, 'UPDATE');
  }

  /** A DELETE of a child: gone, with whatever hangs off it, once PENDING_DELETE is over. */
  deleteChild(child: Resource): void {
    this.lockParentsOf(child);
    this.transition(child, 'DELETE');
  }

  /**
   * Puts `target` into PENDING_<change> and its parents into PENDING_UPDATE;
   * after the transition delay the target is ACTIVE (or gone) and the parents
   * are ACTIVE again. A load balancer whose VIP port was deleted meanwhile is
   * left in ERROR instead (the driver plugs the port in last: PortNotFound),
   * as Octavia's revert flows leave it, and so is what was created with it.
   * `children`: objects created with the target in one request (a fully
   * populated load balancer), which end where the target ends.
   */
  transition(target: Resource, change: Change, children: readonly Resource[] = []): void {
    this.apply(this.parentsOf(target), [{ target, change }, ...children.map((child): Changed => ({ target: child, change: 'CREATE' }))]);
  }

  /**
   * A batch member update of `pool`: every member it creates, updates or
   * deletes in one transition, as the amphora driver applies the pool's new
   * member list in one go. Members it leaves alone keep their status.
   */
  transitionMembers(pool: Resource, changes: readonly Changed[]): void {
    this.apply([this.loadBalancerOf(pool), ...this.listenersOfPool(pool.id), pool], changes);
  }

  private apply(parents: readonly Resource[], changes: readonly Changed[]): void {
    const now = this.ctx.clock.now();
    for (const { target, change } of changes) {
      target.provisioningStatus = `PENDING_${change}`;
      if (change !== 'CREATE') target.updatedAt = now;
    }
    for (const parent of parents) {
      parent.provisioningStatus = 'PENDING_UPDATE';
      parent.updatedAt = now;
    }
    this.ctx.clock.after(this.ctx.transitionDelayMs, () => this.settle(parents, changes));
  }

  /** The driver's work done: what was deleted is gone, the rest ACTIVE (or ERROR, see `transition`). */
  private settle(parents: readonly Resource[], changes: readonly Changed[]): void {
    const done = this.ctx.clock.now();
    const [first] = changes;
    const failed =
      first?.change === 'CREATE' && first.target.kind === 'loadbalancer' && !this.ctx.peers.network?.getPort(first.target.attrs.vip_port_id as string);
    for (const { target, change } of changes) {
      if (change === 'DELETE') {
        this.removeResource(target);
        continue;
      }
      if (this.store[target.kind].get(target.id) !== target) continue;
      target.provisioningStatus = failed ? 'ERROR' : 'ACTIVE';
      target.updatedAt = done;
      if (target.kind === 'healthmonitor') target.operatingStatus = target.attrs.admin_state_up ? 'ONLINE' : 'OFFLINE';
    }
    for (const parent of parents) {
      if (this.store[parent.kind].get(parent.id) !== parent) continue;
      parent.provisioningStatus = 'ACTIVE';
      parent.updatedAt = done;
    }
  }

  /**
   * After a restart from a state file: every object saved in a PENDING_ state ends its
   * transition one delay on, as it would have (a load balancer whose VIP port is gone in ERROR,
   * an object PENDING_DELETE gone with what hangs off it).
   */
  resume(): void {
    const isPending = (r: Resource) => r.provisioningStatus.startsWith('PENDING_');
    // With the quirk, a fully populated load balancer's children stay PENDING_CREATE for good once it is ACTIVE.
    const stuckForGood = (r: Resource) =>
      this.quirks.fullyPopulatedChildrenStayPending &&
      r.kind !== 'loadbalancer' &&
      r.provisioningStatus === 'PENDING_CREATE' &&
      !isPending(this.loadBalancerOf(r));
    const pending = (Object.keys(this.store) as Kind[]).flatMap((kind) => [...this.store[kind].values()]).filter((r) => isPending(r) && !stuckForGood(r));
    if (pending.length === 0) return;
    this.ctx.clock.after(this.ctx.transitionDelayMs, () => {
      for (const target of pending) this.settle([], [{ target, change: target.provisioningStatus.slice('PENDING_'.length) as Change }]);
    });
  }

  /** A deleted object leaves its store with what hangs off it: a pool its members and monitor, a load balancer everything and the VIP port Octavia made. */
  private removeResource(target: Resource): void {
    if (target.kind === 'pool') return this.removePool(target);
    if (target.kind !== 'loadbalancer') return this.store[target.kind].delete(target.id);
    for (const pool of this.poolsOfLb(target.id)) this.removePool(pool);
    for (const listener of this.listenersOfLb(target.id)) this.store.listener.delete(listener.id);
    this.store.loadbalancer.delete(target.id);
    const portId = target.attrs.vip_port_id as string;
    if (target.vipOwned && this.ctx.peers.network?.getPort(portId)) this.ctx.peers.network.deletePort(portId);
  }

  /** Deletes a pool with its members and monitor, and takes it off its listeners. */
  private removePool(pool: Resource): void {
    for (const member of this.membersOfPool(pool.id)) this.store.member.delete(member.id);
    const monitor = this.monitorOfPool(pool.id);
    if (monitor) this.store.healthmonitor.delete(monitor.id);
    for (const listener of this.listenersOfPool(pool.id)) listener.attrs.default_pool_id = null;
    this.store.pool.delete(pool.id);
  }

  visibleTo(resource: Resource, caller: Caller): boolean {
    return caller.globalReader || resource.projectId === caller.projectId;
  }

  private base(r: Resource): Record<string, unknown> {
    return {
      id: r.id,
      ...r.attrs,
      project_id: r.projectId,
      tenant_id: r.projectId,
      provisioning_status: r.provisioningStatus,
      operating_status: r.operatingStatus,
      created_at: octaviaTime(r.createdAt),
      updated_at: r.updatedAt === null ? null : octaviaTime(r.updatedAt),
    };
  }

  view(r: Resource): Record<string, unknown> {
    const ids = (items: Resource[]) => items.map((i) => ({ id: i.id }));
    switch (r.kind) {
      case 'loadbalancer':
        return { ...this.base(r), listeners: ids(this.listenersOfLb(r.id)), pools: ids(this.poolsOfLb(r.id)) };
      case 'listener':
        return { ...this.base(r), loadbalancers: [{ id: r.lbId }], l7policies: [] };
      case 'pool': {
        const monitor = this.monitorOfPool(r.id);
        return {
          ...this.base(r),
          loadbalancers: [{ id: r.lbId }],
          listeners: ids(this.listenersOfPool(r.id)),
          members: ids(this.membersOfPool(r.id)),
          healthmonitor_id: monitor?.id ?? null,
        };
      }
      case 'member':
        return this.base(r);
      case 'healthmonitor':
        return { ...this.base(r), pools: [{ id: r.poolId }] };
    }
  }

  /** GET .../loadbalancers/{id}/status: the tree of statuses. */
  statusTree(lb: Resource): Record<string, unknown> {
    const status = (r: Resource) => ({ id: r.id, name: r.attrs.name, operating_status: r.operatingStatus, provisioning_status: r.provisioningStatus });
    const pool = (p: Resource) => {
      const monitor = this.monitorOfPool(p.id);
      return {
        ...status(p),
        ...(monitor ? { health_monitor: { ...status(monitor), type: monitor.attrs.type } } : {}),
        members: this.membersOfPool(p.id).map((m) => ({ ...status(m), address: m.attrs.address, protocol_port: m.attrs.protocol_port })),
      };
    };
    return {
      statuses: {
        loadbalancer: {
          ...status(lb),
          listeners: this.listenersOfLb(lb.id).map((l) => ({
            ...status(l),
            pools: this.poolsOfLb(lb.id)
              .filter((p) => l.attrs.default_pool_id === p.id)
              .map(pool),
          })),
        },
      },
    };
  }
}
