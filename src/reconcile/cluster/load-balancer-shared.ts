/**
 * What the load balancer modules share: the owned-resource map their roles are
 * recorded in, how soon to look again at a load balancer applying a change,
 * and the subnet a load balancer's VIP goes on.
 */
import type { NeutronParam, SubnetFilter } from '../../capo/neutron-query.js';
import { TerminalError } from '../runtime/controller.js';
import { resolveSubnet } from '../neutron-filters.js';
import { ownedResources } from '../owned.js';
import type { ReconcilePass } from '../reconcile-pass.js';
import type { ClusterContext } from './context.js';
import type { Networking } from './network.js';

/** How soon to look again at a load balancer that is applying a change. */
export const loadBalancerSettleMs = 2_000;

/** The IDs this cluster's status records for what it made, by role ('loadbalancer/api', 'listener/6443', 'ingress/pool/80'...). */
export function owned(pass: ReconcilePass): Record<string, string> {
  return ownedResources(pass.status);
}

/** apiServer.managedLoadBalancer.subnets[0] (by ID or filter), else the cluster network's first subnet; the ingress load balancer's too. */
export async function loadBalancerSubnet(context: ClusterContext, networking: Networking): Promise<{ id: string }> {
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
