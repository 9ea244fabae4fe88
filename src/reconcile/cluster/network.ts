/**
 * Cluster networking: the external network, then either the managed
 * network, subnet and router (managedSubnets), or the user's existing
 * network, subnets and router, looked up once and frozen in status.
 */
import { isNotFound, type Network, type Router, type Subnet } from '../../openstack/index.js';
import { neutronQuery, type NeutronFilter, type NeutronParam, type SubnetFilter } from '../../capo/neutron-query.js';
import { resolveNetwork, resolveSubnet } from '../neutron-filters.js';
import type { JsonObject } from '../../storage/interface.js';
import { TerminalError } from '../controller.js';
import { clusterResourceName } from '../../capo/names.js';
import { remove } from '../resource/engine.js';
import { networkActuator } from '../resource/network.js';
import { routerActuator } from '../resource/router.js';
import { subnetActuator } from '../resource/subnet.js';
import type { ClusterContext } from './context.js';

export interface Networking {
  ready: boolean;
  externalNetworkId?: string;
  networkId?: string;
  subnets: { id: string; cidr: string }[];
  routerIps: string[];
}

/** How often to look again for an external network the user has to name. */
const ambiguousRequeueMs = 5 * 60_000;

interface NamedId {
  id: string;
  name: string;
}

export async function reconcileNetworking(context: ClusterContext): Promise<Networking> {
  const { pass, spec } = context;
  const external = await reconcileExternalNetwork(context);
  if (external === 'ambiguous') return { ready: false, subnets: [], routerIps: [] };
  const managed = (spec.managedSubnets ?? []).length > 0;
  const result = managed ? await reconcileManagedNetwork(context, external?.id) : await reconcileExistingNetwork(context);
  pass.condition(
    result.ready
      ? { type: 'NetworkReady', status: 'True', reason: 'Ready' }
      : { type: 'NetworkReady', status: 'False', reason: 'Provisioning', message: 'waiting for the network, subnet and router' },
  );
  return { ...result, externalNetworkId: external?.id };
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

async function reconcileManagedNetwork(context: ClusterContext, externalNetworkId: string | undefined): Promise<Omit<Networking, 'externalNetworkId'>> {
  const { pass, spec, cluster, cloud } = context;
  const neutron = cloud.clients.neutron;
  const name = clusterResourceName(cluster);
  const networkStatus = pass.status.network as (NamedId & { subnets?: (NamedId & { cidr: string })[] }) | undefined;

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
  if (!network.ready) return { ready: false, networkId: network.resource.id, subnets: [], routerIps: [] };

  const subnetSpec = spec.managedSubnets![0];
  const subnet = await pass.ensure('subnet', subnetActuator(neutron), {
    recordedId: networkStatus?.subnets?.[0]?.id,
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
  const subnets = [{ id: subnet.resource.id, cidr: subnet.resource.cidr }];
  pass.observe((status) => {
    status.network = { id: network.resource.id, name: network.resource.name, subnets: [{ id: subnet.resource.id, name: subnet.resource.name, cidr: subnet.resource.cidr }] };
  });

  if (externalNetworkId === undefined && spec.router === undefined) {
    pass.observe((status) => delete status.router);
    return { ready: subnet.ready, networkId: network.resource.id, subnets, routerIps: [] };
  }
  const router = spec.router ? await attachExistingRouter(context, subnet.resource.id) : await ensureManagedRouter(context, subnet.resource.id, externalNetworkId!);
  if (!router) return { ready: false, networkId: network.resource.id, subnets, routerIps: [] };
  const ips = (router.external_gateway_info?.external_fixed_ips ?? []).map((fixed) => fixed.ip_address).filter((ip): ip is string => typeof ip === 'string');
  pass.observe((status) => {
    status.router = { id: router.id, name: router.name, ips };
  });
  return { ready: subnet.ready, networkId: network.resource.id, subnets, routerIps: ips };
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
      ...(externalIP.subnet.id === undefined ? { subnet_id: (await resolveSubnet(cloud.clients.neutron, externalIP.subnet as NeutronParam<SubnetFilter>, 'spec.managedRouter.externalIPs[].subnet', externalNetworkId)).id } : { subnet_id: externalIP.subnet.id }),
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
  const recorded = pass.status.network as (NamedId & { subnets?: (NamedId & { cidr: string })[] }) | undefined;
  if (recorded?.id && recorded.subnets && recorded.subnets.length > 0) {
    return { ready: true, networkId: recorded.id, subnets: recorded.subnets.map(({ id, cidr }) => ({ id, cidr })), routerIps: ((pass.status.router as JsonObject | undefined)?.ips as string[] | undefined) ?? [] };
  }
  if (!spec.network) throw new TerminalError('spec.managedSubnets is empty and spec.network is not set: the cluster has no network');
  const network = await resolveNetwork(neutron, spec.network as NeutronParam, 'spec.network');
  const subnets = spec.subnets && spec.subnets.length > 0
    ? await Promise.all(spec.subnets.map((param, index) => resolveSubnet(neutron, param as NeutronParam<SubnetFilter>, `spec.subnets[${index}]`, network.id)))
    : await neutron.listSubnets({ network_id: network.id });
  if (subnets.length === 0) throw new TerminalError(`network ${network.name} (${network.id}) has no subnets`);
  pass.observe((status) => {
    status.network = { id: network.id, name: network.name, subnets: subnets.map((subnet) => ({ id: subnet.id, name: subnet.name, cidr: subnet.cidr })) };
  });
  let routerIps: string[] = [];
  if (spec.router) {
    const router = await attachExistingRouter(context, subnets[0].id);
    routerIps = (router.external_gateway_info?.external_fixed_ips ?? []).map((fixed) => fixed.ip_address).filter((ip): ip is string => typeof ip === 'string');
    pass.observe((status) => {
      status.router = { id: router.id, name: router.name, ips: routerIps };
    });
  }
  return { ready: true, networkId: network.id, subnets: subnets.map((subnet) => ({ id: subnet.id, cidr: subnet.cidr })), routerIps };
}

/** Router, then subnet and network; only what managedSubnets made us create. A user's router only loses our interface. */
export async function deleteNetworking(context: ClusterContext): Promise<boolean> {
  const { pass, spec, cluster, cloud } = context;
  const neutron = cloud.clients.neutron;
  const name = clusterResourceName(cluster);
  const network = pass.status.network as (NamedId & { subnets?: NamedId[] }) | undefined;
  if ((spec.managedSubnets ?? []).length === 0) {
    if (spec.router && pass.status.router && network?.subnets?.[0]) {
      await detachExistingRouter(context, (pass.status.router as NamedId).id, network.subnets[0].id);
    }
    return true;
  }
  if (spec.router) {
    if (pass.status.router && network?.subnets?.[0]) await detachExistingRouter(context, (pass.status.router as NamedId).id, network.subnets[0].id);
  } else if (!pass.noteRemoval(await remove(routerActuator(neutron), { recordedId: (pass.status.router as NamedId | undefined)?.id, name, owner: pass.owner }))) {
    return false;
  }
  if (pass.status.router) await pass.record((status) => delete status.router);
  if (!pass.noteRemoval(await remove(subnetActuator(neutron), { recordedId: network?.subnets?.[0]?.id, name, owner: pass.owner }))) return false;
  if (!pass.noteRemoval(await remove(networkActuator(neutron), { recordedId: network?.id, name, owner: pass.owner }))) return false;
  if (pass.status.network) await pass.record((status) => delete status.network);
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
