/**
 * The reconciler sharded by cluster: three `npm start` replicas on one real etcd with
 * `--reconcile-shards`, three copies of the example cluster (one per namespace, so in different
 * shards as the hash falls), the cloud in this process. Every replica reconciles the shards it holds;
 * the replica holding the first cluster's shard is killed with SIGKILL while the clusters are being
 * built, the others take its shards over, and every cluster reaches Ready with exactly the resources
 * it calls for, none twice; deleting them leaves nothing.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../../src/simulator/host.js';
import { shardOfGroup } from '../../../src/reconcile/runtime/shards.js';
import { clusterGroupOf } from '../../../src/reconcile/cluster-shards.js';
import { CloudCensus, noResources, resourceKinds, type ResourceCounts } from '../../../harness/census.js';
import { apply, deleteWithoutWaiting, waitForDeletion, waitForReady, type Kubectl } from '../../../harness/cluster-flow.js';
import { etcdUnavailable, startEtcd, type RunningEtcd } from '../../../harness/etcd.js';
import { pollUntil } from '../../../harness/poll.js';
import { allowMirrorOf, startServerProcess, type ServerProcess } from '../../../harness/server-process.js';
import { renderExamples } from './examples.js';
import { expectedResources, readManifests } from './expected.js';

const unavailable = etcdUnavailable();
const shards = 6;
const namespaces = ['team-a', 'team-b', 'team-c'];
const leaseFlags = ['--leader-elect-lease-duration', '4s', '--leader-elect-renew-deadline', '3s', '--leader-elect-retry-period', '1s'];

let sim: Simulator;
let census: CloudCensus;
let etcd: RunningEtcd;
/** The example cluster rendered once per namespace. */
const manifests: string[] = [];
let expected: ResourceCounts;
const directories: string[] = [];
let replicas: ServerProcess[] = [];

/** The example's manifests with `default` replaced by `namespace`. */
async function renderInNamespace(rendered: string, namespace: string): Promise<string> {
  const target = await mkdtemp(path.join(os.tmpdir(), `capo-${namespace}-`));
  for (const file of await readdir(rendered)) {
    await writeFile(path.join(target, file), (await readFile(path.join(rendered, file), 'utf8')).replaceAll('namespace: default', `namespace: ${namespace}`));
  }
  return target;
}

/** The shards a replica said it took, in its log. */
function shardsTakenBy(replica: ServerProcess): number[] {
  return [...replica.output().matchAll(/"shard":(\d+)[^\n]*reconciling a shard/g)].map((match) => Number(match[1]));
}

const inNamespace =
  (replica: ServerProcess, namespace: string): Kubectl =>
  (args, options) =>
    replica.kubectl([...args, '-n', namespace], options);

describe.skipIf(unavailable !== undefined)(
  unavailable === undefined ? 'three replicas sharing the reconciler by cluster' : `three replicas sharing the reconciler by cluster (skipped: ${unavailable})`,
  () => {
    beforeAll(async () => {
      sim = await startSimulator({ transitionDelayMs: 100 });
      for (const resource of ['instances', 'cores', 'ram', 'network', 'subnet', 'port', 'router', 'floatingip', 'security_group', 'security_group_rule']) {
        sim.setQuota('demo', resource, Number.POSITIVE_INFINITY);
      }
      const rendered = await renderExamples(sim.url);
      directories.push(rendered);
      const perCluster = expectedResources(await readManifests(rendered));
      expected = Object.fromEntries(resourceKinds.map((kind) => [kind, perCluster[kind] * namespaces.length])) as ResourceCounts;
      for (const namespace of namespaces) manifests.push(await renderInNamespace(rendered, namespace));
      directories.push(...manifests);
      census = await CloudCensus.open(sim);
      etcd = await startEtcd();
      replicas = await Promise.all(
        [0, 1, 2].map(async () => {
          const dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-shard-replica-'));
          directories.push(dataDir);
          return startServerProcess(dataDir, [
            '--storage',
            'etcd',
            '--etcd-servers',
            etcd.servers.join(','),
            '--reconcile-shards',
            String(shards),
            ...leaseFlags,
            ...allowMirrorOf(sim.url),
          ]);
        }),
      );
    }, 120_000);

    afterAll(async () => {
      await Promise.all(replicas.map((replica) => replica.kill()));
      census?.close();
      await sim?.close();
      await etcd?.stop();
      for (const dir of directories) await rm(dir, { recursive: true, force: true });
    });

    it('builds every cluster with exactly its resources when the replica holding one of them dies, and deletes them all', async () => {
      // Every shard is taken by someone, each replica taking some.
      await pollUntil('every shard to be taken', async () => (new Set(replicas.flatMap(shardsTakenBy)).size === shards ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 100,
      });
      for (const dir of manifests) await apply(replicas[0]!.kubectl, dir);
      const firstShard = shardOfGroup(clusterGroupOf({ metadata: { namespace: namespaces[0]!, name: 'demo' } }), shards);
      const victim = await pollUntil(
        "the holder of the first cluster's shard",
        async () => replicas.find((replica) => shardsTakenBy(replica).includes(firstShard)),
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      await pollUntil('the first cluster to be worked on', async () => ((await census.ours()).counts.networks > 0 ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 100,
      });
      await victim.kill();
      const survivors = replicas.filter((replica) => replica !== victim);
      replicas = survivors;
      await pollUntil(
        "a survivor to take the first cluster's shard",
        async () => (survivors.some((replica) => shardsTakenBy(replica).includes(firstShard)) ? true : undefined),
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      for (const namespace of namespaces) await waitForReady(inNamespace(survivors[0]!, namespace), 'demo', 180);
      const observed = await census.ours();
      expect.soft(observed.duplicates).toEqual([]);
      expect.soft(observed.counts).toEqual(expected);
      // Both survivors did work: the shards are spread, not all on one.
      expect(survivors.every((replica) => shardsTakenBy(replica).length > 0)).toBe(true);

      for (const dir of manifests) await deleteWithoutWaiting(survivors[0]!.kubectl, dir);
      for (const namespace of namespaces) await waitForDeletion(inNamespace(survivors[0]!, namespace), 180);
      expect((await census.ours()).counts).toEqual(noResources);
    }, 420_000);
  },
);
