/**
 * API server benchmark: durable creates, gets, large lists and watch fan-out of
 * valid OpenStackClusters (v1beta2), against the real server
 * (bench/apiserver/server.ts) running in a separate process, over HTTPS with an
 * admin client certificate. With --beside-kube the same load runs, in the same
 * run, against this server on SQLite, this server on etcd, and kube-apiserver
 * serving CAPO's own CRDs on that same etcd (../shared/k8s), and the figures are
 * printed side by side. It is a measurement, not a test, so a missed target
 * does not fail the run (a wrong answer from a server does).
 *
 *   npm run bench:apiserver                     # the full run, this server on SQLite
 *   npm run bench:apiserver -- --beside-kube    # SQLite, etcd and kube-apiserver side by side
 *   npm run bench:apiserver -- --quick          # a small run that checks the harness
 *   npm run bench:apiserver -- --cpu-prof DIR   # then: node dist/bench/apiserver/profile.js DIR
 *
 * Every phase is a bounded loop on loopback, sized to finish in about a
 * minute per server on 2 cores; the servers stop when this process exits.
 */
import { closeSync, existsSync, fdatasyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { p99Between, readEtcdHistograms, type BucketQuantile } from './etcd-metrics.js';
import { gcBetween, gcTotals, observeOwnGc, type GcTotals } from './gc-metrics.js';
import type { Client } from './server-process.js';
import { capoCrds, kubeApiServer, ourServer, type OurServerOptions, type Target } from './targets.js';
import {
  mb,
  monotonicUs,
  type PhaseMark,
  phaseMarks,
  pool,
  pseudoRandom,
  sampleMachine,
  sampleProcess,
  sourceRevision,
  summarize,
  type Summary,
  table,
} from '../common.js';
import { controlPlaneUnavailable, startControlPlane } from '../../harness/control-plane.js';
import { startScriptFlags } from '../../harness/start-flags.js';
import { Http2Connections } from '../http2-client.js';
import { group, objectName, openStackCluster } from './open-stack-cluster.js';
import { benchSequenceReader } from './watch-lines.js';

// ---- configuration ---------------------------------------------------------

interface Config {
  objects: number;
  gets: number;
  concurrency: number;
  listRepetitions: number;
  pagedWalks: number;
  pageSize: number;
  watchers: number;
  updates: number;
  /** Updates sent first and left out of the delivery figures: the server's first PATCHes and fan-outs run cold code. */
  warmupUpdates: number;
  updateIntervalMs: number;
  cpuProfDir?: string;
  /** The server stores in this etcd instead of SQLite. */
  etcdServers?: string;
  /** Also this server on kube-apiserver's etcd, and kube-apiserver itself with CAPO's CRDs. */
  besideKube: boolean;
  watchCache: boolean;
  /** This server runs its reconciler against a simulated cloud. */
  reconciler: boolean;
  /** Node's flags for this server: npm start's unless --node-flags says otherwise. */
  nodeFlags: string[];
  watchProtocol: WatchProtocol;
  /** A directory for each server's per-update series of the watch phase. */
  traceUpdatesDir?: string;
}

type WatchProtocol = 'http1' | 'http2';

const usage = `Usage: node dist/bench/apiserver/run.js [options]
  --quick            a small run (1000 objects, 50 watchers) to check the harness
  --objects N        objects created (default 10000)
  --watchers N       concurrent watches (default 500)
  --updates N        updates delivered to every watcher (default 200)
  --etcd-servers L   store in etcd (client URLs, comma-separated) instead of SQLite
  --beside-kube      start a control plane (../shared/k8s) and run the same load against this
                     server on SQLite, on the control plane's etcd, and kube-apiserver with CAPO's CRDs
  --no-watch-cache   run this server without its watch cache (kube-apiserver: --watch-cache=false)
  --reconciler       run this server with its reconciler and a simulated cloud, as deployed (the
                     benchmark's OpenStackClusters have no owner Cluster, so it must leave them alone)
  --node-flags='F'   run this server with these node flags instead of those npm start uses
                     (package.json), e.g. --node-flags='' for V8's defaults
  --watch-protocol P  http2 (default: the watches as streams of shared connections, as client-go
                     opens them) or http1 (a TLS connection per watch)
  --trace-updates DIR  write each server's per-update series of the watch phase (when each update
                     was sent, its PATCH latency, its first and last delivery) to DIR/<server>.txt
  --cpu-prof DIR     run the server under node --cpu-prof, writing the profile to DIR;
                     summarize it with: node dist/bench/apiserver/profile.js DIR
`;

function parseConfig(): Config {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      objects: { type: 'string' },
      watchers: { type: 'string' },
      updates: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'etcd-servers': { type: 'string' },
      'beside-kube': { type: 'boolean', default: false },
      'no-watch-cache': { type: 'boolean', default: false },
      reconciler: { type: 'boolean', default: false },
      'node-flags': { type: 'string' },
      'watch-protocol': { type: 'string', default: 'http2' },
      'trace-updates': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const integer = (text: string | undefined, fallback: number, name: string) => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got "${text}"`);
    return value;
  };
  const quick = values.quick ?? false;
  const watchProtocol = values['watch-protocol'];
  if (watchProtocol !== 'http1' && watchProtocol !== 'http2') throw new Error(`--watch-protocol must be http1 or http2, got "${watchProtocol}"`);
  const objects = integer(values.objects, quick ? 1_000 : 10_000, 'objects');
  return {
    objects,
    gets: objects * 2,
    concurrency: 32,
    listRepetitions: quick ? 5 : 30,
    pagedWalks: quick ? 2 : 5,
    pageSize: 500,
    watchers: integer(values.watchers, quick ? 50 : 500, 'watchers'),
    updates: integer(values.updates, quick ? 50 : 200, 'updates'),
    warmupUpdates: quick ? 5 : 20,
    updateIntervalMs: 20,
    cpuProfDir: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined,
    traceUpdatesDir: values['trace-updates'] ? path.resolve(values['trace-updates']) : undefined,
    etcdServers: values['etcd-servers'],
    besideKube: values['beside-kube'] ?? false,
    watchCache: !values['no-watch-cache'],
    reconciler: values.reconciler ?? false,
    watchProtocol,
    nodeFlags: values['node-flags'] !== undefined ? values['node-flags'].split(/\s+/).filter(Boolean) : startScriptFlags(),
  };
}

const namespace = 'bench';
const collectionPath = `/apis/${group}/v1beta2/namespaces/${namespace}/openstackclusters`;
const tableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io';

// ---- statistics ------------------------------------------------------------

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));

// ---- phases ----------------------------------------------------------------

interface PhaseCost {
  wallSeconds: number;
  serverCpuSeconds: number;
  clientCpuSeconds: number;
  /** CPU the rest of the machine used meanwhile: on a shared host, the sign that a figure was disturbed. */
  otherCpuSeconds: number;
  stealSeconds: number;
}

async function marked<T>(name: string, body: () => Promise<T>): Promise<T> {
  const startUs = monotonicUs();
  try {
    return await body();
  } finally {
    phaseMarks.push({ name, startUs, endUs: monotonicUs() });
  }
}

/**
 * Samples the server's RSS every 25 ms, so the peak of each phase is known
 * (VmHWM alone only gives the peak of the whole run so far).
 */
function startRssSampler(pid: number): { stop(): void; peakKb(mark: PhaseMark): number } {
  const samples: { us: number; rssKb: number }[] = [];
  const timer = setInterval(() => {
    try {
      samples.push({ us: monotonicUs(), rssKb: sampleProcess(pid).rssKb });
    } catch {
      // The server is gone; the phase that lost it reports the error.
    }
  }, 25);
  return {
    stop: () => clearInterval(timer),
    peakKb: (mark) => samples.reduce((peak, s) => (s.us >= mark.startUs && s.us <= mark.endUs ? Math.max(peak, s.rssKb) : peak), 0),
  };
}

/** Wall time and the CPU each side spent, to tell a saturated server from a slow client. */
async function measured<T>(pid: number, name: string, body: () => Promise<T>): Promise<{ value: T; cost: PhaseCost }> {
  const serverBefore = sampleProcess(pid).cpuSeconds;
  const machineBefore = sampleMachine();
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const value = await marked(name, body);
  const wallSeconds = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const machineAfter = sampleMachine();
  const serverCpuSeconds = sampleProcess(pid).cpuSeconds - serverBefore;
  const clientCpuSeconds = (client.user + client.system) / 1e6;
  return {
    value,
    cost: {
      wallSeconds,
      serverCpuSeconds,
      clientCpuSeconds,
      otherCpuSeconds: Math.max(0, machineAfter.busySeconds - machineBefore.busySeconds - serverCpuSeconds - clientCpuSeconds),
      stealSeconds: machineAfter.stealSeconds - machineBefore.stealSeconds,
    },
  };
}

async function createPhase(client: Client, config: Config) {
  const latencies = new Float64Array(config.objects);
  let bytes = 0;
  await pool(config.objects, config.concurrency, async (i) => {
    const body = JSON.stringify(openStackCluster(i));
    bytes += body.length;
    const response = await client.expect(201, 'POST', collectionPath, { body });
    latencies[i] = response.ms;
  });
  return { latencies: summarize(latencies), requestBytes: bytes / config.objects };
}

async function getPhase(client: Client, config: Config) {
  const latencies = new Float64Array(config.gets);
  const random = pseudoRandom(42);
  const names = Array.from({ length: config.gets }, () => objectName(Math.floor(random.next().value * config.objects)));
  let bytes = 0;
  await pool(config.gets, config.concurrency, async (i) => {
    const response = await client.expect(200, 'GET', `${collectionPath}/${names[i]}`);
    bytes += response.body.length;
    latencies[i] = response.ms;
  });
  return { latencies: summarize(latencies), responseBytes: bytes / config.gets };
}

/** Sequential full LISTs: each repetition's latency is the time until the last byte arrived. */
async function repeatedList(client: Client, config: Config, accept: string | undefined, check: (body: Buffer) => void) {
  const latencies: number[] = [];
  let bytes = 0;
  for (let i = 0; i < config.listRepetitions; i++) {
    const response = await client.expect(200, 'GET', collectionPath, accept ? { accept } : {});
    latencies.push(response.ms);
    bytes = response.body.length;
    // Checked outside the timed request so client-side parsing is not counted.
    if (i === 0) check(response.body);
  }
  return { latencies: summarize(latencies), bytes };
}

async function pagedWalks(client: Client, config: Config) {
  const walks: number[] = [];
  let pages = 0;
  for (let walk = 0; walk < config.pagedWalks; walk++) {
    const started = performance.now();
    const bodies: Buffer[] = [];
    let token: string | undefined;
    pages = 0;
    do {
      const query = `?limit=${config.pageSize}${token ? `&continue=${encodeURIComponent(token)}` : ''}`;
      const response = await client.expect(200, 'GET', `${collectionPath}${query}`);
      pages++;
      // The list metadata precedes the items (this server) or follows them (kube-apiserver's unstructured lists), so the
      // token is near one end; a regex over both spares parsing every page inside the timing.
      const ends = `${response.body.subarray(0, 2048).toString('utf8')}\n${response.body.subarray(-2048).toString('utf8')}`;
      token = /"continue":"([^"]+)"/.exec(ends)?.[1];
      if (walk === 0) bodies.push(response.body);
    } while (token);
    walks.push(performance.now() - started);
    if (walk === 0) {
      const items = bodies.reduce((sum, body) => sum + JSON.parse(body.toString('utf8')).items.length, 0);
      if (items !== config.objects) throw new Error(`paged LIST walk returned ${items} items, expected ${config.objects}`);
    }
  }
  return { walks: summarize(walks), pages };
}

/** `phase` names the marks of the sub-phases, for the RSS peaks and the CPU profile. */
async function listPhase(client: Client, config: Config, phase: (name: string) => string) {
  const plain = await marked(phase('lists: JSON'), () =>
    repeatedList(client, config, undefined, (body) => {
      const items = JSON.parse(body.toString('utf8')).items.length;
      if (items !== config.objects) throw new Error(`LIST returned ${items} items, expected ${config.objects}`);
    }),
  );
  const table = await marked(phase('lists: Table'), () =>
    repeatedList(client, config, tableAccept, (body) => {
      const parsed = JSON.parse(body.toString('utf8'));
      if (parsed.kind !== 'Table' || parsed.rows?.length !== config.objects) {
        throw new Error(`Table LIST returned kind ${parsed.kind} with ${parsed.rows?.length} rows, expected ${config.objects}`);
      }
    }),
  );
  const paged = await marked(phase('lists: paged'), () => pagedWalks(client, config));
  return { plain: plain.latencies, plainBytes: plain.bytes, table: table.latencies, tableBytes: table.bytes, walks: paged.walks, pages: paged.pages };
}

interface WatchResult {
  delays: Summary;
  /** Deliveries of the warm-up updates, reported apart. */
  warmupDelays: Summary;
  /** The later half of the measured updates alone: the fan-out once nothing is warming up any more. */
  laterHalf: Summary;
  /** Per update, the first and the last watcher's delay: the write path, and the write path plus the whole fan-out. */
  firstDelivery: Summary;
  lastDelivery: Summary;
  deliveries: number;
  expected: number;
  unexpectedEvents: number;
  patchLatencies: Summary;
  openSeconds: number;
  /** The server's full garbage collections from the first update to the last delivery. */
  gcDuringUpdates: GcTotals | undefined;
  /** The load generator's own collections meanwhile. */
  clientGcDuringUpdates: GcTotals & { allPauseSeconds: number };
  /** The connections the watchers used: one each over HTTP/1.1, as many as the server's stream limit needs over HTTP/2. */
  connections: number;
  updateSpanSeconds: number;
  drainMs: number;
}

/** The server's garbage collections so far, from its /metrics (undefined when it does not say). */
async function readGc(client: Client): Promise<GcTotals | undefined> {
  return gcTotals((await client.expect(200, 'GET', '/metrics')).body.toString('utf8'));
}

async function watchPhase(client: Client, config: Config, phase: (name: string) => string, traceTo: string | undefined): Promise<WatchResult> {
  const { watchers, warmupUpdates } = config;
  // Sequence numbers below warmupUpdates are the warm-up; every figure but warmupDelays is over the rest.
  const updates = warmupUpdates + config.updates;
  const rv = JSON.parse((await client.expect(200, 'GET', `${collectionPath}?limit=1`)).body.toString('utf8')).metadata.resourceVersion as string;

  const sentAt = new Float64Array(updates).fill(NaN);
  const delays = new Float64Array(watchers * updates);
  const seen = new Uint8Array(watchers * updates);
  let deliveries = 0;
  let unexpectedEvents = 0;

  const watches = await watchTransport(client, config.watchProtocol);

  /** The events of watcher w as its stream delivers them. */
  const receiver = (w: number) =>
    benchSequenceReader((seq, arrived) => {
      const index = seq === undefined ? -1 : w * updates + seq;
      if (index < 0 || seen[index]) {
        unexpectedEvents++;
        return;
      }
      seen[index] = 1;
      delays[index] = arrived - sentAt[seq!];
      deliveries++;
    });
  const openOne = (w: number) => watches.open(`${collectionPath}?watch=true&resourceVersion=${rv}`, receiver(w));

  const openStarted = performance.now();
  await marked(phase('watch: open'), () => pool(watchers, 50, openOne));
  const openSeconds = (performance.now() - openStarted) / 1000;
  const gcBefore = await readGc(client);
  // Lets the last handshakes' follow-up work settle on the server before the clock starts.
  await new Promise((r) => setTimeout(r, 500));

  const patchLatencies = new Float64Array(updates).fill(Number.NaN);
  const patches: Promise<void>[] = [];
  let patchFailure: unknown;
  const updatesStartUs = monotonicUs();
  const ownGc = observeOwnGc();
  const started = performance.now();
  for (let seq = 0; seq < updates; seq++) {
    const due = started + seq * config.updateIntervalMs;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    // Spread over distinct objects so every patch is a real change.
    const name = objectName((seq * 37) % config.objects);
    // Metadata only: CAPO's validation forbids changing an OpenStackCluster's spec.
    const body = JSON.stringify({ metadata: { labels: { benchseq: String(seq) }, annotations: { 'bench.capo.dev/sent': new Date().toISOString() } } });
    sentAt[seq] = performance.now();
    patches.push(
      client.expect(200, 'PATCH', `${collectionPath}/${name}`, { body, contentType: 'application/merge-patch+json' }).then(
        (r) => {
          patchLatencies[seq] = r.ms;
        },
        (error: unknown) => {
          patchFailure ??= error;
        },
      ),
    );
  }
  const updateSpanSeconds = (performance.now() - started) / 1000;
  await Promise.all(patches);

  const expected = watchers * updates;
  const lastSent = performance.now();
  const deadline = lastSent + 30_000;
  while (deliveries < expected && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const drainMs = performance.now() - lastSent;
  const clientGcDuringUpdates = ownGc.stop();
  const gcDuringUpdates = gcBetween(gcBefore, await readGc(client));
  phaseMarks.push({ name: phase('watch: updates'), startUs: updatesStartUs, endUs: monotonicUs() });

  const connections = watches.close();
  if (patchFailure) throw patchFailure;

  const delivered: number[] = [];
  const warmupDelivered: number[] = [];
  const first = new Float64Array(updates).fill(Infinity);
  const last = new Float64Array(updates).fill(-Infinity);
  const laterHalfFrom = warmupUpdates + Math.ceil(config.updates / 2);
  const laterHalfDelivered: number[] = [];
  for (let i = 0; i < seen.length; i++) {
    if (!seen[i]) continue;
    const seq = i % updates;
    first[seq] = Math.min(first[seq]!, delays[i]!);
    last[seq] = Math.max(last[seq]!, delays[i]!);
    if (seq < warmupUpdates) {
      warmupDelivered.push(delays[i]);
      continue;
    }
    delivered.push(delays[i]);
    if (seq >= laterHalfFrom) laterHalfDelivered.push(delays[i]);
  }
  if (traceTo) {
    const header = '# update  sent (ms since the epoch)  PATCH ms  first delivery ms  last delivery ms';
    const lines = Array.from(sentAt, (sent, seq) =>
      [seq, (performance.timeOrigin + sent).toFixed(1), patchLatencies[seq]!.toFixed(1), first[seq]!.toFixed(1), last[seq]!.toFixed(1)].join('  '),
    );
    writeFileSync(traceTo, `${[header, ...lines].join('\n')}\n`);
  }
  return {
    delays: summarize(delivered),
    warmupDelays: summarize(warmupDelivered),
    laterHalf: summarize(laterHalfDelivered),
    firstDelivery: summarize(first.subarray(warmupUpdates).filter(Number.isFinite)),
    lastDelivery: summarize(last.subarray(warmupUpdates).filter(Number.isFinite)),
    deliveries,
    expected,
    unexpectedEvents,
    patchLatencies: summarize(patchLatencies.subarray(warmupUpdates).filter(Number.isFinite)),
    openSeconds,
    gcDuringUpdates,
    clientGcDuringUpdates,
    connections,
    updateSpanSeconds,
    drainMs,
  };
}

interface WatchTransport {
  /** Opens a watch; resolves once the server answered 200, then hands every chunk to `onChunk`. */
  open(urlPath: string, onChunk: (chunk: string) => void): Promise<void>;
  /** Ends every watch; answers how many connections they used. */
  close(): number;
}

/**
 * The watchers' connections. Over HTTP/2 they are streams, as many to a connection as the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS allows and a new connection past it, with client-go's flow-control
 * windows (4 MiB a stream, 1 GiB a connection): how one process's informers reach an API server.
 * Over HTTP/1.1 each watch holds a TLS connection of its own.
 */
async function watchTransport(client: Client, protocol: WatchProtocol): Promise<WatchTransport> {
  if (protocol === 'http1') {
    const agent = new https.Agent({ keepAlive: false, maxSockets: Infinity, ...client.credentials });
    let opened = 0;
    return {
      async open(urlPath, onChunk) {
        opened++;
        await client.stream(urlPath, agent, onChunk);
      },
      close() {
        agent.destroy();
        return opened;
      },
    };
  }
  const connections = await Http2Connections.connect(new URL(`https://${client.host}:${client.port}`), client.credentials);
  return {
    open: (urlPath, onChunk) => connections.stream(urlPath, onChunk),
    close: () => connections.close(),
  };
}

// ---- machine ---------------------------------------------------------------

/** The filesystem holding `dir`: the longest mount point that prefixes it. */
function filesystemOf(dir: string): string {
  try {
    let best = { point: '', text: 'unknown' };
    for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
      const [device, point, type] = line.split(' ');
      if (!point) continue;
      if ((dir === point || dir.startsWith(point.endsWith('/') ? point : `${point}/`)) && point.length >= best.point.length) {
        best = { point, text: `${type} on ${device} (mounted at ${point})` };
      }
    }
    return best.text;
  } catch {
    return 'unknown';
  }
}

/** What one commit's fsync costs on the disk under the data directory: the floor of a durable write. */
function probeFdatasync(parent: string): Summary {
  const dir = mkdtempSync(path.join(parent, 'capo-fsync-'));
  const fd = openSync(path.join(dir, 'probe'), 'w');
  const page = Buffer.alloc(4096, 7);
  const samples: number[] = [];
  try {
    for (let i = 0; i < 200; i++) {
      const started = performance.now();
      writeSync(fd, page, 0, page.length, i * page.length);
      fdatasyncSync(fd);
      samples.push(performance.now() - started);
    }
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  return summarize(samples);
}

/**
 * What the kernel takes to hand a process a fresh page of memory, in microseconds: the cost of every
 * page a server's heap or a response buffer newly touches. On bare metal it is a fraction of a
 * microsecond; some VMs take fifty times that, which shows in every phase that grows memory (the
 * LISTs above all), so the report carries it beside the disk's.
 */
function probePageFaultUs(): number {
  const pageBytes = 4096;
  const bytes = 64 * 1024 * 1024;
  // An ArrayBuffer this large is mapped on demand: the first write to each page faults it in.
  const memory = new Uint8Array(new ArrayBuffer(bytes));
  const faultsBefore = process.resourceUsage().minorPageFault;
  const started = performance.now();
  for (let offset = 0; offset < bytes; offset += pageBytes) memory[offset] = 1;
  const elapsedUs = (performance.now() - started) * 1000;
  const faults = process.resourceUsage().minorPageFault - faultsBefore;
  return elapsedUs / Math.max(faults, 1);
}

interface Figures {
  create: { value: Awaited<ReturnType<typeof createPhase>>; cost: PhaseCost };
  get: { value: Awaited<ReturnType<typeof getPhase>>; cost: PhaseCost };
  list: { value: Awaited<ReturnType<typeof listPhase>>; cost: PhaseCost };
  watch: { value: WatchResult; cost: PhaseCost };
  /** etcd's own WAL fsyncs and backend commits during the watch phase, for a server on etcd. */
  etcdDuringWatch?: Record<'walFsync' | 'backendCommit', BucketQuantile>;
  rssKb: { start: number; afterCreate: number; afterGet: number; afterList: number; afterWatch: number; hwm: number };
  peakMb: (phase: string) => string;
}

/** The four phases against one server. */
async function runLoad(target: Target, config: Config, log: (text: string) => void): Promise<Figures> {
  const { client, pid } = target;
  const prefix = (phase: string) => `${target.name}: ${phase}`;
  const baseline = sampleProcess(pid);
  const rss = startRssSampler(pid);
  log(`\n[${target.name}] [1/4] creating ${config.objects} OpenStackClusters...`);
  const create = await measured(pid, prefix('creates'), () => createPhase(client, config));
  const afterCreate = sampleProcess(pid);
  log(`      ${(config.objects / create.cost.wallSeconds).toFixed(0)} creates/s`);

  log(`[${target.name}] [2/4] ${config.gets} gets...`);
  const get = await measured(pid, prefix('gets'), () => getPhase(client, config));
  const afterGet = sampleProcess(pid);
  log(`      ${(config.gets / get.cost.wallSeconds).toFixed(0)} gets/s`);

  log(`[${target.name}] [3/4] LIST x${config.listRepetitions} (JSON), x${config.listRepetitions} (Table), ${config.pagedWalks} paged walks...`);
  const list = await measured(pid, prefix('lists'), () => listPhase(client, config, prefix));
  const afterList = sampleProcess(pid);
  log(`      LIST p50 ${ms(list.value.plain.p50)} ms, p99 ${ms(list.value.plain.p99)} ms`);

  log(`[${target.name}] [4/4] ${config.watchers} watchers, ${config.updates} updates...`);
  const etcdBefore = target.etcdUrl === undefined ? undefined : await readEtcdHistograms(target.etcdUrl);
  const traceTo = config.traceUpdatesDir && path.join(config.traceUpdatesDir, `${target.name.replace(/[^\w.-]+/g, '-')}.txt`);
  if (config.traceUpdatesDir) mkdirSync(config.traceUpdatesDir, { recursive: true });
  const watch = await measured(pid, prefix('watch'), () => watchPhase(client, config, prefix, traceTo));
  const etcdAfter = target.etcdUrl === undefined ? undefined : await readEtcdHistograms(target.etcdUrl);
  // Give the server a moment to notice the closed watches before reading its memory.
  await new Promise((r) => setTimeout(r, 500));
  const afterWatch = sampleProcess(pid);
  rss.stop();
  log(`      watch p99 ${ms(watch.value.delays.p99)} ms, ${watch.value.deliveries}/${watch.value.expected} deliveries`);
  return {
    create,
    get,
    list,
    watch,
    ...(etcdBefore &&
      etcdAfter && {
        etcdDuringWatch: { walFsync: p99Between(etcdBefore, etcdAfter, 'walFsync'), backendCommit: p99Between(etcdBefore, etcdAfter, 'backendCommit') },
      }),
    rssKb: {
      start: baseline.rssKb,
      afterCreate: afterCreate.rssKb,
      afterGet: afterGet.rssKb,
      afterList: afterList.rssKb,
      afterWatch: afterWatch.rssKb,
      hwm: afterWatch.hwmKb,
    },
    peakMb: (phase) => mb(rss.peakKb(phaseMarks.find((m) => m.name === prefix(phase))!)),
  };
}

const serverOptions = (config: Config): OurServerOptions => ({
  nodeFlags: config.nodeFlags,
  cpuProfDir: config.cpuProfDir,
  watchCache: config.watchCache,
  reconciler: config.reconciler,
});

// ---- report ----------------------------------------------------------------

function costLine(name: string, cost: PhaseCost): string[] {
  const share = (seconds: number) => `${seconds.toFixed(1)} (${((100 * seconds) / cost.wallSeconds).toFixed(0)}%)`;
  return [
    name,
    cost.wallSeconds.toFixed(1),
    share(cost.serverCpuSeconds),
    share(cost.clientCpuSeconds),
    share(cost.otherCpuSeconds),
    cost.stealSeconds.toFixed(1),
  ];
}

/** A figure per server, and whether it meets its target (higher or lower is better) and beats kube-apiserver's. */
interface Row {
  figure: string;
  cells: (f: Figures) => string;
  /** The number compared: against the target, and with kube-apiserver's. */
  value?: (f: Figures) => number;
  better?: 'higher' | 'lower';
  target?: { text: string; value: number };
}

function rows(config: Config): Row[] {
  const rate = (count: number, seconds: number) => count / seconds;
  return [
    {
      figure: `durable creates/s (${config.objects} POSTs, ${config.concurrency} in flight)`,
      cells: (f) => `${rate(config.objects, f.create.cost.wallSeconds).toFixed(0)}/s`,
      value: (f) => rate(config.objects, f.create.cost.wallSeconds),
      better: 'higher',
      target: { text: '>= 800/s', value: 800 },
    },
    { figure: '  create latency p50 / p99', cells: (f) => `${ms(f.create.value.latencies.p50)} / ${ms(f.create.value.latencies.p99)} ms` },
    {
      figure: `gets/s (${config.gets} GETs by name, ${config.concurrency} in flight)`,
      cells: (f) => `${rate(config.gets, f.get.cost.wallSeconds).toFixed(0)}/s`,
      value: (f) => rate(config.gets, f.get.cost.wallSeconds),
      better: 'higher',
      target: { text: '>= 4,000/s', value: 4000 },
    },
    { figure: '  get latency p50 / p99', cells: (f) => `${ms(f.get.value.latencies.p50)} / ${ms(f.get.value.latencies.p99)} ms` },
    {
      figure: '  object size a GET returns',
      cells: (f) => `${f.get.value.responseBytes.toFixed(0)} B`,
      value: (f) => f.get.value.responseBytes,
      better: 'lower',
    },
    {
      figure: `LIST ${config.objects} JSON p50 / p99 (n=${config.listRepetitions})`,
      cells: (f) => `${ms(f.list.value.plain.p50)} / ${ms(f.list.value.plain.p99)} ms`,
      value: (f) => f.list.value.plain.p99,
      better: 'lower',
      target: { text: 'p99 <= 400 ms', value: 400 },
    },
    { figure: '  LIST response size', cells: (f) => `${(f.list.value.plainBytes / 2 ** 20).toFixed(1)} MiB` },
    {
      figure: `LIST ${config.objects} as Table p50 / p99`,
      cells: (f) => `${ms(f.list.value.table.p50)} / ${ms(f.list.value.table.p99)} ms`,
      value: (f) => f.list.value.table.p99,
      better: 'lower',
    },
    {
      figure: `paged LIST walk, limit=${config.pageSize}, p50 / max`,
      cells: (f) => `${ms(f.list.value.walks.p50)} / ${ms(f.list.value.walks.max)} ms`,
      value: (f) => f.list.value.walks.p50,
      better: 'lower',
    },
    {
      figure: `watch delivery p50 / p99 / max (${config.watchers} watchers)`,
      cells: (f) => `${ms(f.watch.value.delays.p50)} / ${ms(f.watch.value.delays.p99)} / ${ms(f.watch.value.delays.max)} ms`,
      value: (f) => f.watch.value.delays.p99,
      better: 'lower',
      target: { text: 'p99 <= 50 ms', value: 50 },
    },
    {
      figure: `  first ${config.warmupUpdates} updates (warm-up, left out above) p50 / p99`,
      cells: (f) => `${ms(f.watch.value.warmupDelays.p50)} / ${ms(f.watch.value.warmupDelays.p99)} ms`,
    },
    {
      figure: `  the later ${Math.floor(config.updates / 2)} updates alone p50 / p99`,
      cells: (f) => `${ms(f.watch.value.laterHalf.p50)} / ${ms(f.watch.value.laterHalf.p99)} ms`,
    },
    { figure: '  connections the watches used', cells: (f) => `${f.watch.value.connections} (${config.watchProtocol === 'http2' ? 'HTTP/2' : 'HTTP/1.1'})` },
    {
      figure: '  deliveries',
      cells: (f) =>
        `${f.watch.value.deliveries} of ${f.watch.value.expected}${f.watch.value.unexpectedEvents ? `, ${f.watch.value.unexpectedEvents} unexpected` : ''}`,
    },
    { figure: '  per update: last watcher p50 / p99', cells: (f) => `${ms(f.watch.value.lastDelivery.p50)} / ${ms(f.watch.value.lastDelivery.p99)} ms` },
    {
      figure: '  PATCH latency p50 / p99 (while fanning out)',
      cells: (f) => `${ms(f.watch.value.patchLatencies.p50)} / ${ms(f.watch.value.patchLatencies.p99)} ms`,
    },
    {
      figure: '  full GCs of the server among the updates (their pauses)',
      cells: ({ watch: { value: w } }) => (w.gcDuringUpdates ? `${w.gcDuringUpdates.full} (${ms(w.gcDuringUpdates.pauseSeconds * 1000)} ms)` : 'not reported'),
    },
    {
      figure: "  the load generator's own full GCs meanwhile (their pauses; all its GC pauses)",
      cells: ({ watch: { value: w } }) =>
        `${w.clientGcDuringUpdates.full} (${ms(w.clientGcDuringUpdates.pauseSeconds * 1000)} ms; ${ms(w.clientGcDuringUpdates.allPauseSeconds * 1000)} ms)`,
    },
    {
      figure: "  etcd's WAL fsync / backend commit p99 meanwhile",
      cells: ({ etcdDuringWatch: etcd }) =>
        etcd ? `<= ${etcd.walFsync.p99AtMostMs} / <= ${etcd.backendCommit.p99AtMostMs} ms (${etcd.walFsync.count} fsyncs)` : 'no etcd',
    },
    {
      figure: `RSS after ${config.objects} creates`,
      cells: (f) => `${mb(f.rssKb.afterCreate)} MB`,
      value: (f) => f.rssKb.afterCreate / 1024,
      better: 'lower',
      target: { text: '<= 250 MB', value: 250 },
    },
    {
      figure: '  RSS at start / after gets / LISTs / watch',
      cells: (f) => `${mb(f.rssKb.start)} / ${mb(f.rssKb.afterGet)} / ${mb(f.rssKb.afterList)} / ${mb(f.rssKb.afterWatch)} MB`,
    },
    { figure: '  peak RSS during JSON LISTs / watch; of the run', cells: (f) => `${f.peakMb('lists: JSON')} / ${f.peakMb('watch')}; ${mb(f.rssKb.hwm)} MB` },
    {
      figure: 'server CPU s: creates / gets / LISTs / watch',
      cells: (f) => [f.create, f.get, f.list, f.watch].map((phase) => phase.cost.serverCpuSeconds.toFixed(1)).join(' / '),
      value: (f) => [f.create, f.get, f.list, f.watch].reduce((sum, phase) => sum + phase.cost.serverCpuSeconds, 0),
      better: 'lower',
    },
  ];
}

function report(config: Config, results: { target: Target; figures: Figures }[], log: (text: string) => void): void {
  // The targets are stated for the full-size run; a smaller run only checks the harness.
  const fullSize = config.objects === 10_000 && config.watchers === 500 && config.updates === 200;
  const kube = results.find((result) => result.target.name === 'kube-apiserver');
  const ours = results.filter((result) => result !== kube);
  const judged = ours.at(-1)!;
  const verdict = (row: Row): string => {
    if (!row.value || !row.better) return '';
    const mine = row.value(judged.figures);
    const beats = (theirs: number) => (row.better === 'higher' ? mine > theirs : mine < theirs);
    const parts: string[] = [];
    if (row.target) parts.push(!fullSize ? 'n/a (not full size)' : beats(row.target.value) || mine === row.target.value ? 'target met' : 'target MISSED');
    if (kube) parts.push(beats(row.value(kube.figures)) ? 'ahead of kube' : 'BEHIND kube');
    return parts.join(', ');
  };
  log('\nResults');
  log(
    table([
      ['figure', ...results.map((result) => result.target.name), 'target', `${judged.target.name}: verdict`],
      ...rows(config).map((row) => [row.figure, ...results.map((result) => row.cells(result.figures)), row.target?.text ?? '', verdict(row)]),
    ]),
  );
  for (const { target, figures } of results) {
    log(`\nWhere the time went on ${target.name} (CPU seconds, % of one core)`);
    log(
      table([
        ['phase', 'wall s', 'server CPU s', 'client CPU s', 'other processes CPU s', 'steal s'],
        costLine('creates', figures.create.cost),
        costLine('gets', figures.get.cost),
        costLine('LISTs', figures.list.cost),
        costLine('watch (open + updates + drain)', figures.watch.cost),
      ]),
    );
    const w = figures.watch.value;
    log(
      `notes: ${figures.create.value.requestBytes.toFixed(0)} B per create, ${figures.get.value.responseBytes.toFixed(0)} B per GET response; ` +
        `${config.watchers} watches opened in ${w.openSeconds.toFixed(1)} s; ${config.warmupUpdates} warm-up and ${config.updates} measured updates sent over ${w.updateSpanSeconds.toFixed(1)} s, ` +
        `all delivered ${ms(w.drainMs)} ms after the last PATCH was answered.`,
    );
    const costs = [figures.create.cost, figures.get.cost, figures.list.cost, figures.watch.cost];
    if (costs.some((cost) => cost.otherCpuSeconds / cost.wallSeconds > 0.1 || cost.stealSeconds / cost.wallSeconds > 0.1)) {
      log(`warning: other processes (or the hypervisor) took more than 10% of a core during a phase on ${target.name}; those figures are disturbed`);
    }
  }
  log(
    `\npercentiles are nearest-rank, so with ${config.listRepetitions} samples p99 is the maximum; etcd's own CPU and memory are counted for neither server.`,
  );
}

async function main(): Promise<void> {
  const config = parseConfig();
  const dataParent = os.tmpdir();
  const cpus = os.cpus();
  const log = (text: string) => process.stdout.write(`${text}\n`);

  log('capo-apiserver API server benchmark (bench/apiserver)');
  log(
    `machine: ${cpus.length} cores (${cpus[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()}, node ${process.version}`,
  );
  log(`code: git ${sourceRevision()}`);
  const fsync = probeFdatasync(dataParent);
  log(`disk: ${dataParent} is ${filesystemOf(dataParent)}; 4 KiB write+fdatasync p50 ${ms(fsync.p50)} ms, p99 ${ms(fsync.p99)} ms`);
  log(`memory: a fresh 4 KiB page costs ${probePageFaultUs().toFixed(2)} us to fault in`);
  log(
    `load: ${config.objects} OpenStackClusters (v1beta2), ${config.gets} gets, ${config.concurrency} in flight; LIST x${config.listRepetitions}; ` +
      `${config.watchers} watchers x ${config.updates} updates every ${config.updateIntervalMs} ms, after ${config.warmupUpdates} warm-up updates`,
  );
  if (config.cpuProfDir) mkdirSync(config.cpuProfDir, { recursive: true });

  if (config.besideKube) {
    const unavailable = controlPlaneUnavailable() ?? (existsSync(capoCrds) ? undefined : `no CAPO CRDs at ${capoCrds}`);
    if (unavailable) throw new Error(`--beside-kube: ${unavailable}`);
  }
  const plane = config.besideKube ? await startControlPlane() : undefined;
  if (plane) log(`control plane: kube-apiserver at ${plane.url}, etcd at ${plane.etcdServers.join(', ')} (../shared/k8s)`);
  const starts: { name: string; start: () => Promise<Target> }[] = plane
    ? [
        { name: 'ours on SQLite', start: () => ourServer(serverOptions(config), 'ours on SQLite', undefined, log) },
        { name: 'ours on etcd', start: () => ourServer(serverOptions(config), 'ours on etcd', plane.etcdServers.join(','), log) },
        { name: 'kube-apiserver', start: () => kubeApiServer(plane, [namespace], log) },
      ]
    : [{ name: 'capo-apiserver', start: () => ourServer(serverOptions(config), 'capo-apiserver', config.etcdServers, log) }];
  const results: { target: Target; figures: Figures }[] = [];
  try {
    for (const { start } of starts) {
      const target = await start();
      try {
        log(`durability (${target.name}): ${target.durability}`);
        results.push({ target, figures: await runLoad(target, config, log) });
      } finally {
        await target.stop();
      }
    }
    report(config, results, log);
    const short = results.filter(({ figures }) => figures.watch.value.deliveries !== figures.watch.value.expected || figures.watch.value.unexpectedEvents > 0);
    for (const { target, figures } of short) {
      process.exitCode = 1;
      log(
        `error: ${target.name}: expected ${figures.watch.value.expected} watch deliveries, got ${figures.watch.value.deliveries} (${figures.watch.value.unexpectedEvents} unexpected events)`,
      );
    }
  } finally {
    await plane?.stop();
    if (config.cpuProfDir) {
      writeFileSync(path.join(config.cpuProfDir, 'phases.json'), `${JSON.stringify(phaseMarks, null, 2)}\n`);
      log(`\nserver CPU profile and phases.json written to ${config.cpuProfDir}; summarize with: node dist/bench/apiserver/profile.js ${config.cpuProfDir}`);
      log('(figures from a profiled run are inflated by the profiler; quote figures from unprofiled runs)');
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
