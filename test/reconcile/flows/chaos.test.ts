/**
 * The short form of the chaos soak (bench/chaos/run.ts, harness/chaos.ts): three replicas on a
 * three-member etcd behind a real kube-apiserver, building and deleting clusters on the simulated
 * cloud with faults on, through a few minutes of seeded disruptions (kills of the leader, of a
 * follower and of an etcd member, a leader stopped past its lease, partitions, kube-apiserver
 * restarted). No acknowledged write is lost, no name is held twice in the cloud, and deleting every
 * cluster leaves nothing. Replay a failure with TEST_SEED.
 */
import { describe, expect, it } from 'vitest';
import { chaosUnavailable, runChaos } from '../../../harness/chaos.js';
import { freshSeed } from '../../../src/simulator/seeded-random.js';

const unavailable = await chaosUnavailable();
const seed = process.env.TEST_SEED === undefined ? freshSeed() : Number(process.env.TEST_SEED);

describe.skipIf(unavailable !== undefined)(
  unavailable === undefined ? 'chaos on etcd, aggregated' : `chaos on etcd, aggregated (skipped: ${unavailable})`,
  () => {
    it('loses no acknowledged write, holds no name twice and leaves nothing, across kills, stops and partitions', async () => {
      const report = await runChaos({ minutes: 3, seed, disruptionGapSeconds: [10, 20], clusters: 2, clustersAlive: 1, clusterEverySeconds: 45 });
      const context = `TEST_SEED=${seed}, disruptions ${JSON.stringify(report.disruptions)}`;
      console.log(
        `chaos: ${context}; longest without a leader ${(report.longestLeaderlessMs / 1000).toFixed(1)} s, ${report.acknowledgedWrites} writes acknowledged`,
      );
      expect(
        Object.values(report.disruptions).reduce((sum, n) => sum + n, 0),
        context,
      ).toBeGreaterThanOrEqual(3);
      expect(report.acknowledgedWrites, context).toBeGreaterThan(0);
      expect.soft(report.lost, context).toEqual([]);
      expect.soft(report.duplicates, context).toEqual([]);
      expect.soft(report.leaked, context).toBe(0);
      expect.soft(report.inventoryChange, context).toEqual({});
    }, 1_200_000);
  },
);
