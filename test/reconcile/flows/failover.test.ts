/**
 * High availability of the reconciler: two `npm start` replicas on one real etcd, the cloud in this
 * process. Only the leader reconciles; it is killed with SIGKILL while the example cluster is being
 * built and again while it is being deleted, and the other replica takes the lease over and
 * finishes the work: the cluster reaches Ready with exactly the resources it calls for, none twice,
 * and deleting it leaves nothing. A leader paused (SIGSTOP) past its lease writes nothing once it
 * runs again. The takeover time after each kill is printed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../src/simulator/host.js';
import { freshSeed, seededRandom } from '../../../src/simulator/seeded-random.js';
import { CloudCensus, noResources, type ResourceCounts } from '../../../harness/census.js';
import { apply, deleteWithoutWaiting, waitForDeletion, waitForReady } from '../../../harness/cluster-flow.js';
import { etcdUnavailable, startEtcd, type RunningEtcd } from '../../../harness/etcd.js';
import { pollUntil } from '../../../harness/poll.js';
import { allowMirrorOf, startServerProcess, type ServerProcess } from '../../../harness/server-process.js';
import { renderExamples } from './examples.js';
import { expectedResources, readManifests } from './expected.js';

const unavailable = etcdUnavailable();
const seed = process.env.TEST_SEED === undefined ? freshSeed() : Number(process.env.TEST_SEED);
const random = seededRandom(seed);
const leading = '"msg":"leading: this replica runs the reconciler"';
/** Short leases so a takeover takes seconds: others wait 4 s for a silent leader. */
const leaseFlags = ['--leader-elect-lease-duration', '4s', '--leader-elect-renew-deadline', '3s', '--leader-elect-retry-period', '1s'];

/** Lets the leader work for a while before the kill: the moment is the test's input, not a wait for something. */
const workFor = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let sim: Simulator;
let census: CloudCensus;
let etcd: RunningEtcd;
let manifests: string;
let expected: ResourceCounts;
const directories: string[] = [];
let replicas: ServerProcess[] = [];

async function startReplica(): Promise<ServerProcess> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-replica-'));
  directories.push(dataDir);
  const replica = await startServerProcess(dataDir, ['--storage', 'etcd', '--etcd-servers', etcd.servers.join(','), ...leaseFlags, ...allowMirrorOf(sim.url)]);
  replicas.push(replica);
  return replica;
}

/** The replica that leads, once one (other than `except`) does. */
function leader(except?: ServerProcess): Promise<ServerProcess> {
  return pollUntil('a replica to lead', async () => replicas.find((replica) => replica !== except && replica.output().includes(leading)), {
    timeoutMs: 30_000,
    intervalMs: 50,
  });
}

/** Kills the leader after a seeded moment of work, then waits for the other replica to lead; returns what happened, for the messages. */
async function killLeader(phase: string): Promise<string> {
  const current = await leader();
  const afterMs = 500 + Math.floor(random() * 2500);
  await workFor(afterMs);
  await current.kill();
  replicas = replicas.filter((replica) => replica !== current);
  const killedAt = performance.now();
  const { counts, duplicates } = await census.ours();
  expect(duplicates, `${phase}: TEST_SEED=${seed}`).toEqual([]);
  await leader();
  const takeover = `${phase}: leader killed after ${(afterMs / 1000).toFixed(1)} s with ${Object.values(counts).reduce((a, b) => a + b, 0)} resources held; the other replica led ${((performance.now() - killedAt) / 1000).toFixed(1)} s later (TEST_SEED=${seed})`;
  console.log(`failover: ${takeover}`);
  return takeover;
}

describe.skipIf(unavailable !== undefined)(
  unavailable === undefined ? 'two replicas on one etcd, across kill -9 of the leader' : `two replicas on one etcd (skipped: ${unavailable})`,
  () => {
    beforeAll(async () => {
      sim = await startSimulator({ transitionDelayMs: 100 });
      manifests = await renderExamples(sim.url);
      expected = expectedResources(await readManifests(manifests));
      census = await CloudCensus.open(sim);
      etcd = await startEtcd();
      await Promise.all([startReplica(), startReplica()]);
    }, 120_000);

    afterAll(async () => {
      await Promise.all(replicas.map((replica) => replica.kill()));
      census?.close();
      await sim?.close();
      await etcd?.stop();
      for (const dir of [...directories, manifests]) if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('reaches Ready with exactly the resources called for when the leader dies while creating', async () => {
      await apply(replicas[0]!.kubectl, manifests);
      const takeover = await killLeader('create');
      await waitForReady(replicas[0]!.kubectl, 'demo', 120);
      const observed = await census.ours();
      expect.soft(observed.duplicates, takeover).toEqual([]);
      expect.soft(observed.counts, takeover).toEqual(expected);
    }, 240_000);

    it('leaves nothing behind when the leader dies while deleting', async () => {
      await startReplica();
      await deleteWithoutWaiting(replicas[0]!.kubectl, manifests);
      const takeover = await killLeader('delete');
      await waitForDeletion(replicas[0]!.kubectl, 120);
      expect((await census.ours()).counts, takeover).toEqual(noResources);
    }, 240_000);

    it('fences a leader paused past its lease: once it runs again it writes nothing, and nothing is doubled', async () => {
      await startReplica();
      await apply(replicas[0]!.kubectl, manifests);
      const paused = await leader();
      await workFor(500 + Math.floor(random() * 2500));
      process.kill(paused.pid, 'SIGSTOP');
      try {
        await leader(paused);
      } finally {
        process.kill(paused.pid, 'SIGCONT');
      }
      // Its timers and the replies it was waiting for now run, after its lease has passed to the other replica.
      await pollUntil('the paused replica to notice it lost the lease', async () => (paused.output().includes('lost the leader lease') ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 50,
      });
      const other = replicas.find((replica) => replica !== paused)!;
      await waitForReady(other.kubectl, 'demo', 120);
      const observed = await census.ours();
      expect.soft(observed.duplicates, `TEST_SEED=${seed}`).toEqual([]);
      expect.soft(observed.counts, `TEST_SEED=${seed}`).toEqual(expected);
      await deleteWithoutWaiting(other.kubectl, manifests);
      await waitForDeletion(other.kubectl, 120);
      expect((await census.ours()).counts).toEqual(noResources);
    }, 300_000);
  },
);
