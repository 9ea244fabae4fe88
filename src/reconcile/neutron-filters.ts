/**
 * CAPO's Neutron filters (name, description, projectID, tag clauses, and for
 * subnets ipVersion, cidr, gatewayIP) turned into Neutron list queries. The
 * clauses Neutron cannot filter on server side (description, gateway) are
 * applied to the answer, so every clause the user wrote holds.
 */
import type { NeutronClient, Network, Subnet, TagFilters } from '../openstack/index.js';
import { TerminalError } from './controller.js';

export interface NeutronFilter {
  name?: string;
  description?: string;
  projectID?: string;
  tags?: string[];
  tagsAny?: string[];
  notTags?: string[];
  notTagsAny?: string[];
}

export interface SubnetFilter extends NeutronFilter {
  ipVersion?: number;
  cidr?: string;
  gatewayIP?: string;
}

export interface NeutronParam<F = NeutronFilter> {
  id?: string;
  filter?: F;
}

function query(filter: NeutronFilter): TagFilters & { name?: string; project_id?: string } {
  return {
    ...(filter.name === undefined ? {} : { name: filter.name }),
    ...(filter.projectID === undefined ? {} : { project_id: filter.projectID }),
    ...(filter.tags === undefined ? {} : { tags: filter.tags }),
    ...(filter.tagsAny === undefined ? {} : { 'tags-any': filter.tagsAny }),
    ...(filter.notTags === undefined ? {} : { 'not-tags': filter.notTags }),
    ...(filter.notTagsAny === undefined ? {} : { 'not-tags-any': filter.notTagsAny }),
  };
}

/** Exactly one network must match; `what` names the field in the error (e.g. spec.network). */
export async function resolveNetwork(neutron: NeutronClient, param: NeutronParam, what: string, extra: { 'router:external'?: boolean } = {}): Promise<Network> {
  if (param.id) return neutron.getNetwork(param.id);
  const filter = param.filter ?? {};
  let networks = await neutron.listNetworks({ ...query(filter), ...extra });
  if (filter.description !== undefined) networks = networks.filter((network) => network.description === filter.description);
  if (networks.length !== 1) throw new TerminalError(`${what} matches ${networks.length} networks; it must match exactly one`);
  return networks[0];
}

export async function resolveSubnet(neutron: NeutronClient, param: NeutronParam<SubnetFilter>, what: string, networkId?: string): Promise<Subnet> {
  if (param.id) return neutron.getSubnet(param.id);
  const filter = param.filter ?? {};
  let subnets = await neutron.listSubnets({
    ...query(filter),
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
  let groups = await neutron.listSecurityGroups({ project_id: projectId, ...query(filter) });
  if (filter.description !== undefined) groups = groups.filter((group) => group.description === filter.description);
  if (groups.length === 0) throw new TerminalError(`${what} matches no security group`);
  return groups.map((group) => group.id);
}

export function routerQuery(filter: NeutronFilter) {
  return query(filter);
}
