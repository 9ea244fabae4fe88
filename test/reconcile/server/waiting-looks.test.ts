/**
 * Servers in BUILD looked at together: the looks of several OpenStackServers due at one instant
 * cost one Nova list, whose pages are all read; a server that went ERROR, or was deleted, while
 * the others waited is reported as its own GET would have; a server alone in its wait is read by
 * ID. The clock the looks are timed by is the test's, so a look round is a step of it.
 */
import { z } from 'zod';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createServiceClients, loadCloud, OpenStackSession } from '../../../src/openstack/index.js';
import { lookGridMs } from '../../../src/reconcile/read-together.js';
import type { ReconcileResult } from '../../../src/reconcile/runtime/controller.js';
import { defaultServices } from '../../../src/simulator/host.js';
import type { SimulatorContext } from '../../../src/simulator/framework.js';
import { createNovaSimulator } from '../../../src/simulator/nova/index.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { condition, provisionExampleCluster, startSteps, type Steps } from '../steps.js';

/** Longer than the test: the servers stay in BUILD unless the test changes that. */
const serverBuildMs = 10 * 60_000;
/** Nova's `[api] max_limit`, small enough that a list of three servers takes pages. */
const maxLimit = 2;
const slowNova = (ctx: SimulatorContext) =>
  createNovaSimulator(Object.create(ctx, { transitionDelayMs: { value: serverBuildMs } }) as SimulatorContext, { maxLimit });

const status = (object: JsonObject | undefined) => (object?.status ?? {}) as Record<string, unknown>;

let steps: Steps;
let networkId: string;
let admin: OpenStackSession;

beforeAll(async () => {
  steps = await startSteps({ services: defaultServices.map((factory) => (factory === createNovaSimulator ? slowNova : factory)) });
  await provisionExampleCluster(steps);
  networkId = (status(await steps.get('cluster', 'demo')).network as { id: string }).id;
  admin = await OpenStackSession.create(loadCloud({ cloudsYaml: steps.cloud.cloudsYaml(), cloudName: 'simulator-admin' }));
}, 90_000);

afterAll(async () => {
  await steps?.stop();
});

// Only the clock looks are timed by: requests, timers and the cloud's own transitions keep real time.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['performance'] });
  // Past any look an earlier test left unanswered, which is then forgotten.
  vi.advanceTimersByTime(10 * 60_000);
});

afterEach(() => {
  vi.useRealTimers();
});

function openStackServer(name: string): JsonObject {
  return {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
    kind: 'OpenStackServer',
    metadata: { name, namespace: 'default', labels: { 'cluster.x-k8s.io/cluster-name': 'demo' } },
    spec: {
      flavor: 'm1.small',
      image: { filter: { name: 'ubuntu-22.04' } },
      sshKeyName: '',
      identityRef: { name: 'demo-cloud-config', cloudName: 'openstack' },
      ports: [{ network: { id: networkId } }],
    },
  };
}

/** The servers created and in BUILD, each pass having asked for its next look. */
async function building(names: readonly string[]): Promise<string[]> {
  await steps.applyObjects(names.map(openStackServer));
  for (const name of names) await steps.until([['server', name]], (object) => status(object).instanceState === 'BUILD');
  return Promise.all(names.map(async (name) => status(await steps.get('server', name)).instanceID as string));
}

/** One look round: the clock moves past every look asked for, and each server's pass runs; the requests it took. */
async function lookRound(names: readonly string[]): Promise<{ results: (ReconcileResult | { error: unknown })[]; requests: string[] }> {
  vi.advanceTimersByTime(5_000 + lookGridMs);
  const from = steps.requests.length;
  const results: (ReconcileResult | { error: unknown })[] = [];
  for (const name of names) results.push(await steps.pass('server', name).catch((error: unknown) => ({ error })));
  return { results, requests: steps.requests.slice(from).filter((line) => line.startsWith('compute GET /servers')) };
}

const pagesOf = (requests: readonly string[]) => requests.filter((line) => line.startsWith('compute GET /servers/detail?'));
/** A list's first page; the next ones carry a marker. */
const listsOf = (requests: readonly string[]) => pagesOf(requests).filter((line) => !line.includes('marker='));
const getsOf = (requests: readonly string[]) => requests.filter((line) => /^compute GET \/servers\/[^/?]+ /.test(line));

describe('servers in BUILD', () => {
  it('are looked at with one list per look round, every page of it read', async () => {
    const names = ['look-a', 'look-b', 'look-c'];
    await building(names);
    for (let round = 0; round < 2; round++) {
      const { results, requests } = await lookRound(names);
      expect(results.every((result) => 'requeueAfterMs' in result && result.requeueAfterMs! > 0)).toBe(true);
      // Three servers on pages of two: the first page and the one its next link names.
      expect(getsOf(requests)).toEqual([]);
      expect(listsOf(requests)).toHaveLength(1);
      expect(listsOf(requests)[0]).toContain('tags-any=');
      expect(pagesOf(requests)).toHaveLength(2);
    }
    for (const name of names) expect(status(await steps.get('server', name)).instanceState).toBe('BUILD');
  });

  it('report a server that went ERROR, or was deleted, while the others waited', async () => {
    const names = ['fail-a', 'fail-b', 'fail-c'];
    const [erred, , deleted] = await building(names);
    // An admin sets one server's state by hand, as a failed hypervisor leaves it; someone deletes another.
    await admin.request('compute', { method: 'POST', path: `/servers/${erred}/action`, body: { 'os-resetState': { state: 'error' } } }, z.unknown());
    await createServiceClients(admin).nova.deleteServer(deleted!);

    const { results, requests } = await lookRound(names);
    expect(listsOf(requests)).toHaveLength(1);
    // The list lacks the deleted server: only a read by ID tells gone from present.
    expect(getsOf(requests)).toEqual([expect.stringContaining(`/servers/${deleted} 404`)]);
    const [a, b, c] = await Promise.all(names.map((name) => steps.get('server', name)));
    expect(results[0]).toHaveProperty('error');
    expect(JSON.stringify(condition(a, 'InstanceReady'))).toContain('ERROR');
    expect(status(b).instanceState).toBe('BUILD');
    expect(results[2]).toHaveProperty('error');
    expect(JSON.stringify(condition(c, 'InstanceReady'))).toContain('no longer exists');
  });

  it('is read by ID when it waits alone', async () => {
    await building(['alone']);
    const { requests } = await lookRound(['alone']);
    expect(listsOf(requests)).toEqual([]);
    expect(getsOf(requests)).toHaveLength(1);
  });
});
