/**
 * The scale plan, simulated (ARCHITECTURE.md, "Past one management plane"): many clusters on one
 * simulated cloud with a real cloud's pace and a rate-limiting API front (cloud.ts), reconciled by
 * several `npm start` replicas on one real etcd with the reconciler sharded by cluster
 * (`--reconcile-shards`), each replica keeping to its share of the cloud's concurrency. Objects are
 * applied through the replicas' APIs, spread over them; the run ends when every OpenStackCluster and
 * OpenStackMachine is Ready, and prints the time, the calls the cloud served, the 429s it answered,
 * the run's physical limit (fleet-limit.ts) and the ratio to it, and what each replica took on
 * (shards, keys queued, reconcile passes, CPU in all and per pass).
 *
 *   npm run bench:sharded                                    # 1,000 clusters x 10 machines on 3 replicas
 *   npm run bench:sharded -- --clusters 100 --replicas 3     # a smaller run
 *   npm run bench:sharded -- --quick                         # 12 clusters x 4 machines: checks the harness
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { servedKinds } from '../../src/served-kinds.js';
import { EtcdStorage } from '../../src/storage/etcd.js';
import { keysOf } from '../../src/apiserver/registry/keys.js';
import { startEtcd } from '../../harness/etcd.js';
import { pollUntil } from '../../harness/poll.js';
import { allowMirrorOf, startServerProcess, type ServerProcess } from '../../harness/server-process.js';
import { pool, sampleProcess, sourceRevision, summarize, table } from '../common.js';
import { duplicateWarnings, inventory, inventoryDelta, prepareForScale, realisticProfile, startBenchCloud } from './cloud.js';
import { byRequestShape, CallLog, countBy } from './calls.js';
import { cloudMs, fleetLimit } from './fleet-limit.js';
import { ApiClient, ConditionTimeline } from './kube.js';
import { clusterObjects, loadExamples, type ClusterObjects, type KubeObject } from '../../harness/cluster-manifests.js';
import { clusterShape } from './manifests.js';

interface Config {
  clusters: number;
  machinesPerCluster: number;
  replicas: number;
  shards: number;
  cloudMaxInFlight: number;
  convergeTimeoutMs: number;
}

const controlPlaneMachines = 3;
const usage = `Usage: node dist/bench/reconcile/sharded.js [options]
  --clusters N            clusters (default 1000)
  --machines N            machines per cluster, ${controlPlaneMachines} of them control plane (default 10)
  --replicas N            replicas of the server (default 3)
  --shards N              --reconcile-shards of every replica (default 12)
  --cloud-max-in-flight N the cloud answers 429 beyond N requests in flight (default 12, as bench/reconcile figure 4)
  --quick                 12 clusters x 4 machines
`;

function parseConfig(): Config {
  const { values } = parseArgs({
    options: {
      clusters: { type: 'string' },
      machines: { type: 'string' },
      replicas: { type: 'string' },
      shards: { type: 'string' },
      'cloud-max-in-flight': { type: 'string' },
      quick: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const integer = (name: string, value: string | undefined, fallback: number, min = 1) => {
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min) throw new Error(`--${name} must be an integer of at least ${min}, got ${JSON.stringify(value)}`);
    return parsed;
  };
  const quick = values.quick ?? false;
  const clusters = integer('clusters', values.clusters, quick ? 12 : 1000);
  return {
    clusters,
    machinesPerCluster: integer('machines', values.machines, quick ? 4 : 10, controlPlaneMachines + 1),
    replicas: integer('replicas', values.replicas, 3),
    shards: integer('shards', values.shards, 12),
    cloudMaxInFlight: integer('cloud-max-in-flight', values['cloud-max-in-flight'], 12),
    // Generous: a minute, plus ten seconds per cluster.
    convergeTimeoutMs: 60_000 + clusters * 10_000,
  };
}

const log = (text: string) => process.stdout.write(`${text}\n`);
const fixed = (value: number, digits = 1) => value.toFixed(digits);
const namespaceOf = (object: KubeObject) => object.metadata.namespace ?? 'default';

/** The shards a replica said it took, in its log. */
function shardsTakenBy(replica: ServerProcess): Set<number> {
  return new Set([...replica.output().matchAll(/"shard":(\d+)[^\n]*reconciling a shard/g)].map((match) => Number(match[1])));
}

/** The lease identity a replica logs with the shards it takes. */
function identityOf(replica: ServerProcess): string | undefined {
  return /"identity":"([^"]+)"[^\n]*reconciling a shard/.exec(replica.output())?.[1];
}

/** Who holds each shard's lease now, read from etcd. */
async function holders(observer: EtcdStorage, shards: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: shards }, async (_, shard) => {
      const lease = await observer.get(`/leases/capo-apiserver-shard-${shard}`);
      return String((lease?.value.spec as { holderIdentity?: string } | undefined)?.holderIdentity ?? '');
    }),
  );
}

/** Keys that entered a replica's work queues so far, every controller's (reconcile/runtime/metrics.ts). */
async function keysQueued(api: ApiClient): Promise<number> {
  let queued = 0;
  for (const [, count] of await api.metric('reconcile_queue_adds_total')) queued += count;
  return queued;
}

async function main(): Promise<void> {
  const config = parseConfig();
  const workers = config.machinesPerCluster - controlPlaneMachines;
  log(`# bench/reconcile/sharded (code ${sourceRevision()}, Node ${process.version}, ${os.cpus().length} CPUs)\n`);
  log(
    `${config.clusters} clusters x ${config.machinesPerCluster} machines (${controlPlaneMachines} control plane, ${workers} workers) + a bastion each, ` +
      `${config.replicas} replicas on one etcd, --reconcile-shards ${config.shards}; the cloud answers 429 beyond ${config.cloudMaxInFlight} requests in flight\n`,
  );
  const profile = realisticProfile;
  const etcd = await startEtcd();
  const calls = new CallLog();
  const cloud = await startBenchCloud({ profile, maxInFlight: config.cloudMaxInFlight, retryAfterSeconds: 1, onRequest: calls.record });
  const directories: string[] = [];
  const replicas: ServerProcess[] = [];
  const observer = await EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 0 });
  try {
    await prepareForScale(cloud, config.clusters);
    for (let i = 0; i < config.replicas; i++) {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-sharded-'));
      directories.push(dataDir);
      replicas.push(
        await startServerProcess(dataDir, [
          '--storage',
          'etcd',
          '--etcd-servers',
          etcd.servers.join(','),
          '--reconcile-shards',
          String(config.shards),
          '-v',
          '1',
          ...allowMirrorOf(cloud.simulator.url),
        ]),
      );
    }
    await pollUntil(
      'every shard to be taken',
      async () => (new Set(replicas.flatMap((replica) => [...shardsTakenBy(replica)])).size === config.shards ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 200,
      },
    );
    const apis = replicas.map((replica, i) => new ApiClient(replica.url, path.join(directories[i]!, 'kubeconfig'), servedKinds));
    const watched = ['OpenStackCluster', 'OpenStackMachine'].map((kind) => ({
      kind,
      prefix: keysOf(servedKinds.find((candidate) => candidate.kind === kind)!).root,
    }));
    const timeline = await ConditionTimeline.start(observer, watched);
    const examples = loadExamples(cloud.simulator.url);
    const clusters: ClusterObjects[] = Array.from({ length: config.clusters }, (_, index) =>
      clusterObjects(examples, `bench-${String(index).padStart(4, '0')}`, workers),
    );
    const cpuBefore = replicas.map((replica) => sampleProcess(replica.pid).cpuSeconds);
    const queuedBefore = await Promise.all(apis.map(keysQueued));
    const inventoryBefore = inventory(cloud);
    cloud.resetFront();
    const started = performance.now();
    for (const object of clusters[0]!.shared) await apis[0]!.create(object);
    // Eight clients applying whole clusters in file order, each through the replicas in turn.
    await pool(clusters.length, 8, async (index) => {
      const objects = clusters[index]!;
      for (const object of [...objects.cluster, ...objects.controlPlane.flat(), ...objects.workers.flat()]) await apis[index % apis.length]!.create(object);
    });
    const applied = performance.now();
    const keys = clusters.flatMap((objects) => {
      const cluster = objects.cluster.find((object) => object.kind === 'OpenStackCluster')!;
      const machines = [...objects.controlPlane, ...objects.workers].map((pair) => pair.find((object) => object.kind === 'OpenStackMachine')!);
      return [{ kind: 'OpenStackCluster', object: cluster }, ...machines.map((machine) => ({ kind: 'OpenStackMachine', object: machine }))];
    });
    const readyAtOf = ({ kind, object }: (typeof keys)[number]) => timeline.trueAt(kind, namespaceOf(object), object.metadata.name, 'Ready');
    const readyAt = () => keys.map(readyAtOf);
    // Asked at every event: walks on from the first object not yet Ready, where looking at all of them cost O(objects) an event.
    let firstNotReady = 0;
    const allReady = () => {
      while (firstNotReady < keys.length && readyAtOf(keys[firstNotReady]!) !== undefined) firstNotReady++;
      return firstNotReady === keys.length;
    };
    // A line every 30 s tells a slow run from a stuck one.
    const progress = setInterval(() => {
      log(
        `  ${fixed((performance.now() - started) / 1000, 0)} s: ${readyAt().filter((at) => at !== undefined).length} of ${keys.length} Ready, ${cloud.front.served} calls, ${cloud.front.rejected} 429s`,
      );
    }, 30_000);
    await timeline.waitUntil(
      allReady,
      config.convergeTimeoutMs,
      () => `${readyAt().filter((at) => at === undefined).length} of ${keys.length} objects not Ready after ${fixed(config.convergeTimeoutMs / 1000, 0)} s`,
    );
    clearInterval(progress);
    const times = readyAt() as number[];
    const finished = Math.max(...times);
    const wallS = (finished - started) / 1000;
    const clusterReady = summarize(times.filter((_, i) => keys[i]!.kind === 'OpenStackCluster').map((at) => (at - started) / 1000));
    const machineReady = summarize(times.filter((_, i) => keys[i]!.kind === 'OpenStackMachine').map((at) => (at - started) / 1000));
    const created = inventoryDelta(inventoryBefore, inventory(cloud));
    const shape = clusterShape(clusters[0]!);
    for (const warning of duplicateWarnings(created, shape, config.clusters)) log(warning);
    const { served, rejected, peakInFlight } = cloud.front;
    log(
      table([
        ['figure', 'value'],
        [
          'objects applied (8 clients, through every replica)',
          `${clusters.length * (clusters[0]!.cluster.length + 2 * config.machinesPerCluster) + 1} in ${fixed((applied - started) / 1000)} s`,
        ],
        ['all Ready after', `${fixed(wallS)} s`],
        ['cluster Ready p50 / p99 / max', `${fixed(clusterReady.p50)} / ${fixed(clusterReady.p99)} / ${fixed(clusterReady.max)} s`],
        ['machine Ready p50 / p99 / max', `${fixed(machineReady.p50)} / ${fixed(machineReady.p99)} / ${fixed(machineReady.max)} s`],
        [
          'OpenStack calls served by the cloud (Keystone aside)',
          `${served} (${fixed(served / config.clusters)} per cluster with its machines, ${fixed(served / wallS, 0)}/s)`,
        ],
        [
          `429s answered (beyond ${config.cloudMaxInFlight} in flight, Retry-After 1 s)`,
          `${rejected} (${fixed((100 * rejected) / Math.max(1, served + rejected))}% of requests)`,
        ],
        ['peak requests in flight at the cloud', String(peakInFlight)],
      ]),
    );
    const limit = fleetLimit(profile, shape, created, config.clusters, config.cloudMaxInFlight);
    const perCluster = (calls: number) => fixed(calls / config.clusters);
    log(`\nPhysical limit of this run (bench/reconcile/fleet-limit.ts, profile ${profile.name}):`);
    log(
      table([
        ['figure', 'value', 'target'],
        ['OpenStack calls per cluster with its machines (served, Keystone aside)', perCluster(served), '<= 120'],
        ['fewest calls per cluster for what the run made', `${perCluster(limit.calls)} (${limit.calls} in all)`, ''],
        [
          `the cloud's throughput bound: the fewest calls' time in the cloud / ${config.cloudMaxInFlight} in flight`,
          `${fixed(limit.throughputMs / 1000)} s`,
          '',
        ],
        [
          `one cluster's dependent chain (figure 1's physical limit, ${shape.controlPlane} control plane + ${shape.workers} workers)`,
          `${fixed(limit.chain.totalMs / 1000)} s`,
          '',
        ],
        [`physical limit (the longer: ${limit.boundBy === 'chain' ? 'the chain' : "the cloud's throughput"})`, `${fixed(limit.limitMs / 1000)} s`, ''],
        ['all Ready after', `${fixed(wallS)} s`, ''],
        ['ratio to the physical limit', `${fixed((1000 * wallS) / limit.limitMs, 2)}x`, '<= 1.5x'],
      ]),
    );
    log('\nFewest calls (model), by what they make:');
    log(
      table([
        ['calls', 'how many', 'reads + writes each', 'calls in all', 's in the cloud'],
        ...limit.fewest.map((row) => [
          row.what,
          String(row.units),
          `${row.reads} + ${row.writes}`,
          String(row.units * (row.reads + row.writes)),
          fixed(cloudMs(row, profile) / 1000),
        ]),
      ]),
    );
    // Where the calls beyond the fewest went: the shapes to turn into lists, or not to make.
    const servedCalls = calls.between(started, finished).filter((call) => call.service !== 'identity' && call.outcome !== '429');
    log('\nCalls served, by request shape (the 15 most made):');
    log(
      table([
        ['request', 'calls', 'per cluster'],
        ...countBy(servedCalls, byRequestShape)
          .slice(0, 15)
          .map(([shape, count]) => [shape, String(count), fixed(count / config.clusters)]),
      ]),
    );
    log('\nPer replica:');
    const rows = [['replica', 'shards held at the end', 'keys queued', 'reconcile passes', 'CPU s (% of a core)', 'CPU ms per pass']];
    const held = await holders(observer, config.shards);
    for (const [i, replica] of replicas.entries()) {
      let passes = 0;
      for (const [, count] of await apis[i]!.metric('reconcile_duration_seconds_count')) passes += count;
      const queued = (await keysQueued(apis[i]!)) - queuedBefore[i]!;
      const cpu = sampleProcess(replica.pid).cpuSeconds - cpuBefore[i]!;
      const mine = held.flatMap((holder, shard) => (holder !== '' && holder === identityOf(replica) ? [shard] : []));
      rows.push([
        `#${i} (pid ${replica.pid})`,
        mine.join(' '),
        String(queued),
        String(passes),
        `${fixed(cpu)} (${fixed((100 * cpu) / wallS, 0)}%)`,
        fixed((1000 * cpu) / Math.max(1, passes), 2),
      ]);
    }
    log(table(rows));
    timeline.stop();
    for (const api of apis) api.close();
  } finally {
    // What each replica logged, kept for the examination of any run (why a reload failed, what stalled).
    const logs = path.resolve('bench/reconcile/runs', new Date().toISOString().replaceAll(':', '-'));
    await mkdir(logs, { recursive: true });
    for (const [i, replica] of replicas.entries()) await writeFile(path.join(logs, `replica-${i}.log`), replica.output());
    log(`replica logs in ${logs}`);
    await Promise.all(replicas.map((replica) => replica.kill()));
    await observer.close();
    await cloud.close();
    await etcd.stop();
    for (const dir of directories) await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench/reconcile/sharded failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
