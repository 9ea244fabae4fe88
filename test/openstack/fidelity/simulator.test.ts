/**
 * The fidelity scenarios against the simulator, held to what real Zed
 * answered (the fixtures ministack.test.ts records): the same outcomes and
 * status sequences, and every key Zed returned. A failure here is a
 * simulator bug to fix in the simulator, not a comparison to loosen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCloud, OpenStackSession } from '../../../src/openstack/index.js';
import { createServiceClients } from '../../../src/openstack/services/index.js';
import { startSimulator, type Simulator } from '../../../src/simulator/host.js';
import { disagreements, readFixture } from './observe.js';
import { runScenarios, scenarios, type FidelityCloud, type ScenarioResult } from './scenarios.js';

/** Long enough for a poll to see each intermediate state, short enough to keep the suite fast. */
const transitionDelayMs = 300;
const timing = { intervalMs: 100, serverTimeoutMs: 10_000, loadBalancerTimeoutMs: 10_000, timeoutMs: 10_000 };

type Inventory = ReturnType<Simulator['inventory']>;

describe('fidelity: the simulator against recorded Zed', () => {
  let simulator: Simulator;
  let session: OpenStackSession;
  let admin: OpenStackSession;
  let baseline: Inventory;
  let results: Map<string, ScenarioResult>;

  beforeAll(async () => {
    simulator = await startSimulator({ transitionDelayMs });
    session = await OpenStackSession.create(loadCloud({ cloudsYaml: simulator.cloudsYaml('sim'), cloudName: 'sim' }));
    admin = await OpenStackSession.create(loadCloud({ cloudsYaml: simulator.cloudsYaml('sim'), cloudName: 'sim-admin' }));
    const { projectId } = await session.authenticate();
    const { neutron } = createServiceClients(session);
    // Neutron creates the project's default security group on first use; that is not a leak.
    await neutron.listSecurityGroups();
    baseline = simulator.inventory();
    const cloud: FidelityCloud = {
      transport: session,
      adminTransport: admin,
      projectId,
      prefix: 'fid-sim',
      timing,
      async capQuotaAtUsage(resource) {
        const usage = (await neutron.getQuotas(projectId))[resource];
        if (usage === undefined) throw new Error(`the simulator reports no ${resource} quota`);
        simulator.setQuota('demo', resource, usage.used);
        return async () => simulator.setQuota('demo', resource, usage.limit < 0 ? Infinity : usage.limit);
      },
    };
    results = await runScenarios(cloud);
  }, 60_000);

  afterAll(async () => {
    session?.close();
    admin?.close();
    await simulator?.close();
  });

  for (const scenario of scenarios) {
    it(scenario.name, async () => {
      const result = results.get(scenario.name)!;
      const problems = [
        ...(result.failure === undefined ? [] : [`stopped: ${result.failure}`]),
        ...disagreements(await readFixture(scenario.name), result.record, 'simulator'),
        ...result.cleanupFailures.map((failure) => `cleanup: ${failure}`),
      ];
      expect(problems).toEqual([]);
    });
  }

  it('leaves the inventory as it found it', () => {
    expect(changes(baseline, simulator.inventory())).toEqual({});
  });
});

/** Non-zero differences per service and kind: resources the scenarios left behind (or removed that were not theirs). */
function changes(before: Inventory, after: Inventory): Record<string, number> {
  const found: Record<string, number> = {};
  for (const [service, counts] of Object.entries(after)) {
    for (const [kind, count] of Object.entries(counts ?? {})) {
      const was = before[service as keyof Inventory]?.[kind] ?? 0;
      if (count !== was) found[`${service}/${kind}`] = count - was;
    }
  }
  return found;
}
