/**
 * Crash safety of the whole flow: `npm start` (the compiled CLI, without its
 * embedded cloud) is killed with SIGKILL at random moments while it builds
 * the example cluster and again while it deletes it, and started again each
 * time on the same data directory. The cloud runs in this process, so it
 * keeps everything the killed server created. The cluster still converges
 * with exactly the resources it calls for, and deleting it leaves nothing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../src/openstack/simulator/host.js';
import { CloudCensus, noResources, type ResourceCounts } from './census.js';
import { renderExamples } from './examples.js';
import { expectedInventoryChange, expectedResources, readManifests, withoutRules } from './expected.js';
import { apply, deleteWithoutWaiting, waitForDeletion, waitForReady } from './flow.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

const kills = 3;

let sim: Simulator;
let census: CloudCensus;
let manifests: string;
let dataDir: string;
let expected: ResourceCounts;
let server: ServerProcess | undefined;
/** When each kill happened, e.g. `create +2.4s`, for the failure messages. */
const killLog: string[] = [];

beforeAll(async () => {
  sim = await startSimulator({ transitionDelayMs: 100 });
  manifests = await renderExamples(sim.url);
  expected = expectedResources(await readManifests(manifests));
  census = await CloudCensus.open(sim);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-restarts-'));
  server = await startServerProcess(dataDir);
});

afterAll(async () => {
  await server?.kill();
  census?.close();
  await sim?.close();
  for (const dir of [dataDir, manifests]) if (dir) await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Lets the server work for a random 0.5 to 4 s, kills it, checks that nothing is held twice, and starts it again. */
async function killAtRandomMomentsDuring(phase: string): Promise<void> {
  for (let kill = 0; kill < kills; kill++) {
    const afterMs = 500 + Math.floor(Math.random() * 3500);
    await sleep(afterMs);
    await server!.kill();
    server = undefined;
    killLog.push(`${phase} kill ${kill + 1} after ${(afterMs / 1000).toFixed(1)}s`);
    const { duplicates } = await census.ours();
    expect(duplicates, `after ${killLog.join(', ')}`).toEqual([]);
    server = await startServerProcess(dataDir);
  }
}

async function expectExactlyTheExpectedResources(when: string): Promise<void> {
  const observed = await census.ours();
  const context = `${when}; kills: ${killLog.join(', ')}`;
  expect(observed.duplicates, context).toEqual([]);
  expect(observed.counts, context).toEqual(expected);
  expect(withoutRules(census.sinceBaseline()), context).toEqual(expectedInventoryChange(expected));
}

describe('the example cluster across kill -9 restarts', () => {
  it('converges to Ready with no duplicates when killed while creating', async () => {
    await apply(server!.kubectl, manifests);
    await killAtRandomMomentsDuring('create');
    await waitForReady(server!.kubectl, 'demo', 120);
    await expectExactlyTheExpectedResources('once Ready');

    // A restart of a converged server adopts everything and creates nothing.
    await server!.kill();
    killLog.push('kill at steady state');
    server = await startServerProcess(dataDir);
    await waitForReady(server.kubectl, 'demo', 60);
    // Ready is already stored, so the wait returns at once; the restarted reconciler needs a moment to look at everything again.
    await sleep(5_000);
    await expectExactlyTheExpectedResources('after a restart at steady state');
  }, 180_000);

  it('leaves nothing behind when killed while deleting', async () => {
    await deleteWithoutWaiting(server!.kubectl, manifests);
    await killAtRandomMomentsDuring('delete');
    await waitForDeletion(server!.kubectl, 120);
    const after = await census.ours();
    expect(after.counts, `kills: ${killLog.join(', ')}`).toEqual(noResources);
    expect(census.sinceBaseline(), `kills: ${killLog.join(', ')}`).toEqual({});
  }, 180_000);
});
