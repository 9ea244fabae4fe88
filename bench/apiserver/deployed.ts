/**
 * The API as deployed (issue 45): this server on etcd with its reconciler running, beside
 * kube-apiserver serving CAPO's CRDs on the same etcd, loaded in the two shapes real clients send:
 *
 * - HTTP/1.1 over a pool of keep-alive connections, one request on each at a time, a watch holding
 *   a connection of its own (Python's kubernetes client, Ansible's kubernetes.core, curl);
 * - one HTTP/2 connection carrying every request and every watch as a stream, and another once the
 *   server's stream limit is reached (client-go).
 *
 * Half the objects are owned by a Cluster, as Cluster API makes them; all carry the cluster-name
 * label a controller selects by. For each protocol and server: creates, GETs by name, unpaged LISTs
 * of the namespace, label-selected LISTs, and a watch fan-out. Each prints its throughput and p99,
 * and ours over kube-apiserver's: the goal is at least 2x the throughput and at most half the p99.
 * A measurement, not a test: a missed goal does not fail the run (a wrong answer does).
 *
 *   npm run bench:deployed
 *   npm run bench:deployed -- --quick     # a small run that checks the harness
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { monotonicUs, phaseMarks, pool, pseudoRandom, sampleMachine, sampleProcess, sourceRevision, summarize, table, type Summary } from '../common.js';
import { Http2Connections } from '../http2-client.js';
import type { RawRequestOptions, RawResponse } from '../raw-client.js';
import { controlPlaneUnavailable, startControlPlane } from '../../harness/control-plane.js';
import { startScriptFlags } from '../../harness/start-flags.js';
import { group, objectName, openStackCluster } from './open-stack-cluster.js';
import { kubeApiServer, ourServer, type Target } from './targets.js';
import { benchSequenceReader } from './watch-lines.js';
import type { JsonObject } from '../../src/storage/interface.js';

interface Config {
  objects: number;
  /** Requests in flight: keep-alive connections over HTTP/1.1, streams of the one connection over HTTP/2. */
  concurrency: number;
  unpagedLists: number;
  /** Unpaged LISTs in flight: informers of a few controllers relisting at once. */
  unpagedConcurrency: number;
  selectedLists: number;
  /** Clusters the objects belong to, each selected by its label: objects / clusters in each selected LIST. */
  clusters: number;
  watchers: number;
  updates: number;
  /** PATCHes in flight during the fan-out: a controller's writes. */
  updateConcurrency: number;
}

const protocols = ['HTTP/1.1', 'HTTP/2'] as const;
type Protocol = (typeof protocols)[number];
const operations = ['creates', 'GETs', 'unpaged LISTs', 'label-selected LISTs', 'watch deliveries'] as const;
type Operation = (typeof operations)[number];

/** Each stage and protocol creates its objects in a namespace of its own. */
type Stage = 'warm-up' | 'measured';
const stages: readonly Stage[] = ['warm-up', 'measured'];
const namespaceOf = (stage: Stage, protocol: Protocol) => `${stage === 'warm-up' ? 'warmup' : 'deployed'}-${protocol === 'HTTP/1.1' ? 'http1' : 'http2'}`;
const collectionPath = (namespace: string) => `/apis/${group}/v1beta2/namespaces/${namespace}/openstackclusters`;
const clusterLabel = 'cluster.x-k8s.io/cluster-name';
const clusterName = (config: Config, index: number) => `fleet-${index % config.clusters}`;

function parseConfig(): { config: Config; cpuProfDir?: string } {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean', default: false }, 'cpu-prof': { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write('Usage: node dist/bench/apiserver/deployed.js [--quick] [--cpu-prof DIR, then node dist/bench/apiserver/profile.js DIR]\n');
    process.exit(0);
  }
  const cpuProfDir = values['cpu-prof'] && path.resolve(values['cpu-prof']);
  return { config: values.quick ? warmUp : fullSize, ...(cpuProfDir && { cpuProfDir }) };
}

/** Before the measured load, each server gets this much of it in namespaces of its own, so neither is measured cold; --quick runs only this. */
const warmUp: Config = {
  objects: 300,
  concurrency: 16,
  unpagedLists: 4,
  unpagedConcurrency: 2,
  selectedLists: 300,
  clusters: 10,
  watchers: 10,
  updates: 10,
  updateConcurrency: 16,
};

const fullSize: Config = {
  objects: 3_000,
  concurrency: 16,
  unpagedLists: 20,
  unpagedConcurrency: 2,
  selectedLists: 3_000,
  clusters: 100,
  watchers: 100,
  updates: 200,
  updateConcurrency: 16,
};

/** The OpenStackCluster of that index: every other one owned by its Cluster (whose UID is made up: no Cluster exists). */
function ownedObject(config: Config, index: number): JsonObject {
  const object = openStackCluster(index);
  const metadata = object.metadata as JsonObject;
  const cluster = clusterName(config, index);
  metadata.labels = { ...(metadata.labels as JsonObject), [clusterLabel]: cluster };
  if (index % 2 === 0) {
    const uid = `00000000-0000-4000-8000-${(index % config.clusters).toString(16).padStart(12, '0')}`;
    metadata.ownerReferences = [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: cluster, uid, controller: true, blockOwnerDeletion: true }];
  }
  return object;
}

/** What sends the requests: the keep-alive pool or the one HTTP/2 connection. */
interface Requests {
  expect(expected: number, method: string, urlPath: string, options?: RawRequestOptions): Promise<RawResponse>;
  /** Opens a watch whose chunks go to `onChunk`; resolves once the server answered 200. */
  watch(urlPath: string, onChunk: (chunk: string) => void): Promise<void>;
  close(): void;
}

async function requestsOver(target: Target, protocol: Protocol, config: Config): Promise<Requests> {
  const { client } = target;
  if (protocol === 'HTTP/1.1') {
    // A watch holds its connection for as long as it streams, so it gets one of its own.
    const watchAgent = new https.Agent({ keepAlive: false, maxSockets: Infinity, ...client.credentials });
    return {
      expect: (expected, method, urlPath, options) => client.expect(expected, method, urlPath, options),
      watch: async (urlPath, onChunk) => {
        await client.stream(urlPath, watchAgent, onChunk);
      },
      close: () => watchAgent.destroy(),
    };
  }
  // Requests take the first connection's first streams; the watches fill its others, then connections of their own.
  const connections = await Http2Connections.connect(new URL(`https://${client.host}:${client.port}`), client.credentials, config.concurrency);
  return {
    expect: (expected, method, urlPath, options) => connections.first.expect(expected, method, urlPath, options),
    watch: (urlPath, onChunk) => connections.stream(urlPath, onChunk),
    close: () => connections.close(),
  };
}

interface Measured {
  count: number;
  seconds: number;
  latencies: Summary;
  serverCpuSeconds: number;
  /** CPU the rest of the machine took meanwhile (etcd, the load generator, anything else). */
  otherCpuSeconds: number;
}

/** From now: the CPU the server (`pid`) and the rest of the machine will have taken when the answer is called. */
function cpuFromNow(pid: number): () => Pick<Measured, 'serverCpuSeconds' | 'otherCpuSeconds'> {
  const serverBefore = sampleProcess(pid).cpuSeconds;
  const machineBefore = sampleMachine().busySeconds;
  return () => {
    const serverCpuSeconds = sampleProcess(pid).cpuSeconds - serverBefore;
    return { serverCpuSeconds, otherCpuSeconds: Math.max(0, sampleMachine().busySeconds - machineBefore - serverCpuSeconds) };
  };
}

/** Runs `task(0..count-1)`, `concurrency` at once; each answers its latency in ms. */
async function timed(pid: number, count: number, concurrency: number, task: (index: number) => Promise<number>): Promise<Measured> {
  const latencies = new Float64Array(count);
  const cpu = cpuFromNow(pid);
  const started = performance.now();
  await pool(count, concurrency, async (index) => {
    latencies[index] = await task(index);
  });
  return { count, seconds: (performance.now() - started) / 1000, latencies: summarize(latencies), ...cpu() };
}

const countItems = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { items: unknown[] }).items.length;

/**
 * Watchers on the namespace, then PATCHes of a label, `updateConcurrency` at once: each delivery's
 * delay from its PATCH's send, and the deliveries per second from the first send to the last delivery.
 */
async function watchFanOut(pid: number, requests: Requests, collection: string, config: Config): Promise<Measured> {
  const rv = (JSON.parse((await requests.expect(200, 'GET', `${collection}?limit=1`)).body.toString('utf8')) as { metadata: { resourceVersion: string } })
    .metadata.resourceVersion;
  const sentAt = new Float64Array(config.updates).fill(Number.NaN);
  const delays: number[] = [];
  let unexpected = 0;
  let lastArrival = 0;
  let allDelivered: () => void = () => undefined;
  const delivered = new Promise<void>((resolve) => {
    allDelivered = resolve;
  });
  const expected = config.watchers * config.updates;
  const receiver = () =>
    benchSequenceReader((seq, arrived) => {
      if (seq === undefined) {
        unexpected++;
        return;
      }
      delays.push(arrived - sentAt[seq]!);
      lastArrival = arrived;
      if (delays.length === expected) allDelivered();
    });
  await pool(config.watchers, 20, () => requests.watch(`${collection}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=false`, receiver()));
  const cpu = cpuFromNow(pid);
  const started = performance.now();
  await pool(config.updates, config.updateConcurrency, async (seq) => {
    const body = JSON.stringify({ metadata: { labels: { benchseq: String(seq) } } });
    sentAt[seq] = performance.now();
    await requests.expect(200, 'PATCH', `${collection}/${objectName((seq * 37) % config.objects)}`, { body, contentType: 'application/merge-patch+json' });
  });
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, 30_000).unref());
  await Promise.race([delivered, timeout]);
  if (delays.length !== expected || unexpected > 0) {
    throw new Error(`watch fan-out: ${delays.length} of ${expected} deliveries within 30 s, ${unexpected} unexpected events`);
  }
  return { count: expected, seconds: (lastArrival - started) / 1000, latencies: summarize(delays), ...cpu() };
}

type Figures = Record<Operation, Measured>;

async function runLoad(target: Target, protocol: Protocol, stage: Stage, config: Config, log: (text: string) => void): Promise<Figures> {
  const { pid } = target;
  const requests = await requestsOver(target, protocol, config);
  const collection = collectionPath(namespaceOf(stage, protocol));
  let stepStartUs = monotonicUs();
  const step = (name: Operation, figures: Measured) => {
    phaseMarks.push({ name: `${target.name}: ${stage} ${protocol} ${name}`, startUs: stepStartUs, endUs: monotonicUs() });
    stepStartUs = monotonicUs();
    log(`  [${target.name}, ${stage}, ${protocol}] ${name}: ${(figures.count / figures.seconds).toFixed(0)}/s, p99 ${figures.latencies.p99.toFixed(1)} ms`);
  };
  try {
    const creates = await timed(pid, config.objects, config.concurrency, async (index) => {
      const response = await requests.expect(201, 'POST', collection, { body: JSON.stringify(ownedObject(config, index)) });
      return response.ms;
    });
    step('creates', creates);
    const random = pseudoRandom(45);
    const names = Array.from({ length: config.objects * 2 }, () => objectName(Math.floor(random.next().value * config.objects)));
    const gets = await timed(pid, names.length, config.concurrency, async (index) => (await requests.expect(200, 'GET', `${collection}/${names[index]}`)).ms);
    step('GETs', gets);
    const unpaged = await timed(pid, config.unpagedLists, config.unpagedConcurrency, async (index) => {
      const response = await requests.expect(200, 'GET', collection);
      if (index === 0 && countItems(response.body) !== config.objects)
        throw new Error(`LIST returned ${countItems(response.body)} items, expected ${config.objects}`);
      return response.ms;
    });
    step('unpaged LISTs', unpaged);
    const perCluster = Math.ceil(config.objects / config.clusters);
    const selected = await timed(pid, config.selectedLists, config.concurrency, async (index) => {
      const selector = encodeURIComponent(`${clusterLabel}=${clusterName(config, index)}`);
      const response = await requests.expect(200, 'GET', `${collection}?labelSelector=${selector}`);
      if (index < config.clusters && countItems(response.body) !== perCluster) {
        throw new Error(`LIST of ${clusterName(config, index)} returned ${countItems(response.body)} items, expected ${perCluster}`);
      }
      return response.ms;
    });
    step('label-selected LISTs', selected);
    const watch = await watchFanOut(pid, requests, collection, config);
    step('watch deliveries', watch);
    return { creates, GETs: gets, 'unpaged LISTs': unpaged, 'label-selected LISTs': selected, 'watch deliveries': watch };
  } finally {
    requests.close();
  }
}

const rate = (figures: Measured) => figures.count / figures.seconds;
const latency = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));

function report(config: Config, results: Map<string, Map<Protocol, Figures>>, log: (text: string) => void): void {
  const ours = results.get('ours on etcd, reconciler on')!;
  const kube = results.get('kube-apiserver')!;
  const rows: string[][] = [];
  let met = 0;
  for (const protocol of protocols) {
    for (const operation of operations) {
      const mine = ours.get(protocol)![operation];
      const theirs = kube.get(protocol)![operation];
      const throughput = rate(mine) / rate(theirs);
      const tail = mine.latencies.p99 / theirs.latencies.p99;
      if (throughput >= 2 && tail <= 0.5) met++;
      rows.push([
        protocol,
        operation,
        `${rate(mine).toFixed(0)} / ${rate(theirs).toFixed(0)}`,
        `${throughput.toFixed(2)}x${throughput >= 2 ? '' : ' (goal >= 2x)'}`,
        `${latency(mine.latencies.p99)} / ${latency(theirs.latencies.p99)} ms`,
        `${tail.toFixed(2)}x${tail <= 0.5 ? '' : ' (goal <= 0.5x)'}`,
        `${mine.serverCpuSeconds.toFixed(1)} / ${theirs.serverCpuSeconds.toFixed(1)}`,
        `${mine.otherCpuSeconds.toFixed(1)} / ${theirs.otherCpuSeconds.toFixed(1)}`,
      ]);
    }
  }
  log('\nOurs on etcd with the reconciler on / kube-apiserver on the same etcd');
  log(table([['protocol', 'operation', 'per second', 'throughput ratio', 'p99', 'p99 ratio', 'server CPU s', 'other CPU s'], ...rows]));
  log(
    `\n${met} of ${rows.length} meet both goals. ${config.objects} objects per protocol (half owned by a Cluster), ${config.concurrency} requests in flight; ` +
      `${config.unpagedLists} unpaged LISTs, ${config.unpagedConcurrency} at once; ${config.selectedLists} LISTs selecting one of ${config.clusters} clusters; ` +
      `${config.watchers} watchers x ${config.updates} PATCHes, ${config.updateConcurrency} at once. "Other CPU" is etcd, the load generator and anything else.`,
  );
}

async function main(): Promise<void> {
  const { config, cpuProfDir } = parseConfig();
  const log = (text: string) => process.stdout.write(`${text}\n`);
  const cpus = os.cpus();
  log('capo-apiserver: the API as deployed, beside kube-apiserver (bench/apiserver/deployed.ts)');
  log(
    `machine: ${cpus.length} cores (${cpus[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, node ${process.version}; code: git ${sourceRevision()}`,
  );
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
  const unavailable = controlPlaneUnavailable();
  if (unavailable) throw new Error(unavailable);
  const plane = await startControlPlane();
  log(`control plane: kube-apiserver at ${plane.url}, etcd at ${plane.etcdServers.join(', ')} (../shared/k8s)`);
  const namespaces = stages.flatMap((stage) => protocols.map((protocol) => namespaceOf(stage, protocol)));
  const starts: (() => Promise<Target>)[] = [
    () =>
      ourServer(
        { nodeFlags: startScriptFlags(), watchCache: true, reconciler: true, maxSockets: config.concurrency, ...(cpuProfDir && { cpuProfDir }) },
        'ours on etcd, reconciler on',
        plane.etcdServers.join(','),
        log,
      ),
    () => kubeApiServer(plane, namespaces, log, config.concurrency),
  ];
  const results = new Map<string, Map<Protocol, Figures>>();
  try {
    for (const start of starts) {
      const target = await start();
      try {
        const byProtocol = new Map<Protocol, Figures>();
        for (const protocol of protocols) await runLoad(target, protocol, 'warm-up', warmUp, log);
        for (const protocol of protocols) byProtocol.set(protocol, await runLoad(target, protocol, 'measured', config, log));
        results.set(target.name, byProtocol);
      } finally {
        await target.stop();
      }
    }
    report(config, results, log);
  } finally {
    await plane.stop();
    if (cpuProfDir) {
      writeFileSync(path.join(cpuProfDir, 'phases.json'), `${JSON.stringify(phaseMarks, null, 2)}\n`);
      log(`\nour server's CPU profile and phases.json are in ${cpuProfDir}; summarize with: node dist/bench/apiserver/profile.js ${cpuProfDir}`);
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
