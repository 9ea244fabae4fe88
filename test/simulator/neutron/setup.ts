/** A simulator hosting Keystone and Neutron, with demo and admin sessions and Neutron-shaped assertions. */
import { expect } from 'vitest';
import type { SimulatedService, SimulatorContext } from '../../../src/simulator/framework.js';
import type { Simulator } from '../../../src/simulator/host.js';
import { createNeutronSimulator } from '../../../src/simulator/neutron/index.js';
import { call, endpoint, login, start, type CallResult, type Session } from '../helpers.js';

export interface Cloud {
  sim: Simulator;
  demo: Session;
  admin: Session;
  /** Neutron's v2.0 root from the catalog, e.g. http://127.0.0.1:4711/network/v2.0 */
  v2: string;
  publicNetwork: string;
  publicSubnet: string;
}

/** `neutron` chooses the simulated Neutron: ministack's Zed unless told otherwise (e.g. `neutronWith({ tagCreation: true })`). */
export async function startCloud(neutron: (ctx: SimulatorContext) => SimulatedService = createNeutronSimulator): Promise<Cloud> {
  const sim = await start({ services: [neutron] });
  const demo = await login(sim);
  const admin = await login(sim, 'admin');
  const v2 = `${endpoint(demo, 'network')}/v2.0`;
  const nets = await call(demo, 'GET', `${v2}/networks?name=public`);
  const subnets = await call(demo, 'GET', `${v2}/subnets?name=public-subnet`);
  return { sim, demo, admin, v2, publicNetwork: nets.body.networks[0].id, publicSubnet: subnets.body.subnets[0].id };
}

/** Asserts a Neutron fault: status, `NeutronError.type`, and (when given) the message or a pattern of it. */
export function expectFault(res: CallResult, status: number, type: string, message?: string | RegExp): void {
  expect({ status: res.status, type: res.body?.NeutronError?.type }).toEqual({ status, type });
  expect(res.body.NeutronError.detail).toBe('');
  if (typeof message === 'string') expect(res.body.NeutronError.message).toBe(message);
  else if (message) expect(res.body.NeutronError.message).toMatch(message);
}

let counter = 0;
/** A name unique within the run, so tests sharing one cloud can filter by it. */
export const unique = (prefix: string) => `${prefix}-${++counter}`;

/** Creates a resource and returns its body, failing the test on anything but 201. */
export async function create(session: Session, url: string, member: string, attrs: Record<string, unknown>): Promise<any> {
  const res = await call(session, 'POST', url, { [member]: attrs });
  if (res.status !== 201) throw new Error(`POST ${url} → ${res.status} ${JSON.stringify(res.body)}`);
  return res.body[member];
}

/** A tenant network with one IPv4 subnet. */
export async function network(cloud: Cloud, session: Session, cidr: string, attrs: Record<string, unknown> = {}) {
  const net = await create(session, `${cloud.v2}/networks`, 'network', { name: unique('net'), ...attrs });
  const subnet = await create(session, `${cloud.v2}/subnets`, 'subnet', { network_id: net.id, ip_version: 4, cidr, name: unique('subnet') });
  return { net, subnet };
}

export { call };
