/**
 * A load balancer's listeners, pools and health monitors, one of each per
 * port, for the API and the ingress load balancers alike.
 *
 * The load balancer is created fully populated: its listeners, pools and
 * monitors come in the same request and turn ACTIVE in its one provisioning
 * transition (CAPO creates them one by one, a wait each). Where a cloud
 * refuses that, or a child is missing later, children are created one per
 * pass, each after the load balancer is ACTIVE again, since Octavia refuses
 * a second change while it is PENDING_UPDATE. Some clouds accept the tree
 * and never finish it (ministack's Zed: the load balancer turns ACTIVE, its
 * children stay PENDING_CREATE and immutable): such a child is deleted and
 * made again one by one, and the cloud gets no more trees from this process.
 */
import type { CreateListenerInGraph, LoadBalancer } from '../../openstack/index.js';
import { loadBalancerPortName } from '../../capo/names.js';
import type { ReconcilePass } from '../reconcile-pass.js';
import { setOwned } from '../owned.js';
import type { ResourceActuator } from '../resource/actuator.js';
import { healthMonitorActuator } from '../resource/health-monitor.js';
import { listenerActuator } from '../resource/listener.js';
import { poolActuator } from '../resource/pool.js';
import type { ClusterContext } from './context.js';
import { loadBalancerSettleMs, owned } from './load-balancer-shared.js';

/** What a load balancer serves: a listener, its default pool and a TCP monitor per port. */
export interface PortPlan {
  lbName: string;
  ports: number[];
  allowedCidrs?: string[];
  monitor: { delay?: number; timeout?: number; maxRetries?: number; maxRetriesDown?: number };
  /** The amphora provider has no SOURCE_IP_PORT; OVN has nothing else. */
  provider?: string | null;
}

interface ListenerChain extends PortPlan {
  /** Prepended to the owned-resource roles: '' for the API load balancer, 'ingress/' for the ingress one. */
  prefix: string;
  lb: LoadBalancer;
  /** The load balancer was read from the cloud in this pass (not taken from the verified memory). */
  lbFresh: boolean;
}

/** Each port's listener, pool and monitor in Octavia's fields, for the fully populated create and the one-by-one path alike. */
function portObjects(context: ClusterContext, plan: PortPlan) {
  const tags = context.spec.tags ? { tags: context.spec.tags } : {};
  return plan.ports.map((port) => {
    const name = loadBalancerPortName(plan.lbName, port);
    return {
      port,
      listener: { name, protocol: 'TCP' as const, protocol_port: port, ...(plan.allowedCidrs ? { allowed_cidrs: plan.allowedCidrs } : {}), ...tags },
      pool: { name, protocol: 'TCP' as const, lb_algorithm: plan.provider === 'ovn' ? ('SOURCE_IP_PORT' as const) : ('ROUND_ROBIN' as const), ...tags },
      monitor: {
        name,
        type: 'TCP' as const,
        delay: plan.monitor.delay ?? 10,
        timeout: plan.monitor.timeout ?? 5,
        max_retries: plan.monitor.maxRetries ?? 5,
        max_retries_down: plan.monitor.maxRetriesDown ?? 3,
        ...tags,
      },
    };
  });
}

/** The whole tree for the load balancer's create, so Octavia builds it in one provisioning transition; none for a cloud known to leave it unfinished. */
export function treeFor(context: ClusterContext, plan: PortPlan): { listeners?: CreateListenerInGraph[] } {
  if (context.cloud.findings.fullyPopulatedChildrenStayPending) return {};
  return { listeners: portObjects(context, plan).map(({ listener, pool, monitor }) => ({ ...listener, default_pool: { ...pool, healthmonitor: monitor } })) };
}

/**
 * Records the listeners and pools a fully populated create made, by port, so
 * later passes read them by ID, and keeps them as that answer showed them
 * (ReconcilePass.seenCreated): the status tree read when the load balancer is
 * first found ACTIVE vouches for them (vouchForTree). Octavia's answer shows
 * no monitor (Zed gives the pool `healthmonitor: null`): that tree names it.
 */
export async function recordFullyPopulated(pass: ReconcilePass, prefix: string, lb: LoadBalancer): Promise<void> {
  // A load balancer created alone lists no listeners, or (other clouds) IDs only.
  const listeners = ((lb.listeners ?? []) as { id: string; protocol_port?: number }[]).filter(
    (listener): listener is { id: string; protocol_port: number } => typeof listener.protocol_port === 'number',
  );
  const pools = (lb.pools ?? []) as { id: string; listeners?: { id: string }[] }[];
  if (listeners.length === 0) return;
  const made = listeners.flatMap((listener) => {
    const pool = pools.find((candidate) => candidate.listeners?.some((reference) => reference.id === listener.id));
    return [
      { role: `${prefix}listener/${listener.protocol_port}`, resource: listener },
      ...(pool ? [{ role: `${prefix}pool/${listener.protocol_port}`, resource: pool }] : []),
    ];
  });
  await pass.record((status) => {
    for (const { role, resource } of made) setOwned(status, role, resource.id);
  });
  for (const { role, resource } of made) pass.seenCreated(role, resource);
}

/** Listener, pool and health monitor per port, one change per pass; true once all exist and the load balancer settled. */
export async function ensureListeners(context: ClusterContext, chain: ListenerChain): Promise<boolean> {
  const { pass, cloud } = context;
  const octavia = cloud.clients.octavia;
  const { prefix, lb } = chain;
  const ports = portObjects(context, { ...chain, provider: lb.provider });
  readChildrenAhead(context, chain, ports);
  let lbChanged = false;
  for (const objects of ports) {
    const role = (kind: string) => `${prefix}${kind}/${objects.port}`;
    const listener: ChildOutcome = await ensureChild(context, chain, role('listener'), lbChanged, listenerActuator(octavia), {
      ...objects.listener,
      loadbalancer_id: lb.id,
    });
    lbChanged ||= listener.changed;
    if (!listener.readyId) return false;
    const pool: ChildOutcome = await ensureChild(context, chain, role('pool'), lbChanged, poolActuator(octavia), {
      ...objects.pool,
      listener_id: listener.readyId,
      loadbalancer_id: lb.id,
    });
    lbChanged ||= pool.changed;
    if (!pool.readyId) return false;
    const monitor: ChildOutcome = await ensureChild(context, chain, role('healthmonitor'), lbChanged, healthMonitorActuator(octavia), {
      ...objects.monitor,
      pool_id: pool.readyId,
      loadbalancer_id: lb.id,
    });
    lbChanged ||= monitor.changed;
    if (!monitor.readyId) return false;
  }
  if (lbChanged) {
    pass.wait({
      waitingFor: `load balancer ${lb.id} to apply its listeners, pools and monitors`,
      requeueAfterMs: loadBalancerSettleMs,
      transition: { kind: 'load balancer change', begins: true },
    });
    return false;
  }
  return true;
}

/**
 * Starts the reads of every child whose parent is recorded, all at once: the
 * listener, pool and monitor of a fresh fully populated create are then read
 * in the time of one call once it is ACTIVE, not three (the monitor, whose ID
 * Octavia's answer leaves out, is looked up by name alongside).
 */
function readChildrenAhead(context: ClusterContext, chain: ListenerChain, ports: ReturnType<typeof portObjects>): void {
  const { pass, cloud } = context;
  const octavia = cloud.clients.octavia;
  const recorded = owned(pass);
  for (const objects of ports) {
    const role = (kind: string) => `${chain.prefix}${kind}/${objects.port}`;
    const [listenerId, poolId] = [recorded[role('listener')], recorded[role('pool')]];
    pass.readAhead(role('listener'), listenerActuator(octavia), { recordedId: listenerId, desired: { ...objects.listener, loadbalancer_id: chain.lb.id } });
    if (listenerId === undefined) continue;
    pass.readAhead(role('pool'), poolActuator(octavia), {
      recordedId: poolId,
      desired: { ...objects.pool, listener_id: listenerId, loadbalancer_id: chain.lb.id },
    });
    if (poolId === undefined) continue;
    pass.readAhead(role('healthmonitor'), healthMonitorActuator(octavia), {
      recordedId: recorded[role('healthmonitor')],
      desired: { ...objects.monitor, pool_id: poolId, loadbalancer_id: chain.lb.id },
    });
  }
}

interface ChildOutcome {
  /** The child's ID once it exists and is ready. */
  readyId?: string;
  /** The load balancer is busy with a change this call sent. */
  changed: boolean;
}

/**
 * One child of the load balancer, unless an earlier child of this pass
 * changed the load balancer (it is PENDING_UPDATE now) and this one still
 * needs a call.
 *
 * Octavia marks a child ACTIVE before its load balancer, so a child still
 * PENDING_CREATE under a load balancer read ACTIVE before it will stay so:
 * a fully populated create the cloud did not finish. Such a child refuses
 * every change but a DELETE; once it is gone the engine makes it again.
 */
async function ensureChild<Desired extends { name: string }, Child extends { id: string; provisioning_status: string }>(
  context: ClusterContext,
  chain: ListenerChain,
  role: string,
  lbChanged: boolean,
  actuator: ResourceActuator<Desired, Child>,
  desired: Desired,
): Promise<ChildOutcome> {
  const { pass } = context;
  const lbRole = `${chain.prefix}loadbalancer`;
  const recordedId = owned(pass)[role];
  if (lbChanged && recordedId === undefined) return { changed: false };
  const result = await pass.ensure(role, actuator, { recordedId, desired, record: (status, id) => setOwned(status, role, id) });
  if (result.found === 'created') {
    // From here the load balancer's own status says when the child is done.
    pass.invalidate(lbRole);
    pass.trust(role, result.resource);
    return { readyId: result.ready ? result.resource.id : undefined, changed: true };
  }
  if (result.ready) return { readyId: result.resource.id, changed: false };
  // The next pass judges the child against a fresh read of its load balancer.
  pass.invalidate(lbRole);
  if (lbChanged || !chain.lbFresh || result.resource.provisioning_status !== 'PENDING_CREATE') return { changed: false };
  context.cloud.findings.fullyPopulatedChildrenStayPending = true;
  await actuator.delete(result.resource);
  return { changed: true };
}
