/**
 * The fidelity scenarios against real OpenStack Zed (ministack), compared
 * with the recorded fixtures; with RECORD_FIXTURES=1 they (re)write them.
 * MINISTACK_CLOUDS names ministack's clouds.yaml (clouds `ministack` and
 * `ministack-admin`). Without it the suite is skipped on a workstation and
 * fails in CI, which starts ministack for it: a fidelity check that quietly
 * did nothing would look like a passing one.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadCloud, OpenStackSession } from '../../../src/openstack/index.js';
import { createServiceClients, type ServiceClients } from '../../../src/openstack/services/index.js';
import { disagreements, readFixture, writeFixture } from './observe.js';
import { runScenarios, scenarios, type FidelityCloud, type ScenarioResult } from './scenarios.js';

const cloudsPath = process.env.MINISTACK_CLOUDS;
const recording = process.env.RECORD_FIXTURES === '1';
/** FIDELITY_SCENARIOS=a,b runs (and records) only those, e.g. to record a new scenario's fixture. */
const only = process.env.FIDELITY_SCENARIOS?.split(',');
const selected = only === undefined ? scenarios : scenarios.filter((scenario) => only.includes(scenario.name));
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

if (cloudsPath === undefined && inCi) {
  describe('fidelity against ministack', () => {
    it('has a ministack to run against', () => {
      throw new Error('MINISTACK_CLOUDS is not set; CI starts ministack, so set it to its clouds.yaml (e.g. /tmp/ministack/clouds.yaml)');
    });
  });
} else if (cloudsPath === undefined) {
  console.warn("fidelity against ministack skipped: MINISTACK_CLOUDS (path to a running ministack's clouds.yaml) is not set");
}

/** Octavia and Nova on ministack take seconds per transition; these are generous on two busy cores. */
const timing = { intervalMs: 500, serverTimeoutMs: 240_000, loadBalancerTimeoutMs: 180_000, timeoutMs: 120_000 };
/**
 * Per request: Octavia answers a load balancer's create only once it has made the VIP port in
 * Neutron, which on two cores shared with the rest of the suite once took over the client's 30 s.
 */
const session = { timeoutMs: 120_000 };

describe.skipIf(cloudsPath === undefined)(`fidelity against ministack${recording ? ' (recording fixtures)' : ''}`, () => {
  const prefix = `fid-${randomBytes(3).toString('hex')}`;
  let demo: OpenStackSession;
  let admin: OpenStackSession;
  let results: Map<string, ScenarioResult>;

  beforeAll(async () => {
    const cloudsYaml = await readFile(cloudsPath!, 'utf8');
    demo = await OpenStackSession.create(loadCloud({ cloudsYaml, cloudName: 'ministack' }), session);
    admin = await OpenStackSession.create(loadCloud({ cloudsYaml, cloudName: 'ministack-admin' }), session);
    const { projectId } = await demo.authenticate();
    const cloud: FidelityCloud = {
      transport: demo,
      adminTransport: admin,
      projectId,
      prefix,
      timing,
      async capQuotaAtUsage(resource) {
        const usage = (await createServiceClients(admin).neutron.getQuotas(projectId))[resource];
        if (usage === undefined) throw new Error(`Neutron reports no ${resource} quota for project ${projectId}`);
        const setLimit = async (limit: number) => {
          await admin.request(
            'network',
            { method: 'PUT', path: `/v2.0/quotas/${projectId}`, body: { quota: { [resource]: limit } }, idempotent: true },
            z.unknown(),
          );
        };
        await setLimit(usage.used);
        return () => setLimit(usage.limit);
      },
    };
    const started = Date.now();
    results = await runScenarios(cloud, selected);
    console.info(`fidelity: ${selected.length} scenarios against ministack took ${((Date.now() - started) / 1000).toFixed(1)} s (run prefix ${prefix})`);
  }, 420_000);

  afterAll(() => {
    demo?.close();
    admin?.close();
  });

  for (const scenario of selected) {
    it(scenario.name, async () => {
      const result = results.get(scenario.name)!;
      const problems = [
        ...(result.failure === undefined ? [] : [`stopped: ${result.failure}`]),
        ...result.cleanupFailures.map((failure) => `cleanup: ${failure}`),
      ];
      if (recording) {
        expect(problems, 'a run with problems is not recorded').toEqual([]);
        await writeFixture(result.record);
        return;
      }
      problems.push(...disagreements(await readFixture(scenario.name), result.record, 'exact'));
      expect(problems).toEqual([]);
    });
  }

  it('leaves nothing named after the run in any service', async () => {
    expect(await leftovers(createServiceClients(demo), prefix)).toEqual([]);
  });
});

async function leftovers(clients: ServiceClients, prefix: string): Promise<string[]> {
  const { neutron, nova, octavia, cinder, glance } = clients;
  const named = (kind: string, items: readonly { id: string; name?: string | null }[]) =>
    items.filter((item) => item.name?.startsWith(prefix) === true).map((item) => `${kind} ${item.name} (${item.id})`);
  const [networks, subnets, ports, routers, groups, floatingIps, servers, loadBalancers, volumes, images] = await Promise.all([
    neutron.listNetworks(),
    neutron.listSubnets(),
    neutron.listPorts(),
    neutron.listRouters(),
    neutron.listSecurityGroups(),
    neutron.listFloatingIps(),
    nova.listServers({ name: prefix }),
    octavia.listLoadBalancers(),
    cinder.listVolumes(),
    glance.listImages(),
  ]);
  return [
    ...named('network', networks),
    ...named('subnet', subnets),
    ...named('port', ports),
    ...named('router', routers),
    ...named('security group', groups),
    // Floating IPs have no name; the scenarios put theirs in the description.
    ...named(
      'floating IP',
      floatingIps.map((fip) => ({ id: fip.id, name: fip.description })),
    ),
    ...named('server', servers),
    ...named('load balancer', loadBalancers),
    ...named('volume', volumes),
    ...named('image', images),
  ];
}
