/**
 * Load balancers. The VIP port is allocated in Neutron by the API call itself
 * (as Octavia's allowed-address-pairs driver does), then the no-op amphora
 * driver takes the load balancer from PENDING_CREATE to ACTIVE, or to ERROR
 * when the VIP port was deleted before the driver could plug it.
 */
import { isIP } from 'node:net';
import type { Router } from 'express';
import { z } from 'zod';
import { SimulatorError, type PeerPort, type PeerSubnet } from '../framework.js';
import { invalidSubresource, parseBody, validationFailure } from './errors.js';
import { callerOf, queryFlag, requireWriter, withChanges, type Resource } from './model.js';
import { readRoutes } from './read-routes.js';
import { addHealthMonitor, healthMonitorCreateFields } from './healthmonitors.js';
import { addListener, checkPoolProtocol, listenerCreateFields } from './listeners.js';
import { addMember, addPool, memberCreateFields, poolCreateFields } from './pools.js';
import type { OctaviaState } from './state.js';

/** ministack's enabled_provider_drivers. */
export const providers = [
  { name: 'amphora', description: 'Amphora (noop drivers)' },
  { name: 'octavia', description: 'Octavia (alias of amphora)' },
];

const ipAddress = z.string().refine((ip) => isIP(ip) !== 0, { message: 'Value should be IPv4 or IPv6 format' });
const text = z.string().max(255);
const tags = z.array(text);

/** A listener of a fully populated create, with its default pool and that pool's monitor and members. */
const graphListener = z
  .object({
    ...listenerCreateFields,
    default_pool: z
      .object({
        ...poolCreateFields,
        healthmonitor: z.object(healthMonitorCreateFields).strict().optional(),
        members: z.array(z.object(memberCreateFields).strict()).default([]),
      })
      .strict()
      .optional(),
  })
  .strict();

const createSchema = z
  .object({
    loadbalancer: z
      .object({
        name: text.optional(),
        description: text.optional(),
        admin_state_up: z.boolean().default(true),
        vip_address: ipAddress.optional(),
        vip_port_id: z.guid().optional(),
        vip_subnet_id: z.guid().optional(),
        vip_network_id: z.guid().optional(),
        vip_qos_policy_id: z.guid().optional(),
        additional_vips: z.array(z.object({ subnet_id: z.guid(), ip_address: ipAddress.optional() }).strict()).default([]),
        project_id: z.string().max(36).optional(),
        listeners: z.array(graphListener).default([]),
        pools: z.array(z.unknown()).default([]),
        provider: z.string().max(64).optional(),
        tags: tags.optional(),
        flavor_id: z.guid().optional(),
        availability_zone: text.optional(),
      })
      .strict(),
  })
  .strict();

const updateSchema = z
  .object({
    loadbalancer: z
      .object({
        name: text.nullable().optional(),
        description: text.nullable().optional(),
        vip_qos_policy_id: z.guid().nullable().optional(),
        admin_state_up: z.boolean().optional(),
        tags: tags.optional(),
      })
      .strict(),
  })
  .strict();

const inCidr = (ip: string, cidr: string): boolean => {
  const [base, bits] = cidr.split('/');
  if (isIP(ip) !== 4 || isIP(base!) !== 4) return isIP(ip) === 6 && isIP(base!) === 6;
  const toInt = (a: string) => a.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const mask = Number(bits) === 0 ? 0 : 2 ** 32 - 2 ** (32 - Number(bits));
  return (toInt(ip) & mask) >>> 0 === (toInt(base!) & mask) >>> 0;
};

interface Vip {
  networkId: string;
  subnetId: string;
  address?: string;
  port?: PeerPort;
}

interface Graph {
  listeners: Resource[];
  pools: { pool: Resource; members: Resource[] }[];
  /** Every object created with the load balancer, which turns ACTIVE with it. */
  children: Resource[];
}

/** The listeners of a fully populated create, with their default pools, monitors and members, checked as each alone would be. */
function addGraph(state: OctaviaState, lb: Resource, listeners: z.infer<typeof graphListener>[]): Graph {
  const graph: Graph = { listeners: [], pools: [], children: [] };
  for (const { default_pool: poolSpec, ...listenerSpec } of listeners) {
    state.checkQuota('listener', lb.projectId);
    const listener = addListener(state, lb, listenerSpec);
    graph.listeners.push(listener);
    graph.children.push(listener);
    if (poolSpec === undefined) continue;
    const { healthmonitor, members, ...fields } = poolSpec;
    checkPoolProtocol(listener.attrs.protocol as string, fields.protocol);
    state.checkQuota('pool', lb.projectId);
    const pool = addPool(state, lb, fields);
    listener.attrs.default_pool_id = pool.id;
    const entry = { pool, members: [] as Resource[] };
    graph.pools.push(entry);
    graph.children.push(pool);
    // Members before the monitor, as Octavia builds the tree: they start NO_MONITOR.
    for (const memberSpec of members) {
      state.checkQuota('member', lb.projectId);
      const member = addMember(state, pool, memberSpec);
      entry.members.push(member);
      graph.children.push(member);
    }
    if (healthmonitor !== undefined) {
      state.checkQuota('healthmonitor', lb.projectId);
      graph.children.push(addHealthMonitor(state, pool, healthmonitor));
    }
  }
  return graph;
}

/**
 * Zed's answer to a fully populated create: each listener and pool in full
 * (without their `loadbalancers`), a pool's members in full, and its
 * `healthmonitor` null although the monitor exists (a GET shows it).
 */
function graphView(state: OctaviaState, lb: Resource, graph: Graph): Record<string, unknown> {
  const without = (view: Record<string, unknown>, ...keys: string[]) => Object.fromEntries(Object.entries(view).filter(([key]) => !keys.includes(key)));
  return {
    ...state.view(lb),
    listeners: graph.listeners.map((listener) => without(state.view(listener), 'loadbalancers')),
    pools: graph.pools.map(({ pool, members }) => ({
      ...without(state.view(pool), 'loadbalancers', 'healthmonitor_id'),
      healthmonitor: null,
      members: members.map((member) => state.view(member)),
    })),
  };
}

export function loadBalancerRoutes(api: Router, state: OctaviaState): void {
  const { ctx, store } = state;

  /** _validate_vip_request_object: work out network, subnet and address from what was given. */
  function resolveVip(spec: z.infer<typeof createSchema>['loadbalancer']): Vip {
    const network = ctx.peers.network;
    if (!spec.vip_port_id && !spec.vip_network_id && !spec.vip_subnet_id) {
      throw validationFailure('VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.');
    }
    if (spec.vip_port_id) {
      const port = network?.getPort(spec.vip_port_id);
      if (!port) throw invalidSubresource('Port', spec.vip_port_id);
      if (port.device_id) throw validationFailure(`Port ${port.id} is already used by device ${port.device_id} `);
      let fixed: PeerPort['fixed_ips'][number] | undefined = port.fixed_ips[0];
      if (spec.vip_subnet_id) {
        if (!network?.getSubnet(spec.vip_subnet_id)) throw invalidSubresource('Subnet', spec.vip_subnet_id);
        fixed = port.fixed_ips.find((ip) => ip.subnet_id === spec.vip_subnet_id);
        if (!fixed) throw validationFailure('No VIP address found on the specified VIP port within the specified subnet.');
      } else if (spec.vip_address) {
        fixed = port.fixed_ips.find((ip) => ip.ip_address === spec.vip_address);
        if (!fixed) throw validationFailure('Specified VIP address not found on the specified VIP port.');
      } else if (port.fixed_ips.length !== 1) {
        throw validationFailure("VIP port's subnet could not be determined. Please specify either a VIP subnet or address.");
      }
      return { networkId: port.network_id, subnetId: fixed!.subnet_id, address: fixed!.ip_address, port };
    }
    if (spec.vip_network_id) {
      const net = network?.getNetwork(spec.vip_network_id);
      if (!net) throw invalidSubresource('Network', spec.vip_network_id);
      if (spec.vip_subnet_id) {
        if (!net.subnets.includes(spec.vip_subnet_id)) throw invalidSubresource('Subnet', spec.vip_subnet_id);
        return { networkId: net.id, subnetId: spec.vip_subnet_id, ...(spec.vip_address ? { address: spec.vip_address } : {}) };
      }
      const subnets = net.subnets.map((id) => network!.getSubnet(id)).filter((s): s is PeerSubnet => s !== undefined);
      if (spec.vip_address) {
        const subnet = subnets.find((s) => inCidr(spec.vip_address!, s.cidr));
        if (!subnet) throw validationFailure('Supplied network does not contain a subnet for VIP address specified.');
        return { networkId: net.id, subnetId: subnet.id, address: spec.vip_address };
      }
      if (subnets.length === 0) throw validationFailure('Supplied network does not contain a subnet.');
      const chosen = subnets.find((s) => s.ip_version === 4) ?? subnets[0]!;
      return { networkId: net.id, subnetId: chosen.id };
    }
    const subnet = network?.getSubnet(spec.vip_subnet_id!);
    if (!subnet) throw invalidSubresource('Subnet', spec.vip_subnet_id!);
    return { networkId: subnet.network_id, subnetId: subnet.id, ...(spec.vip_address ? { address: spec.vip_address } : {}) };
  }

  api.post('/lbaas/loadbalancers', (req, res) => {
    const caller = callerOf(res);
    const spec = parseBody(createSchema, req.body).loadbalancer;
    const projectId = spec.project_id ?? caller.projectId;
    requireWriter(caller, projectId);
    const vip = resolveVip(spec);
    // Octavia knows no flavors or availability zones until an operator defines them; ministack defines none.
    if (spec.flavor_id) throw validationFailure('Invalid flavor_id.');
    if (spec.availability_zone) throw validationFailure('Invalid availability zone.');
    const provider = spec.provider ?? 'amphora';
    if (!providers.some((p) => p.name === provider)) throw new SimulatorError(400, `Provider '${provider}' is not enabled.`);
    state.checkQuota('loadbalancer', projectId);
    if (spec.pools.length > 0) {
      throw new SimulatorError(
        501,
        `Provider '${provider}' does not support a requested option: pools outside listeners in a fully populated create are not simulated`,
      );
    }
    if (spec.additional_vips.length > 0)
      throw new SimulatorError(501, `Provider '${provider}' does not support a requested option: additional VIPs are not simulated`);

    const id = ctx.newId();
    let port = vip.port;
    if (!port) {
      const network = ctx.peers.network;
      if (!network) throw new SimulatorError(503, 'The network service is unavailable.');
      port = network.createPort(projectId, {
        network_id: vip.networkId,
        name: `octavia-lb-${id}`,
        fixed_ips: [{ subnet_id: vip.subnetId, ...(vip.address ? { ip_address: vip.address } : {}) }],
        device_id: `lb-${id}`,
        device_owner: 'Octavia',
        admin_state_up: false,
      });
    }
    const address = port.fixed_ips.find((ip) => ip.subnet_id === vip.subnetId)?.ip_address ?? port.fixed_ips[0]?.ip_address;
    const lb: Resource = {
      kind: 'loadbalancer',
      id,
      projectId,
      lbId: id,
      attrs: {
        name: spec.name ?? '',
        description: spec.description ?? '',
        admin_state_up: spec.admin_state_up,
        vip_address: address,
        vip_port_id: port.id,
        vip_subnet_id: vip.subnetId,
        vip_network_id: vip.networkId,
        vip_qos_policy_id: spec.vip_qos_policy_id ?? null,
        additional_vips: [],
        provider,
        flavor_id: null,
        tags: spec.tags ?? [],
        availability_zone: null,
      },
      provisioningStatus: 'PENDING_CREATE',
      operatingStatus: 'OFFLINE',
      createdAt: ctx.clock.now(),
      updatedAt: null,
      vipOwned: !vip.port,
      amphoraId: ctx.newId(),
    };
    store.loadbalancer.add(lb);
    let graph: Graph;
    try {
      graph = addGraph(state, lb, spec.listeners);
    } catch (error) {
      // Octavia validates the whole tree in one transaction: a refused child leaves nothing behind.
      for (const kind of ['member', 'healthmonitor', 'pool', 'listener'] as const) {
        for (const child of store[kind].ofLoadBalancer(id)) store[kind].delete(child.id);
      }
      store.loadbalancer.delete(id);
      if (lb.vipOwned) ctx.peers.network?.deletePort(port.id);
      throw error;
    }
    // The driver plugs the VIP port into the amphora last; a port deleted by then fails that step (PortNotFound): see transition.
    state.transition(lb, 'CREATE', state.quirks.fullyPopulatedChildrenStayPending ? [] : graph.children);
    res.status(201).json({ loadbalancer: graph.children.length === 0 ? state.view(lb) : graphView(state, lb, graph) });
  });

  readRoutes(api, state, 'loadbalancer', { checkProjectFilter: true, stats: true });

  api.put('/lbaas/loadbalancers/:id', (req, res) => {
    const lb = state.writable('loadbalancer', req.params.id, callerOf(res));
    const changes = parseBody(updateSchema, req.body).loadbalancer;
    state.lockLoadBalancer(lb);
    lb.attrs = withChanges(lb.attrs, changes, (key, value) => value ?? (key === 'name' || key === 'description' ? '' : null));
    state.transition(lb, 'UPDATE');
    res.json({ loadbalancer: state.view(lb) });
  });

  api.delete('/lbaas/loadbalancers/:id', (req, res) => {
    const lb = state.writable('loadbalancer', req.params.id, callerOf(res));
    const cascade = queryFlag(req.query.cascade);
    if (!cascade && (state.listenersOfLb(lb.id).length > 0 || state.poolsOfLb(lb.id).length > 0)) {
      throw validationFailure(`Cannot delete Load Balancer ${lb.id} - it has children`);
    }
    state.lockLoadBalancer(lb, ['ACTIVE', 'ERROR']);
    state.transition(lb, 'DELETE');
    res.status(204).end();
  });

  api.get('/lbaas/loadbalancers/:id/status', (req, res) => {
    res.json(state.statusTree(state.readable('loadbalancer', req.params.id, callerOf(res))));
  });

  api.put('/lbaas/loadbalancers/:id/failover', (req, res) => {
    const caller = callerOf(res);
    const lb = state.find('loadbalancer', req.params.id);
    if (!caller.admin) throw new SimulatorError(403, 'Policy does not allow this request to be performed.');
    state.lockLoadBalancer(lb, ['ACTIVE', 'ERROR']);
    state.transition(lb, 'UPDATE');
    res.status(202).end();
  });
}
