/** Neutron's stored objects, before a caller-specific view is rendered. */
import type { IpVersion } from './ip.js';

/** Who is asking: the token's project, and whether it carries the admin role. */
export interface Caller {
  projectId: string;
  isAdmin: boolean;
  roles: readonly string[];
}

/** Neutron's "standard attributes": every top-level resource has them. */
export interface Standard {
  id: string;
  /** '' for objects Neutron owns itself (router gateway and floating IP ports). */
  projectId: string;
  description: string;
  tags: string[];
  createdAt: string;
  updatedAt: string;
  revision: number;
}

/** How every view ends: the standard attributes a resource shows, in Neutron's order. */
export function standardView(r: Standard) {
  return { tags: [...r.tags], created_at: r.createdAt, updated_at: r.updatedAt, revision_number: r.revision, project_id: r.projectId };
}

export interface Network extends Standard {
  name: string;
  adminStateUp: boolean;
  mtu: number;
  shared: boolean;
  external: boolean;
  portSecurity: boolean;
  networkType: string;
  physicalNetwork: string | null;
  segmentationId: number | null;
  isDefault: boolean;
  availabilityZoneHints: string[];
}

export interface Pool {
  start: string;
  end: string;
}

export interface HostRoute {
  destination: string;
  nexthop: string;
}

export interface Subnet extends Standard {
  name: string;
  networkId: string;
  ipVersion: IpVersion;
  cidr: string;
  gatewayIp: string | null;
  allocationPools: Pool[];
  dnsNameservers: string[];
  hostRoutes: HostRoute[];
  enableDhcp: boolean;
  ipv6RaMode: string | null;
  ipv6AddressMode: string | null;
  serviceTypes: string[];
}

export interface FixedIp {
  subnet_id: string;
  ip_address: string;
}

export interface AddressPair {
  ip_address: string;
  mac_address: string;
}

export interface DhcpOption {
  opt_name: string;
  opt_value: string;
  ip_version: number;
}

export interface Port extends Standard {
  name: string;
  networkId: string;
  macAddress: string;
  adminStateUp: boolean;
  status: string;
  deviceId: string;
  deviceOwner: string;
  fixedIps: FixedIp[];
  securityGroups: string[];
  portSecurity: boolean;
  allowedAddressPairs: AddressPair[];
  extraDhcpOpts: DhcpOption[];
  hostId: string;
  vnicType: string;
  profile: Record<string, unknown>;
}

export interface Router extends Standard {
  name: string;
  adminStateUp: boolean;
  status: string;
  /** The external network and SNAT flag; the gateway port carries the addresses. */
  gateway: { networkId: string; enableSnat: boolean; portId: string } | null;
  routes: HostRoute[];
  availabilityZoneHints: string[];
}

export interface SecurityGroup extends Standard {
  name: string;
  stateful: boolean;
  /** The per-project group Neutron creates on demand. */
  isDefault: boolean;
}

export interface SecurityGroupRule {
  id: string;
  projectId: string;
  securityGroupId: string;
  direction: 'ingress' | 'egress';
  ethertype: 'IPv4' | 'IPv6';
  protocol: string | null;
  portRangeMin: number | null;
  portRangeMax: number | null;
  remoteIpPrefix: string | null;
  remoteGroupId: string | null;
  description: string;
  createdAt: string;
  updatedAt: string;
  revision: number;
  /** Neutron's internal standard-attribute row id, shown on rules embedded in their group. */
  standardAttrId: number;
}

export interface FloatingIp extends Standard {
  floatingNetworkId: string;
  floatingIpAddress: string;
  /** The hidden `network:floatingip` port holding the external address. */
  floatingPortId: string;
  portId: string | null;
  fixedIpAddress: string | null;
  routerId: string | null;
  status: string;
}

export interface SubPort {
  port_id: string;
  segmentation_type: string;
  segmentation_id: number;
}

export interface Trunk extends Standard {
  name: string;
  portId: string;
  adminStateUp: boolean;
  status: string;
  subPorts: SubPort[];
}

export const DEVICE_OWNER = {
  routerInterface: 'network:router_interface',
  routerGateway: 'network:router_gateway',
  floatingIp: 'network:floatingip',
  dhcp: 'network:dhcp',
} as const;

export const ROUTER_INTERFACE_OWNERS: readonly string[] = [
  'network:router_interface',
  'network:router_interface_distributed',
  'network:ha_router_replicated_interface',
];

/** Ports Neutron itself manages ("trusted"): no security groups, no port-API deletion for router ports. */
export const isNetworkOwned = (deviceOwner: string) => deviceOwner.startsWith('network:') || deviceOwner.startsWith('neutron:');
