/**
 * Reconciler benchmark: the API server, the reconciler and a simulated cloud
 * with a real cloud's pace (bench/reconcile/cloud.ts), all in this process,
 * fed the objects of examples/ over HTTPS. Four figures:
 *   1. time to Ready of the example cluster (bastion, 3 control-plane and
 *      3 worker machines, applied at once) against the critical path of its
 *      dependent operations (bench/reconcile/critical-path.ts);
 *   2. OpenStack calls for the cluster, a worker machine and a control-plane
 *      machine, applied one group at a time so each group's calls are its own;
 *   3. calls of the unchanged cluster at steady state, with a short resync
 *      period, scaled to the default 10 minutes;
 *   4. many clusters converging at once on one cloud whose API front answers
 *      429 beyond a number of requests in flight.
 * Calls are counted from the OpenStack session's per-attempt log (retries
 * included). It is a measurement: a missed target does not fail the run, an
 * object that never becomes Ready does.
 *
 *   npm run bench:reconcile                          # everything, 100 clusters x 10 machines (about 10 min)
 *   npm run bench:reconcile -- --clusters 20         # a smaller figure 4
 *   npm run bench:reconcile -- --skip-scale          # figures 1-3 only
 *   npm run bench:reconcile -- --quick               # 5 clusters x 4 machines, a 33 s steady-state window
 *   npm run bench:reconcile -- --scale-only --clusters 20
 *   npm run bench:reconcile -- --skip-scale --trace /tmp/calls.jsonl   # figure 1's calls and conditions, for reading
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { servedKinds } from '../../src/served-kinds.js';
import { embeddedCredentials, startApp, type RunningApp } from '../../src/app.js';
import { keysOf } from '../../src/apiserver/registry/keys.js';
import { pool, sourceRevision, summarize, table } from '../common.js';
import { byRequestShape, byServiceMethod, CallLog, countBy, peakConcurrency, type Call } from './calls.js';
import {
  cloudProfiles,
  describeProfile,
  duplicateWarnings,
  inventory,
  inventoryDelta,
  prepareForScale,
  startBenchCloud,
  type BenchCloud,
  type CloudProfile,
} from './cloud.js';
import { clusterSteps, criticalPath, physicalLimitSteps } from './critical-path.js';
import { ApiClient, ConditionTimeline } from './kube.js';
import { clusterObjects, loadExamples, type ClusterObjects, type KubeObject } from '../../harness/cluster-manifests.js';
import { clusterShape } from './manifests.js';

// ---- configuration ---------------------------------------------------------

interface Config {
  clusters: number;
  machinesPerCluster: number;
  /** The cloud's API front in figure 4: requests served at once before 429. */
  cloudMaxInFlight: number;
  /** Resync period while measuring steady state; the figure is scaled to the default. */
  steadyResyncMs: number;
  steadyWindowMs: number;
  skipScale: boolean;
  scaleOnly: boolean;
  convergeTimeoutMs: number;
  /** Where to write figure 1's calls and condition timeline as JSON lines. */
  traceFile?: string;
  profile: CloudProfile;
}

/** The reconciler's default resync period (src/reconcile/manager.ts): each object resyncs once a period, at its namespace's instant (src/reconcile/runtime/resync-grid.ts). */
const defaultResyncMs = 10 * 60_000;
/** The reconciler's per-cloud bound on calls in flight (CloudConnections' default). */
const reconcilerPerCloud = 16;
const controlPlaneMachines = 3;
const exampleWorkers = 3;

const usage = `Usage: node dist/bench/reconcile/run.js [options]
  --clusters N            clusters in figure 4 (default 100)
  --machines N            machines per cluster in figure 4, ${controlPlaneMachines} of them control plane (default 10)
  --cloud-max-in-flight N the cloud answers 429 beyond N requests in flight (default 12; the reconciler allows ${reconcilerPerCloud})
  --skip-scale            figures 1-3 only
  --scale-only            figure 4 only
  --trace FILE            write figure 1's OpenStack calls and condition changes to FILE (JSON lines, times in s)
  --quick                 5 clusters x 4 machines and a 33 s steady-state window: checks the harness
  --profile NAME          the cloud's pace: ${Object.keys(cloudProfiles).join(' or ')} (default lab; bench/reconcile/cloud.ts)
`;

function positiveInteger(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return parsed;
}

function parseConfig(): Config {
  const { values } = parseArgs({
    options: {
      clusters: { type: 'string' },
      machines: { type: 'string' },
      'cloud-max-in-flight': { type: 'string' },
      'skip-scale': { type: 'boolean', default: false },
      'scale-only': { type: 'boolean', default: false },
      trace: { type: 'string' },
      quick: { type: 'boolean', default: false },
      profile: { type: 'string', default: 'lab' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const quick = values.quick ?? false;
  if (values['skip-scale'] && values['scale-only']) throw new Error('--skip-scale and --scale-only exclude each other');
  const profile = cloudProfiles[values.profile ?? 'lab'];
  if (!profile) throw new Error(`--profile must be one of ${Object.keys(cloudProfiles).join(', ')}, got ${JSON.stringify(values.profile)}`);
  const machinesPerCluster = positiveInteger('machines', values.machines, quick ? 4 : 10);
  if (machinesPerCluster <= controlPlaneMachines)
    throw new Error(`--machines must exceed the ${controlPlaneMachines} control-plane machines, got ${machinesPerCluster}`);
  return {
    clusters: positiveInteger('clusters', values.clusters, quick ? 5 : 100),
    machinesPerCluster,
    cloudMaxInFlight: positiveInteger('cloud-max-in-flight', values['cloud-max-in-flight'], 12),
    steadyResyncMs: 10_000,
    steadyWindowMs: quick ? 33_000 : 66_000,
    skipScale: values['skip-scale'] ?? false,
    scaleOnly: values['scale-only'] ?? false,
    traceFile: values.trace === undefined ? undefined : path.resolve(values.trace),
    // The public profile's load balancer alone takes 90 s, a server 60 s.
    convergeTimeoutMs: 8 * 60_000 + 20 * profile.transitions.loadBalancer,
    profile,
  };
}

// ---- formatting --------------------------------------------------------------

const seconds = (ms: number) => (ms / 1000).toFixed(1);
const fixed = (value: number, digits = 1) => value.toFixed(digits);
const log = (line = '') => process.stdout.write(`${line}\n`);
const isRead = (call: Call) => call.method === 'GET' || call.method === 'HEAD';

/** Rows of counts by `key` for several columns of calls, each divided by its own divisor. */
function countTable(header: string[], columns: { calls: Call[]; per: number }[], key: (call: Call) => string): string {
  const counted = columns.map((column) => new Map(countBy(column.calls, key)));
  const keys = [...new Set(counted.flatMap((counts) => [...counts.keys()]))].sort();
  const cell = (count: number | undefined, per: number) => (count === undefined ? '' : per === 1 ? String(count) : fixed(count / per));
  const rows = keys.map((name) => [name, ...counted.map((counts, index) => cell(counts.get(name), columns[index].per))]);
  const total = ['total', ...columns.map((column) => cell(column.calls.length, column.per))];
  const withoutIdentity = [
    'total without identity',
    ...columns.map((column) => cell(column.calls.filter((call) => call.service !== 'identity').length, column.per)),
  ];
  return table([header, ...rows, total, withoutIdentity]);
}

// ---- one running stack -------------------------------------------------------

interface Stack {
  app: RunningApp;
  cloud: BenchCloud;
  calls: CallLog;
  timeline: ConditionTimeline;
  api: ApiClient;
  examples: KubeObject[];
  stop(): Promise<void>;
}

async function startStack(options: { resyncPeriodMs?: number; cloudMaxInFlight: number; profile: CloudProfile }): Promise<Stack> {
  const cloud = await startBenchCloud({ profile: options.profile, maxInFlight: options.cloudMaxInFlight, retryAfterSeconds: 1 });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-bench-reconcile-'));
  const calls = new CallLog();
  const app = await startApp({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    kinds: servedKinds,
    reconciler: {
      resyncPeriodMs: options.resyncPeriodMs,
      sessionOptions: { logger: calls.logger },
      // The examples' Images come from the cloud's mirror, on loopback: downloads refuse it unless allowed, that address and port only.
      imageDownloads: { allow: [new URL(cloud.simulator.url).host] },
    },
  });
  const watched = ['OpenStackCluster', 'OpenStackMachine', 'OpenStackServer'].map((kind) => {
    const definition = servedKinds.find((candidate) => candidate.kind === kind);
    if (!definition) throw new Error(`the server does not serve ${kind}`);
    return { kind, prefix: keysOf(definition).root };
  });
  const timeline = await ConditionTimeline.start(app.storage, watched);
  const api = new ApiClient(app.url, embeddedCredentials(app).kubeconfigPath, servedKinds);
  return {
    app,
    cloud,
    calls,
    timeline,
    api,
    examples: loadExamples(cloud.simulator.url),
    async stop() {
      timeline.stop();
      api.close();
      await app.close();
      await cloud.close();
      await rm(dataDir, { recursive: true, force: true });
      calls.assertParsed();
    },
  };
}

const namespaceOf = (object: KubeObject) => object.metadata.namespace ?? 'default';
const machineName = (pair: KubeObject[]) => {
  const infrastructure = pair.find((object) => object.kind === 'OpenStackMachine');
  if (!infrastructure) throw new Error(`machine ${pair[0].metadata.name} has no OpenStackMachine`);
  return { namespace: namespaceOf(infrastructure), name: infrastructure.metadata.name };
};
const clusterName = (objects: ClusterObjects) => {
  const cluster = objects.cluster.find((object) => object.kind === 'OpenStackCluster')!;
  return { namespace: namespaceOf(cluster), name: cluster.metadata.name };
};

/** Ready times of the named objects, once all are Ready. */
async function readyTimes(stack: Stack, objects: { kind: string; namespace: string; name: string }[], timeoutMs: number): Promise<number[]> {
  const readyAt = () => objects.map((object) => stack.timeline.trueAt(object.kind, object.namespace, object.name, 'Ready'));
  await stack.timeline.waitUntil(
    allOf(objects, (object) => stack.timeline.trueAt(object.kind, object.namespace, object.name, 'Ready') !== undefined),
    timeoutMs,
    () => {
      const waiting = objects.filter((_, index) => readyAt()[index] === undefined);
      return `${waiting.length} of ${objects.length} not Ready, e.g. ${waiting
        .slice(0, 3)
        .map((object) => `${object.kind} ${object.namespace}/${object.name}`)
        .join(', ')}`;
    },
  );
  return readyAt() as number[];
}

/**
 * A check for waitUntil that every item holds (once held, for good): it runs on every storage event
 * of the run, so it looks only at the items not seen to hold yet, and stops at the first that does
 * not. Checking all 1,100 objects of the scale run on each event took about 7% of the process's CPU,
 * which the figures would have counted against the server.
 */
function allOf<T>(items: readonly T[], holds: (item: T) => boolean): () => boolean {
  let next = 0;
  return () => {
    while (next < items.length && holds(items[next])) next++;
    return next === items.length;
  };
}

/** Resources in the cloud by service and type, seed data included. */
// ---- figure 1 and 3: time to Ready, then steady state --------------------------

async function writeTrace(file: string, stack: Stack, started: number, calls: Call[]): Promise<void> {
  const at = (ms: number) => Number(((ms - started) / 1000).toFixed(3));
  const lines = [
    ...calls.map((call) => ({ t: at(call.startMs), end: at(call.endMs), call: `${call.service} ${call.method} ${call.path}`, outcome: call.outcome })),
    ...['OpenStackCluster', 'OpenStackServer', 'OpenStackMachine'].flatMap((kind) =>
      stack.timeline.entries(kind).map((entry) => ({ t: at(entry.atMs), object: `${kind} ${entry.name}`, conditionTrue: entry.type })),
    ),
  ].sort((a, b) => a.t - b.t);
  await writeFile(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  log(`(calls and conditions written to ${file})`);
}

/** Every load balancer create must have had the load balancer's transition delay, or the figures are for another pace. */
function checkLoadBalancerPace(stack: Stack): void {
  const creates = stack.calls.calls.filter(
    (call) => call.method === 'POST' && /^\/v2(\.0)?\/lbaas\/loadbalancers$/.test(call.path) && call.outcome === '201',
  ).length;
  const paced = stack.cloud.octaviaTransitions.loadBalancer;
  if (paced !== creates)
    throw new Error(`${creates} load balancers were created but ${paced} transitions got the load balancer delay: the cloud's pacing is broken`);
}

async function timeToReadyAndSteadyState(config: Config, profile: CloudProfile): Promise<void> {
  log(`\n## 1. Time to Ready: the example cluster + ${controlPlaneMachines + exampleWorkers} machines, applied at once\n`);
  const stack = await startStack({ resyncPeriodMs: config.steadyResyncMs, cloudMaxInFlight: Infinity, profile });
  try {
    const objects = clusterObjects(stack.examples, 'demo', exampleWorkers);
    const cluster = clusterName(objects);
    const machines = [...objects.controlPlane, ...objects.workers].map(machineName);
    const before = inventory(stack.cloud);
    const started = performance.now();
    // In the examples' file order, one at a time, as `kubectl apply -f examples/` sends them.
    for (const object of stack.examples) await stack.api.create(object);
    const applied = performance.now();
    const [clusterReady, ...machinesReady] = await readyTimes(
      stack,
      [{ kind: 'OpenStackCluster', ...cluster }, ...machines.map((machine) => ({ kind: 'OpenStackMachine', ...machine }))],
      config.convergeTimeoutMs,
    );
    const finished = Math.max(clusterReady, ...machinesReady);
    const shape = clusterShape(objects);
    const limit = criticalPath(physicalLimitSteps(profile, shape));
    const sequential = criticalPath(clusterSteps(profile, shape));
    const measuredMs = finished - started;
    log(
      table([
        ['figure', 'value', 'target'],
        ['apply (kubectl-style, one object at a time)', `${seconds(applied - started)} s`, ''],
        ['cluster Ready', `${seconds(clusterReady - started)} s`, ''],
        ['last machine Ready (= all Ready)', `${seconds(measuredMs)} s`, ''],
        ['physical limit (one create per load balancer tree, member batches)', `${seconds(limit.totalMs)} s`, ''],
        ['ratio to the physical limit', `${fixed(measuredMs / limit.totalMs, 2)}x`, '<= 1.15x'],
        ['critical path building load balancers child by child', `${seconds(sequential.totalMs)} s`, ''],
        ['ratio to that path', `${fixed(measuredMs / sequential.totalMs, 2)}x`, ''],
      ]),
    );
    log('\nPhysical limit (model):');
    log(table([['step', 'costs ms', 'done at s'], ...limit.chain.map(({ step, finishMs }) => [step.name, String(step.ms), seconds(finishMs)])]));
    log('\nChild-by-child critical path (model):');
    log(table([['step', 'costs ms', 'done at s'], ...sequential.chain.map(({ step, finishMs }) => [step.name, String(step.ms), seconds(finishMs)])]));
    log('\nMeasured: when each condition first became True (s after the first object was sent):');
    const conditionRows = ['OpenStackCluster', 'OpenStackServer', 'OpenStackMachine'].flatMap((kind) =>
      stack.timeline.entries(kind).map((entry) => [`${kind} ${entry.name}`, entry.type, seconds(entry.atMs - started)]),
    );
    log(table([['object', 'condition', 'True at s'], ...conditionRows]));
    const converging = stack.calls.between(started, finished);
    if (config.traceFile) await writeTrace(config.traceFile, stack, started, converging);
    log(
      `\nOpenStack calls until all Ready: ${converging.length} (${converging.filter((call) => call.retry > 0).length} retries), peak ${peakConcurrency(converging)} in flight`,
    );
    checkLoadBalancerPace(stack);
    const owned = inventoryDelta(before, inventory(stack.cloud));
    for (const warning of duplicateWarnings(owned, shape, 1)) log(warning);
    // The cluster, its machines, and a server for each machine and the bastion.
    await steadyState(config, stack, finished, 1 + 2 * machines.length + 1, owned);
  } finally {
    await stack.stop();
  }
}

/** Reconcile passes so far, by `controller result`, from the server's reconcile_duration_seconds histogram. */
async function reconcilePasses(stack: Stack): Promise<Map<string, number>> {
  const passes = new Map<string, number>();
  for (const [labels, count] of await stack.api.metric('reconcile_duration_seconds_count')) {
    const controller = /controller="([^"]*)"/.exec(labels)?.[1];
    const result = /result="([^"]*)"/.exec(labels)?.[1];
    if (controller === undefined || result === undefined) throw new Error(`reconcile_duration_seconds_count without controller or result: ${labels}`);
    passes.set(`${controller} ${result}`, count);
  }
  return passes;
}

function passesBetween(before: Map<string, number>, after: Map<string, number>): [string, number][] {
  return [...after]
    .map(([key, count]): [string, number] => [key, count - (before.get(key) ?? 0)])
    .filter(([, delta]) => delta > 0)
    .sort();
}

async function steadyState(config: Config, stack: Stack, readyAt: number, objects: number, owned: [string, number][]): Promise<void> {
  log(`\n## 3. Steady state: the same cluster unchanged, resync every ${seconds(config.steadyResyncMs)} s\n`);
  // Passes still requeued from convergence (waits, finishing writes) end within one period.
  const windowStart = Math.max(readyAt, performance.now()) + config.steadyResyncMs * 1.2;
  await new Promise((resolve) => setTimeout(resolve, windowStart - performance.now()));
  const passesBefore = await reconcilePasses(stack);
  const from = performance.now();
  await new Promise((resolve) => setTimeout(resolve, config.steadyWindowMs));
  const passes = passesBetween(passesBefore, await reconcilePasses(stack));
  const to = performance.now();
  const calls = stack.calls.between(from, to);
  const passCount = passes.reduce((sum, [, count]) => sum + count, 0);
  // One round: every object (cluster, machines, servers) resynced once.
  const rounds = passCount / objects;
  const perRound = calls.length / rounds;
  const ownedTotal = owned.reduce((sum, [, count]) => sum + count, 0);
  const getsPerRound = calls.filter(isRead).length / rounds;
  log(table([['resources created in the cloud (owned)', 'count'], ...owned.map(([kind, count]) => [kind, String(count)]), ['total', String(ownedTotal)]]));
  log('');
  log(table([['reconcile passes in the window', 'count'], ...passes.map(([key, count]) => [key, String(count)])]));
  log('');
  log(
    table([
      ['figure', 'value', 'target / reference'],
      ['window', `${seconds(to - from)} s, ${passCount} passes over ${objects} objects = ${fixed(rounds, 2)} rounds`, ''],
      ['calls in the window', String(calls.length), ''],
      ['calls per round (every object resynced once)', fixed(perRound), ''],
      ['GETs per owned resource per round', fixed(getsPerRound / ownedTotal, 2), '<= 1'],
      ['non-GET calls in the window', String(calls.filter((call) => !isRead(call)).length), '0'],
      [`calls per hour at the default ${defaultResyncMs / 60_000} min resync`, fixed(perRound * (3_600_000 / defaultResyncMs), 0), 'CAPO ~100 per cluster'],
    ]),
  );
  log('\nSteady-state calls per round by request:');
  log(countTable(['request', 'per round'], [{ calls, per: rounds }], byRequestShape));
}

// ---- figure 2: calls per cluster and per machine ---------------------------------

async function callsPerObject(config: Config, profile: CloudProfile): Promise<void> {
  log('\n## 2. OpenStack calls per cluster and per machine (applied one group at a time)\n');
  const stack = await startStack({ cloudMaxInFlight: Infinity, profile });
  try {
    const objects = clusterObjects(stack.examples, 'demo', exampleWorkers);
    const before = inventory(stack.cloud);
    const phase = async (create: KubeObject[], waitFor: { kind: string; namespace: string; name: string }[]) => {
      const started = performance.now();
      for (const object of create) await stack.api.create(object);
      await readyTimes(stack, waitFor, config.convergeTimeoutMs);
      // Calls a group's last pass makes after its Ready write still belong to it.
      await stack.calls.settle(3_000, 30_000);
      return stack.calls.between(started);
    };
    const cluster = await phase([...objects.shared, ...objects.cluster], [{ kind: 'OpenStackCluster', ...clusterName(objects) }]);
    const workers = await phase(
      objects.workers.flat(),
      objects.workers.map((pair) => ({ kind: 'OpenStackMachine', ...machineName(pair) })),
    );
    const controlPlane = await phase(
      objects.controlPlane.flat(),
      objects.controlPlane.map((pair) => ({ kind: 'OpenStackMachine', ...machineName(pair) })),
    );
    const columns = [
      { calls: cluster, per: 1 },
      { calls: workers, per: objects.workers.length },
      { calls: controlPlane, per: objects.controlPlane.length },
    ];
    const header = ['request', 'cluster (with bastion)', 'per worker machine', 'per control-plane machine'];
    log(countTable(header, columns, byServiceMethod));
    log('\nTargets: <= 40 per cluster, <= 12 per worker machine (CAPO: about 63-77 and 21-30).');
    log('\nBy request shape:');
    log(countTable(header, columns, byRequestShape));
    const statuses = countBy([...cluster, ...workers, ...controlPlane], (call) => call.outcome).map(([status, count]) => `${status}: ${count}`);
    log(`\nOutcomes: ${statuses.join(', ')}`);
    const created = inventoryDelta(before, inventory(stack.cloud));
    log(`\nCreated in the cloud: ${created.map(([kind, count]) => `${kind} ${count}`).join(', ')}`);
    for (const warning of duplicateWarnings(created, clusterShape(objects), 1)) log(warning);
  } finally {
    await stack.stop();
  }
}

// ---- figure 4: many clusters at once -----------------------------------------------

async function manyClusters(config: Config, profile: CloudProfile): Promise<void> {
  const workers = config.machinesPerCluster - controlPlaneMachines;
  log(
    `\n## 4. ${config.clusters} clusters x ${config.machinesPerCluster} machines (${controlPlaneMachines} control plane, ${workers} workers) + bastions, applied at once\n`,
  );
  const stack = await startStack({ cloudMaxInFlight: config.cloudMaxInFlight, profile });
  try {
    await prepareForScale(stack.cloud, config.clusters);
    stack.cloud.resetFront();
    const passesBefore = await reconcilePasses(stack);
    const inventoryBefore = inventory(stack.cloud);
    const clusters = Array.from({ length: config.clusters }, (_, index) => clusterObjects(stack.examples, `bench-${String(index).padStart(3, '0')}`, workers));
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (const object of clusters[0].shared) await stack.api.create(object);
    // Eight clients applying whole clusters, each in file order.
    await pool(clusters.length, 8, async (index) => {
      const objects = clusters[index];
      for (const object of [...objects.cluster, ...objects.controlPlane.flat(), ...objects.workers.flat()]) await stack.api.create(object);
    });
    const applied = performance.now();
    const clusterKeys = clusters.map((objects) => ({ kind: 'OpenStackCluster', ...clusterName(objects) }));
    const machineKeys = clusters.flatMap((objects) =>
      [...objects.controlPlane, ...objects.workers].map((pair) => ({ kind: 'OpenStackMachine', ...machineName(pair) })),
    );
    const readyAt = await readyTimes(stack, [...clusterKeys, ...machineKeys], config.convergeTimeoutMs);
    const finished = Math.max(...readyAt);
    const cpu = process.cpuUsage(cpuBefore);
    for (const warning of duplicateWarnings(inventoryDelta(inventoryBefore, inventory(stack.cloud)), clusterShape(clusters[0]), config.clusters)) log(warning);
    const passes = passesBetween(passesBefore, await reconcilePasses(stack));
    const calls = stack.calls.between(started, finished);
    const clusterReady = summarize(readyAt.slice(0, clusterKeys.length).map((at) => (at - started) / 1000));
    const machineReady = summarize(readyAt.slice(clusterKeys.length).map((at) => (at - started) / 1000));
    const rejected = calls.filter((call) => call.outcome === '429');
    const wallMs = finished - started;
    log(
      table([
        ['figure', 'value'],
        [
          'objects applied (8 clients)',
          `${clusters.length * (clusters[0].cluster.length + 2 * config.machinesPerCluster) + 1} in ${seconds(applied - started)} s`,
        ],
        ['all Ready after', `${seconds(wallMs)} s`],
        ['cluster Ready p50 / p99 / max', `${fixed(clusterReady.p50)} / ${fixed(clusterReady.p99)} / ${fixed(clusterReady.max)} s`],
        ['machine Ready p50 / p99 / max', `${fixed(machineReady.p50)} / ${fixed(machineReady.p99)} / ${fixed(machineReady.max)} s`],
        ['OpenStack calls (attempts)', `${calls.length} (${fixed(calls.length / config.clusters)} per cluster with its machines)`],
        ['retried attempts', String(calls.filter((call) => call.retry > 0).length)],
        ['peak calls in flight (client side, without Keystone)', String(peakConcurrency(calls.filter((call) => call.service !== 'identity')))],
        ['peak requests in flight (cloud API front, without Keystone)', String(stack.cloud.front.peakInFlight)],
        ['reconciler bound per cloud', String(reconcilerPerCloud)],
        [`429s answered (front limit ${config.cloudMaxInFlight} in flight, Retry-After 1 s)`, `${stack.cloud.front.rejected} (client saw ${rejected.length})`],
        ['calls per second, mean', fixed(calls.length / (wallMs / 1000), 0)],
        [
          'CPU of this process (API server + reconciler + cloud)',
          `${fixed((cpu.user + cpu.system) / 1e6)} s (${fixed(((cpu.user + cpu.system) / 1e3 / wallMs) * 100, 0)}% of a core)`,
        ],
      ]),
    );
    log('\nBy service and method:');
    log(
      countTable(
        ['request', 'total', 'per cluster with its machines'],
        [
          { calls, per: 1 },
          { calls, per: config.clusters },
        ],
        byServiceMethod,
      ),
    );
    log(
      `\nOutcomes: ${countBy(calls, (call) => call.outcome)
        .map(([status, count]) => `${status}: ${count}`)
        .join(', ')}`,
    );
    const byRequest = (some: Call[]) =>
      countBy(some, byRequestShape)
        .map(([request, count]) => `${request}: ${count}`)
        .join(', ');
    if (rejected.length > 0) log(`429s by request: ${byRequest(rejected)}`);
    const conflicts = calls.filter((call) => call.outcome === '409');
    if (conflicts.length > 0) log(`409s by request: ${byRequest(conflicts)}`);
    log('\nReconcile passes until all Ready:');
    log(table([['controller result', 'passes'], ...passes.map(([key, count]) => [key, String(count)])]));
    await deleteEverything(stack, clusters, [...clusterKeys, ...machineKeys], inventoryBefore, config.convergeTimeoutMs);
  } finally {
    await stack.stop();
  }
}

/**
 * Deletes every cluster at once (the Machines, Clusters and their OpenStack objects, as `kubectl
 * delete` of the manifests would), waits for the objects to be gone, then for the cloud to hold
 * nothing more than before the clusters: whatever it still holds 30 s later is a leak.
 */
async function deleteEverything(
  stack: Stack,
  clusters: ClusterObjects[],
  keys: { kind: string; namespace: string; name: string }[],
  inventoryBefore: Map<string, number>,
  timeoutMs: number,
): Promise<void> {
  const kinds = new Map<string, string>();
  for (const object of [...clusters[0].cluster, ...clusters[0].controlPlane.flat(), ...clusters[0].workers.flat()]) {
    if (object.kind !== 'Secret') kinds.set(object.kind, object.apiVersion);
  }
  const started = performance.now();
  for (const [kind, apiVersion] of kinds) await stack.api.deleteAll(apiVersion, kind);
  // The ORC Images the clusters shared go too (their Glance images with them), once no server is left to boot from them.
  const images = clusters[0].shared.filter((object) => object.kind === 'Image');
  const deletedAt = () => keys.map((key) => stack.timeline.deletedAt(key.kind, key.namespace, key.name));
  await stack.timeline.waitUntil(
    allOf(keys, (key) => stack.timeline.deletedAt(key.kind, key.namespace, key.name) !== undefined),
    timeoutMs,
    () => `${deletedAt().filter((at) => at === undefined).length} of ${keys.length} objects not deleted`,
  );
  const gone = Math.max(...(deletedAt() as number[]));
  for (const image of images) await stack.api.deleteAll(image.apiVersion, image.kind);
  let left = inventoryDelta(inventoryBefore, inventory(stack.cloud));
  for (
    const deadline = performance.now() + 30_000;
    left.length > 0 && performance.now() < deadline;
    left = inventoryDelta(inventoryBefore, inventory(stack.cloud))
  ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const calls = stack.calls.between(started, performance.now());
  log('\nDelete, every cluster at once:');
  log(
    table([
      ['figure', 'value'],
      ['all objects gone after', `${seconds(gone - started)} s`],
      ['OpenStack calls (attempts)', `${calls.length} (${fixed(calls.length / clusters.length)} per cluster with its machines)`],
      ['429s / 409s', `${calls.filter((call) => call.outcome === '429').length} / ${calls.filter((call) => call.outcome === '409').length}`],
      ['left in the cloud (30 s after)', left.length === 0 ? 'nothing' : left.map(([kind, count]) => `${kind} ${count}`).join(', ')],
    ]),
  );
  log(
    countTable(
      ['request', 'total', 'per cluster with its machines'],
      [
        { calls, per: 1 },
        { calls, per: clusters.length },
      ],
      byServiceMethod,
    ),
  );
  const conflicts = calls.filter((call) => call.outcome === '409');
  if (conflicts.length > 0)
    log(
      `409s by request: ${countBy(conflicts, byRequestShape)
        .map(([request, count]) => `${request}: ${count}`)
        .join(', ')}`,
    );
}

// ---- main ----------------------------------------------------------------------------

async function main(): Promise<void> {
  const config = parseConfig();
  const { profile } = config;
  log(`# bench/reconcile (code ${sourceRevision()}, Node ${process.version}, ${os.cpus().length} CPUs, profile ${profile.name})\n`);
  log(describeProfile(profile));
  const started = performance.now();
  if (!config.scaleOnly) {
    await timeToReadyAndSteadyState(config, profile);
    await callsPerObject(config, profile);
  }
  if (config.skipScale) log('\n## 4. skipped (--skip-scale)');
  else await manyClusters(config, profile);
  log(`\nTotal run time ${seconds(performance.now() - started)} s.`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench/reconcile failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
