/**
 * The API server's Octavia load balancer: made from the subnet alone (its
 * create does not wait for the router unless allowed CIDRs need the
 * router's addresses), fully populated with a listener, pool and health
 * monitor per API port (load-balancer-listeners.ts), its reads started
 * ahead of the pass's other work, and its delete.
 */
import type { LoadBalancer } from '../../openstack/index.js';
import { apiLoadBalancerName } from '../../capo/names.js';
import type { JsonObject } from '../../storage/interface.js';
import { TerminalError } from '../runtime/controller.js';
import type { ReconcilePass } from '../reconcile-pass.js';
import { setOwned } from '../owned.js';
import { loadBalancerActuator, type LoadBalancerDesired } from '../resource/load-balancer.js';
import { readApiFloatingIpAhead } from './api-floating-ip.js';
import type { ClusterContext } from './context.js';
import { ensureListeners, recordFullyPopulated, treeFor, type PortPlan } from './load-balancer-listeners.js';
import { loadBalancerSettleMs, loadBalancerSubnet, owned } from './load-balancer-shared.js';
import { vouchForTree } from './load-balancer-status-tree.js';
import { routerExpected, type Networking } from './network.js';
import { apiServerPorts } from './security-group-step.js';

/** The API load balancer as far as it got: `lb` once it exists, `serving` once it and its listeners, pools and monitors are ACTIVE. */
export type ApiLoadBalancer = { managed: false } | { managed: true; lb: LoadBalancer; serving: boolean };

/** The API load balancer's ID: CAPO's status field, else ownedResources (written first, at its create). */
function recordedApiLoadBalancerId(pass: ReconcilePass): string | undefined {
  return (pass.status.apiServerManagedLoadBalancer as { id?: string } | undefined)?.id ?? owned(pass)['loadbalancer/api'];
}

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
  const name = apiLoadBalancerName(cluster);
  const allowedCidrs = allowedCidrsOf(context, networking);
  if (allowedCidrs === 'router pending') {
    pass.wait({ waitingFor: "the router's external addresses, which the API listeners' allowed CIDRs admit", requeueAfterMs: loadBalancerSettleMs });
    return undefined;
  }
  const desired = await apiLoadBalancerDesired(context, networking, name);

  const plan: PortPlan = { lbName: name, ports: apiServerPorts(context), allowedCidrs, monitor: managed.monitor ?? {}, provider: managed.provider };
  const recordedId = recordedApiLoadBalancerId(pass);
  const treeRead = await vouchForTree(context, 'loadbalancer', '', recordedId);
  // The ID goes to ownedResources first: CAPO's status field also needs the addresses, which the next read brings.
  const lb = await pass.ensure('loadbalancer', loadBalancerActuator(cloud.clients.octavia), {
    recordedId,
    desired: { ...desired, ...treeFor(context, plan) },
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

  readApiFloatingIpAhead(context, networking, lb.resource);
  if (!(await ensureListeners(context, { ...plan, prefix: '', lb: lb.resource, lbFresh: lb.found !== undefined })))
    return { managed: true, lb: lb.resource, serving: false };
  pass.observe((status) => {
    const current = status.apiServerManagedLoadBalancer as JsonObject;
    status.apiServerManagedLoadBalancer = { ...current, ...(allowedCidrs ? { allowedCIDRs: allowedCidrs } : {}) };
  });
  return { managed: true, lb: lb.resource, serving: true };
}

/** The load balancer as the spec asks for it, but for its listeners (the tree goes on at the create): its VIP subnet and Octavia flavor looked up. */
async function apiLoadBalancerDesired(context: ClusterContext, networking: Networking, name: string): Promise<LoadBalancerDesired> {
  const { spec, cluster } = context;
  const managed = spec.apiServer!.managedLoadBalancer!;
  const vipSubnet = await loadBalancerSubnet(context, networking);
  const flavorId = managed.flavor === undefined ? undefined : await octaviaFlavorId(context, managed.flavor);
  return {
    name,
    vip_subnet_id: vipSubnet.id,
    description: `Created by capo-apiserver for cluster ${cluster.namespace}/${cluster.name}`,
    ...(spec.apiServer?.fixedIP === undefined ? {} : { vip_address: spec.apiServer.fixedIP }),
    ...(managed.provider === undefined ? {} : { provider: managed.provider }),
    ...(managed.availabilityZone === undefined ? {} : { availability_zone: managed.availabilityZone }),
    ...(flavorId === undefined ? {} : { flavor_id: flavorId }),
    ...(spec.tags === undefined ? {} : { tags: spec.tags }),
  };
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

async function octaviaFlavorId(context: ClusterContext, name: string): Promise<string> {
  const flavors = await context.cloud.clients.octavia.listFlavors();
  const flavor = flavors.find((candidate) => candidate.name === name || candidate.id === name);
  if (!flavor)
    throw new TerminalError(
      `Octavia flavor "${name}" (apiServer.managedLoadBalancer.flavor) does not exist; available: ${flavors.map((f) => f.name).join(', ') || 'none'}`,
    );
  return flavor.id;
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
