/**
 * Ports: IP allocation, MACs, security groups and port security, allowed
 * address pairs, bindings (ministack's mechanism driver binds any port
 * given a host and marks it ACTIVE), and the deletion guards of the L3 and
 * trunk plugins.
 */
import {
  allowedAddressPairs,
  attr,
  boolean,
  dhcpOptions,
  dict,
  field,
  fixedIps,
  mac,
  oneOf,
  ownerAttributes,
  ownerOf,
  parseBody,
  readOnly,
  standardReadOnly,
  string,
  tags,
  uuid,
  uuidList,
  type Parsed,
} from './body.js';
import { httpNotFound, invalidInput, NeutronError, notFound } from './errors.js';
import { parseAddress, parseCidr, usableInSubnet } from './ip.js';
import {
  DEVICE_OWNER,
  isNetworkOwned,
  ROUTER_INTERFACE_OWNERS,
  standardView,
  type AddressPair,
  type Caller,
  type FixedIp,
  type Network,
  type Port,
} from './model.js';
import { enforce, listSubAttributes, type AttributeCheck } from './policy.js';
import { ensureDefaultGroup } from './security-groups.js';
import type { Store } from './store.js';
import { allocated, canonicalIp, nextFree } from './subnets.js';

const VNIC_TYPES = [
  'normal',
  'direct',
  'macvtap',
  'baremetal',
  'direct-physical',
  'virtio-forwarder',
  'smart-nic',
  'vdpa',
  'accelerator-direct',
  'accelerator-direct-physical',
  'remote-managed',
] as const;
const MAX_ADDRESS_PAIRS = 10;
/** What ministack's mechanism driver reports for a bound port. */
const BOUND_VIF = { type: 'ovs', details: { port_filter: true, ovs_hybrid_plug: false, connectivity: 'l2' } };

const portSpec = {
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
  admin_state_up: attr(field(boolean), true, true),
  mac_address: attr(field(mac), true, true),
  fixed_ips: attr(field(fixedIps), true, true),
  device_id: attr(
    field((v) => string(v, 255)),
    true,
    true,
  ),
  device_owner: attr(
    field((v) => string(v, 255)),
    true,
    true,
  ),
  security_groups: attr(
    field((v) => (v === null ? [] : uuidList(v))),
    true,
    true,
  ),
  port_security_enabled: attr(field(boolean), true, true),
  allowed_address_pairs: attr(
    field((v) => (v === null ? [] : allowedAddressPairs(v))),
    true,
    true,
  ),
  extra_dhcp_opts: attr(
    field((v) => (v === null ? [] : dhcpOptions(v))),
    true,
    true,
  ),
  'binding:host_id': attr(
    field((v) => (v === null ? '' : string(v, 255))),
    true,
    true,
  ),
  'binding:vnic_type': attr(
    field((v) => oneOf(v, VNIC_TYPES)),
    true,
    true,
  ),
  'binding:profile': attr(
    field((v) => (v === null ? {} : dict(v))),
    true,
    true,
  ),
  tags: attr(tags, true, false),
  ...ownerAttributes,
  status: readOnly(),
  'binding:vif_type': readOnly(),
  'binding:vif_details': readOnly(),
};

type PortInput = Parsed<typeof portSpec>;

export function portView(s: Store, caller: Caller, p: Port): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: p.id,
    name: p.name,
    network_id: p.networkId,
    tenant_id: p.projectId,
    mac_address: p.macAddress,
    admin_state_up: p.adminStateUp,
    status: p.status,
    device_id: p.deviceId,
    device_owner: p.deviceOwner,
    fixed_ips: p.fixedIps.map((f) => ({ ...f })),
    allowed_address_pairs: p.allowedAddressPairs.map((a) => ({ ...a })),
    extra_dhcp_opts: p.extraDhcpOpts.map((o) => ({ ...o })),
    security_groups: [...p.securityGroups],
    description: p.description,
    'binding:vnic_type': p.vnicType,
    port_security_enabled: p.portSecurity,
    ...standardView(p),
  };
  if (caller.isAdmin) {
    view['binding:host_id'] = p.hostId;
    view['binding:profile'] = structuredClone(p.profile);
    view['binding:vif_type'] = p.hostId ? BOUND_VIF.type : 'unbound';
    view['binding:vif_details'] = p.hostId ? { ...BOUND_VIF.details } : {};
  }
  const trunk = s.trunkOfParent(p.id);
  if (trunk) {
    view.trunk_details = {
      trunk_id: trunk.id,
      sub_ports: trunk.subPorts.map((sp) => ({ ...sp, mac_address: s.ports.get(sp.port_id)?.macAddress })),
    };
  }
  return view;
}

const isNetworkDevice = (owner: string) => owner.startsWith('network:');

function attributeChecks(v: PortInput, network: Network, caller: Caller, updating: boolean): AttributeCheck[] {
  const netOwner = network.projectId === caller.projectId;
  const checks: AttributeCheck[] = [];
  if (v.mac_address !== undefined) checks.push({ attribute: 'mac_address', allowed: netOwner && !updating });
  if (v.fixed_ips !== undefined) {
    checks.push({
      attribute: 'fixed_ips',
      allowed: netOwner || (network.shared && !updating),
      sub: listSubAttributes(v.fixed_ips, (key) => netOwner || (key === 'subnet_id' && network.shared)),
    });
  }
  if (v.device_owner !== undefined && (updating || v.device_owner !== '')) {
    checks.push({ attribute: 'device_owner', allowed: !isNetworkDevice(v.device_owner) || netOwner });
  }
  if (v.port_security_enabled !== undefined) checks.push({ attribute: 'port_security_enabled', allowed: netOwner });
  if (v['binding:host_id'] !== undefined) checks.push({ attribute: 'binding:host_id', allowed: false });
  if (v['binding:profile'] !== undefined) checks.push({ attribute: 'binding:profile', allowed: false });
  if (v['binding:vnic_type'] !== undefined && (updating || v['binding:vnic_type'] !== 'normal')) checks.push({ attribute: 'binding:vnic_type', allowed: true });
  if (v.allowed_address_pairs !== undefined && (updating || v.allowed_address_pairs.length)) {
    checks.push({ attribute: 'allowed_address_pairs', allowed: netOwner, sub: listSubAttributes(v.allowed_address_pairs, () => netOwner) });
  }
  return checks;
}

function resolveGroups(s: Store, caller: Caller, projectId: string, ids: string[]): string[] {
  const missing = ids.filter((id) => {
    const g = s.securityGroups.get(id);
    return !g || !(caller.isAdmin || g.projectId === projectId);
  });
  if (missing.length) throw notFound.securityGroup(missing.join(', '));
  return [...new Set(ids)];
}

const securityNeedsPortSecurity = () =>
  new NeutronError(
    400,
    'PortSecurityAndIPRequiredForSecurityGroups',
    'Port security must be enabled and port must have an IP address in order to use security groups.',
  );
const pairsNeedPortSecurity = () =>
  new NeutronError(409, 'AddressPairAndPortSecurityRequired', 'Port Security must be enabled in order to have allowed address pairs on a port.');

function addressPairs(pairs: { ip_address: string; mac_address?: string }[], portMac: string): AddressPair[] {
  if (pairs.length > MAX_ADDRESS_PAIRS) {
    throw new NeutronError(400, 'AllowedAddressPairExhausted', `The number of allowed address pair exceeds the maximum ${MAX_ADDRESS_PAIRS}.`);
  }
  const seen = new Set<string>();
  return pairs.map((p) => {
    const pair = { ip_address: p.ip_address, mac_address: p.mac_address ?? portMac };
    const key = `${pair.mac_address}|${pair.ip_address}`;
    if (seen.has(key)) {
      throw new NeutronError(
        400,
        'DuplicateAddressPairInRequest',
        `Request contains duplicate address pair: mac_address ${pair.mac_address} ip_address ${pair.ip_address}.`,
      );
    }
    seen.add(key);
    return pair;
  });
}

const generationFailure = (networkId: string) => new NeutronError(409, 'IpAddressGenerationFailure', `No more IP addresses available on network ${networkId}.`);

/**
 * Addresses for a port: the requested ones (reusing `current` where the
 * request names an address or subnet the port already has), or one IPv4
 * and one IPv6 address from the network's subnets when nothing is asked.
 */
export function allocateIps(s: Store, caller: Caller, network: Network, requested: PortInput['fixed_ips'], current: FixedIp[] = []): FixedIp[] {
  if (requested === undefined) {
    const out: FixedIp[] = [];
    for (const version of [4, 6] as const) {
      const subnets = s.subnetsOf(network.id).filter((sub) => sub.ipVersion === version);
      if (!subnets.length) continue;
      const choice = subnets.map((sub) => ({ sub, ip: nextFree(s, sub) })).find((c) => c.ip);
      if (!choice) throw generationFailure(network.id);
      out.push({ subnet_id: choice.sub.id, ip_address: choice.ip! });
    }
    return out;
  }
  const targets = requested.map((entry) => {
    const subnet = entry.subnet_id !== undefined ? s.subnets.get(entry.subnet_id) : undefined;
    if (entry.subnet_id !== undefined) {
      if (!subnet || !s.canSeeSubnet(caller, subnet)) throw notFound.subnet(entry.subnet_id);
      if (subnet.networkId !== network.id) {
        throw invalidInput(`Failed to create port on network ${network.id}, because fixed_ips included invalid subnet ${entry.subnet_id}`);
      }
    }
    if (entry.ip_address === undefined) {
      if (!subnet) throw invalidInput('IP allocation requires subnet_id or ip_address');
      return subnet;
    }
    const address = parseAddress(entry.ip_address)!;
    const target = subnet ?? s.subnetsOf(network.id).find((sub) => usableInSubnet(parseCidr(sub.cidr)!, address));
    if (!target) {
      throw new NeutronError(400, 'InvalidIpForNetwork', `IP address ${entry.ip_address} is not a valid IP for any of the subnets on the specified network.`);
    }
    if (!usableInSubnet(parseCidr(target.cidr)!, address)) {
      throw new NeutronError(400, 'InvalidIpForSubnet', `IP address ${entry.ip_address} is not a valid IP for the specified subnet.`);
    }
    return target;
  });
  // As Neutron: entries naming an address first, then subnet-only entries reuse the port's remaining addresses there.
  const out: FixedIp[] = new Array(requested.length);
  const remaining = [...current];
  const taken = new Set<string>();
  requested.forEach((entry, i) => {
    if (entry.ip_address === undefined) return;
    const subnetId = targets[i]!.id;
    const ip = canonicalIp(entry.ip_address);
    const mine = remaining.findIndex((f) => f.ip_address === ip && f.subnet_id === subnetId);
    if (mine >= 0) remaining.splice(mine, 1);
    else if (allocated(s, subnetId).has(ip) || taken.has(ip)) {
      throw new NeutronError(409, 'IpAddressAlreadyAllocated', `IP address ${ip} already allocated in subnet ${subnetId}`);
    }
    taken.add(ip);
    out[i] = { subnet_id: subnetId, ip_address: ip };
  });
  requested.forEach((entry, i) => {
    if (entry.ip_address !== undefined) return;
    const subnet = targets[i]!;
    const mine = remaining.map((f) => f.subnet_id).lastIndexOf(subnet.id);
    if (mine >= 0) {
      out[i] = { ...remaining.splice(mine, 1)[0]! };
      return;
    }
    const ip = nextFree(s, subnet, taken);
    if (!ip) throw generationFailure(network.id);
    taken.add(ip);
    out[i] = { subnet_id: subnet.id, ip_address: ip };
  });
  return out;
}

function statusOf(p: Pick<Port, 'hostId' | 'adminStateUp'>): string {
  return p.hostId && p.adminStateUp ? 'ACTIVE' : 'DOWN';
}

export function createPort(s: Store, caller: Caller, body: unknown): Port {
  const v = parseBody(portSpec, 'port', body, 'POST');
  const projectId = ownerOf(v, caller);
  const network = s.network(caller, v.network_id!);
  if (!caller.isAdmin && !network.shared && network.projectId !== projectId) throw httpNotFound();
  enforce(caller, 'create_port', true, attributeChecks(v, network, caller, false));
  s.checkQuota(projectId, 'port');
  ensureDefaultGroup(s, caller, projectId);

  const macAddress = v.mac_address ?? s.newMac();
  if (v.mac_address && s.portsOf(network.id).some((p) => p.macAddress === macAddress)) {
    throw new NeutronError(409, 'MacAddressInUse', `Unable to complete operation for network ${network.id}. The mac address ${macAddress} is in use.`);
  }
  const deviceOwner = v.device_owner ?? '';
  const portSecurity = v.port_security_enabled ?? network.portSecurity;
  let securityGroups: string[];
  if (v.security_groups !== undefined) {
    securityGroups = resolveGroups(s, caller, projectId, v.security_groups);
    if (securityGroups.length && !portSecurity) throw securityNeedsPortSecurity();
  } else {
    const defaultGroup = portSecurity && !isNetworkOwned(deviceOwner) ? ensureDefaultGroup(s, caller, projectId) : undefined;
    securityGroups = defaultGroup ? [defaultGroup] : [];
  }
  const pairs = addressPairs(v.allowed_address_pairs ?? [], macAddress);
  if (pairs.length && !portSecurity) throw pairsNeedPortSecurity();
  const ips = allocateIps(s, caller, network, v.fixed_ips);

  const port: Port = {
    // ministack's Zed takes `tags` in a port's create and drops them (tag-ports-during-bulk-creation is not loaded); tag-creation applies them.
    ...s.standard(projectId, v.description ?? '', s.options.tagCreation ? (v.tags ?? []) : [], 1),
    name: v.name ?? '',
    networkId: network.id,
    macAddress,
    adminStateUp: v.admin_state_up ?? true,
    status: 'DOWN',
    deviceId: v.device_id ?? '',
    deviceOwner,
    fixedIps: ips,
    securityGroups,
    portSecurity,
    allowedAddressPairs: pairs,
    extraDhcpOpts: v.extra_dhcp_opts ?? [],
    hostId: v['binding:host_id'] ?? '',
    vnicType: v['binding:vnic_type'] ?? 'normal',
    profile: v['binding:profile'] ?? {},
  };
  port.status = statusOf(port);
  s.ports.set(port.id, port);
  return port;
}

export function updatePort(s: Store, caller: Caller, id: string, body: unknown): Port {
  const v = parseBody(portSpec, 'port', body, 'PUT');
  const port = s.port(caller, id);
  const network = s.networks.get(port.networkId)!;
  enforce(caller, 'update_port', s.owns(caller, port), attributeChecks(v, network, caller, true));
  ensureDefaultGroup(s, caller, port.projectId);

  if (v.mac_address !== undefined && v.mac_address !== port.macAddress) {
    if (port.hostId) {
      throw new NeutronError(
        409,
        'PortBound',
        `Unable to complete operation on port ${id}, port is already bound, port type: ${BOUND_VIF.type}, old_mac ${port.macAddress}, new_mac ${v.mac_address}.`,
      );
    }
    if (s.portsOf(network.id).some((p) => p.macAddress === v.mac_address)) {
      throw new NeutronError(409, 'MacAddressInUse', `Unable to complete operation for network ${network.id}. The mac address ${v.mac_address} is in use.`);
    }
  }
  const portSecurity = v.port_security_enabled ?? port.portSecurity;
  let securityGroups = port.securityGroups;
  if (v.security_groups !== undefined) {
    securityGroups = resolveGroups(s, caller, port.projectId, v.security_groups);
    if (securityGroups.length && !portSecurity) throw securityNeedsPortSecurity();
  } else if (!portSecurity && securityGroups.length) {
    throw new NeutronError(
      409,
      'PortSecurityPortHasSecurityGroup',
      'Port has security group associated. Cannot disable port security or IP address until security group is removed.',
    );
  }
  const macAddress = v.mac_address ?? port.macAddress;
  const pairs = v.allowed_address_pairs !== undefined ? addressPairs(v.allowed_address_pairs, macAddress) : port.allowedAddressPairs;
  if (pairs.length && !portSecurity) throw pairsNeedPortSecurity();
  const ips = v.fixed_ips !== undefined ? allocateIps(s, caller, network, v.fixed_ips, port.fixedIps) : port.fixedIps;

  if (v.name !== undefined) port.name = v.name;
  if (v.description !== undefined) port.description = v.description;
  if (v.admin_state_up !== undefined) port.adminStateUp = v.admin_state_up;
  if (v.device_id !== undefined) port.deviceId = v.device_id;
  if (v.device_owner !== undefined) port.deviceOwner = v.device_owner;
  if (v.extra_dhcp_opts !== undefined) port.extraDhcpOpts = v.extra_dhcp_opts;
  if (v['binding:host_id'] !== undefined) port.hostId = v['binding:host_id'];
  if (v['binding:vnic_type'] !== undefined) port.vnicType = v['binding:vnic_type'];
  if (v['binding:profile'] !== undefined) port.profile = v['binding:profile'];
  port.macAddress = macAddress;
  port.portSecurity = portSecurity;
  port.securityGroups = securityGroups;
  port.allowedAddressPairs = pairs;
  port.fixedIps = ips;
  port.status = statusOf(port);
  s.touch(port);
  return port;
}

/** The L3 plugin's guard: router and floating IP ports go away with their router or floating IP. */
function preventServicePortDeletion(s: Store, port: Port): void {
  const routerOwned = ROUTER_INTERFACE_OWNERS.includes(port.deviceOwner) || port.deviceOwner === DEVICE_OWNER.routerGateway;
  if (!routerOwned && port.deviceOwner !== DEVICE_OWNER.floatingIp) return;
  if (!port.fixedIps.length || !port.deviceId) return;
  const deviceExists = routerOwned ? s.routers.has(port.deviceId) : s.floatingIps.has(port.deviceId);
  if (!deviceExists) return;
  throw new NeutronError(409, 'ServicePortInUse', `Port ${port.id} cannot be deleted directly via the port API: has device owner ${port.deviceOwner}.`);
}

export function deletePort(s: Store, caller: Caller, id: string): void {
  const port = s.port(caller, id);
  enforce(caller, 'delete_port', s.owns(caller, port));
  preventServicePortDeletion(s, port);
  removePort(s, port);
}

/** Deletes a port that may go: trunk membership blocks it; floating IPs on it are disassociated. */
function removePort(s: Store, port: Port): void {
  const asSubport = s.trunkOfSubport(port.id);
  if (asSubport) throw new NeutronError(409, 'PortInUseAsSubPort', `Port ${port.id} is currently a subport for trunk ${asSubport.id}.`);
  const asParent = s.trunkOfParent(port.id);
  if (asParent) throw new NeutronError(409, 'PortInUseAsTrunkParent', `Port ${port.id} is currently a parent port for trunk ${asParent.id}.`);
  for (const fip of s.floatingIps.values()) {
    if (fip.portId !== port.id) continue;
    fip.portId = null;
    fip.fixedIpAddress = null;
    fip.routerId = null;
    fip.status = 'DOWN';
    s.touch(fip);
  }
  s.ports.delete(port.id);
}

/** A port Neutron creates for itself (router gateway/interface, floating IP), bypassing API policy and quota where Neutron does. */
export function createServicePort(
  s: Store,
  network: Network,
  fields: { projectId: string; deviceOwner: string; deviceId: string; fixedIps: FixedIp[]; status?: string },
): Port {
  const port: Port = {
    ...s.standard(fields.projectId, '', [], 1),
    name: '',
    networkId: network.id,
    macAddress: s.newMac(),
    adminStateUp: true,
    status: fields.status ?? 'DOWN',
    deviceId: fields.deviceId,
    deviceOwner: fields.deviceOwner,
    fixedIps: fields.fixedIps,
    securityGroups: [],
    portSecurity: network.portSecurity,
    allowedAddressPairs: [],
    extraDhcpOpts: [],
    hostId: '',
    vnicType: 'normal',
    profile: {},
  };
  s.ports.set(port.id, port);
  return port;
}
