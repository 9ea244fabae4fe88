/**
 * The API server endpoint: the load balancer's floating IP or VIP once it
 * serves, or, without a load balancer, a floating IP or fixed IP the first
 * control plane machine takes. The endpoint lands in
 * spec.controlPlaneEndpoint (only while unset, as the Cluster API contract
 * wants).
 */
import { isIP } from 'node:net';
import type { LoadBalancer } from '../../openstack/index.js';
import { apiLoadBalancerName, clusterResourceName } from '../../capo/names.js';
import type { JsonObject } from '../../storage/interface.js';
import { findCondition } from '../conditions.js';
import { TerminalError } from '../runtime/controller.js';
import { metaOf } from '../objects.js';
import { setOwned } from '../owned.js';
import { findUserFloatingIp, floatingIpActuator } from '../resource/floating-ip.js';
import { floatingIpEnabled, reconcileLoadBalancerFloatingIp } from './api-floating-ip.js';
import type { ApiLoadBalancer } from './api-load-balancer.js';
import type { ClusterContext } from './context.js';
import { owned } from './load-balancer-shared.js';
import type { Networking } from './network.js';
import { apiServerPorts } from './security-group-step.js';

export interface Endpoint {
  host: string;
  port: number;
}

/** How often to look again at an endpoint only a person can give back. */
const endpointMovedRequeueMs = 5 * 60_000;

/** The endpoint clients use: the load balancer's floating IP or VIP once it serves, or without one, a floating or fixed IP. */
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
