/**
 * A create's `networks`: the request read into ports and networks, and each
 * checked against Neutron (the port free, the network usable) with nova-api's
 * messages.
 */
import { z } from 'zod';
import type { SimulatorContext } from '../framework.js';
import { badRequest, conflict, forbidden } from './errors.js';
import type { ServerLifecycle } from './lifecycle.js';
import type { Caller, RequestedNetwork } from './model.js';
import type { ServerCreateBody } from './schemas.js';

export function requestedNetworksOf(spec: ServerCreateBody['server'], caller: Caller): RequestedNetwork[] {
  const networks = spec.networks;
  if (networks === undefined || networks === 'none') return [];
  // Neutron's auto-allocated topology is not simulated, as in a cloud without it.
  if (networks === 'auto') throw badRequest(`Unable to automatically allocate a network for project ${caller.projectId}`);
  const requested: RequestedNetwork[] = [];
  for (const item of networks) {
    const tag = item.tag ? { tag: item.tag } : {};
    if (item.port) {
      requested.push({ kind: 'port', portId: item.port, ...tag });
    } else if (item.uuid !== undefined) {
      if (!z.guid().safeParse(item.uuid).success) throw badRequest(`Bad networks format: network uuid is not in proper format (${item.uuid})`);
      requested.push({ kind: 'network', networkId: item.uuid, ...(item.fixed_ip ? { fixedIp: item.fixed_ip } : {}), ...tag });
    } else {
      throw badRequest("Bad network format: missing 'uuid'");
    }
  }
  return requested;
}

/** A port must exist and be free (no device on it, not bound or promised to a live server); a network must exist, be ours to use and have a subnet. */
export function validateNetworks(requested: RequestedNetwork[], caller: Caller, ctx: SimulatorContext, lifecycle: ServerLifecycle): void {
  const network = ctx.peers.network;
  for (const item of requested) {
    if (item.kind === 'port') {
      const port = network?.getPort(item.portId);
      if (!port) throw badRequest(`Port id ${item.portId} could not be found.`);
      if (port.device_id || lifecycle.portClaimed(port.id)) throw conflict(`Port ${item.portId} is still in use.`);
      continue;
    }
    const net = network?.getNetwork(item.networkId);
    if (!net) throw badRequest(`Network ${item.networkId} could not be found.`);
    if (net['router:external'] && !net.shared && !caller.admin) throw forbidden(`It is not allowed to create an interface on external network ${net.id}`);
    if (net.subnets.length === 0) throw badRequest(`Network ${net.id} requires a subnet in order to boot instances on.`);
  }
}
