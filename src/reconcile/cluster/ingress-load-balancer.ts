/**
 * The ingress load balancer and its delete: made like the API one, its roles
 * in ownedResources prefixed 'ingress/'.
 */
import { ingressLoadBalancerName } from '../../capo/names.js';
import type { JsonObject } from '../../storage/interface.js';
import { setOwned } from '../owned.js';
import { loadBalancerActuator } from '../resource/load-balancer.js';
import type { ClusterContext } from './context.js';
import { ensureListeners, recordFullyPopulated, treeFor, type PortPlan } from './load-balancer-listeners.js';
import { loadBalancerSubnet, owned } from './load-balancer-shared.js';
import { vouchForTree } from './load-balancer-status-tree.js';
import type { Networking } from './network.js';

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
