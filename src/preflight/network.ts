/**
 * The external network check, by CAPO's rule: a given network must exist and
 * be external; a filter, and discovery when nothing is given, must find
 * exactly one external network.
 */
import { z } from 'zod';
import { isNotFound, type Network } from '../openstack/index.js';
import { neutronQuery, type NeutronFilter } from '../capo/neutron-query.js';
import type { CheckContext } from './context.js';
import { failedCall, outcome } from './outcome.js';
import type { PreflightCheck } from './report.js';
import type { PreflightRequirements } from './requirements.js';

const name = 'external network';

/** CAPO's NetworkFilter, as the v1beta2 spec spells it. */
const networkFilterSchema: z.ZodType<NeutronFilter> = z.object({
  name: z.string().optional(),
  description: z.string().optional(),
  projectID: z.string().optional(),
  tags: z.array(z.string()).optional(),
  tagsAny: z.array(z.string()).optional(),
  notTags: z.array(z.string()).optional(),
  notTagsAny: z.array(z.string()).optional(),
});

/** A check's verdict, with on a pass the one external network it found, which the reconciler then takes as its own. */
export interface ExternalNetworkVerdict {
  check: PreflightCheck;
  network?: Network;
}

const fail = (message: string): ExternalNetworkVerdict => ({ check: { name, status: 'fail', message } });
const pass = (message: string, network: Network): ExternalNetworkVerdict => ({ check: { name, status: 'pass', message }, network });

export async function checkExternalNetwork(context: CheckContext, wanted: PreflightRequirements['externalNetwork']): Promise<ExternalNetworkVerdict> {
  if (wanted === null) return { check: { name, status: 'pass', message: 'not used: spec.enableExternalNetwork is false' } };
  if (wanted !== undefined && 'id' in wanted) return byId(context, wanted.id);
  const filter = wanted === undefined ? {} : networkFilterSchema.parse(wanted.filter);
  // The reconciler's query of CAPO filters, whichever kind it names.
  const found = await outcome(context.clients.neutron.listNetworks({ ...neutronQuery(filter), 'router:external': true }));
  if (!found.ok) return { check: failedCall(name, 'listing external networks', found.error) };
  // As in the reconciler, the description is matched here rather than by Neutron.
  const networks = found.value.filter((network) => filter.description === undefined || network.description === filter.description);
  const [only, ...others] = networks;
  if (wanted === undefined) {
    if (only === undefined) {
      return fail(
        `no external network visible to project ${context.project}: have the cloud admin share one, or set spec.enableExternalNetwork: false and spec.apiServer.enableFloatingIP: false`,
      );
    }
    if (others.length > 0) return fail(`${networks.length} external networks (${namesOf(networks)}): set spec.externalNetwork`);
    return pass(`${shown(only)} found (the only external network)`, only);
  }
  const criteria = describe(filter);
  if (only === undefined) return fail(`no external network matches spec.externalNetwork.filter (${criteria}) in project ${context.project}: fix the filter`);
  if (others.length > 0) {
    return fail(
      `${networks.length} external networks match spec.externalNetwork.filter (${criteria}): ${namesOf(networks)}; narrow the filter or use spec.externalNetwork.id`,
    );
  }
  return pass(`${shown(only)} matches spec.externalNetwork.filter`, only);
}

async function byId(context: CheckContext, id: string): Promise<ExternalNetworkVerdict> {
  const found = await outcome(context.clients.neutron.getNetwork(id));
  if (!found.ok) {
    if (isNotFound(found.error)) return fail(`external network ${id} not found in project ${context.project}: fix spec.externalNetwork.id`);
    return { check: failedCall(name, `looking up network ${id}`, found.error) };
  }
  const network = found.value;
  if (network['router:external'] !== true)
    return fail(`${shown(network)} is not external (router:external is false): set spec.externalNetwork to an external network`);
  return pass(`${shown(network)} is external`, network);
}

function describe(filter: NeutronFilter): string {
  return Object.entries(filter)
    .map(([key, value]) => `${key} ${Array.isArray(value) ? value.join(',') : String(value)}`)
    .join(', ');
}

function shown(network: Network): string {
  return network.name === '' ? `network ${network.id}` : `network '${network.name}' (${network.id})`;
}

function namesOf(networks: Network[]): string {
  return networks.map((network) => (network.name === '' ? network.id : network.name)).join(', ');
}
