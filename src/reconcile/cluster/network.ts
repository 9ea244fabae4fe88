/**
 * Cluster networking, in two steps the cluster's graph runs apart: the
 * network (the external network, then either the managed network and subnet
 * or the user's existing ones, looked up once and frozen in status), and the
 * router that joins it to the external network. What builds on the subnet
 * alone (the load balancers' creates) does not wait for the router; only
 * what floats an address does.
 */
import { isNotFound, type Network, type Router, type Subnet } from '../../openstack/index.js';
import { neutronQuery, type NeutronFilter, type NeutronParam, type SubnetFilter } from '../../capo/neutron-query.js';
import { resolveNetwork, resolveSubnet } from '../neutron-filters.js';
import type { JsonObject } from '../../storage/interface.js';
import { TerminalError } from '../runtime/controller.js';
import { clusterResourceName } from '../../capo/names.js';
import { networkActuator } from '../resource/network.js';
import { routerActuator } from '../resource/router.js';
import { subnetActuator } from '../resource/subnet.js';
import type { ClusterContext } from './context.js';
import type { ClusterSpec } from '../kinds.js';

/** The cluster network once its subnets exist. */
export interface Networking {
  externalNetworkId?: string;
  networkId: string;
  subnets: { id: string; cidr: string }[];
}

/** The router once the cluster subnet is on it (or none is asked for). */
export interface Routing {
  /** The router's addresses on the external network. */
  routerIps: string[];
}

/** How often to look again for an external network the user has to name. */
const ambiguousRequeueMs = 5 * 60_000;

interface NamedId {
  id: string;
  name: string;
}

type RecordedNetwork = NamedId & { subnets?: (NamedId & { cidr: string })[] };

/** The network and its subnets; undefined while they are not ready (the waits are in the pass). */
export async function reconcileNetwork(context: ClusterContext): Promise<Networking | undefined> {
  const { pass, spec } = context;
  const external = await reconcileExternalNetwork(context);
  if (external === 'ambiguous') return undefined;
  const network = hasManagedSubnets(spec) ? await reconcileManagedNetwork(context) : await reconcileExistingNetwork(context);
  if (network === undefined) {
    pass.condition({ type: 'NetworkReady', status: 'False', reason: 'Provisioning', message: 'waiting for the network and subnet' });
    return undefined;
  }
  return { ...network, externalNetworkId: external?.id };
}

/**
 * The recorded managed network, subnet and router, read as the pass begins when their
 * verification has run out (a resync): the steps would read them one after the other, each
 * needing the one before, where the reads need only the recorded IDs. Nothing is read for what is
 * still verified or not recorded.
 */
export function readNetworkingAhead(context: ClusterContext): void {
  const { pass, spec, cloud } = context;
  if (!hasManagedSubnets(spec)) return;
  const neutron = cloud.clients.neutron;
  const recorded = pass.status.network as RecordedNetwork | undefined;
  pass.readAhead('network', networkActuator(neutron), { recordedId: recorded?.id });
  pass.readAhead('subnet', subnetActuator(neutron), { recordedId: recorded?.subnets?.[0]?.id });
  if (spec.router === undefined) pass.readAhead('router', routerActuator(neutron), { recordedId: (pass.status.router as NamedId | undefined)?.id });
}

/** The managed network's lookup by name, started ahead for a new cluster (see the reconciler's reconcileNormal). */
export function lookUpNetworkAhead(context: ClusterContext): void {
  const { pass, spec, cluster, cloud } = context;
  if (!hasManagedSubnets(spec) || (pass.status.network as RecordedNetwork | undefined)?.id !== undefined) return;
  pass.readAhead('network', networkActuator(cloud.clients.neutron), { recordedId: undefined, name: clusterResourceName(cluster) });
}

/**
 * The router: ours (managed subnets with an external network), or the
 * user's (spec.router), which only gets our interface. NetworkReady turns
 * True here, as CAPO's does once the router is in place.
 */
export async function reconcileRouter(context: ClusterContext, networking: Networking): Promise<Routing | undefined> {
  const routing = await routingOf(context, networking);
  context.pass.condition(
    routing === undefined
      ? { type: 'NetworkReady', status: 'False', reason: 'Provisioning', message: 'waiting for the router' }
      : { type: 'NetworkReady', status: 'True', reason: 'Ready' },
  );
  return routing;
}

async function routingOf(context: ClusterContext, networking: Networking): Promise<Routing | undefined> {
  const { pass, spec } = context;
  const subnetId = networking.subnets[0].id;
  const managed = hasManagedSubnets(spec);
  if (!routerExpected(spec, networking)) {
    // Managed subnets without an external network: no router, nor one recorded under an earlier spec.
    if (managed) pass.observe((status) => delete status.router);
    return { routerIps: [] };
  }
  if (spec.router) {
    // The user's network and router are frozen once resolved, like the network itself.
    const recorded = pass.status.router as (NamedId & { ips?: string[] }) | undefined;
    if (!managed && recorded?.id && recorded.ips !== undefined) return { routerIps: recorded.ips };
    return recordRouter(context, await attachExistingRouter(context, subnetId));
  }
  const router = await ensureManagedRouter(context, subnetId, networking.externalNetworkId!);
  return router === undefined ? undefined : recordRouter(context, router);
}

/**
 * The references of status resolved once and then trusted: the external network, and the user's
 * network and router. One a request finds gone (drift.ts) is resolved again by the next pass, as
 * CAPO looks them up on every reconcile; ours the engine reads by ID anyway.
 */
export function frozenNetworkReferences(spec: ClusterSpec): string[][] {
  return [['externalNetwork'], ...(hasManagedSubnets(spec) ? [] : [['network']]), ...(spec.router ? [['router']] : [])];
}

function hasManagedSubnets(spec: ClusterSpec): boolean {
  return (spec.managedSubnets ?? []).length > 0;
}

/** Whether the cluster network has a router: the user's, or ours when managed subnets reach an external network. */
export function routerExpected(spec: ClusterSpec, networking: Networking): boolean {
  return spec.router !== undefined || (hasManagedSubnets(spec) && networking.externalNetworkId !== undefined);
}

function recordRouter(context: ClusterContext, router: Router): Routing {
  const ips = (router.external_gateway_info?.external_fixed_ips ?? []).map((fixed) => fixed.ip_address).filter((ip): ip is string => typeof ip === 'string');
  context.pass.observe((status) => {
    status.router = { id: router.id, name: router.name, ips };
  });
  return { routerIps: ips };
}

async function reconcileExternalNetwork(context: ClusterContext): Promise<NamedId | undefined | 'ambiguous'> {
  const { pass, spec, cloud } = context;
  const neutron = cloud.clients.neutron;
  if (spec.enableExternalNetwork === false) {
    pass.observe((status) => delete status.externalNetwork);
    return undefined;
  }
  const recorded = pass.status.externalNetwork as NamedId | undefined;
  if (recorded?.id) return recorded;
  let candidates: Network[];
  if (spec.externalNetwork?.id) {
    candidates = [await neutron.getNetwork(spec.externalNetwork.id)];
  } else if (spec.externalNetwork?.filter) {
    candidates = [await resolveNetwork(neutron, spec.externalNetwork as NeutronParam, 'spec.externalNetwork.filter', { 'router:external': true })];
  } else {
    candidates = await neutron.findExternalNetworks();
    if (candidates.length === 0) {
      pass.observe((status) => delete status.externalNetwork);
      return undefined;
    }
    if (candidates.length > 1) {
      const names = candidates.map((network) => `${network.name} (${network.id})`).join(', ');
      pass.condition({
        type: 'NetworkReady',
        status: 'False',
        reason: 'ExternalNetworkAmbiguous',
        message: `${candidates.length} external networks exist: ${names}; set spec.externalNetwork to the one the cluster should use, or spec.enableExternalNetwork: false`,
      });
      pass.wait({ waitingFor: 'spec.externalNetwork to choose among several external networks', requeueAfterMs: ambiguousRequeueMs }, true);
      return 'ambiguous';
    }
  }
  const chosen = { id: candidates[0].id, name: candidates[0].name };
  pass.observe((status) => {
    status.externalNetwork = chosen;
  });
  return chosen;
}

async function reconcileManagedNetwork(context: ClusterContext): Promise<Omit<Networking, 'externalNetworkId'> | undefined> {
  const { pass, spec, cluster, cloud } = context;
  const neutron = cloud.clients.neutron;
  const name = clusterResourceName(cluster);
  const networkStatus = pass.status.network as RecordedNetwork | undefined;

  const network = await pass.ensure('network', networkActuator(neutron), {
    recordedId: networkStatus?.id,
    desired: {
      name,
      description: `Created by capo-apiserver for cluster ${cluster.namespace}/${cluster.name}`,
      admin_state_up: true,
      ...(spec.managedNetwork?.mtu === undefined ? {} : { mtu: spec.managedNetwork.mtu }),
      ...(spec.managedNetwork?.enablePortSecurity === undefined ? {} : { port_security_enabled: spec.managedNetwork.enablePortSecurity }),
    },
    record: (status, id) => {
      status.network = { ...((status.network as JsonObject | undefined) ?? {}), id, name };
    },
  });
  if (!network.ready) return undefined;

  const subnetSpec = spec.managedSubnets![0];
  const subnet = await pass.ensure('subnet', subnetActuator(neutron), {
    recordedId: networkStatus?.subnets?.[0]?.id,
    nothingToAdopt: network.found === 'created',
    desired: {
      name,
      network_id: network.resource.id,
      cidr: subnetSpec.cidr,
      ip_version: subnetSpec.cidr.includes(':') ? 6 : 4,
      description: `Created by capo-apiserver for cluster ${cluster.namespace}/${cluster.name}`,
      ...(subnetSpec.dnsNameservers === undefined ? {} : { dns_nameservers: subnetSpec.dnsNameservers }),
      ...(subnetSpec.allocationPools === undefined ? {} : { allocation_pools: subnetSpec.allocationPools }),
    },
    record: (status, id) => {
      const current = (status.network as JsonObject | undefined) ?? { id: network.resource.id, name };
      status.network = { ...current, subnets: [{ id, name, cidr: subnetSpec.cidr }] };
    },
  });
  await syncDnsNameservers(context, subnet.resource, subnetSpec.dnsNameservers ?? []);
  pass.observe((status) => {
    status.network = {
      id: network.resource.id,
      name: network.resource.name,
      subnets: [{ id: subnet.resource.id, name: subnet.resource.name, cidr: subnet.resource.cidr }],
    };
  });
  return subnet.ready ? { networkId: network.resource.id, subnets: [{ id: subnet.resource.id, cidr: subnet.resource.cidr }] } : undefined;
}

/** CAPO lets users change the DNS servers of the managed subnet; the change is applied in place. */
async function syncDnsNameservers(context: ClusterContext, subnet: Subnet, wanted: readonly string[]): Promise<void> {
  const current = subnet.dns_nameservers ?? [];
  if (current.length === wanted.length && current.every((server, index) => server === wanted[index])) return;
  await context.cloud.clients.neutron.updateSubnet(subnet.id, { dns_nameservers: wanted });
  context.pass.invalidate('subnet');
}

async function ensureManagedRouter(context: ClusterContext, subnetId: string, externalNetworkId: string): Promise<Router | undefined> {
  const { pass, spec, cluster, cloud } = context;
  const name = clusterResourceName(cluster);
  const externalIPs = spec.managedRouter?.externalIPs ?? [];
  const fixedIps = [];
  for (const externalIP of externalIPs) {
    fixedIps.push({
      ...(externalIP.fixedIP === undefined ? {} : { ip_address: externalIP.fixedIP }),
      ...(externalIP.subnet.id === undefined
        ? {
            subnet_id: (
              await resolveSubnet(
                cloud.clients.neutron,
                externalIP.subnet as NeutronParam<SubnetFilter>,
                'spec.managedRouter.externalIPs[].subnet',
                externalNetworkId,
              )
            ).id,
          }
        : { subnet_id: externalIP.subnet.id }),
    });
  }
  const router = await pass.ensure('router', routerActuator(cloud.clients.neutron), {
    recordedId: (pass.status.router as NamedId | undefined)?.id,
    desired: {
      name,
      description: `Created by capo-apiserver for cluster ${cluster.namespace}/${cluster.name}`,
      external_gateway_info: { network_id: externalNetworkId, ...(fixedIps.length > 0 ? { external_fixed_ips: fixedIps } : {}) },
      interfaceSubnetIds: [subnetId],
    },
    record: (status, id) => {
      status.router = { id, name };
    },
  });
  return router.ready ? router.resource : undefined;
}

/** A router the user brought: we add our interface (and remove it on delete) but never own the router. */
async function attachExistingRouter(context: ClusterContext, subnetId: string): Promise<Router> {
  const { pass, spec, cloud } = context;
  const neutron = cloud.clients.neutron;
  const recorded = pass.status.router as NamedId | undefined;
  const router = recorded?.id ? await neutron.getRouter(recorded.id) : await resolveRouter(context, spec.router!);
  const interfaces = await neutron.listPorts({ device_id: router.id });
  if (!interfaces.some((port) => port.fixed_ips.some((fixed) => fixed.subnet_id === subnetId))) {
    await neutron.addInterface(router.id, { subnet_id: subnetId });
  }
  return router;
}

async function resolveRouter(context: ClusterContext, param: NonNullable<ClusterContext['spec']['router']>): Promise<Router> {
  const neutron = context.cloud.clients.neutron;
  if (param.id) return neutron.getRouter(param.id);
  const routers = await neutron.listRouters(neutronQuery((param.filter ?? {}) as NeutronFilter));
  if (routers.length !== 1) throw new TerminalError(`spec.router.filter matches ${routers.length} routers; it must match exactly one`);
  return routers[0];
}

/** The user's network and subnets, resolved once and frozen in status (a renamed network must not move the cluster). */
async function reconcileExistingNetwork(context: ClusterContext): Promise<Omit<Networking, 'externalNetworkId'>> {
  const { pass, spec, cloud } = context;
  const neutron = cloud.clients.neutron;
  const recorded = pass.status.network as RecordedNetwork | undefined;
  if (recorded?.id && recorded.subnets && recorded.subnets.length > 0) {
    return { networkId: recorded.id, subnets: recorded.subnets.map(({ id, cidr }) => ({ id, cidr })) };
  }
  if (!spec.network) throw new TerminalError('spec.managedSubnets is empty and spec.network is not set: the cluster has no network');
  const network = await resolveNetwork(neutron, spec.network as NeutronParam, 'spec.network');
  const subnets =
    spec.subnets && spec.subnets.length > 0
      ? await Promise.all(spec.subnets.map((param, index) => resolveSubnet(neutron, param as NeutronParam<SubnetFilter>, `spec.subnets[${index}]`, network.id)))
      : await neutron.listSubnets({ network_id: network.id });
  if (subnets.length === 0) throw new TerminalError(`network ${network.name} (${network.id}) has no subnets`);
  pass.observe((status) => {
    status.network = { id: network.id, name: network.name, subnets: subnets.map((subnet) => ({ id: subnet.id, name: subnet.name, cidr: subnet.cidr })) };
  });
  return { networkId: network.id, subnets: subnets.map((subnet) => ({ id: subnet.id, cidr: subnet.cidr })) };
}

/** Our router, or our interface on the user's router: the router step's undoing. */
export async function deleteRouter(context: ClusterContext): Promise<boolean> {
  const { pass, spec, cluster, cloud } = context;
  const network = pass.status.network as RecordedNetwork | undefined;
  const recorded = pass.status.router as NamedId | undefined;
  if (spec.router) {
    if (recorded && network?.subnets?.[0]) await detachExistingRouter(context, recorded.id, network.subnets[0].id);
  } else if (hasManagedSubnets(spec)) {
    if (!(await pass.remove(routerActuator(cloud.clients.neutron), { recordedId: recorded?.id, name: clusterResourceName(cluster), owner: pass.owner })))
      return false;
  }
  if (recorded) await pass.record((status) => delete status.router);
  return true;
}

/** The subnet, then the network: only what managedSubnets made us create. */
export async function deleteNetwork(context: ClusterContext): Promise<boolean> {
  const { pass, spec, cluster, cloud } = context;
  if (!hasManagedSubnets(spec)) return true;
  const neutron = cloud.clients.neutron;
  const name = clusterResourceName(cluster);
  const network = pass.status.network as RecordedNetwork | undefined;
  if (!(await pass.remove(subnetActuator(neutron), { recordedId: network?.subnets?.[0]?.id, name, owner: pass.owner }))) return false;
  if (!(await pass.remove(networkActuator(neutron), { recordedId: network?.id, name, owner: pass.owner }))) return false;
  if (network) await pass.record((status) => delete status.network);
  return true;
}

async function detachExistingRouter(context: ClusterContext, routerId: string, subnetId: string): Promise<void> {
  try {
    await context.cloud.clients.neutron.removeInterface(routerId, { subnet_id: subnetId });
  } catch (error) {
    // Already detached, or the router is gone: either way nothing of ours is left on it.
    if (!isNotFound(error)) throw error;
  }
}
