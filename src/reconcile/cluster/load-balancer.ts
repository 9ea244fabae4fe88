/**
 * The API server endpoint: an Octavia load balancer with one listener, pool
 * and health monitor per port and a floating IP on its VIP, or, without a
 * load balancer, a floating IP or fixed IP the first control plane machine
 * takes. The endpoint lands in spec.controlPlaneEndpoint (only while unset,
 * as the Cluster API contract wants).
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
 * The floating IP goes on the VIP port, which Octavia makes with the load
 * balancer, so it is in place while the amphorae boot rather than after (CAPO
 * waits for ACTIVE); its ID is recorded at its create, so a retry finds it
 * instead of making another. At resync, and when a first build is found
 * ACTIVE, one read of the load balancer's status tree vouches for its
 * children (and at resync for itself) rather than a read of each.
 */
import { isIP } from 'node:net';
import { findCondition } from '../conditions.js';
import { poolMonitors, provisioningStatuses, type CreateListenerInGraph, type FloatingIp, type LoadBalancer } from '../../openstack/index.js';
import type { NeutronParam, SubnetFilter } from '../../capo/neutron-query.js';
import { resolveSubnet } from '../neutron-filters.js';
import type { JsonObject } from '../../storage/interface.js';
import { TerminalError } from '../runtime/controller.js';
import { apiLoadBalancerName, clusterResourceName, ingressLoadBalancerName, loadBalancerPortName } from '../../capo/names.js';
import type { ReconcilePass } from '../reconcile-pass.js';
import { metaOf } from '../objects.js';
import { ownedResources, setOwned } from '../owned.js';
import { absentOn404, type ResourceActuator } from '../resource/actuator.js';
import { findUserFloatingIp, floatingIpActuator, type FloatingIpDesired } from '../resource/floating-ip.js';
import { healthMonitorActuator } from '../resource/health-monitor.js';
import { listenerActuator } from '../resource/listener.js';
import { loadBalancerActuator } from '../resource/load-balancer.js';
import { poolActuator } from '../resource/pool.js';
import { routerExpected, type Networking } from './network.js';
import type { ClusterContext } from './context.js';
import { apiServerPorts } from './security-group-step.js';

export interface Endpoint {
  host: string;
  port: number;
}

/** How soon to look again at a load balancer that is applying a change. */
const loadBalancerSettleMs = 2_000;

/** What runs out this soon is vouched for by the tree now: the pass's own reads of the children come later than its check. */
const treeVouchAheadMs = 1_000;

function owned(pass: ReconcilePass): Record<string, string> {
  return ownedResources(pass.status);
}

/** The API load balancer's ID: CAPO's status field, else ownedResources (written first, at its create). */
function recordedApiLoadBalancerId(pass: ReconcilePass): string | undefined {
  return (pass.status.apiServerManagedLoadBalancer as { id?: string } | undefined)?.id ?? owned(pass)['loadbalancer/api'];
}

function floatingIpEnabled(context: ClusterContext, networking: Networking): boolean {
  return context.spec.apiServer?.enableFloatingIP !== false && networking.externalNetworkId !== undefined;
}

/** The API load balancer as far as it got: `lb` once it exists, `serving` once it and its listeners, pools and monitors are ACTIVE. */
export type ApiLoadBalancer = { managed: false } | { managed: true; lb: LoadBalancer; serving: boolean };

/**
 * The API load balancer, from the subnet alone: its create does not wait for
 * the router. The output comes as soon as it exists (its VIP port is made
 * with it), so the floating IP goes on while the amphorae boot.
 */
export async function reconcileApiLoadBalancer(context: ClusterContext, networking: Networking): Promise<ApiLoadBalancer | undefined> {
  const managed = context.spec.apiServer?.managedLoadBalancer;
  if (managed === undefined || managed.enabled === false) return { managed: false };
  return reconcileManagedLoadBalancer(context, networking);
}

/** The endpoint clients use: the load balancer's floating IP or VIP once it serves, or without one, a floating or fixed IP. */
/** How often to look again at an endpoint only a person can give back. */
const endpointMovedRequeueMs = 5 * 60_000;

export async function reconcileApiEndpoint(context: ClusterContext, networking: Networking, apiLoadBalancer: ApiLoadBalancer): Promise<Endpoint | undefined> {
  const { pass } = context;
  const port = apiServerPorts(context)[0];
  let endpoint: Endpoint | undefined;
  if (apiLoadBalancer.managed) {
    const host = await loadBalancerAddress(context, networking, apiLoadBalancer);
    endpoint = host === undefined || !apiLoadBalancer.serving ? undefined : { host, port };
  } else {
    endpoint = await endpointWithoutLoadBalancer(context, networking, port);
  }
  if (endpoint === undefined) {
    pass.condition({ type: 'APIEndpointReady', status: 'False', reason: 'Provisioning', message: 'waiting for the API server load balancer' });
    return undefined;
  }
  const published = context.spec.controlPlaneEndpoint?.host;
  if (apiLoadBalancer.managed && published && isIP(published) !== 0 && published !== endpoint.host) {
    // The floating IP was deleted behind our back and the cloud would not give its address back (Neutron lets only admins
    // choose one): the nodes, kubeconfigs and certificates name an address the cluster no longer has. Said, not hidden.
    const message = `the API floating IP was made again at ${endpoint.host}, but spec.controlPlaneEndpoint names ${published}, which the cloud no longer gives this cluster: give ${published} back to the load balancer's VIP port (an admin can create a floating IP at that address), or rebuild the cluster`;
    if (findCondition(pass.status, 'APIEndpointReady')?.reason !== 'EndpointMoved') pass.event('Warning', 'EndpointMoved', message);
    pass.condition({ type: 'APIEndpointReady', status: 'False', reason: 'EndpointMoved', message });
    pass.wait({ waitingFor: `the API endpoint ${published} to be given back`, requeueAfterMs: endpointMovedRequeueMs }, true);
    return undefined;
  }
  await publishEndpoint(context, endpoint);
  pass.condition({ type: 'APIEndpointReady', status: 'True', reason: 'Ready' });
  return endpoint;
}

/**
 * The load balancer's floating IP, on its VIP port (there from the create
 * on), or its VIP without one; undefined while the floating IP is not ready.
 * Made while the amphorae boot, ours is looked at again only once the load
 * balancer serves (that read overlaps its children's), not at every resync
 * of a wait of minutes.
 */
async function loadBalancerAddress(
  context: ClusterContext,
  networking: Networking,
  { lb, serving }: { lb: LoadBalancer; serving: boolean },
): Promise<string | undefined> {
  if (!floatingIpEnabled(context, networking)) return lb.vip_address ?? undefined;
  if (!serving && owned(context.pass)['floatingip/api'] !== undefined) return undefined;
  const fip = await reconcileLoadBalancerFloatingIp(context, networking.externalNetworkId!, lb);
  if (!fip) return undefined;
  context.pass.observe((status) => {
    status.apiServerManagedLoadBalancer = { ...(status.apiServerManagedLoadBalancer as JsonObject), ip: fip.floating_ip_address };
  });
  return fip.floating_ip_address;
}

async function publishEndpoint(context: ClusterContext, endpoint: Endpoint): Promise<void> {
  const current = context.spec.controlPlaneEndpoint;
  if (current?.host) return;
  const updated = await context.deps.clusters.update(context.pass.target, (object) => {
    const spec = (object.spec ?? {}) as JsonObject;
    const existing = spec.controlPlaneEndpoint as { host?: string } | undefined;
    if (!existing?.host) spec.controlPlaneEndpoint = { host: endpoint.host, port: endpoint.port };
    object.spec = spec;
  });
  if (updated) context.pass.wroteOwnSpec(metaOf(updated).generation ?? context.pass.generation);
}

async function endpointWithoutLoadBalancer(context: ClusterContext, networking: Networking, port: number): Promise<Endpoint | undefined> {
  const { pass, spec, cluster, cloud } = context;
  if (spec.controlPlaneEndpoint?.host) return { host: spec.controlPlaneEndpoint.host, port: spec.controlPlaneEndpoint.port ?? port };
  if (floatingIpEnabled(context, networking)) {
    const address = spec.apiServer?.floatingIP;
    if (address !== undefined) {
      const users = await findUserFloatingIp(cloud.clients.neutron, address);
      if (users) return { host: users.floating_ip_address, port };
    }
    const fip = await pass.ensure('floatingip/api', floatingIpActuator(cloud.clients.neutron), {
      recordedId: owned(pass)['floatingip/api'],
      desired: {
        name: `${clusterResourceName(cluster)}-api`,
        floating_network_id: networking.externalNetworkId!,
        ...(address === undefined ? {} : { floating_ip_address: address }),
      },
      record: (status, id) => setOwned(status, 'floatingip/api', id),
    });
    return { host: fip.resource.floating_ip_address, port };
  }
  if (spec.apiServer?.fixedIP) return { host: spec.apiServer.fixedIP, port };
  throw new TerminalError(
    'unable to determine the control plane endpoint: no load balancer, no floating IP (external network disabled or missing) and no apiServer.fixedIP',
  );
}

/**
 * Starts the read of an API load balancer still being built as the pass begins, beside the reads
 * of the network and subnet it needs (made again at every resync): a resync falling near the end
 * of a build would otherwise put those reads before the look that finds it ACTIVE. One never seen
 * ready at this generation is the one being built (or a restart's first look); one seen ready is
 * vouched for by its status tree at resync instead, and is not read ahead.
 */
export function readApiLoadBalancerAhead(context: ClusterContext): void {
  const { pass, spec, cloud } = context;
  // One the spec no longer asks for is the deletion's to look at.
  if (spec.apiServer?.managedLoadBalancer === undefined) return;
  const recordedId = recordedApiLoadBalancerId(pass);
  if (recordedId === undefined || pass.lastVerified('loadbalancer', recordedId) !== undefined) return;
  pass.readAhead('loadbalancer', loadBalancerActuator(cloud.clients.octavia), { recordedId });
}

/**
 * The API load balancer's lookup by name, started ahead for a new cluster (see the reconciler's
 * reconcileNormal): its create is the longest wait, and the lookup would otherwise come only
 * after the subnet's create. Not where allowed CIDRs make its create wait for the router.
 */
export function lookUpApiLoadBalancerAhead(context: ClusterContext): void {
  const { pass, spec, cluster, cloud } = context;
  const managed = spec.apiServer?.managedLoadBalancer;
  if (managed === undefined || managed.enabled === false || (managed.allowedCIDRs ?? []).length > 0 || recordedApiLoadBalancerId(pass) !== undefined) return;
  pass.readAhead('loadbalancer', loadBalancerActuator(cloud.clients.octavia), { recordedId: undefined, name: apiLoadBalancerName(cluster) });
}

/** The load balancer tree: there once created (with its VIP), serving once everything in it is ACTIVE. */
async function reconcileManagedLoadBalancer(context: ClusterContext, networking: Networking): Promise<ApiLoadBalancer | undefined> {
  const { pass, spec, cluster, cloud } = context;
  const managed = spec.apiServer!.managedLoadBalancer!;
  const octavia = cloud.clients.octavia;
  const name = apiLoadBalancerName(cluster);
  const allowedCidrs = allowedCidrsOf(context, networking);
  if (allowedCidrs === 'router pending') {
    pass.wait({ waitingFor: "the router's external addresses, which the API listeners' allowed CIDRs admit", requeueAfterMs: loadBalancerSettleMs });
    return undefined;
  }
  const vipSubnet = await loadBalancerSubnet(context, networking);
  const flavorId = managed.flavor === undefined ? undefined : await octaviaFlavorId(context, managed.flavor);

  const plan: PortPlan = { lbName: name, ports: apiServerPorts(context), allowedCidrs, monitor: managed.monitor ?? {}, provider: managed.provider };
  const recordedId = recordedApiLoadBalancerId(pass);
  const treeRead = await vouchForTree(context, 'loadbalancer', '', recordedId);
  // The ID goes to ownedResources first: CAPO's status field also needs the addresses, which the next read brings.
  const lb = await pass.ensure('loadbalancer', loadBalancerActuator(octavia), {
    recordedId,
    desired: {
      name,
      vip_subnet_id: vipSubnet.id,
      description: `Created by capo-apiserver for cluster ${cluster.namespace}/${cluster.name}`,
      ...(spec.apiServer?.fixedIP === undefined ? {} : { vip_address: spec.apiServer.fixedIP }),
      ...(managed.provider === undefined ? {} : { provider: managed.provider }),
      ...(managed.availabilityZone === undefined ? {} : { availability_zone: managed.availabilityZone }),
      ...(flavorId === undefined ? {} : { flavor_id: flavorId }),
      ...(spec.tags === undefined ? {} : { tags: spec.tags }),
      ...treeFor(context, plan),
    },
    record: (status, id) => setOwned(status, 'loadbalancer/api', id),
  });
  if (lb.found === 'created') await recordFullyPopulated(pass, '', lb.resource);
  const vip = lb.resource.vip_address;
  if (!vip) return undefined;
  pass.observe((status) => {
    const previous = (status.apiServerManagedLoadBalancer as JsonObject | undefined) ?? {};
    status.apiServerManagedLoadBalancer = { ...previous, id: lb.resource.id, name, internalIP: vip, ip: (previous.ip as string | undefined) || vip };
  });
  if (!lb.ready) return { managed: true, lb: lb.resource, serving: false };
  // Found ACTIVE in this pass: a first build's tree vouches for the children its create made.
  if (!treeRead) await vouchForTree(context, 'loadbalancer', '', lb.resource.id);

  const fipId = owned(pass)['floatingip/api'];
  if (fipId !== undefined && floatingIpEnabled(context, networking)) {
    pass.readAhead('floatingip/api', floatingIpActuator(cloud.clients.neutron), {
      recordedId: fipId,
      desired: apiFloatingIpDesired(context, networking.externalNetworkId!, lb.resource),
    });
  }
  if (!(await ensureListeners(context, { ...plan, prefix: '', lb: lb.resource, lbFresh: lb.found !== undefined })))
    return { managed: true, lb: lb.resource, serving: false };
  pass.observe((status) => {
    const current = status.apiServerManagedLoadBalancer as JsonObject;
    status.apiServerManagedLoadBalancer = { ...current, ...(allowedCidrs ? { allowedCIDRs: allowedCidrs } : {}) };
  });
  return { managed: true, lb: lb.resource, serving: true };
}

/** What a load balancer serves: a listener, its default pool and a TCP monitor per port. */
interface PortPlan {
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
function treeFor(context: ClusterContext, plan: PortPlan): { listeners?: CreateListenerInGraph[] } {
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
async function recordFullyPopulated(pass: ReconcilePass, prefix: string, lb: LoadBalancer): Promise<void> {
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
async function ensureListeners(context: ClusterContext, chain: ListenerChain): Promise<boolean> {
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

/**
 * The ingress load balancer (spec.extensions.loadBalancers.ingress): the
 * address Kubespray's ingress and Harbor are reached on, with the workers as
 * members. Not a CAPO resource; it follows the API load balancer's rules.
 * True once it is ready, or not asked for.
 */
export async function reconcileIngressLoadBalancer(context: ClusterContext, networking: Networking): Promise<boolean> {
  const { pass, spec, cluster, cloud } = context;
  const ingress = spec.extensions?.loadBalancers?.ingress;
  if (!ingress?.enabled) return true;
  const name = ingressLoadBalancerName(cluster);
  const plan: PortPlan = { lbName: name, ports: ingress.ports && ingress.ports.length > 0 ? ingress.ports : [80, 443], monitor: {} };
  const treeRead = await vouchForTree(context, 'ingress/loadbalancer', 'ingress/', owned(pass)['ingress/loadbalancer']);
  const lb = await pass.ensure('ingress/loadbalancer', loadBalancerActuator(cloud.clients.octavia), {
    recordedId: owned(pass)['ingress/loadbalancer'],
    desired: {
      name,
      vip_subnet_id: (await loadBalancerSubnet(context, networking)).id,
      description: `Ingress of cluster ${cluster.namespace}/${cluster.name}, created by capo-apiserver`,
      ...(spec.tags === undefined ? {} : { tags: spec.tags }),
      ...treeFor(context, plan),
    },
    record: (status, id) => setOwned(status, 'ingress/loadbalancer', id),
  });
  if (lb.found === 'created') await recordFullyPopulated(pass, 'ingress/', lb.resource);
  if (!lb.ready || !lb.resource.vip_address) return false;
  if (!treeRead) await vouchForTree(context, 'ingress/loadbalancer', 'ingress/', lb.resource.id);
  if (!(await ensureListeners(context, { ...plan, prefix: 'ingress/', lb: lb.resource, lbFresh: lb.found !== undefined }))) return false;
  const vip = lb.resource.vip_address;
  pass.observe((status) => {
    const extensions = ((status.extensions as JsonObject | undefined) ?? {}) as JsonObject;
    const loadBalancers = ((extensions.loadBalancers as JsonObject | undefined) ?? {}) as JsonObject;
    status.extensions = { ...extensions, loadBalancers: { ...loadBalancers, ingress: { id: lb.resource.id, vip } } };
  });
  return true;
}

/**
 * At resync, the load balancer and its listeners, pools and monitors are
 * vouched for by one read of its status tree instead of a GET each (four for
 * a one-port API load balancer, seven for the two-port ingress one): when
 * each was verified here at this generation, one at least has run out, and
 * the tree shows every one of them ACTIVE, all count as verified again.
 * Anything else (one missing or not ACTIVE, the tree not found, one never
 * verified since a restart) leaves them to their own reads, which judge it
 * as always. The tree has no other fields: a spec change (a new generation)
 * reads them in full again, so a listener's allowed CIDRs or a monitor's
 * timings changed behind our back are put right then, not at every resync.
 *
 * The same read ends a first build: once the load balancer is found ACTIVE,
 * the listeners and pools its fully populated create made here, seen only in
 * that answer, are vouched for by the tree, which also names each pool's
 * monitor (recorded then), instead of a read of each and a lookup of the
 * monitor by name. A child the cloud left unfinished (not ACTIVE in the
 * tree) goes to its own reads, which deal with it.
 *
 * True when it read the tree.
 */
async function vouchForTree(context: ClusterContext, lbRole: string, prefix: string, lbId: string | undefined): Promise<boolean> {
  const { pass, cloud } = context;
  if (lbId === undefined) return false;
  const recorded = owned(pass);
  const children = Object.entries(recorded).filter(
    ([role]) => role.startsWith(prefix) && /^(listener|pool|healthmonitor)\/\d+$/.test(role.slice(prefix.length)),
  );
  const seen = [[lbRole, lbId], ...children].map(([role, id]) => ({
    role,
    id,
    last: pass.lastVerified<{ id: string; provisioning_status: string }>(role, id, treeVouchAheadMs),
  }));
  if (seen.some(({ last }) => last === undefined) || !seen.some(({ last }) => last!.expired)) return false;
  const tree = await absentOn404(cloud.clients.octavia.getLoadBalancerStatus(lbId));
  if (!tree) return true;
  const monitors = builtMonitors(prefix, seen, recorded, poolMonitors(tree));
  const vouched = [...seen.map(({ role, id, last }) => ({ role, id, resource: last!.resource })), ...monitors];
  const statuses = provisioningStatuses(tree);
  if (!vouched.every(({ id }) => statuses.get(id) === 'ACTIVE')) return true;
  if (monitors.length > 0) {
    await pass.record((status) => {
      for (const { role, id } of monitors) setOwned(status, role, id);
    });
  }
  for (const { role, resource } of vouched) {
    const active: { id: string; provisioning_status: string } = { ...resource, provisioning_status: 'ACTIVE' };
    pass.trust(role, active);
  }
  return true;
}

/** The monitor under each pool a fully populated create made here (seen only in its answer) whose monitor is not recorded yet, as the status tree names it. */
function builtMonitors(
  prefix: string,
  seen: readonly { role: string; id: string; last: { unverified: boolean } | undefined }[],
  recorded: Record<string, string>,
  monitorsByPool: ReadonlyMap<string, { id: string; provisioning_status: string }>,
): { role: string; id: string; resource: { id: string; provisioning_status: string } }[] {
  return seen.flatMap(({ role, id, last }) => {
    const port = role.slice(prefix.length).match(/^pool\/(\d+)$/)?.[1];
    if (port === undefined || !last?.unverified || recorded[`${prefix}healthmonitor/${port}`] !== undefined) return [];
    const monitor = monitorsByPool.get(id);
    return monitor ? [{ role: `${prefix}healthmonitor/${port}`, id: monitor.id, resource: monitor }] : [];
  });
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

async function reconcileLoadBalancerFloatingIp(context: ClusterContext, externalNetworkId: string, lb: LoadBalancer): Promise<FloatingIp | undefined> {
  const { pass, spec, cloud } = context;
  const neutron = cloud.clients.neutron;
  const address = spec.apiServer?.floatingIP;
  if (address !== undefined) {
    const users = await findUserFloatingIp(neutron, address);
    if (users) {
      if (users.port_id !== lb.vip_port_id) await neutron.updateFloatingIp(users.id, { port_id: lb.vip_port_id });
      return users;
    }
  }
  const fip = await pass.ensure('floatingip/api', floatingIpActuator(neutron), {
    recordedId: owned(pass)['floatingip/api'],
    desired: apiFloatingIpDesired(context, externalNetworkId, lb),
    record: (status, id) => setOwned(status, 'floatingip/api', id),
  });
  return fip.ready ? fip.resource : undefined;
}

function apiFloatingIpDesired(context: ClusterContext, externalNetworkId: string, lb: LoadBalancer): FloatingIpDesired {
  const address = context.spec.apiServer?.floatingIP;
  const preferred = address === undefined ? previousApiAddress(context) : undefined;
  return {
    name: apiLoadBalancerName(context.cluster),
    floating_network_id: externalNetworkId,
    port_id: lb.vip_port_id,
    ...(address === undefined ? {} : { floating_ip_address: address }),
    ...(preferred === undefined ? {} : { preferred_ip_address: preferred }),
  };
}

/**
 * The address a recorded API floating IP had, to make it again at (CAPO's rule: the address it
 * had, else the control plane endpoint's), so a floating IP deleted behind our back comes back where
 * the cluster's endpoint, kubeconfigs and certificates point. None before one was ever recorded.
 */
function previousApiAddress(context: ClusterContext): string | undefined {
  const { pass, spec } = context;
  if (owned(pass)['floatingip/api'] === undefined) return undefined;
  const recorded = pass.status.apiServerManagedLoadBalancer as { ip?: string; internalIP?: string } | undefined;
  // Until the floating IP exists the status names the VIP there, which is no floating address.
  if (recorded?.ip && recorded.ip !== recorded.internalIP) return recorded.ip;
  const endpointHost = spec.controlPlaneEndpoint?.host;
  return endpointHost !== undefined && isIP(endpointHost) !== 0 ? endpointHost : undefined;
}

/**
 * CAPO's rule: with allowedCIDRs set, the listeners also admit the bastion,
 * the cluster subnets and the router's gateway addresses, so the cluster can
 * reach its own API. Sorted, de-duplicated, bare IPv4 addresses as /32.
 * The load balancer's create does not wait for the router, except here: its
 * addresses are only known once the router step recorded them.
 */
function allowedCidrsOf(context: ClusterContext, networking: Networking): string[] | undefined | 'router pending' {
  const { pass, spec } = context;
  const allowed = spec.apiServer?.managedLoadBalancer?.allowedCIDRs;
  if (allowed === undefined || allowed.length === 0) return undefined;
  const routerIps = (pass.status.router as { ips?: string[] } | undefined)?.ips;
  if (routerExpected(spec, networking) && routerIps === undefined) return 'router pending';
  const bastion = pass.status.bastion as { ip?: string; floatingIP?: string } | undefined;
  const all = [...allowed, ...networking.subnets.map((subnet) => subnet.cidr), ...(routerIps ?? []), bastion?.ip, bastion?.floatingIP]
    .filter((cidr): cidr is string => typeof cidr === 'string' && cidr !== '')
    .map((cidr) => (cidr.includes('/') ? cidr : `${cidr}/32`));
  return [...new Set(all)].sort();
}

async function loadBalancerSubnet(context: ClusterContext, networking: Networking): Promise<{ id: string }> {
  const managed = context.spec.apiServer?.managedLoadBalancer;
  const configured = managed?.subnets?.[0];
  if (configured?.id) return { id: configured.id };
  if (configured?.filter) {
    const subnet = await resolveSubnet(context.cloud.clients.neutron, configured as NeutronParam<SubnetFilter>, 'apiServer.managedLoadBalancer.subnets[0]');
    return { id: subnet.id };
  }
  if (networking.subnets.length === 0) throw new TerminalError('the cluster network has no subnet for the load balancer VIP');
  return { id: networking.subnets[0].id };
}

async function octaviaFlavorId(context: ClusterContext, name: string): Promise<string> {
  const flavors = await context.cloud.clients.octavia.listFlavors();
  const flavor = flavors.find((candidate) => candidate.name === name || candidate.id === name);
  if (!flavor)
    throw new TerminalError(
      `Octavia flavor "${name}" (apiServer.managedLoadBalancer.flavor) does not exist; available: ${flavors.map((f) => f.name).join(', ') || 'none'}`,
    );
  return flavor.id;
}

/** The floating IP we own; a user's floating IP is only let go. */
export async function deleteApiEndpoint(context: ClusterContext): Promise<boolean> {
  const { pass, spec, cluster, cloud } = context;
  const fipName =
    spec.apiServer?.managedLoadBalancer && spec.apiServer.managedLoadBalancer.enabled !== false
      ? apiLoadBalancerName(cluster)
      : `${clusterResourceName(cluster)}-api`;
  if (!(await pass.remove(floatingIpActuator(cloud.clients.neutron), { recordedId: owned(pass)['floatingip/api'], name: fipName, owner: pass.owner })))
    return false;
  if (owned(pass)['floatingip/api'] !== undefined) await pass.record((status) => setOwned(status, 'floatingip/api', undefined));
  return true;
}

/** The load balancer with everything in it (cascade). */
export async function deleteApiLoadBalancer(context: ClusterContext): Promise<boolean> {
  const { pass, cluster, cloud } = context;
  const recorded = recordedApiLoadBalancerId(pass);
  if (!(await pass.remove(loadBalancerActuator(cloud.clients.octavia), { recordedId: recorded, name: apiLoadBalancerName(cluster), owner: pass.owner })))
    return false;
  const children = Object.keys(owned(pass)).filter((role) => /^(loadbalancer|listener|pool|healthmonitor)\//.test(role));
  if (recorded !== undefined || children.length > 0) {
    await pass.record((status) => {
      delete status.apiServerManagedLoadBalancer;
      for (const role of children) setOwned(status, role, undefined);
    });
  }
  return true;
}

/** The ingress load balancer with everything in it (cascade). */
export async function deleteIngressLoadBalancer(context: ClusterContext): Promise<boolean> {
  const { pass, cluster, cloud } = context;
  const children = Object.keys(owned(pass)).filter((role) => role.startsWith('ingress/'));
  if (
    !(await pass.remove(loadBalancerActuator(cloud.clients.octavia), {
      recordedId: owned(pass)['ingress/loadbalancer'],
      name: ingressLoadBalancerName(cluster),
      owner: pass.owner,
    }))
  )
    return false;
  if (children.length > 0)
    await pass.record((status) =>
      children.forEach((role) => {
        setOwned(status, role, undefined);
      }),
    );
  return true;
}
