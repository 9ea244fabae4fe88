/** Neutron's stored objects as a state file keeps them (Store.snapshot), validated when read back (Store.restore). */
import { z } from 'zod';
import type { FloatingIp, Network, Port, Router, SecurityGroup, SecurityGroupRule, Subnet, Trunk } from './model.js';

const standard = {
  id: z.string(),
  projectId: z.string(),
  description: z.string(),
  tags: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
  revision: z.number().int(),
};
const hostRoute = z.object({ destination: z.string(), nexthop: z.string() });
const ipVersion = z.union([z.literal(4), z.literal(6)]);

const network = z.object({
  ...standard,
  name: z.string(),
  adminStateUp: z.boolean(),
  mtu: z.number().int(),
  shared: z.boolean(),
  external: z.boolean(),
  portSecurity: z.boolean(),
  networkType: z.string(),
  physicalNetwork: z.string().nullable(),
  segmentationId: z.number().int().nullable(),
  isDefault: z.boolean(),
  availabilityZoneHints: z.array(z.string()),
}) satisfies z.ZodType<Network>;

const subnet = z.object({
  ...standard,
  name: z.string(),
  networkId: z.string(),
  ipVersion,
  cidr: z.string(),
  gatewayIp: z.string().nullable(),
  allocationPools: z.array(z.object({ start: z.string(), end: z.string() })),
  dnsNameservers: z.array(z.string()),
  hostRoutes: z.array(hostRoute),
  enableDhcp: z.boolean(),
  ipv6RaMode: z.string().nullable(),
  ipv6AddressMode: z.string().nullable(),
  serviceTypes: z.array(z.string()),
}) satisfies z.ZodType<Subnet>;

const port = z.object({
  ...standard,
  name: z.string(),
  networkId: z.string(),
  macAddress: z.string(),
  adminStateUp: z.boolean(),
  status: z.string(),
  deviceId: z.string(),
  deviceOwner: z.string(),
  fixedIps: z.array(z.object({ subnet_id: z.string(), ip_address: z.string() })),
  securityGroups: z.array(z.string()),
  portSecurity: z.boolean(),
  allowedAddressPairs: z.array(z.object({ ip_address: z.string(), mac_address: z.string() })),
  extraDhcpOpts: z.array(z.object({ opt_name: z.string(), opt_value: z.string(), ip_version: z.number().int() })),
  hostId: z.string(),
  vnicType: z.string(),
  profile: z.record(z.string(), z.unknown()),
}) satisfies z.ZodType<Port>;

const router = z.object({
  ...standard,
  name: z.string(),
  adminStateUp: z.boolean(),
  status: z.string(),
  gateway: z.object({ networkId: z.string(), enableSnat: z.boolean(), portId: z.string() }).nullable(),
  routes: z.array(hostRoute),
  availabilityZoneHints: z.array(z.string()),
}) satisfies z.ZodType<Router>;

const securityGroup = z.object({ ...standard, name: z.string(), stateful: z.boolean(), isDefault: z.boolean() }) satisfies z.ZodType<SecurityGroup>;

const rule = z.object({
  id: z.string(),
  projectId: z.string(),
  securityGroupId: z.string(),
  direction: z.enum(['ingress', 'egress']),
  ethertype: z.enum(['IPv4', 'IPv6']),
  protocol: z.string().nullable(),
  portRangeMin: z.number().int().nullable(),
  portRangeMax: z.number().int().nullable(),
  remoteIpPrefix: z.string().nullable(),
  remoteGroupId: z.string().nullable(),
  description: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  revision: z.number().int(),
  standardAttrId: z.number().int(),
}) satisfies z.ZodType<SecurityGroupRule>;

const floatingIp = z.object({
  ...standard,
  floatingNetworkId: z.string(),
  floatingIpAddress: z.string(),
  floatingPortId: z.string(),
  portId: z.string().nullable(),
  fixedIpAddress: z.string().nullable(),
  routerId: z.string().nullable(),
  status: z.string(),
}) satisfies z.ZodType<FloatingIp>;

const trunk = z.object({
  ...standard,
  name: z.string(),
  portId: z.string(),
  adminStateUp: z.boolean(),
  status: z.string(),
  subPorts: z.array(z.object({ port_id: z.string(), segmentation_type: z.string(), segmentation_id: z.number().int() })),
}) satisfies z.ZodType<Trunk>;

export const neutronSnapshotSchema = z.object({
  networks: z.array(network),
  subnets: z.array(subnet),
  ports: z.array(port),
  routers: z.array(router),
  securityGroups: z.array(securityGroup),
  rules: z.array(rule),
  floatingIps: z.array(floatingIp),
  trunks: z.array(trunk),
  /** The last standard-attribute id given out, so a new rule's is never a restored one's. */
  standardAttrIds: z.number().int().nonnegative(),
});

export type NeutronSnapshot = z.infer<typeof neutronSnapshotSchema>;
