/**
 * Floating IPs: an address on an external network held by a hidden
 * `network:floatingip` port, associated with a fixed IP of a port whose
 * subnet a router connects to that external network. Status follows the
 * association at once (ministack's L3 plugin: ACTIVE when associated, DOWN
 * when not).
 */
import {
  attr,
  field,
  ipOrNull,
  ownerAttributes,
  ownerOf,
  parseBody,
  readOnly,
  standardReadOnly,
  string,
  uuid,
  uuidOrNull,
  createdTags,
  withCreationTags,
} from './body.js';
import { badResourceRequest, NeutronError } from './errors.js';
import { parseAddress } from './ip.js';
import { DEVICE_OWNER, standardView, type Caller, type FloatingIp } from './model.js';
import { enforce } from './policy.js';
import { allocateIps, createServicePort } from './ports.js';
import { routerBetween } from './routers.js';
import type { Store } from './store.js';

const SYSTEM: Caller = { projectId: '', isAdmin: true, roles: ['admin'] };

const floatingIpSpec = {
  ...standardReadOnly,
  floating_network_id: attr(field(uuid), true, false, true),
  floating_ip_address: attr(field(ipOrNull), true, false),
  subnet_id: attr(field(uuidOrNull), true, false),
  port_id: attr(field(uuidOrNull), true, true),
  fixed_ip_address: attr(field(ipOrNull), true, true),
  description: attr(
    field((v) => string(v, 255)),
    true,
    true,
  ),
  ...ownerAttributes,
  router_id: readOnly(),
  status: readOnly(),
  port_details: readOnly(),
  tags: readOnly(),
};

export function floatingIpView(s: Store, f: FloatingIp): Record<string, unknown> {
  const port = f.portId ? s.ports.get(f.portId) : undefined;
  return {
    id: f.id,
    tenant_id: f.projectId,
    floating_ip_address: f.floatingIpAddress,
    floating_network_id: f.floatingNetworkId,
    router_id: f.routerId,
    port_id: f.portId,
    fixed_ip_address: f.fixedIpAddress,
    status: f.status,
    description: f.description,
    port_details: port
      ? {
          name: port.name,
          network_id: port.networkId,
          mac_address: port.macAddress,
          admin_state_up: port.adminStateUp,
          status: port.status,
          device_id: port.deviceId,
          device_owner: port.deviceOwner,
        }
      : null,
    ...standardView(f),
  };
}

interface Association {
  portId: string | null;
  fixedIpAddress: string | null;
  routerId: string | null;
}

const fipRequest = (message: string) => badResourceRequest('floatingip', message);

/** Where an association request points: Neutron's `_internal_fip_assoc_data` and `get_router_for_floatingip`. */
function association(
  s: Store,
  caller: Caller,
  fip: Pick<FloatingIp, 'id' | 'projectId' | 'floatingNetworkId' | 'floatingIpAddress' | 'portId'>,
  portId: string | null,
  fixedIp: string | null,
): Association {
  if (fixedIp && !portId) throw fipRequest('fixed_ip_address cannot be specified without a port_id');
  if (!portId) return { portId: null, fixedIpAddress: null, routerId: null };
  const port = s.port(caller, portId);
  if (port.projectId !== fip.projectId && !caller.isAdmin) {
    throw fipRequest(`Cannot process floating IP association with Port ${portId}, since that port is owned by a different tenant`);
  }
  if (port.deviceOwner === DEVICE_OWNER.dhcp) throw fipRequest('Port %(id)s is unable to be assigned a floating IP');
  let chosen: { subnet_id: string; ip_address: string };
  if (fixedIp) {
    if (parseAddress(fixedIp)!.version !== 4) throw fipRequest(`Cannot process floating IP association with ${fixedIp}, since that is not an IPv4 address`);
    const match = port.fixedIps.find((f) => f.ip_address === fixedIp);
    if (!match) throw fipRequest(`Port ${portId} does not have fixed ip ${fixedIp}`);
    chosen = match;
  } else {
    const v4 = port.fixedIps.filter((f) => parseAddress(f.ip_address)!.version === 4);
    if (!v4.length) throw fipRequest(`Cannot add floating IP to port ${portId} that has no fixed IPv4 addresses`);
    if (v4.length > 1) throw fipRequest(`Port ${portId} has multiple fixed IPv4 addresses.  Must provide a specific IPv4 address when assigning a floating IP`);
    chosen = v4[0]!;
  }
  const subnet = s.subnets.get(chosen.subnet_id)!;
  const router = routerBetween(s, subnet, fip.floatingNetworkId);
  if (!router) {
    throw new NeutronError(
      404,
      'ExternalGatewayForFloatingIPNotFound',
      `External network ${fip.floatingNetworkId} is not reachable from subnet ${subnet.id}.  Therefore, cannot associate Port ${portId} with a Floating IP.`,
    );
  }
  if (portId !== fip.portId) {
    const other = [...s.floatingIps.values()].find(
      (f) => f.id !== fip.id && f.portId === portId && f.floatingNetworkId === fip.floatingNetworkId && f.fixedIpAddress === chosen.ip_address,
    );
    if (other) {
      throw new NeutronError(
        409,
        'FloatingIPPortAlreadyAssociated',
        `Cannot associate floating IP ${fip.floatingIpAddress} (${fip.id}) with port ${portId} using fixed IP ${chosen.ip_address}, as that fixed IP already has a floating IP on external network ${fip.floatingNetworkId}.`,
      );
    }
  }
  return { portId, fixedIpAddress: chosen.ip_address, routerId: router.id };
}

function apply(f: FloatingIp, a: Association): void {
  f.portId = a.portId;
  f.fixedIpAddress = a.fixedIpAddress;
  f.routerId = a.routerId;
  f.status = a.portId ? 'ACTIVE' : 'DOWN';
}

export function createFloatingIp(s: Store, caller: Caller, body: unknown): FloatingIp {
  const v = parseBody(withCreationTags(floatingIpSpec, s.options), 'floatingip', body, 'POST');
  const projectId = ownerOf(v, caller);
  enforce(caller, 'create_floatingip', true, v.floating_ip_address ? [{ attribute: 'floating_ip_address', allowed: false }] : []);
  s.checkQuota(projectId, 'floatingip');
  const network = s.network(caller, v.floating_network_id!);
  if (!network.external) throw fipRequest(`Network ${network.id} is not a valid external network`);
  if (!s.subnetsOf(network.id).some((sub) => sub.ipVersion === 4)) throw fipRequest(`Network ${network.id} does not contain any IPv4 subnet`);

  const id = s.ctx.newId();
  const requested =
    v.floating_ip_address || v.subnet_id ? [{ subnet_id: v.subnet_id ?? undefined, ip_address: v.floating_ip_address ?? undefined }] : undefined;
  const fixedIps = allocateIps(s, SYSTEM, network, requested).filter((f) => parseAddress(f.ip_address)!.version === 4);
  if (!fixedIps.length) throw new NeutronError(400, 'ExternalIpAddressExhausted', `Unable to find any IP address on external network ${network.id}.`);
  const address = fixedIps[0]!.ip_address;
  const assoc = association(
    s,
    caller,
    { id, projectId, floatingNetworkId: network.id, floatingIpAddress: address, portId: null },
    v.port_id ?? null,
    v.fixed_ip_address ?? null,
  );
  const port = createServicePort(s, network, { projectId: '', deviceOwner: DEVICE_OWNER.floatingIp, deviceId: id, fixedIps: [fixedIps[0]!], status: 'N/A' });
  const fip: FloatingIp = {
    ...s.standard(projectId, v.description ?? '', createdTags(v), 0),
    id,
    floatingNetworkId: network.id,
    floatingIpAddress: address,
    floatingPortId: port.id,
    portId: null,
    fixedIpAddress: null,
    routerId: null,
    status: 'DOWN',
  };
  apply(fip, assoc);
  s.floatingIps.set(id, fip);
  return fip;
}

export function updateFloatingIp(s: Store, caller: Caller, id: string, body: unknown): FloatingIp {
  const v = parseBody(floatingIpSpec, 'floatingip', body, 'PUT');
  const fip = s.floatingIp(caller, id);
  enforce(caller, 'update_floatingip', true);
  // An update naming other fields but not port_id keeps (and re-validates) the current association;
  // an empty one drops it, as port_id null does (Neutron's `_check_and_get_fip_assoc` tests the
  // request dict's truthiness; gophercloud disassociates that way, and so CAPO).
  const empty = Object.keys(v).length === 0;
  const portId = v.port_id !== undefined ? v.port_id : empty ? null : fip.portId;
  const fixedIp = v.port_id !== undefined || empty ? (v.fixed_ip_address ?? null) : (v.fixed_ip_address ?? fip.fixedIpAddress);
  if (v.port_id !== undefined || v.fixed_ip_address !== undefined || empty) apply(fip, association(s, caller, fip, portId, fixedIp));
  if (v.description !== undefined) fip.description = v.description;
  s.touch(fip);
  return fip;
}

export function deleteFloatingIp(s: Store, caller: Caller, id: string): void {
  const fip = s.floatingIp(caller, id);
  enforce(caller, 'delete_floatingip', true);
  s.ports.delete(fip.floatingPortId);
  s.floatingIps.delete(id);
}
