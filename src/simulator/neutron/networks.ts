/**
 * Networks on ministack's ML2: tenant networks are VXLAN (MTU 1450), the
 * physical network `public` carries flat and VLAN provider networks
 * (MTU 1500). Deleting a network takes its subnets and DHCP ports with it
 * and fails while any other port remains.
 */
import {
  attr,
  boolean,
  field,
  integer,
  list,
  ownerAttributes,
  ownerOf,
  parseBody,
  readOnly,
  standardReadOnly,
  string,
  type Parsed,
  createdTags,
  withCreationTags,
} from './body.js';
import { invalidInput, NeutronError, policyDenied } from './errors.js';
import { DEVICE_OWNER, standardView, type Caller, type Network } from './model.js';
import { enforce, type AttributeCheck } from './policy.js';
import { ensureDefaultGroup } from './security-groups.js';
import type { Store } from './store.js';

const PHYSICAL_NETWORK = 'public';
const VXLAN_MTU = 1450;
const PHYSICAL_MTU = 1500;

const networkSpec = {
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
  admin_state_up: attr(field(boolean), true, true),
  shared: attr(field(boolean), true, true),
  'router:external': attr(field(boolean), true, true),
  mtu: attr(
    field((v) => integer(v, 68)),
    true,
    true,
  ),
  port_security_enabled: attr(field(boolean), true, true),
  'provider:network_type': attr(
    field((v) => string(v, 255)),
    true,
    true,
  ),
  'provider:physical_network': attr(
    field((v) => (v === null ? null : string(v, 64))),
    true,
    true,
  ),
  'provider:segmentation_id': attr(
    field((v) => (v === null ? null : integer(v))),
    true,
    true,
  ),
  availability_zone_hints: attr(
    field((v) => list(v).map((z) => string(z, 255))),
    true,
    false,
  ),
  is_default: attr(field(boolean), true, true),
  ...ownerAttributes,
  status: readOnly(),
  subnets: readOnly(),
  availability_zones: readOnly(),
  ipv4_address_scope: readOnly(),
  ipv6_address_scope: readOnly(),
  tags: readOnly(),
};

type NetworkInput = Parsed<typeof networkSpec>;

export function networkView(s: Store, caller: Caller, n: Network, options: { creating?: boolean } = {}): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: n.id,
    name: n.name,
    tenant_id: n.projectId,
    admin_state_up: n.adminStateUp,
    mtu: n.mtu,
    status: 'ACTIVE',
    subnets: s.subnetsOf(n.id).map((sub) => sub.id),
    shared: n.shared,
    availability_zone_hints: [...n.availabilityZoneHints],
    availability_zones: [],
    ipv4_address_scope: null,
    ipv6_address_scope: null,
    'router:external': n.external,
    description: n.description,
    port_security_enabled: n.portSecurity,
    ...standardView(n),
  };
  // Zed shows is_default only on external networks (auto-allocated topology), except in the create response.
  if (n.external || options.creating) view.is_default = n.isDefault;
  if (caller.isAdmin) {
    view['provider:network_type'] = n.networkType;
    view['provider:physical_network'] = n.physicalNetwork;
    view['provider:segmentation_id'] = n.segmentationId;
  }
  return view;
}

/** Checks for the attributes that have their own policy, when set to something other than their default. */
function attributeChecks(v: NetworkInput, updating: boolean): AttributeCheck[] {
  const checks: AttributeCheck[] = [];
  const set = (name: keyof NetworkInput, defaultValue: unknown) => v[name] !== undefined && (updating || v[name] !== defaultValue);
  if (set('shared', false)) checks.push({ attribute: 'shared', allowed: false });
  if (set('router:external', false)) checks.push({ attribute: 'router:external', allowed: false });
  for (const name of ['provider:network_type', 'provider:physical_network', 'provider:segmentation_id'] as const) {
    if (v[name] !== undefined) checks.push({ attribute: name, allowed: false });
  }
  if (set('port_security_enabled', true)) checks.push({ attribute: 'port_security_enabled', allowed: true });
  if (set('is_default', false)) checks.push({ attribute: 'is_default', allowed: false });
  return checks;
}

function segment(s: Store, v: NetworkInput): Pick<Network, 'networkType' | 'physicalNetwork' | 'segmentationId'> {
  const type = v['provider:network_type'];
  const physnet = v['provider:physical_network'] ?? null;
  const segId = v['provider:segmentation_id'] ?? null;
  switch (type) {
    case undefined:
    case 'vxlan': {
      if (physnet) throw invalidInput('provider:physical_network specified for vxlan network');
      if (segId !== null) {
        if (segId < 1 || segId > 16777215) throw invalidInput(`segmentation_id out of range (1 through 16777215)`);
        const taken = [...s.networks.values()].some((n) => n.networkType === 'vxlan' && n.segmentationId === segId);
        if (taken) throw new NeutronError(409, 'TunnelIdInUse', `Unable to create the network. The tunnel ID ${segId} is in use.`);
        return { networkType: 'vxlan', physicalNetwork: null, segmentationId: segId };
      }
      return { networkType: 'vxlan', physicalNetwork: null, segmentationId: s.allocateVni() };
    }
    case 'flat': {
      if (!physnet) throw invalidInput('physical_network required for flat provider network');
      if (physnet !== PHYSICAL_NETWORK) throw invalidInput(`physical_network '${physnet}' unknown for flat provider network`);
      if (segId !== null) throw invalidInput('segmentation_id specified for flat provider network');
      if ([...s.networks.values()].some((n) => n.networkType === 'flat' && n.physicalNetwork === physnet)) {
        throw new NeutronError(409, 'FlatNetworkInUse', `Unable to create the flat network. Physical network ${physnet} is in use.`);
      }
      return { networkType: 'flat', physicalNetwork: physnet, segmentationId: null };
    }
    case 'vlan': {
      const net = physnet ?? PHYSICAL_NETWORK;
      if (net !== PHYSICAL_NETWORK) throw invalidInput(`physical_network '${net}' unknown for VLAN provider network`);
      const taken = (id: number) => [...s.networks.values()].some((n) => n.networkType === 'vlan' && n.segmentationId === id);
      if (segId !== null) {
        if (segId < 1 || segId > 4094) throw invalidInput('segmentation_id out of range (1 through 4094)');
        if (taken(segId)) {
          throw new NeutronError(409, 'VlanIdInUse', `Unable to create the network. The VLAN ${segId} on physical network ${net} is in use.`);
        }
        return { networkType: 'vlan', physicalNetwork: net, segmentationId: segId };
      }
      for (let id = 100; id <= 200; id += 1) if (!taken(id)) return { networkType: 'vlan', physicalNetwork: net, segmentationId: id };
      throw new NeutronError(503, 'NoNetworkAvailable', 'Unable to create the network. No tenant network is available for allocation.');
    }
    default:
      throw invalidInput(`network_type value '${type}' not supported`);
  }
}

const maxMtu = (n: Pick<Network, 'networkType'>) => (n.networkType === 'vxlan' ? VXLAN_MTU : PHYSICAL_MTU);

export function createNetwork(s: Store, caller: Caller, body: unknown): Network {
  const v = parseBody(withCreationTags(networkSpec, s.options), 'network', body, 'POST');
  const projectId = ownerOf(v, caller);
  enforce(caller, 'create_network', true, attributeChecks(v, false));
  s.checkQuota(projectId, 'network');
  ensureDefaultGroup(s, caller, projectId);
  const limit = maxMtu({ networkType: v['provider:network_type'] ?? 'vxlan' });
  if (v.mtu !== undefined && v.mtu > limit) throw invalidInput(`Requested MTU is too big, maximum is ${limit}`);
  const seg = segment(s, v);
  const network: Network = {
    ...s.standard(projectId, v.description ?? '', createdTags(v), 1),
    name: v.name ?? '',
    adminStateUp: v.admin_state_up ?? true,
    mtu: v.mtu ?? limit,
    shared: v.shared ?? false,
    external: v['router:external'] ?? false,
    portSecurity: v.port_security_enabled ?? true,
    ...seg,
    isDefault: v.is_default ?? false,
    availabilityZoneHints: v.availability_zone_hints ?? [],
  };
  s.networks.set(network.id, network);
  return network;
}

export function updateNetwork(s: Store, caller: Caller, id: string, body: unknown): Network {
  const v = parseBody(networkSpec, 'network', body, 'PUT');
  const network = s.network(caller, id);
  enforce(caller, 'update_network', s.owns(caller, network), attributeChecks(v, true));
  if (v['provider:network_type'] !== undefined || v['provider:physical_network'] !== undefined || v['provider:segmentation_id'] !== undefined) {
    throw invalidInput('Plugin does not support updating provider attributes');
  }
  if (v.mtu !== undefined && v.mtu > maxMtu(network)) throw invalidInput(`Requested MTU is too big, maximum is ${maxMtu(network)}`);
  if (v['router:external'] === false && network.external) {
    const gateways = s.portsOf(id).filter((p) => p.deviceOwner === DEVICE_OWNER.routerGateway);
    if (gateways.length) {
      throw new NeutronError(
        409,
        'ExternalNetworkInUse',
        `External network ${id} cannot be updated to be made non-external, since it has existing gateway ports.`,
      );
    }
  }
  if (v.shared === false && network.shared && s.portsOf(id).some((p) => p.projectId && p.projectId !== network.projectId)) {
    throw new NeutronError(409, 'InvalidSharedSetting', `Unable to reconfigure sharing settings for network ${id}. Multiple tenants are using it.`);
  }
  if (v.name !== undefined) network.name = v.name;
  if (v.description !== undefined) network.description = v.description;
  if (v.admin_state_up !== undefined) network.adminStateUp = v.admin_state_up;
  if (v.shared !== undefined) network.shared = v.shared;
  if (v['router:external'] !== undefined) network.external = v['router:external'];
  if (v.mtu !== undefined) network.mtu = v.mtu;
  if (v.port_security_enabled !== undefined) network.portSecurity = v.port_security_enabled;
  if (v.is_default !== undefined) network.isDefault = v.is_default;
  s.touch(network);
  return network;
}

export function deleteNetwork(s: Store, caller: Caller, id: string): void {
  const network = s.network(caller, id);
  if (!s.owns(caller, network)) throw policyDenied('rule:delete_network');
  const ports = s.portsOf(id);
  if (ports.some((p) => p.deviceOwner !== DEVICE_OWNER.dhcp)) {
    throw new NeutronError(409, 'NetworkInUse', `Unable to complete operation on network ${id}. There are one or more ports still in use on the network.`);
  }
  for (const p of ports) s.ports.delete(p.id);
  for (const sub of s.subnetsOf(id)) s.subnets.delete(sub.id);
  s.releaseVni(network);
  s.networks.delete(id);
}
