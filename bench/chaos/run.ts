/**
 * Chaos soak on etcd, in the aggregated mode (harness/chaos.ts): three replicas on a three-member
 * etcd behind a real kube-apiserver, the reconciler building and deleting clusters on the simulated
 * cloud with faults on, and at seeded moments kills, stops and partitions of replicas and etcd
 * members and restarts of kube-apiserver. Prints the disruptions applied and the report; exits 1
 * when an acknowledged write was lost, a name was held twice in the cloud, or anything was left.
 *
 *   npm run bench:chaos                          # 30 minutes, a disruption every 20-60 s
 *   npm run bench:chaos -- --minutes 5 --seed 7
 */
import { parseArgs } from 'node:util';
import { chaosUnavailable, disruptionKinds, runChaos } from '../../harness/chaos.js';
import { freshSeed } from '../../src/simulator/seeded-random.js';
import { sourceRevision, table } from '../common.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    seed: { type: 'string' },
    'gap-seconds': { type: 'string', default: '20-60' },
  },
});
const minutes = Number(values.minutes);
const [gapMin, gapMax] = values['gap-seconds'].split('-').map(Number);
if (!(minutes > 0) || !(gapMin! >= 0) || !(gapMax! >= gapMin!)) throw new Error('usage: --minutes N (> 0) --gap-seconds MIN-MAX [--seed N]');
const seed = values.seed === undefined ? freshSeed() : Number(values.seed);

const unavailable = await chaosUnavailable();
if (unavailable !== undefined) {
  console.log(`chaos: cannot run here: ${unavailable}`);
  process.exit(1);
}
console.log(`chaos: ${minutes} min, a disruption every ${gapMin}-${gapMax} s, seed ${seed} (replay with --seed ${seed}), source ${sourceRevision()}`);
const report = await runChaos({
  minutes,
  seed,
  disruptionGapSeconds: [gapMin!, gapMax!],
  clusters: 4,
  clustersAlive: 2,
  clusterEverySeconds: 60,
  log: (line) => console.log(line),
});

console.log('\ndisruptions applied');
console.log(table([['kind', 'count'], ...disruptionKinds.map((kind) => [kind, String(report.disruptions[kind])])]));
console.log('\nreport');
console.log(
  table([
    ['figure', 'value'],
    ['acknowledged writes', String(report.acknowledgedWrites)],
    ['objects verified at the end', `${report.objectsVerified}`],
    ['acknowledged writes lost', String(report.lost.length)],
    ['names held twice in the cloud', String(report.duplicates.length)],
    ['resources of ours left after the final delete', String(report.leaked)],
    ['cloud inventory against its baseline', JSON.stringify(report.inventoryChange)],
    ['longest time without a leader', `${(report.longestLeaderlessMs / 1000).toFixed(1)} s`],
    ['leaderships taken', String(report.leaderChanges)],
    ['API requests through kube-apiserver', String(report.requests)],
    ['of which without an answer', String(report.requestsWithoutAnswer)],
    ['answers by status', JSON.stringify(report.statuses)],
    ['API latency p50 / p99 / max', `${report.latencyMs.p50.toFixed(0)} / ${report.latencyMs.p99.toFixed(0)} / ${report.latencyMs.max.toFixed(0)} ms`],
    ['clusters applied / deleted during the chaos', `${report.clustersApplied} / ${report.clustersDeleted}`],
    ['final delete of every cluster', `${report.finalDeletionSeconds.toFixed(0)} s`],
  ]),
);
console.log('\nreplicas (RSS sampled every 5 s)');
console.log(
  table([
    ['replica', 'incarnations', 'peak RSS', 'last RSS'],
    ...report.replicas.map((replica) => [String(replica.replica), String(replica.incarnations), `${replica.peakRssMb} MB`, `${replica.lastRssMb} MB`]),
  ]),
);
const failures = [
  ...report.lost.map((line) => `lost: ${line}`),
  ...report.duplicates.map((duplicate) => `held twice: ${JSON.stringify(duplicate)}`),
  ...(report.leaked > 0 || Object.keys(report.inventoryChange).length > 0
    ? [`left in the cloud: ${report.leaked}, ${JSON.stringify(report.inventoryChange)}`]
    : []),
];
if (failures.length > 0) {
  console.log(`\nFAILED (seed ${seed}):\n${failures.map((failure) => `- ${failure}`).join('\n')}`);
  process.exit(1);
}
console.log('\nall checks passed');
