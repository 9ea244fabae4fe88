/**
 * The example cluster on a cloud that misbehaves: one request in ten to any
 * service (Keystone included) fails with 500, 503, 409 or 429 with
 * Retry-After, and more are slowed down. The cluster still reaches Ready
 * with exactly the resources its manifests call for, no name created
 * twice, and deleting it still leaves nothing of ours behind.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedKinds } from '../../../src/api/kinds.js';
import type { Simulator } from '../../../src/openstack/simulator/host.js';
import { startTestServer, type TestServer } from '../../harness.js';
import { CloudCensus, noResources, type ResourceCounts } from './census.js';
import { renderExamples } from './examples.js';
import { expectedInventoryChange, expectedResources, readManifests, withoutRules } from './expected.js';
import { apply, deleteWithoutWaiting, waitForDeletion, waitForReady } from './flow.js';
import { RequestTrace } from './trace.js';

let server: TestServer;
let sim: Simulator;
let manifests: string;
let census: CloudCensus;
let expected: ResourceCounts;
const trace = new RequestTrace();

beforeAll(async () => {
  server = await startTestServer({
    kinds: servedKinds,
    simulatedCloud: { port: 0, transitionDelayMs: 100 },
    reconciler: { resyncPeriodMs: 60_000, sessionOptions: { logger: trace.logger } },
  });
  sim = server.cloud!;
  manifests = await renderExamples(sim.url);
  expected = expectedResources(await readManifests(manifests));
  census = await CloudCensus.open(sim);
});

afterAll(async () => {
  census?.close();
  await server?.stop();
  if (manifests) await rm(manifests, { recursive: true, force: true });
});

/** About 10% of all requests fail, spread over the statuses a real cloud answers under load; 10% more are slow. */
function injectFaults(): void {
  for (const status of [500, 503]) sim.faults.add({ service: '*', rate: 0.03, status });
  sim.faults.add({ service: '*', rate: 0.02, status: 409, message: 'injected conflict' });
  sim.faults.add({ service: '*', rate: 0.02, status: 429, retryAfterSeconds: 1 });
  sim.faults.add({ service: '*', rate: 0.1, latencyMs: 300 });
}

describe('the example cluster under 10% injected faults', () => {
  it('reaches Ready with exactly the resources it calls for, none twice', async () => {
    injectFaults();
    await apply(server.kubectl, manifests);
    await waitForReady(server.kubectl, 'demo', 150);
    // A census does not retry, so it runs on a quiet cloud.
    sim.faults.clear();
    const peak = await census.ours();
    expect(peak.duplicates, trace.explain(peak.duplicates)).toEqual([]);
    expect(peak.counts).toEqual(expected);
    expect(withoutRules(census.sinceBaseline())).toEqual(expectedInventoryChange(expected));
  }, 180_000);

  it('deletes everything under the same faults, leaving nothing behind', async () => {
    injectFaults();
    await deleteWithoutWaiting(server.kubectl, manifests);
    await waitForDeletion(server.kubectl, 150);
    sim.faults.clear();
    const after = await census.ours();
    expect(after.counts).toEqual(noResources);
    expect(census.sinceBaseline()).toEqual({});
  }, 180_000);
});
