/**
 * A CAPO Neutron parameter (an ID, or a filter) resolved to what it names in
 * the cloud. The clauses Neutron cannot filter on server side (description,
 * gateway) are applied to the answer, so every clause the user wrote holds;
 * a parameter matching no resource, or several where one is required, is a
 * terminal error: retrying cannot make it match.
 */
import { neutronQuery, type NeutronParam, type SubnetFilter } from '../capo/neutron-query.js';
import type { NeutronClient, Network, Subnet } from '../openstack/index.js';
import { TerminalError } from './runtime/controller.js';

/** Exactly one network must match; `what` names the field in the error (e.g. spec.network). */
export async function resolveNetwork(neutron: NeutronClient, param: NeutronParam, what: string, extra: { 'router:external'?: boolean } = {}): Promise<Network> {
  if (param.id) return neutron.getNetwork(param.id);
  const filter = param.filter ?? {};
  let networks = await neutron.listNetworks({ ...neutronQuery(filter), ...extra });
  if (filter.description !== undefined) networks = networks.filter((network) => network.description === filter.description);
  if (networks.length !== 1) throw new TerminalError(`${what} matches ${networks.length} networks; it must match exactly one`);
  return networks[0];
}

export async function resolveSubnet(neutron: NeutronClient, param: NeutronParam<SubnetFilter>, what: string, networkId?: string): Promise<Subnet> {
  if (param.id) return neutron.getSubnet(param.id);
  const filter = param.filter ?? {};
  let subnets = await neutron.listSubnets({
    ...neutronQuery(filter),
    ...(networkId === undefined ? {} : { network_id: networkId }),
    ...(filter.cidr === undefined ? {} : { cidr: filter.cidr }),
    ...(filter.ipVersion === 4 || filter.ipVersion === 6 ? { ip_version: filter.ipVersion } : {}),
  });
  if (filter.description !== undefined) subnets = subnets.filter((subnet) => subnet.description === filter.description);
  if (filter.gatewayIP !== undefined) subnets = subnets.filter((subnet) => subnet.gateway_ip === filter.gatewayIP);
  if (subnets.length !== 1) throw new TerminalError(`${what} matches ${subnets.length} subnets; it must match exactly one`);
  return subnets[0];
}

/** Security groups may match several (CAPO uses every match); none is an error. */
export async function resolveSecurityGroups(neutron: NeutronClient, param: NeutronParam, what: string, projectId: string): Promise<string[]> {
  if (param.id) return [param.id];
  const filter = param.filter ?? {};
  let groups = await neutron.listSecurityGroups({ project_id: projectId, ...neutronQuery(filter) });
  if (filter.description !== undefined) groups = groups.filter((group) => group.description === filter.description);
  if (groups.length === 0) throw new TerminalError(`${what} matches no security group`);
  return groups.map((group) => group.id);
}
