/**
 * The API floating IP on the load balancer's VIP port. Octavia makes that
 * port with the load balancer, so the floating IP is in place while the
 * amphorae boot rather than after (CAPO waits for ACTIVE); its ID is recorded
 * at its create, so a retry finds it instead of making another. A user's
 * floating IP (apiServer.floatingIP) is moved onto the VIP; one of ours
 * deleted behind our back is made again at the address it had.
 */
import { isIP } from 'node:net';
import type { FloatingIp, LoadBalancer } from '../../openstack/index.js';
import { apiLoadBalancerName } from '../../capo/names.js';
import { setOwned } from '../owned.js';
import { findUserFloatingIp, floatingIpActuator, type FloatingIpDesired } from '../resource/floating-ip.js';
import type { ClusterContext } from './context.js';
import { owned } from './load-balancer-shared.js';
import type { Networking } from './network.js';

/** The API gets a floating IP unless the spec turns it off or there is no external network to take it from. */
export function floatingIpEnabled(context: ClusterContext, networking: Networking): boolean {
  return context.spec.apiServer?.enableFloatingIP !== false && networking.externalNetworkId !== undefined;
}

/** Starts the read of our recorded floating IP, so that it overlaps the reads of the load balancer's children. */
export function readApiFloatingIpAhead(context: ClusterContext, networking: Networking, lb: LoadBalancer): void {
  const { pass, cloud } = context;
  const fipId = owned(pass)['floatingip/api'];
  if (fipId !== undefined && floatingIpEnabled(context, networking)) {
    pass.readAhead('floatingip/api', floatingIpActuator(cloud.clients.neutron), {
      recordedId: fipId,
      desired: apiFloatingIpDesired(context, networking.externalNetworkId!, lb),
    });
  }
}

/** The floating IP on the VIP port: the user's (moved there), else ours; undefined while ours is not ready. */
export async function reconcileLoadBalancerFloatingIp(context: ClusterContext, externalNetworkId: string, lb: LoadBalancer): Promise<FloatingIp | undefined> {
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
