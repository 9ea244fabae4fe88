/**
 * A server's floating IP from an OpenStackFloatingIPPool
 * (spec.floatingIPPoolRef), as CAPO gets it: an IPAddressClaim
 * `<server>-floating-ip-address` owned by the server and held by the
 * ip-claim finalizer until the server is gone. The server is created only
 * once the pool has answered; when it is ACTIVE the address is associated
 * with its port on a subnet a router connects to the floating IP's network.
 * The FloatingAddressFromPoolReady condition tells where that stands.
 */
import type { FloatingIp, NeutronClient, Port, Server } from '../../openstack/index.js';
import { infrastructureGroup } from '../../api/infrastructure/kinds.js';
import { floatingAddressClaimName } from '../../capo/names.js';
import type { ReconcilerDeps } from '../deps.js';
import { DependencyFailedError } from '../lookups.js';
import { metaOf, referenceName, specOf, statusOf, stringField } from '../objects.js';
import { clusterNameLabel } from '../paused.js';
import type { ReconcilePass } from '../reconcile-pass.js';
import { serverAddresses } from '../resource/server.js';

export const ipClaimFinalizer = 'openstackmachine.infrastructure.cluster.x-k8s.io/ip-claim';
const conditionType = 'FloatingAddressFromPoolReady';
/** The pool's answer wakes the server through the claim's owner reference; this is the fallback. */
const claimRequeueMs = 60_000;
/** Nova learns of an association from Neutron's network-changed event, within a second or two. */
const novaListingRequeueMs = 2_000;
/** Device owners of the ports a router has on a network (CAPO's list: plain, DVR and the two HA kinds). */
const routerInterfaceOwners = [
  'network:router_interface',
  'network:router_interface_distributed',
  'network:ha_router_replicated_interface',
  'network:router_ha_interface',
];

export interface FloatingIpPoolRef {
  apiGroup?: string;
  kind: string;
  name: string;
}

/** A failure to associate, shown on FloatingAddressFromPoolReady; retried like any OpenStack error. */
class FloatingAddressError extends Error {
  override name = 'FloatingAddressError';
}

function ipamOf(deps: ReconcilerDeps) {
  if (!deps.ipam) throw new DependencyFailedError('spec.floatingIPPoolRef: IPAddressClaims are not served here, so no pool can answer one');
  return deps.ipam;
}

/** The name of the IPAddress the pool answered the server's claim with; undefined (with a wait) until it has. */
export async function claimFloatingAddress(deps: ReconcilerDeps, pass: ReconcilePass, ref: FloatingIpPoolRef): Promise<string | undefined> {
  const { claims } = ipamOf(deps);
  const name = floatingAddressClaimName(pass.meta.name);
  const clusterName = pass.meta.labels?.[clusterNameLabel];
  const claim =
    (await claims.get({ namespace: pass.meta.namespace, name })) ??
    (await claims.create(pass.meta.namespace, {
      metadata: {
        name,
        ownerReferences: [{ apiVersion: pass.client.apiVersion, kind: pass.client.kind, name: pass.meta.name, uid: pass.meta.uid }],
        finalizers: [ipClaimFinalizer],
        ...(clusterName === undefined ? {} : { labels: { [clusterNameLabel]: clusterName } }),
      },
      spec: { poolRef: { apiGroup: ref.apiGroup ?? infrastructureGroup, kind: ref.kind, name: ref.name } },
    }));
  const addressName = referenceName(statusOf(claim).addressRef);
  if (addressName !== undefined) return addressName;
  const message = `Waiting for IPAddressClaim ${pass.meta.namespace}/${name} to be allocated by ${ref.kind} ${ref.name}`;
  // No server is created before the address is there, so the instance waits too.
  for (const type of [conditionType, 'InstanceReady']) pass.condition({ type, status: 'False', reason: 'WaitingForIPAMProvider', message });
  pass.wait({ waitingFor: message, requeueAfterMs: claimRequeueMs }, true);
  return undefined;
}

/**
 * Associates the claimed floating IP with the server's routed port, unless it
 * already is. Until Nova lists it among the server's addresses (a moment
 * after Neutron has it), the server is read again shortly, so its status and
 * the machine's show the address.
 */
export async function associateFloatingAddress(
  deps: ReconcilerDeps,
  pass: ReconcilePass,
  neutron: NeutronClient,
  server: Server,
  ports: Port[],
  addressName: string,
): Promise<void> {
  try {
    const address = await ipamOf(deps).addresses.get({ namespace: pass.meta.namespace, name: addressName });
    if (!address) throw new FloatingAddressError(`IPAddress ${pass.meta.namespace}/${addressName} does not exist`);
    const ip = stringField(specOf(address), 'address');
    if (!serverAddresses(server).some((entry) => entry.address === ip)) {
      const fip = (await neutron.listFloatingIps({ floating_ip_address: ip }))[0];
      if (!fip) throw new FloatingAddressError(`floating IP ${ip} does not exist`);
      if (!ports.some((port) => port.id === fip.port_id)) await associate(neutron, fip, ports);
      pass.invalidate('server');
      pass.wait({ waitingFor: `Nova to list floating IP ${ip} on server ${server.id}`, requeueAfterMs: novaListingRequeueMs });
    }
    pass.condition({ type: conditionType, status: 'True', reason: 'Ready' });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    pass.condition({ type: conditionType, status: 'False', reason: 'FloatingIPError', message: `Failed while associating ip from pool: ${message}` });
    throw error;
  }
}

async function associate(neutron: NeutronClient, fip: FloatingIp, ports: Port[]): Promise<void> {
  const port = await routedPort(neutron, ports, fip.floating_network_id);
  if (!port)
    throw new FloatingAddressError(
      `no port of the server is on a subnet routed to network ${fip.floating_network_id} of floating IP ${fip.floating_ip_address}`,
    );
  await neutron.updateFloatingIp(fip.id, { port_id: port.id });
}

/** The first port on a subnet that a router with its gateway on `externalNetworkId` serves. */
async function routedPort(neutron: NeutronClient, ports: Port[], externalNetworkId: string): Promise<Port | undefined> {
  const gateways = new Map<string, string | undefined>();
  for (const port of ports) {
    const subnets = new Set(port.fixed_ips.map((fixed) => fixed.subnet_id));
    const interfaces = await neutron.listPorts({ network_id: port.network_id, device_owner: routerInterfaceOwners });
    for (const routerPort of interfaces) {
      if (!routerPort.fixed_ips.some((fixed) => subnets.has(fixed.subnet_id))) continue;
      if (!gateways.has(routerPort.device_id))
        gateways.set(routerPort.device_id, (await neutron.getRouter(routerPort.device_id)).external_gateway_info?.network_id);
      if (gateways.get(routerPort.device_id) === externalNetworkId) return port;
    }
  }
  return undefined;
}

/** Lets the claim go once the server is gone: the pool then releases its address. */
export async function releaseFloatingAddress(deps: ReconcilerDeps, pass: ReconcilePass): Promise<void> {
  if (!deps.ipam) return;
  const name = floatingAddressClaimName(pass.meta.name);
  const claim = await deps.ipam.claims.get({ namespace: pass.meta.namespace, name });
  if (!claim || !metaOf(claim).ownerReferences?.some((reference) => reference.uid === pass.meta.uid)) return;
  const target = { namespace: pass.meta.namespace, name, uid: metaOf(claim).uid };
  await deps.ipam.claims.removeFinalizer(target, ipClaimFinalizer);
  // Without a garbage collector (the embedded mode) nothing else deletes it.
  await deps.ipam.claims.delete(target, target.uid);
}
