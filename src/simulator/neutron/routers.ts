/**
 * Routers (L3 with ext-gw-mode and extraroute): the external gateway and
 * its `network:router_gateway` port, interfaces by subnet or port, extra
 * routes, and the in-use checks floating IPs and routes impose.
 */
import {
  attr,
  boolean,
  field,
  gatewayInfo,
  list,
  ownerAttributes,
  ownerOf,
  parseBody,
  readOnly,
  routes,
  standardReadOnly,
  string,
  uuid,
  Invalid,
  type GatewayInfo,
  createdTags,
  withCreationTags,
} from './body.js';
import { badResourceRequest, NeutronError, pyStr } from './errors.js';
import { cidrsOverlap, cidrContains, parseAddress, parseCidr } from './ip.js';
import { DEVICE_OWNER, standardView, type Caller, type HostRoute, type Port, type Router, type Subnet } from './model.js';
import { enforce, type AttributeCheck } from './policy.js';
import { allocateIps, createServicePort } from './ports.js';
import type { Store } from './store.js';

const MAX_ROUTES = 30;
const SYSTEM: Caller = { projectId: '', isAdmin: true, roles: ['admin'] };

const routerSpec = {
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
  external_gateway_info: attr(field(gatewayInfo), true, true),
  routes: attr(
    field((v) => (v === null ? [] : routes(v))),
    false,
    true,
  ),
  availability_zone_hints: attr(
    field((v) => list(v).map((z) => string(z, 255))),
    true,
    false,
  ),
  ...ownerAttributes,
  status: readOnly(),
  availability_zones: readOnly(),
  tags: readOnly(),
};

export function routerView(s: Store, caller: Caller, r: Router): Record<string, unknown> {
  const gwPort = r.gateway ? s.ports.get(r.gateway.portId) : undefined;
  const view: Record<string, unknown> = {
    id: r.id,
    name: r.name,
    tenant_id: r.projectId,
    admin_state_up: r.adminStateUp,
    status: r.status,
    external_gateway_info: r.gateway
      ? { network_id: r.gateway.networkId, enable_snat: r.gateway.enableSnat, external_fixed_ips: (gwPort?.fixedIps ?? []).map((f) => ({ ...f })) }
      : null,
    description: r.description,
    availability_zones: [],
    availability_zone_hints: [...r.availabilityZoneHints],
    routes: r.routes.map((route) => ({ ...route })),
    flavor_id: null,
    ...standardView(r),
  };
  if (caller.isAdmin) {
    view.distributed = false;
    view.ha = false;
  }
  return view;
}

function gatewayChecks(info: GatewayInfo | null | undefined): AttributeCheck[] {
  if (!info) return [];
  return [
    {
      attribute: 'external_gateway_info',
      allowed: true,
      sub: Object.keys(info).map((name) => ({ name, allowed: name === 'network_id' })),
    },
  ];
}

const interfacePorts = (s: Store, routerId: string) =>
  [...s.ports.values()].filter((p) => p.deviceId === routerId && p.deviceOwner === DEVICE_OWNER.routerInterface);

/** Ports the router is attached through: its interfaces and its gateway. */
const attachedPorts = (s: Store, r: Router) => {
  const ports = interfacePorts(s, r.id);
  const gw = r.gateway && s.ports.get(r.gateway.portId);
  return gw ? [...ports, gw] : ports;
};

function validateGateway(s: Store, caller: Caller, info: GatewayInfo): void {
  const network = s.network(caller, info.network_id);
  if (!network.external) throw badResourceRequest('router', `Network ${info.network_id} is not an external network`);
  for (const ext of info.external_fixed_ips ?? []) {
    if (ext.ip_address && s.subnetsOf(network.id).some((sub) => sub.gatewayIp === ext.ip_address)) {
      throw badResourceRequest('router', `External IP ${ext.ip_address} is the same as the gateway IP`);
    }
  }
}

function fipsVia(s: Store, routerId: string) {
  return [...s.floatingIps.values()].filter((f) => f.routerId === routerId);
}

function setGateway(s: Store, r: Router, info: GatewayInfo | null): void {
  const current = r.gateway;
  const target = info && { info, network: s.networks.get(info.network_id)! };
  if (current && target?.network.id === current.networkId) {
    current.enableSnat = target.info.enable_snat ?? current.enableSnat;
    if (target.info.external_fixed_ips) {
      const port = s.ports.get(current.portId)!;
      port.fixedIps = allocateIps(s, SYSTEM, target.network, target.info.external_fixed_ips, port.fixedIps);
      s.touch(port);
    }
    return;
  }
  if (current && fipsVia(s, r.id).length) {
    throw new NeutronError(
      409,
      'RouterExternalGatewayInUseByFloatingIp',
      `Gateway cannot be updated for router ${r.id}, since a gateway to external network ${current.networkId} is required by one or more floating IPs.`,
    );
  }
  // Addresses first: a failed allocation leaves the old gateway in place.
  const wanted = target?.info.external_fixed_ips;
  const fixedIps = target && allocateIps(s, SYSTEM, target.network, wanted?.length ? wanted : undefined);
  if (current) {
    s.ports.delete(current.portId);
    r.gateway = null;
  }
  if (!target || !fixedIps) return;
  const port = createServicePort(s, target.network, { projectId: '', deviceOwner: DEVICE_OWNER.routerGateway, deviceId: r.id, fixedIps });
  r.gateway = { networkId: target.network.id, enableSnat: target.info.enable_snat ?? true, portId: port.id };
}

function validateRoutes(s: Store, r: Router, wanted: HostRoute[]): void {
  if (wanted.length > MAX_ROUTES) {
    throw new NeutronError(400, 'RoutesExhausted', `Unable to complete operation for ${r.id}. The number of routes exceeds the maximum ${MAX_ROUTES}.`);
  }
  const ports = attachedPorts(s, r);
  const cidrs = ports.flatMap((p) => p.fixedIps.map((f) => parseCidr(s.subnets.get(f.subnet_id)!.cidr)!));
  const ips = ports.flatMap((p) => p.fixedIps.map((f) => f.ip_address));
  const text = pyStr(wanted);
  for (const route of wanted) {
    const hop = parseAddress(route.nexthop)!;
    if (!cidrs.some((c) => cidrContains(c, hop))) {
      throw new NeutronError(400, 'InvalidRoutes', `Invalid format for routes: ${text}, the nexthop is not connected with router`);
    }
    if (ips.includes(route.nexthop)) {
      throw new NeutronError(400, 'InvalidRoutes', `Invalid format for routes: ${text}, the nexthop is used by router`);
    }
  }
}

export function createRouter(s: Store, caller: Caller, body: unknown): Router {
  const v = parseBody(withCreationTags(routerSpec, s.options), 'router', body, 'POST');
  const projectId = ownerOf(v, caller);
  enforce(caller, 'create_router', true, gatewayChecks(v.external_gateway_info));
  s.checkQuota(projectId, 'router');
  if (v.external_gateway_info) validateGateway(s, caller, v.external_gateway_info);
  const router: Router = {
    ...s.standard(projectId, v.description ?? '', createdTags(v), 1),
    name: v.name ?? '',
    adminStateUp: v.admin_state_up ?? true,
    status: 'ACTIVE',
    gateway: null,
    routes: [],
    availabilityZoneHints: v.availability_zone_hints ?? [],
  };
  s.routers.set(router.id, router);
  if (v.external_gateway_info) {
    try {
      setGateway(s, router, v.external_gateway_info);
    } catch (error) {
      s.routers.delete(router.id);
      throw error;
    }
  }
  return router;
}

export function updateRouter(s: Store, caller: Caller, id: string, body: unknown): Router {
  const v = parseBody(routerSpec, 'router', body, 'PUT');
  const router = s.router(caller, id);
  enforce(caller, 'update_router', true, gatewayChecks(v.external_gateway_info));
  if (v.external_gateway_info) validateGateway(s, caller, v.external_gateway_info);
  if (v.routes !== undefined) validateRoutes(s, router, v.routes);
  if (v.external_gateway_info !== undefined) setGateway(s, router, v.external_gateway_info);
  if (v.name !== undefined) router.name = v.name;
  if (v.description !== undefined) router.description = v.description;
  if (v.admin_state_up !== undefined) router.adminStateUp = v.admin_state_up;
  if (v.routes !== undefined) router.routes = v.routes;
  s.touch(router);
  return router;
}

export function deleteRouter(s: Store, caller: Caller, id: string): void {
  const router = s.router(caller, id);
  const interfaces = interfacePorts(s, id);
  if (interfaces.length) {
    throw new NeutronError(409, 'RouterInUse', `Router ${id} has ports still attached: ${interfaces.map((p) => p.id).join(', ')}`);
  }
  setGateway(s, router, null);
  s.routers.delete(id);
}

// Interfaces

function interfaceBody(body: unknown, forRemoval: boolean): { portId?: string; subnetId?: string } {
  const info = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const hasPort = 'port_id' in info;
  const hasSubnet = 'subnet_id' in info;
  if (!hasPort && !hasSubnet) throw badResourceRequest('router', 'Either subnet_id or port_id must be specified');
  const check = (key: 'port_id' | 'subnet_id') => {
    try {
      return uuid(info[key]);
    } catch (error) {
      if (error instanceof Invalid) throw badResourceRequest('router', error.reason);
      throw error;
    }
  };
  const out = { portId: hasPort ? check('port_id') : undefined, subnetId: hasSubnet ? check('subnet_id') : undefined };
  if (!forRemoval && hasPort && hasSubnet) throw badResourceRequest('router', 'Cannot specify both subnet-id and port-id');
  return out;
}

/** Neutron refuses a second interface on a subnet, or on one overlapping any subnet the router already reaches (the gateway's included). */
function checkNewSubnets(s: Store, r: Router, newSubnets: Subnet[]): void {
  const newIds = new Set(newSubnets.map((sub) => sub.id));
  const reached: string[] = [];
  for (const port of attachedPorts(s, r)) {
    for (const ip of port.fixedIps) {
      if (newIds.has(ip.subnet_id)) throw badResourceRequest('router', `Router already has a port on subnet ${ip.subnet_id}`);
      if (port.deviceOwner === DEVICE_OWNER.routerGateway) reached.push(...s.subnetsOf(port.networkId).map((sub) => sub.id));
      else reached.push(ip.subnet_id);
    }
  }
  for (const id of new Set(reached)) {
    const existing = s.subnets.get(id);
    if (!existing) continue;
    for (const sub of newSubnets) {
      if (cidrsOverlap(parseCidr(existing.cidr)!, parseCidr(sub.cidr)!)) {
        throw badResourceRequest('router', `Cidr ${sub.cidr} of subnet ${sub.id} overlaps with cidr ${existing.cidr} of subnet ${existing.id}`);
      }
    }
  }
}

const interfaceInfo = (r: Router, port: Port, subnets: Subnet[]) => ({
  id: r.id,
  tenant_id: port.projectId,
  port_id: port.id,
  network_id: port.networkId,
  subnet_id: subnets.at(-1)?.id,
  subnet_ids: subnets.map((sub) => sub.id),
});

export function addInterface(s: Store, caller: Caller, id: string, body: unknown) {
  const router = s.router(caller, id);
  const { portId, subnetId } = interfaceBody(body, false);
  enforce(caller, 'add_router_interface', true);
  if (portId) {
    const port = s.port(caller, portId);
    if (port.deviceId !== '') {
      throw new NeutronError(
        409,
        'PortInUse',
        `Unable to complete operation on port ${port.id} for network ${port.networkId}. Port already has an attached device ${port.deviceId}.`,
      );
    }
    if (!port.fixedIps.length) throw badResourceRequest('router', 'Router port must have at least one fixed IP');
    const subnets = port.fixedIps.map((f) => s.subnets.get(f.subnet_id)!);
    checkNewSubnets(s, router, subnets);
    if (subnets.filter((sub) => sub.ipVersion === 4).length > 1) throw badResourceRequest('router', 'Cannot have multiple IPv4 subnets on router port');
    port.deviceId = router.id;
    port.deviceOwner = DEVICE_OWNER.routerInterface;
    s.touch(port);
    s.touch(router);
    return interfaceInfo(router, port, subnets);
  }
  const subnet = s.subnet(caller, subnetId!);
  if (!subnet.gatewayIp) throw badResourceRequest('router', 'Subnet for router interface must have a gateway IP');
  if (subnet.projectId !== caller.projectId && !caller.isAdmin) {
    throw badResourceRequest('router', `Cannot add interface to router because subnet ${subnet.id} is not owned by project making the request`);
  }
  checkNewSubnets(s, router, [subnet]);
  const network = s.networks.get(subnet.networkId)!;
  const fixedIps = allocateIps(s, SYSTEM, network, [{ subnet_id: subnet.id, ip_address: subnet.gatewayIp }]);
  const port = createServicePort(s, network, { projectId: router.projectId, deviceOwner: DEVICE_OWNER.routerInterface, deviceId: router.id, fixedIps });
  s.touch(router);
  return interfaceInfo(router, port, [subnet]);
}

function confirmNotInUse(s: Store, r: Router, subnet: Subnet): void {
  const cidr = parseCidr(subnet.cidr)!;
  const onSubnet = new Set([...s.ports.values()].filter((p) => p.fixedIps.some((f) => f.subnet_id === subnet.id)).map((p) => p.id));
  for (const fip of fipsVia(s, r.id)) {
    if (fip.fixedIpAddress && cidrContains(cidr, parseAddress(fip.fixedIpAddress)!) && fip.portId && onSubnet.has(fip.portId)) {
      throw new NeutronError(
        409,
        'RouterInterfaceInUseByFloatingIP',
        `Router interface for subnet ${subnet.id} on router ${r.id} cannot be deleted, as it is required by one or more floating IPs.`,
      );
    }
  }
  if (r.routes.some((route) => cidrContains(cidr, parseAddress(route.nexthop)!))) {
    throw new NeutronError(
      409,
      'RouterInterfaceInUseByRoute',
      `Router interface for subnet ${subnet.id} on router ${r.id} cannot be deleted, as it is required by one or more routes.`,
    );
  }
}

export function removeInterface(s: Store, caller: Caller, id: string, body: unknown) {
  const router = s.router(caller, id);
  const { portId, subnetId } = interfaceBody(body, true);
  enforce(caller, 'remove_router_interface', true);
  if (portId) {
    const port = interfacePorts(s, router.id).find((p) => p.id === portId);
    if (!port) throw new NeutronError(404, 'RouterInterfaceNotFound', `Router ${router.id} does not have an interface with id ${portId}`);
    const subnetIds = port.fixedIps.map((f) => f.subnet_id);
    if (subnetId && !subnetIds.includes(subnetId)) {
      throw new NeutronError(400, 'SubnetMismatchForPort', `Subnet on port ${portId} does not match the requested subnet ${subnetId}.`);
    }
    const subnets = subnetIds.map((sid) => s.subnets.get(sid)!);
    for (const sub of subnets) confirmNotInUse(s, router, sub);
    s.ports.delete(port.id);
    s.touch(router);
    return interfaceInfo(router, port, subnets);
  }
  const subnet = s.subnet(caller, subnetId!);
  const candidates = interfacePorts(s, router.id).filter((p) => p.networkId === subnet.networkId);
  if (candidates.length) confirmNotInUse(s, router, subnet);
  const port = candidates.find((p) => p.fixedIps.some((f) => f.subnet_id === subnet.id));
  if (!port) throw new NeutronError(404, 'RouterInterfaceNotFoundForSubnet', `Router ${router.id} has no interface on subnet ${subnet.id}`);
  if (port.fixedIps.length > 1) {
    port.fixedIps = port.fixedIps.filter((f) => f.subnet_id !== subnet.id);
    s.touch(port);
  } else {
    s.ports.delete(port.id);
  }
  s.touch(router);
  return interfaceInfo(router, port, [subnet]);
}

/** The router that connects `subnetId` to external network `networkId`: one with an interface on the subnet (preferring the subnet's gateway address) and a gateway there. */
export function routerBetween(s: Store, subnet: Subnet, networkId: string): Router | undefined {
  let first: Router | undefined;
  for (const port of s.ports.values()) {
    if (port.deviceOwner !== DEVICE_OWNER.routerInterface) continue;
    const ip = port.fixedIps.find((f) => f.subnet_id === subnet.id);
    const router = ip && s.routers.get(port.deviceId);
    if (!router || router.gateway?.networkId !== networkId) continue;
    if (ip.ip_address === subnet.gatewayIp) return router;
    first ??= router;
  }
  return first;
}
