/**
 * Neutron (network service), API v2.0. Bodies and filters use Neutron's own
 * field names, so what the design notes and the API reference say maps
 * one-to-one onto these calls.
 *
 * Tags: whether a create body may carry `tags` depends on the Neutron
 * release (Zed answers 400 "Attribute 'tags' not allowed in POST", and
 * takes a port's but drops them), so the portable way is to create without
 * them and call `replaceTags` after, as CAPO does; `createTakesTags` tells
 * whether the create can carry them and save that call. Tags and tag filters need the
 * `standard-attr-tag` extension; `listExtensions()` tells whether it is
 * loaded.
 */
import { z } from 'zod';
import { OpenStackError } from '../errors.js';
import type { ServiceTransport } from '../transport.js';
import { anyBody, linkedList, pick, recordOf, segment, ServiceCalls, tagQuery, type Query, type TagFilters } from './common.js';

const tags = z.array(z.string());

const networkSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  status: z.string(),
  admin_state_up: z.boolean(),
  subnets: z.array(z.string()),
  description: z.string().optional(),
  project_id: z.string().optional(),
  shared: z.boolean().optional(),
  'router:external': z.boolean().optional(),
  is_default: z.boolean().optional(),
  mtu: z.number().optional(),
  port_security_enabled: z.boolean().optional(),
  availability_zones: z.array(z.string()).optional(),
  tags: tags.optional(),
});
export type Network = z.infer<typeof networkSchema>;

const allocationPool = z.looseObject({ start: z.string(), end: z.string() });

const subnetSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  network_id: z.string(),
  cidr: z.string(),
  ip_version: z.number(),
  gateway_ip: z.string().nullable(),
  enable_dhcp: z.boolean().optional(),
  dns_nameservers: z.array(z.string()).optional(),
  allocation_pools: z.array(allocationPool).optional(),
  host_routes: z.array(z.looseObject({ destination: z.string(), nexthop: z.string() })).optional(),
  description: z.string().optional(),
  project_id: z.string().optional(),
  tags: tags.optional(),
});
export type Subnet = z.infer<typeof subnetSchema>;

const ipOnSubnet = z.looseObject({ subnet_id: z.string(), ip_address: z.string() });

const routerSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  status: z.string(),
  admin_state_up: z.boolean(),
  external_gateway_info: z
    .looseObject({
      network_id: z.string(),
      enable_snat: z.boolean().optional(),
      external_fixed_ips: z.array(ipOnSubnet).optional(),
    })
    .nullable(),
  routes: z.array(z.looseObject({ destination: z.string(), nexthop: z.string() })).optional(),
  description: z.string().optional(),
  project_id: z.string().optional(),
  tags: tags.optional(),
  /** Of the standard-attr-revisions extension: bumped by every change, an interface added or removed included. */
  revision_number: z.number().optional(),
});
export type Router = z.infer<typeof routerSchema>;

const routerInterfaceSchema = z.looseObject({
  id: z.string(),
  port_id: z.string(),
  subnet_id: z.string(),
  subnet_ids: z.array(z.string()).optional(),
  network_id: z.string().optional(),
  project_id: z.string().optional(),
});
/** What adding or removing a router interface answers: the router id, and the interface's port and subnet. */
export type RouterInterface = z.infer<typeof routerInterfaceSchema>;

const subPortSchema = z.looseObject({ port_id: z.string(), segmentation_type: z.string(), segmentation_id: z.number() });
export type SubPort = z.infer<typeof subPortSchema>;

const portSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  network_id: z.string(),
  status: z.string(),
  admin_state_up: z.boolean(),
  mac_address: z.string(),
  device_id: z.string(),
  device_owner: z.string(),
  fixed_ips: z.array(ipOnSubnet),
  security_groups: z.array(z.string()).optional(),
  allowed_address_pairs: z.array(z.looseObject({ ip_address: z.string(), mac_address: z.string().optional() })).optional(),
  port_security_enabled: z.boolean().optional(),
  'binding:vnic_type': z.string().optional(),
  'binding:profile': z.record(z.string(), z.unknown()).nullish(),
  'binding:host_id': z.string().nullish(),
  trunk_details: z.looseObject({ trunk_id: z.string(), sub_ports: z.array(z.looseObject({ port_id: z.string() })) }).nullish(),
  description: z.string().optional(),
  project_id: z.string().optional(),
  tags: tags.optional(),
});
export type Port = z.infer<typeof portSchema>;

const securityGroupRuleSchema = z.looseObject({
  id: z.string(),
  security_group_id: z.string(),
  direction: z.string(),
  ethertype: z.string(),
  protocol: z.string().nullable(),
  port_range_min: z.number().nullable(),
  port_range_max: z.number().nullable(),
  remote_ip_prefix: z.string().nullable(),
  remote_group_id: z.string().nullable(),
  description: z.string().nullish(),
  project_id: z.string().optional(),
});
export type SecurityGroupRule = z.infer<typeof securityGroupRuleSchema>;

const securityGroupSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  security_group_rules: z.array(securityGroupRuleSchema).optional(),
  stateful: z.boolean().optional(),
  project_id: z.string().optional(),
  tags: tags.optional(),
});
export type SecurityGroup = z.infer<typeof securityGroupSchema>;

const floatingIpSchema = z.looseObject({
  id: z.string(),
  floating_ip_address: z.string(),
  floating_network_id: z.string(),
  status: z.string(),
  port_id: z.string().nullable(),
  fixed_ip_address: z.string().nullable(),
  router_id: z.string().nullish(),
  description: z.string().optional(),
  project_id: z.string().optional(),
  tags: tags.optional(),
});
export type FloatingIp = z.infer<typeof floatingIpSchema>;

const trunkSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  port_id: z.string(),
  status: z.string(),
  admin_state_up: z.boolean(),
  sub_ports: z.array(subPortSchema),
  description: z.string().optional(),
  project_id: z.string().optional(),
  tags: tags.optional(),
});
export type Trunk = z.infer<typeof trunkSchema>;

const extensionSchema = z.looseObject({ alias: z.string(), name: z.string(), description: z.string().optional() });
export type NeutronExtension = z.infer<typeof extensionSchema>;

const quotaUsageSchema = z.looseObject({ limit: z.number(), used: z.number(), reserved: z.number() });
/** Per resource (`network`, `port`, `security_group`, `floatingip`, …); a limit of -1 means unlimited. */
export type NeutronQuotaUsage = z.infer<typeof quotaUsageSchema>;

/** Resources with any of these IDs (Neutron ORs the values of a repeated filter): many known resources in one call. */
export interface IdFilters extends TagFilters {
  id?: readonly string[];
}

export interface NetworkFilters extends IdFilters {
  name?: string;
  /** Only external (true) or only internal (false) networks. */
  'router:external'?: boolean;
  project_id?: string;
}

export interface CreateNetwork {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  mtu?: number;
  port_security_enabled?: boolean;
  tags?: readonly string[];
}

export type UpdateNetwork = Omit<CreateNetwork, 'tags'>;

export interface SubnetFilters extends IdFilters {
  network_id?: string;
  name?: string;
  cidr?: string;
  ip_version?: 4 | 6;
  project_id?: string;
}

export interface AllocationPool {
  start: string;
  end: string;
}

export interface CreateSubnet {
  network_id: string;
  cidr: string;
  ip_version: 4 | 6;
  name?: string;
  description?: string;
  dns_nameservers?: readonly string[];
  allocation_pools?: readonly AllocationPool[];
  /** null: a subnet without a gateway; omitted: Neutron picks the first address. */
  gateway_ip?: string | null;
  enable_dhcp?: boolean;
  tags?: readonly string[];
}

export type UpdateSubnet = Partial<Omit<CreateSubnet, 'network_id' | 'cidr' | 'ip_version' | 'tags'>>;

export interface RouterFilters extends IdFilters {
  name?: string;
  project_id?: string;
}

export interface ExternalGateway {
  network_id: string;
  enable_snat?: boolean;
  external_fixed_ips?: readonly { subnet_id?: string; ip_address?: string }[];
}

export interface CreateRouter {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  external_gateway_info?: ExternalGateway;
  tags?: readonly string[];
}

export interface UpdateRouter {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  /** null removes the gateway. */
  external_gateway_info?: ExternalGateway | null;
}

/** Identifies the interface by subnet (Neutron creates the port on the subnet's gateway IP) or by an existing port. */
export type RouterInterfaceSpec = { subnet_id: string } | { port_id: string };

/** One `fixed_ips` filter entry; ports match when one of their addresses satisfies every given field. */
export interface FixedIpFilter {
  ip_address?: string;
  subnet_id?: string;
}

export interface PortFilters extends IdFilters {
  name?: string;
  network_id?: string;
  device_id?: string;
  /** Several owners match any of them (router interfaces come in four kinds). */
  device_owner?: string | readonly string[];
  fixed_ips?: readonly FixedIpFilter[];
  /** Ports using any of these security groups. */
  security_groups?: string | readonly string[];
  project_id?: string;
}

export interface AddressPair {
  ip_address: string;
  mac_address?: string;
}

export interface CreatePort {
  network_id: string;
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  mac_address?: string;
  fixed_ips?: readonly { subnet_id?: string; ip_address?: string }[];
  /** Only with port security on; Neutron rejects groups on a port without it. */
  security_groups?: readonly string[];
  allowed_address_pairs?: readonly AddressPair[];
  port_security_enabled?: boolean;
  propagate_uplink_status?: boolean;
  device_id?: string;
  device_owner?: string;
  'binding:vnic_type'?: string;
  'binding:profile'?: Readonly<Record<string, unknown>>;
  'binding:host_id'?: string;
  tags?: readonly string[];
  /**
   * Further attributes (of extensions this client does not model) merged
   * verbatim into the port body. A key that is also a field above is
   * refused rather than silently overriding it.
   */
  value_specs?: Readonly<Record<string, unknown>>;
}

export type UpdatePort = Partial<Omit<CreatePort, 'network_id' | 'tags'>>;

export interface SecurityGroupFilters extends IdFilters {
  name?: string;
  project_id?: string;
}

export interface CreateSecurityGroup {
  name: string;
  description?: string;
  stateful?: boolean;
  tags?: readonly string[];
}

export interface UpdateSecurityGroup {
  name?: string;
  description?: string;
}

export interface SecurityGroupRuleFilters {
  security_group_id?: string;
  direction?: 'ingress' | 'egress';
}

export interface CreateSecurityGroupRule {
  security_group_id: string;
  direction: 'ingress' | 'egress';
  /** Defaults to IPv4 in Neutron. */
  ethertype?: 'IPv4' | 'IPv6';
  /** Omitted: any protocol. */
  protocol?: string;
  port_range_min?: number;
  port_range_max?: number;
  remote_ip_prefix?: string;
  remote_group_id?: string;
  description?: string;
}

export interface FloatingIpFilters extends IdFilters {
  floating_ip_address?: string;
  floating_network_id?: string;
  port_id?: string;
  /** Floating IPs routed through this router (the ones keeping its interfaces in use). */
  router_id?: string;
  description?: string;
  project_id?: string;
}

export interface CreateFloatingIp {
  floating_network_id: string;
  /** A specific address; needs admin rights on most clouds. */
  floating_ip_address?: string;
  port_id?: string;
  fixed_ip_address?: string;
  subnet_id?: string;
  description?: string;
  tags?: readonly string[];
}

export interface UpdateFloatingIp {
  /** A port id associates; null disassociates. */
  port_id?: string | null;
  fixed_ip_address?: string;
  description?: string;
}

export interface TrunkFilters extends TagFilters {
  name?: string;
  port_id?: string;
}

export interface CreateTrunk {
  port_id: string;
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  sub_ports?: readonly SubPort[];
  tags?: readonly string[];
}

/** The resource collections `standard-attr-tag` covers and the reconciler tags. */
export type TaggableResource = 'networks' | 'subnets' | 'ports' | 'routers' | 'floatingips' | 'security-groups' | 'trunks';

const networkList = linkedList('networks', networkSchema);
const subnetList = linkedList('subnets', subnetSchema);
const routerList = linkedList('routers', routerSchema);
const portList = linkedList('ports', portSchema);
const securityGroupList = linkedList('security_groups', securityGroupSchema);
const securityGroupRuleList = linkedList('security_group_rules', securityGroupRuleSchema);
const floatingIpList = linkedList('floatingips', floatingIpSchema);
const trunkList = linkedList('trunks', trunkSchema);

const networkBody = z.object({ network: networkSchema });
const subnetBody = z.object({ subnet: subnetSchema });
const routerBody = z.object({ router: routerSchema });
const portBody = z.object({ port: portSchema });
const securityGroupBody = z.object({ security_group: securityGroupSchema });
const securityGroupRuleBody = z.object({ security_group_rule: securityGroupRuleSchema });
const securityGroupRulesBody = z.object({ security_group_rules: z.array(securityGroupRuleSchema) });
const floatingIpBody = z.object({ floatingip: floatingIpSchema });
const trunkBody = z.object({ trunk: trunkSchema });
const tagsBody = z.object({ tags });
const extensionsBody = z.object({ extensions: z.array(extensionSchema) });
const quotaDetailsBody = z.object({ quota: recordOf(quotaUsageSchema) });

export class NeutronClient {
  private readonly calls: ServiceCalls;
  private tagCreation: Promise<boolean> | undefined;

  constructor(transport: ServiceTransport) {
    this.calls = new ServiceCalls(transport, 'network');
  }

  /** For feature detection (`standard-attr-tag`, `trunk`, `quota_details`, …); worth caching per endpoint. */
  async listExtensions(): Promise<NeutronExtension[]> {
    return (await this.calls.get('/v2.0/extensions', extensionsBody)).extensions;
  }

  /**
   * Whether a create may carry the resource's tags: with the `tag-creation`
   * extension (Neutron 2024.1 on), for every taggable resource. The
   * extensions are read once per client; when that read fails the answer is
   * no (a create then tagged by a PUT is right on every release) and the
   * next call asks again.
   */
  async createTakesTags(): Promise<boolean> {
    this.tagCreation ??= this.listExtensions().then((extensions) => extensions.some((extension) => extension.alias === 'tag-creation'));
    const asked = this.tagCreation;
    try {
      return await asked;
    } catch {
      if (this.tagCreation === asked) this.tagCreation = undefined;
      return false;
    }
  }

  async listNetworks(filters: NetworkFilters = {}): Promise<Network[]> {
    const query = { ...pick(filters, ['id', 'name', 'router:external', 'project_id']), ...tagQuery('network', filters) };
    return this.calls.list('/v2.0/networks', networkList, { query });
  }

  /** Every network with `router:external=true`; deciding among zero, one or several is the caller's. */
  async findExternalNetworks(): Promise<Network[]> {
    return this.listNetworks({ 'router:external': true });
  }

  async getNetwork(id: string): Promise<Network> {
    return (await this.calls.get(`/v2.0/networks/${segment(id)}`, networkBody)).network;
  }

  async createNetwork(network: CreateNetwork): Promise<Network> {
    return (await this.calls.post('/v2.0/networks', { network }, networkBody)).network;
  }

  async updateNetwork(id: string, network: UpdateNetwork): Promise<Network> {
    return (await this.calls.put(`/v2.0/networks/${segment(id)}`, { network }, networkBody)).network;
  }

  /** Also deletes the network's subnets; fails with 409 while ports other than DHCP's remain. */
  async deleteNetwork(id: string): Promise<void> {
    return this.calls.delete(`/v2.0/networks/${segment(id)}`);
  }

  async listSubnets(filters: SubnetFilters = {}): Promise<Subnet[]> {
    const query = { ...pick(filters, ['id', 'network_id', 'name', 'cidr', 'ip_version', 'project_id']), ...tagQuery('network', filters) };
    return this.calls.list('/v2.0/subnets', subnetList, { query });
  }

  async getSubnet(id: string): Promise<Subnet> {
    return (await this.calls.get(`/v2.0/subnets/${segment(id)}`, subnetBody)).subnet;
  }

  async createSubnet(subnet: CreateSubnet): Promise<Subnet> {
    return (await this.calls.post('/v2.0/subnets', { subnet }, subnetBody)).subnet;
  }

  async updateSubnet(id: string, subnet: UpdateSubnet): Promise<Subnet> {
    return (await this.calls.put(`/v2.0/subnets/${segment(id)}`, { subnet }, subnetBody)).subnet;
  }

  async deleteSubnet(id: string): Promise<void> {
    return this.calls.delete(`/v2.0/subnets/${segment(id)}`);
  }

  async listRouters(filters: RouterFilters = {}): Promise<Router[]> {
    const query = { ...pick(filters, ['id', 'name', 'project_id']), ...tagQuery('network', filters) };
    return this.calls.list('/v2.0/routers', routerList, { query });
  }

  async getRouter(id: string): Promise<Router> {
    return (await this.calls.get(`/v2.0/routers/${segment(id)}`, routerBody)).router;
  }

  async createRouter(router: CreateRouter): Promise<Router> {
    return (await this.calls.post('/v2.0/routers', { router }, routerBody)).router;
  }

  async updateRouter(id: string, router: UpdateRouter): Promise<Router> {
    return (await this.calls.put(`/v2.0/routers/${segment(id)}`, { router }, routerBody)).router;
  }

  /** Fails with 409 while the router still has interfaces. */
  async deleteRouter(id: string): Promise<void> {
    return this.calls.delete(`/v2.0/routers/${segment(id)}`);
  }

  /**
   * A PUT, so the session may repeat it after a transient failure; if the
   * first attempt had landed, the repeat answers 400 ("already has a port on
   * subnet"). Check the router's ports (`listPorts({device_id})`) before
   * treating that as a failure.
   */
  async addInterface(routerId: string, spec: RouterInterfaceSpec): Promise<RouterInterface> {
    return this.calls.put(`/v2.0/routers/${segment(routerId)}/add_router_interface`, spec, routerInterfaceSchema);
  }

  async removeInterface(routerId: string, spec: RouterInterfaceSpec): Promise<RouterInterface> {
    return this.calls.put(`/v2.0/routers/${segment(routerId)}/remove_router_interface`, spec, routerInterfaceSchema);
  }

  async listPorts(filters: PortFilters = {}): Promise<Port[]> {
    const query: Query = {
      ...pick(filters, ['id', 'name', 'network_id', 'device_id', 'device_owner', 'security_groups', 'project_id']),
      ...tagQuery('network', filters),
    };
    if (filters.fixed_ips !== undefined && filters.fixed_ips.length > 0) {
      query.fixed_ips = filters.fixed_ips.flatMap((entry) =>
        Object.entries(entry)
          .filter(([, value]) => value !== undefined)
          .map(([key, value]) => `${key}=${value}`),
      );
    }
    return this.calls.list('/v2.0/ports', portList, { query });
  }

  async getPort(id: string): Promise<Port> {
    return (await this.calls.get(`/v2.0/ports/${segment(id)}`, portBody)).port;
  }

  async createPort(port: CreatePort): Promise<Port> {
    return (await this.calls.post('/v2.0/ports', { port: withValueSpecs(port) }, portBody)).port;
  }

  async updatePort(id: string, port: UpdatePort): Promise<Port> {
    return (await this.calls.put(`/v2.0/ports/${segment(id)}`, { port: withValueSpecs(port) }, portBody)).port;
  }

  async deletePort(id: string): Promise<void> {
    return this.calls.delete(`/v2.0/ports/${segment(id)}`);
  }

  async listSecurityGroups(filters: SecurityGroupFilters = {}): Promise<SecurityGroup[]> {
    const query = { ...pick(filters, ['id', 'name', 'project_id']), ...tagQuery('network', filters) };
    return this.calls.list('/v2.0/security-groups', securityGroupList, { query });
  }

  async getSecurityGroup(id: string): Promise<SecurityGroup> {
    return (await this.calls.get(`/v2.0/security-groups/${segment(id)}`, securityGroupBody)).security_group;
  }

  /** Neutron adds its default egress rules (any IPv4, any IPv6) to every new group. */
  async createSecurityGroup(group: CreateSecurityGroup): Promise<SecurityGroup> {
    return (await this.calls.post('/v2.0/security-groups', { security_group: group }, securityGroupBody)).security_group;
  }

  async updateSecurityGroup(id: string, group: UpdateSecurityGroup): Promise<SecurityGroup> {
    return (await this.calls.put(`/v2.0/security-groups/${segment(id)}`, { security_group: group }, securityGroupBody)).security_group;
  }

  /** Fails with 409 (`SecurityGroupInUse`) while a port uses the group. */
  async deleteSecurityGroup(id: string): Promise<void> {
    return this.calls.delete(`/v2.0/security-groups/${segment(id)}`);
  }

  async listSecurityGroupRules(filters: SecurityGroupRuleFilters = {}): Promise<SecurityGroupRule[]> {
    const query = pick(filters, ['security_group_id', 'direction']);
    return this.calls.list('/v2.0/security-group-rules', securityGroupRuleList, { query });
  }

  /** A rule equal to an existing one is refused with 409 (`SecurityGroupRuleExists`). */
  async createSecurityGroupRule(rule: CreateSecurityGroupRule): Promise<SecurityGroupRule> {
    return (await this.calls.post('/v2.0/security-group-rules', { security_group_rule: rule }, securityGroupRuleBody)).security_group_rule;
  }

  /** One request for many rules (Neutron's bulk create): all are created, or none. */
  async createSecurityGroupRules(rules: readonly CreateSecurityGroupRule[]): Promise<SecurityGroupRule[]> {
    return (await this.calls.post('/v2.0/security-group-rules', { security_group_rules: rules }, securityGroupRulesBody)).security_group_rules;
  }

  async deleteSecurityGroupRule(id: string): Promise<void> {
    return this.calls.delete(`/v2.0/security-group-rules/${segment(id)}`);
  }

  async listFloatingIps(filters: FloatingIpFilters = {}): Promise<FloatingIp[]> {
    const query = {
      ...pick(filters, ['id', 'floating_ip_address', 'floating_network_id', 'port_id', 'router_id', 'description', 'project_id']),
      ...tagQuery('network', filters),
    };
    return this.calls.list('/v2.0/floatingips', floatingIpList, { query });
  }

  async getFloatingIp(id: string): Promise<FloatingIp> {
    return (await this.calls.get(`/v2.0/floatingips/${segment(id)}`, floatingIpBody)).floatingip;
  }

  async createFloatingIp(floatingIp: CreateFloatingIp): Promise<FloatingIp> {
    return (await this.calls.post('/v2.0/floatingips', { floatingip: floatingIp }, floatingIpBody)).floatingip;
  }

  /** Association is asynchronous on real clouds: `status` turns ACTIVE (or DOWN after disassociation) later. */
  async updateFloatingIp(id: string, floatingIp: UpdateFloatingIp): Promise<FloatingIp> {
    return (await this.calls.put(`/v2.0/floatingips/${segment(id)}`, { floatingip: floatingIp }, floatingIpBody)).floatingip;
  }

  async deleteFloatingIp(id: string): Promise<void> {
    return this.calls.delete(`/v2.0/floatingips/${segment(id)}`);
  }

  async listTrunks(filters: TrunkFilters = {}): Promise<Trunk[]> {
    const query = { ...pick(filters, ['name', 'port_id']), ...tagQuery('network', filters) };
    return this.calls.list('/v2.0/trunks', trunkList, { query });
  }

  async getTrunk(id: string): Promise<Trunk> {
    return (await this.calls.get(`/v2.0/trunks/${segment(id)}`, trunkBody)).trunk;
  }

  async createTrunk(trunk: CreateTrunk): Promise<Trunk> {
    return (await this.calls.post('/v2.0/trunks', { trunk }, trunkBody)).trunk;
  }

  /** Fails with 409 while the parent port is bound to a server; remove subports first or delete the server. */
  async deleteTrunk(id: string): Promise<void> {
    return this.calls.delete(`/v2.0/trunks/${segment(id)}`);
  }

  /** Answers the whole trunk, without the usual `trunk` envelope. */
  async addSubports(trunkId: string, subPorts: readonly SubPort[]): Promise<Trunk> {
    return this.calls.put(`/v2.0/trunks/${segment(trunkId)}/add_subports`, { sub_ports: subPorts }, trunkSchema);
  }

  async removeSubports(trunkId: string, portIds: readonly string[]): Promise<Trunk> {
    const body = { sub_ports: portIds.map((port_id) => ({ port_id })) };
    return this.calls.put(`/v2.0/trunks/${segment(trunkId)}/remove_subports`, body, trunkSchema);
  }

  /** Sets exactly these tags, replacing any others. */
  async replaceTags(resource: TaggableResource, id: string, newTags: readonly string[]): Promise<string[]> {
    return (await this.calls.put(`/v2.0/${resource}/${segment(id)}/tags`, { tags: newTags }, tagsBody)).tags;
  }

  async addTag(resource: TaggableResource, id: string, tag: string): Promise<void> {
    await this.calls.put(`/v2.0/${resource}/${segment(id)}/tags/${segment(tag)}`, undefined, anyBody);
  }

  async removeTag(resource: TaggableResource, id: string, tag: string): Promise<void> {
    return this.calls.delete(`/v2.0/${resource}/${segment(id)}/tags/${segment(tag)}`);
  }

  /** Limit, use and reservations per resource (needs the `quota_details` extension). */
  async getQuotas(projectId: string): Promise<Record<string, NeutronQuotaUsage>> {
    return (await this.calls.get(`/v2.0/quotas/${segment(projectId)}/details`, quotaDetailsBody)).quota;
  }
}

function withValueSpecs(port: Partial<CreatePort>): Record<string, unknown> {
  const { value_specs: valueSpecs, ...fields } = port;
  if (valueSpecs === undefined) return fields;
  const clash = Object.keys(valueSpecs).find((key) => key in fields);
  if (clash !== undefined) {
    throw new OpenStackError({ kind: 'BadRequest', detail: `port value_specs may not set "${clash}", which is a port field of its own`, service: 'network' });
  }
  return { ...fields, ...valueSpecs };
}
