/**
 * Subnets and IPAM: CIDR and pool validation as Neutron does it, default
 * gateway and pools, and address allocation for ports (the lowest free
 * address in the pools; explicitly requested addresses may lie anywhere
 * usable in the CIDR).
 */
import {
  allocationPools,
  attr,
  boolean,
  field,
  hostRoutes,
  integer,
  ipOrNull,
  nameservers,
  oneOf,
  ownerAttributes,
  ownerOf,
  parseBody,
  readOnly,
  standardReadOnly,
  string,
  subnetCidr,
  uuid,
  uuidOrNull,
  list,
  createdTags,
  withCreationTags,
} from './body.js';
import { badResourceRequest, httpNotFound, invalidInput, NeutronError } from './errors.js';
import {
  cidrsOverlap,
  defaultPools,
  firstOf,
  formatAddress,
  lastOf,
  networkString,
  parseAddress,
  parseCidr,
  rangesOverlap,
  type Cidr,
  type Range,
} from './ip.js';
import { DEVICE_OWNER, ROUTER_INTERFACE_OWNERS, standardView, type Caller, type Pool, type Subnet } from './model.js';
import { enforce } from './policy.js';
import type { Store } from './store.js';

const MAX_DNS_NAMESERVERS = 5;
const MAX_HOST_ROUTES = 20;
const IPV6_MODES = ['dhcpv6-stateful', 'dhcpv6-stateless', 'slaac'] as const;

const subnetSpec = {
  ...standardReadOnly,
  name: attr(
    field((v) => string(v, 255)),
    true,
    true,
  ),
  description: attr(
    field((v) => string(v, 255)),
    true,
    true,
  ),
  network_id: attr(field(uuid), true, false, true),
  ip_version: attr(
    field((v) => oneOf(integer(v), [4, 6] as const)),
    true,
    false,
    true,
  ),
  cidr: attr(field(subnetCidr), true, false),
  prefixlen: attr(
    field((v) => integer(v, 0, 128)),
    true,
    false,
  ),
  subnetpool_id: attr(field(uuidOrNull), true, false),
  use_default_subnetpool: attr(field(boolean), true, false),
  gateway_ip: attr(field(ipOrNull), true, true),
  allocation_pools: attr(field(allocationPools), true, true),
  dns_nameservers: attr(field(nameservers), true, true),
  host_routes: attr(field(hostRoutes), true, true),
  enable_dhcp: attr(field(boolean), true, true),
  ipv6_ra_mode: attr(
    field((v) => (v === null ? null : oneOf(v, IPV6_MODES))),
    true,
    true,
  ),
  ipv6_address_mode: attr(
    field((v) => (v === null ? null : oneOf(v, IPV6_MODES))),
    true,
    true,
  ),
  service_types: attr(
    field((v) => list(v).map((t) => string(t, 255))),
    true,
    true,
  ),
  ...ownerAttributes,
  tags: readOnly(),
};

export function subnetView(sub: Subnet): Record<string, unknown> {
  return {
    id: sub.id,
    name: sub.name,
    tenant_id: sub.projectId,
    network_id: sub.networkId,
    ip_version: sub.ipVersion,
    subnetpool_id: null,
    enable_dhcp: sub.enableDhcp,
    ipv6_ra_mode: sub.ipv6RaMode,
    ipv6_address_mode: sub.ipv6AddressMode,
    gateway_ip: sub.gatewayIp,
    cidr: sub.cidr,
    allocation_pools: sub.allocationPools.map((p) => ({ ...p })),
    host_routes: sub.hostRoutes.map((r) => ({ ...r })),
    dns_nameservers: [...sub.dnsNameservers],
    description: sub.description,
    service_types: [...sub.serviceTypes],
    ...standardView(sub),
  };
}

/** An address in its canonical (netaddr) spelling. */
export function canonicalIp(ip: string): string {
  const a = parseAddress(ip)!;
  return formatAddress(a.version, a.value);
}

const poolString = (r: { start: string; end: string }) => `${r.start}-${r.end}`;

function matchVersion(version: number, value: string, name: string): void {
  const a = parseAddress(value) ?? parseCidr(value, true);
  if (a?.version !== version) throw invalidInput(`${name} '${value}' does not match the ip_version '${version}'`);
}

function validatePools(pools: Pool[], cidr: Cidr, cidrText: string): Range[] {
  const small = cidr.version === 4 && cidr.prefix > 30;
  const first = small ? firstOf(cidr) : firstOf(cidr) + 1n;
  const last = cidr.version === 4 && !small ? lastOf(cidr) - 1n : lastOf(cidr);
  const ranges = pools.map((p) => {
    const start = parseAddress(p.start)!;
    const end = parseAddress(p.end)!;
    const text = `{'start': '${p.start}', 'end': '${p.end}'}`;
    if (start.value > end.value || start.version !== end.version) {
      throw new NeutronError(400, 'InvalidAllocationPool', `The allocation pool ${text} is not valid.`);
    }
    if (start.version !== cidr.version) throw new NeutronError(400, 'InvalidAllocationPool', `The allocation pool ${poolString(p)} is not valid.`);
    if (start.value < first || end.value > last) {
      throw new NeutronError(400, 'OutOfBoundsAllocationPool', `The allocation pool ${poolString(p)} spans beyond the subnet cidr ${cidrText}.`);
    }
    return { start: start.value, end: end.value };
  });
  for (let i = 0; i < ranges.length; i += 1) {
    for (let j = i + 1; j < ranges.length; j += 1) {
      if (rangesOverlap(ranges[i]!, ranges[j]!)) {
        throw new NeutronError(
          409,
          'OverlappingAllocationPools',
          `Found overlapping allocation pools: ${poolString(pools[i]!)} ${poolString(pools[j]!)} for subnet ${cidrText}.`,
        );
      }
    }
  }
  return ranges;
}

function gatewayOutsidePools(gateway: string | null, ranges: Range[], pools: Pool[]): void {
  if (!gateway) return;
  const g = parseAddress(gateway)!.value;
  const at = ranges.findIndex((r) => r.start <= g && g <= r.end);
  if (at >= 0) {
    throw new NeutronError(409, 'GatewayConflictWithAllocationPools', `Gateway ip ${gateway} conflicts with allocation pool ${poolString(pools[at]!)}.`);
  }
}

function validateGateway(version: number, cidr: Cidr, gateway: string): void {
  matchVersion(version, gateway, 'gateway_ip');
  const g = parseAddress(gateway)!;
  if (version === 4 && (g.value === firstOf(cidr) || g.value === lastOf(cidr))) {
    throw invalidInput('Gateway is not valid on subnet');
  }
}

function validateCommon(
  version: number,
  v: { dns_nameservers?: string[]; host_routes?: { destination: string; nexthop: string }[]; ipv6_ra_mode?: string | null; ipv6_address_mode?: string | null },
  id: string,
): void {
  if (v.dns_nameservers) {
    if (v.dns_nameservers.length > MAX_DNS_NAMESERVERS) {
      throw new NeutronError(
        400,
        'DNSNameServersExhausted',
        `Unable to complete operation for ${id}. The number of DNS nameservers exceeds the limit ${MAX_DNS_NAMESERVERS}.`,
      );
    }
    for (const dns of v.dns_nameservers) matchVersion(version, dns, 'dns_nameserver');
  }
  if (v.host_routes) {
    if (v.host_routes.length > MAX_HOST_ROUTES) {
      throw new NeutronError(
        400,
        'HostRoutesExhausted',
        `Unable to complete operation for ${id}. The number of host routes exceeds the limit ${MAX_HOST_ROUTES}.`,
      );
    }
    for (const route of v.host_routes) {
      matchVersion(version, route.destination, 'destination');
      matchVersion(version, route.nexthop, 'nexthop');
    }
  }
  if (version === 4) {
    if (v.ipv6_ra_mode) throw invalidInput('ipv6_ra_mode is not valid when ip_version is 4');
    if (v.ipv6_address_mode) throw invalidInput('ipv6_address_mode is not valid when ip_version is 4');
  }
}

export function createSubnet(s: Store, caller: Caller, body: unknown): Subnet {
  const v = parseBody(withCreationTags(subnetSpec, s.options), 'subnet', body, 'POST');
  const projectId = ownerOf(v, caller);
  const network = s.network(caller, v.network_id!);
  if (!caller.isAdmin && !network.shared && network.projectId !== projectId) throw httpNotFound();
  // Zed's create_subnet: admin, a project member (for its own project) or the network owner.
  const allowed = network.projectId === projectId || caller.roles.includes('member');
  enforce(caller, 'create_subnet', allowed, v.service_types?.length ? [{ attribute: 'service_types', allowed: false }] : []);
  s.checkQuota(projectId, 'subnet');

  if (v.cidr !== undefined && v.prefixlen !== undefined) throw badResourceRequest('subnets', 'cidr and prefixlen must not be supplied together');
  if (v.subnetpool_id) throw new NeutronError(404, 'SubnetPoolNotFound', `Subnet pool ${v.subnetpool_id} could not be found.`);
  if (v.cidr === undefined) throw badResourceRequest('subnets', 'a subnetpool must be specified in the absence of a cidr');
  const cidr = parseCidr(v.cidr)!;
  const cidrText = networkString(cidr);
  const version = v.ip_version!;
  matchVersion(version, cidrText, 'cidr');
  const enableDhcp = v.enable_dhcp ?? true;
  if (enableDhcp && ((version === 4 && cidr.prefix > 30) || (version === 6 && cidr.prefix > 126))) {
    throw invalidInput('Subnet has a prefix length that is incompatible with DHCP service enabled');
  }
  if (v.gateway_ip) validateGateway(version, cidr, v.gateway_ip);
  validateCommon(version, v, 'new subnet');
  if (cidr.prefix === 0) throw invalidInput('0 is not allowed as CIDR prefix length');
  for (const other of s.subnetsOf(network.id)) {
    if (cidrsOverlap(parseCidr(other.cidr)!, cidr)) {
      throw invalidInput(`Requested subnet with cidr: ${cidrText} for network: ${network.id} overlaps with another subnet`);
    }
  }

  const gatewayIp =
    v.gateway_ip === undefined
      ? formatAddress(cidr.version, firstOf(cidr) + (cidr.prefix >= (version === 4 ? 32 : 128) ? 0n : 1n))
      : v.gateway_ip && canonicalIp(v.gateway_ip);
  let pools: Pool[];
  if (v.allocation_pools) {
    pools = v.allocation_pools.map((p) => ({ start: canonicalIp(p.start), end: canonicalIp(p.end) }));
    gatewayOutsidePools(gatewayIp, validatePools(pools, cidr, cidrText), pools);
  } else {
    const gw = gatewayIp ? parseAddress(gatewayIp) : undefined;
    pools = defaultPools(cidr, gw).map((r) => ({ start: formatAddress(cidr.version, r.start), end: formatAddress(cidr.version, r.end) }));
  }

  const subnet: Subnet = {
    ...s.standard(projectId, v.description ?? '', createdTags(v), 0),
    name: v.name ?? '',
    networkId: network.id,
    ipVersion: version,
    cidr: cidrText,
    gatewayIp,
    allocationPools: pools,
    dnsNameservers: (v.dns_nameservers ?? []).map(canonicalIp),
    hostRoutes: v.host_routes ?? [],
    enableDhcp,
    ipv6RaMode: v.ipv6_ra_mode ?? null,
    ipv6AddressMode: v.ipv6_address_mode ?? null,
    serviceTypes: v.service_types ?? [],
  };
  s.subnets.set(subnet.id, subnet);
  s.touch(network);
  return subnet;
}

export function updateSubnet(s: Store, caller: Caller, id: string, body: unknown): Subnet {
  const v = parseBody(subnetSpec, 'subnet', body, 'PUT');
  const subnet = s.subnet(caller, id);
  const networkOwner = s.networks.get(subnet.networkId)?.projectId === caller.projectId;
  enforce(
    caller,
    'update_subnet',
    s.owns(caller, subnet) || networkOwner,
    v.service_types !== undefined ? [{ attribute: 'service_types', allowed: false }] : [],
  );
  const cidr = parseCidr(subnet.cidr)!;
  const version = subnet.ipVersion;
  const gatewayIp = v.gateway_ip === undefined ? subnet.gatewayIp : v.gateway_ip && canonicalIp(v.gateway_ip);
  if (v.gateway_ip) {
    validateGateway(version, cidr, v.gateway_ip);
    if (subnet.gatewayIp && gatewayIp !== subnet.gatewayIp) {
      const holder = routerPortHolding(s, subnet.id, subnet.gatewayIp);
      if (holder) {
        throw new NeutronError(409, 'GatewayIpInUse', `Current gateway ip ${subnet.gatewayIp} already in use by port ${holder}. Unable to update.`);
      }
    }
  }
  if (v.enable_dhcp && !subnet.enableDhcp && ((version === 4 && cidr.prefix > 30) || (version === 6 && cidr.prefix > 126))) {
    throw invalidInput('Subnet has a prefix length that is incompatible with DHCP service enabled');
  }
  validateCommon(version, v, id);
  let pools = subnet.allocationPools;
  if (v.allocation_pools) {
    pools = v.allocation_pools.map((p) => ({ start: canonicalIp(p.start), end: canonicalIp(p.end) }));
    gatewayOutsidePools(gatewayIp, validatePools(pools, cidr, subnet.cidr), pools);
  } else if (v.gateway_ip !== undefined) {
    gatewayOutsidePools(gatewayIp, poolRanges(subnet), pools);
  }
  if (v.name !== undefined) subnet.name = v.name;
  if (v.description !== undefined) subnet.description = v.description;
  subnet.gatewayIp = gatewayIp;
  subnet.allocationPools = pools;
  if (v.dns_nameservers !== undefined) subnet.dnsNameservers = v.dns_nameservers.map(canonicalIp);
  if (v.host_routes !== undefined) subnet.hostRoutes = v.host_routes;
  if (v.enable_dhcp !== undefined) subnet.enableDhcp = v.enable_dhcp;
  if (v.ipv6_ra_mode !== undefined) subnet.ipv6RaMode = v.ipv6_ra_mode;
  if (v.ipv6_address_mode !== undefined) subnet.ipv6AddressMode = v.ipv6_address_mode;
  if (v.service_types !== undefined) subnet.serviceTypes = v.service_types;
  s.touch(subnet);
  return subnet;
}

function routerPortHolding(s: Store, subnetId: string, ip: string): string | undefined {
  return [...s.ports.values()].find(
    (p) => ROUTER_INTERFACE_OWNERS.includes(p.deviceOwner) && p.fixedIps.some((f) => f.subnet_id === subnetId && f.ip_address === ip),
  )?.id;
}

export function deleteSubnet(s: Store, caller: Caller, id: string): void {
  const subnet = s.subnet(caller, id);
  const networkOwner = s.networks.get(subnet.networkId)?.projectId === caller.projectId;
  enforce(caller, 'delete_subnet', s.owns(caller, subnet) || networkOwner);
  const users = [...s.ports.values()].filter((p) => p.fixedIps.some((f) => f.subnet_id === id));
  if (users.some((p) => p.deviceOwner !== DEVICE_OWNER.dhcp)) {
    throw new NeutronError(409, 'SubnetInUse', `Unable to complete operation on subnet ${id}: One or more ports have an IP allocation from this subnet.`);
  }
  for (const p of users) p.fixedIps = p.fixedIps.filter((f) => f.subnet_id !== id);
  s.subnets.delete(id);
  const network = s.networks.get(subnet.networkId);
  if (network) s.touch(network);
}

// IPAM

const poolRanges = (subnet: Subnet): Range[] => subnet.allocationPools.map((p) => ({ start: parseAddress(p.start)!.value, end: parseAddress(p.end)!.value }));

export function allocated(s: Store, subnetId: string): Set<string> {
  const used = new Set<string>();
  for (const p of s.ports.values()) for (const f of p.fixedIps) if (f.subnet_id === subnetId) used.add(f.ip_address);
  return used;
}

/** The lowest free address of the subnet's pools, if any. */
export function nextFree(s: Store, subnet: Subnet, alsoTaken: ReadonlySet<string> = new Set()): string | undefined {
  const used = allocated(s, subnet.id);
  const version = subnet.ipVersion;
  for (const range of poolRanges(subnet)) {
    for (let a = range.start; a <= range.end; a += 1n) {
      const ip = formatAddress(version, a);
      if (!used.has(ip) && !alsoTaken.has(ip)) return ip;
    }
  }
  return undefined;
}
