/**
 * Chaos on etcd, in the aggregated mode: three `npm start` replicas storing on a three-member etcd,
 * registered behind a real kube-apiserver (one EndpointSlice each, its readiness what a kubelet's
 * probe would report), their reconciler elected by a Lease there, building and deleting clusters on
 * the simulated cloud (in this process, faults on). Meanwhile, at seeded moments, one disruption at a
 * time: kill -9 of the leader or of a follower (restarted as a supervisor would), kill -9 of an etcd
 * member (quorum kept), SIGSTOP of the leader past its lease, a replica cut off from etcd, an etcd
 * member cut off from its peers (./partition.ts), kube-apiserver killed and started again.
 *
 * A writer creates and patches objects of ours through kube-apiserver and records what each answer
 * acknowledged. The report: acknowledged writes lost, names held twice in the cloud, resources left
 * after the final delete, the longest time no replica led, API latency, RSS per replica. Shared by
 * bench/chaos/run.ts (the soak) and its short form in test/reconcile/flows/chaos.test.ts.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { startSimulator } from '../src/simulator/host.js';
import { seededRandom } from '../src/simulator/seeded-random.js';
import { servedGroupVersions } from './aggregated-server.js';
import { CloudCensus, type Duplicate } from './census.js';
import { clusterObjects, loadExamples } from './cluster-manifests.js';
import { waitForDeletion, type Kubectl } from './cluster-flow.js';
import { controlPlaneUnavailable, freePortRun, registerAggregatedServer, startControlPlane, type ControlPlane } from './control-plane.js';
import { etcdUnavailable, startEtcd } from './etcd.js';
import { Partitions, partitionsUnavailable } from './partition.js';
import { pollUntil } from './poll.js';
import { allowMirrorOf, startServerProcess, type ServerProcess } from './server-process.js';

export const disruptionKinds = [
  'kill-leader',
  'kill-follower',
  'kill-etcd-member',
  'stop-leader',
  'partition-replica-from-etcd',
  'partition-etcd-member',
  'restart-kube-apiserver',
] as const;
export type DisruptionKind = (typeof disruptionKinds)[number];

export interface ChaosOptions {
  minutes: number;
  seed: number;
  /** Seconds between the end of one disruption and the start of the next, drawn in [min, max]. */
  disruptionGapSeconds: [number, number];
  /** Clusters applied in turn, one every `clusterEverySeconds`, the oldest deleted beyond `clustersAlive`. */
  clusters: number;
  clustersAlive: number;
  clusterEverySeconds: number;
  log?: (line: string) => void;
}

export interface ReplicaFigures {
  replica: number;
  incarnations: number;
  peakRssMb: number;
  lastRssMb: number;
}

export interface ChaosReport {
  seed: number;
  minutes: number;
  disruptions: Record<DisruptionKind, number>;
  acknowledgedWrites: number;
  objectsVerified: number;
  /** One line per acknowledged write not found at the end (nor superseded by a later write). */
  lost: string[];
  /** Names one owner held twice, seen by a census every 30 s and at the peak. */
  duplicates: Duplicate[];
  /** Resources of ours left after deleting every cluster, and the cloud's inventory against its baseline. */
  leaked: number;
  inventoryChange: Record<string, number>;
  longestLeaderlessMs: number;
  leaderChanges: number;
  requests: number;
  requestsWithoutAnswer: number;
  statuses: Record<string, number>;
  latencyMs: { p50: number; p99: number; max: number };
  clustersApplied: number;
  clustersDeleted: number;
  finalDeletionSeconds: number;
  replicas: ReplicaFigures[];
}

/** Why the chaos cannot run here, or undefined when it can. */
export async function chaosUnavailable(): Promise<string | undefined> {
  return etcdUnavailable() ?? controlPlaneUnavailable() ?? (await partitionsUnavailable());
}

const leaseSeconds = 8;
const leaseFlags = ['--leader-elect-lease-duration', `${leaseSeconds}s`, '--leader-elect-renew-deadline', '6s', '--leader-elect-retry-period', '2s'];
const leadingMessage = 'leading: this replica runs the reconciler';
const lostMessage = 'lost the leader lease: the reconciler pauses until this replica leads again';
const serviceNamespace = 'capo-system';
const serviceName = 'capo-apiserver';
const writesNamespace = 'chaos-writes';
const templates = `/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/${writesNamespace}/openstackmachinetemplates`;
const valueAnnotation = 'chaos.capo-apiserver.io/value';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One replica's place: its port and data directory outlive its incarnations. */
class Replica {
  process: ServerProcess | undefined;
  stopped = false;
  incarnations = 0;
  peakRssKb = 0;
  lastRssKb = 0;
  /** Leadership as seen from outside: the log's leading and lost lines, and the kills and stops of the harness. */
  readonly leadership: { at: number; leading: boolean }[] = [];
  private readonly outputs: string[] = [];

  constructor(
    readonly index: number,
    readonly port: number,
    readonly dataDir: string,
  ) {}

  /** Whether it leads now: alive, running, and its latest word on the lease was that it leads. */
  leads(): boolean {
    if (!this.process || this.stopped) return false;
    const events = leadershipLines(this.process.output());
    return events.at(-1)?.leading === true;
  }

  retire(at: number): void {
    if (this.process) this.outputs.push(this.process.output());
    this.leadership.push({ at, leading: false });
  }

  /** Every leadership change, from all incarnations' logs and the harness's own kills and stops, in time order. */
  timeline(): { at: number; leading: boolean }[] {
    const logged = [...this.outputs, this.process?.output() ?? ''].flatMap(leadershipLines);
    return [...logged, ...this.leadership].sort((a, b) => a.at - b.at);
  }

  sampleRss(): void {
    if (!this.process) return;
    try {
      const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${this.process.pid}/status`, 'utf8'))?.[1] ?? 0);
      this.lastRssKb = kb;
      this.peakRssKb = Math.max(this.peakRssKb, kb);
    } catch {
      // Between a kill and its restart.
    }
  }
}

function leadershipLines(output: string): { at: number; leading: boolean }[] {
  const events: { at: number; leading: boolean }[] = [];
  for (const line of output.split('\n')) {
    if (!line.includes(leadingMessage) && !line.includes(lostMessage)) continue;
    try {
      const entry = JSON.parse(line) as { time: string; msg: string };
      events.push({ at: Date.parse(entry.time), leading: entry.msg === leadingMessage });
    } catch {
      // A line cut short by a kill.
    }
  }
  return events;
}

/** The longest stretch, after the first leader, with no replica leading; and how many times leadership started. */
function leaderless(replicas: Replica[], until: number): { longestMs: number; changes: number } {
  const events = replicas.flatMap((replica) => replica.timeline().map((event) => ({ ...event, replica: replica.index }))).sort((a, b) => a.at - b.at);
  const leading = new Set<number>();
  let since: number | undefined;
  let longestMs = 0;
  let changes = 0;
  let started = false;
  for (const event of events) {
    if (event.leading) {
      if (leading.size === 0 && since !== undefined) longestMs = Math.max(longestMs, event.at - since);
      if (!leading.has(event.replica)) changes++;
      leading.add(event.replica);
      started = true;
    } else {
      leading.delete(event.replica);
      if (leading.size === 0 && started) since ??= event.at;
    }
    if (leading.size > 0) since = undefined;
  }
  if (since !== undefined) longestMs = Math.max(longestMs, until - since);
  return { longestMs, changes };
}

/**
 * Per object: the value and resourceVersion of its last acknowledged write, and the values of writes
 * whose answer was lost (which may still land, even after a later acknowledged write).
 */
interface LedgerEntry {
  acked: { value: string; resourceVersion: string } | undefined;
  uncertain: Set<string>;
}

/** Requests to kube-apiserver as its admin, with their latency and status counted. */
class ApiClient {
  readonly latenciesMs: number[] = [];
  readonly statuses: Record<string, number> = {};
  requests = 0;
  withoutAnswer = 0;
  private readonly agent: https.Agent;

  constructor(private readonly plane: ControlPlane) {
    this.agent = new https.Agent({ keepAlive: true, maxSockets: 4, ca: readFileSync(plane.caCert), cert: plane.admin.cert, key: plane.admin.key });
  }

  /** The answer, or undefined when none came (connection refused or cut, or 30 s without one). */
  request(method: string, urlPath: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: string } | undefined> {
    this.requests++;
    const started = performance.now();
    return new Promise((resolve) => {
      const request = https.request(
        new URL(urlPath, this.plane.url),
        { method, agent: this.agent, headers: body === undefined ? {} : { 'content-type': contentType }, timeout: 30_000 },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk) => (text += chunk));
          response.on('end', () => {
            this.latenciesMs.push(performance.now() - started);
            const status = response.statusCode ?? 0;
            this.statuses[status] = (this.statuses[status] ?? 0) + 1;
            resolve({ status, body: text });
          });
          response.on('error', () => this.unanswered(resolve));
        },
      );
      request.on('timeout', () => request.destroy(new Error('no answer in 30 s')));
      request.on('error', () => this.unanswered(resolve));
      request.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  close(): void {
    this.agent.destroy();
  }

  private unanswered(resolve: (value: undefined) => void): void {
    this.withoutAnswer++;
    resolve(undefined);
  }
}

/** Creates and patches OpenStackMachineTemplates through kube-apiserver, recording what was acknowledged. */
class Writer {
  readonly ledger = new Map<string, LedgerEntry>();
  acknowledged = 0;
  private next = 0;

  constructor(
    private readonly api: ApiClient,
    private readonly random: () => number,
  ) {}

  async run(until: () => boolean): Promise<void> {
    while (!until()) {
      await sleep(100);
      const names = [...this.ledger.keys()].filter((name) => this.ledger.get(name)?.acked !== undefined);
      const value = `v-${this.next++}`;
      if (names.length === 0 || this.random() < 0.3) await this.create(`w-${this.next}`, value);
      else if (this.random() < 0.7) await this.patch(names[Math.floor(this.random() * names.length)]!, value);
      else await this.api.request('GET', `${templates}/${names[Math.floor(this.random() * names.length)]!}`);
    }
  }

  /** Every object read back: its value is the last acknowledged one (at that resourceVersion or later) or one whose answer was lost, landed later. */
  async verify(): Promise<{ verified: number; lost: string[] }> {
    const lost: string[] = [];
    let verified = 0;
    for (const [name, entry] of this.ledger) {
      let answer = await this.api.request('GET', `${templates}/${name}`);
      for (let attempt = 0; attempt < 20 && (answer === undefined || answer.status >= 500); attempt++) {
        await sleep(500);
        answer = await this.api.request('GET', `${templates}/${name}`);
      }
      if (answer === undefined || (answer.status !== 200 && answer.status !== 404)) {
        lost.push(`${name}: could not be read (${answer?.status ?? 'no answer'})`);
        continue;
      }
      const object =
        answer.status === 200 ? (JSON.parse(answer.body) as { metadata: { resourceVersion: string; annotations?: Record<string, string> } }) : undefined;
      const value = object?.metadata.annotations?.[valueAnnotation];
      const acked = entry.acked;
      const resourceVersion = BigInt(object?.metadata.resourceVersion ?? 0);
      const ackedVersion = BigInt(acked?.resourceVersion ?? 0);
      // The acknowledged value at its version or later; or a write without answer that landed after it; or, never acknowledged, nothing.
      const current = acked !== undefined && value === acked.value && resourceVersion >= ackedVersion;
      const landedLater = value !== undefined && entry.uncertain.has(value) && resourceVersion > ackedVersion;
      if (current || landedLater || (acked === undefined && value === undefined)) verified++;
      else lost.push(`${name}: acknowledged ${acked?.value ?? 'nothing'} at ${acked?.resourceVersion ?? '-'}, found ${value ?? 'no object'}`);
    }
    return { verified, lost };
  }

  private async create(name: string, value: string): Promise<void> {
    const body = {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackMachineTemplate',
      metadata: { name, namespace: writesNamespace, annotations: { [valueAnnotation]: value } },
      spec: { template: { spec: { flavor: 'm1.small', image: { filter: { name: 'ubuntu-22.04' } } } } },
    };
    this.record(name, value, await this.api.request('POST', templates, body));
  }

  private async patch(name: string, value: string): Promise<void> {
    const body = { metadata: { annotations: { [valueAnnotation]: value } } };
    this.record(name, value, await this.api.request('PATCH', `${templates}/${name}`, body, 'application/merge-patch+json'));
  }

  private record(name: string, value: string, answer: { status: number; body: string } | undefined): void {
    const entry = this.ledger.get(name) ?? { acked: undefined, uncertain: new Set<string>() };
    this.ledger.set(name, entry);
    if (answer !== undefined && answer.status >= 200 && answer.status < 300) {
      const resourceVersion = (JSON.parse(answer.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      entry.acked = { value, resourceVersion };
      this.acknowledged++;
    } else if (answer === undefined || answer.status >= 500) {
      // No answer, or a failure after which the write may still have happened (a timeout, an etcd cut mid-commit).
      entry.uncertain.add(value);
    }
  }
}

/** Runs the chaos for `options.minutes` and answers the report; everything it started is stopped, even on failure. */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => undefined);
  const random = seededRandom(options.seed);
  const between = (min: number, max: number) => min + random() * (max - min);
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'capo-chaos-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const partitions = await Partitions.open('run');
    cleanups.push(() => partitions.close());
    const etcdPrefixes = await Promise.all([0, 1, 2].map((member) => partitions.commandPrefix(`etcd-${member}`)));
    const etcd = await startEtcd(3, { commandPrefix: (member) => etcdPrefixes[member]! });
    cleanups.push(() => etcd.stop());
    const plane = await startControlPlane({ crds: ['capi'] });
    cleanups.push(() => plane.stop());
    const kubectl: Kubectl = (args) => plane.kubectl(args);
    const sim = await startSimulator({ port: 0, transitionDelayMs: 200, faultSeed: options.seed });
    cleanups.push(() => sim.close());
    const census = await CloudCensus.open(sim);
    cleanups.push(async () => census.close());

    // The replicas: one serving certificate for the Service's name, three ports, three EndpointSlices.
    const serving = await plane.certificate(
      serviceName,
      `/CN=${serviceName}`,
      `extendedKeyUsage=serverAuth\nsubjectAltName=DNS:${serviceName}.${serviceNamespace}.svc,IP:127.0.0.1`,
    );
    const certFile = path.join(dir, 'serving.crt');
    const keyFile = path.join(dir, 'serving.key');
    await writeFile(certFile, serving.cert);
    await writeFile(keyFile, serving.key);
    await mustApply(plane, [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: serviceNamespace } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: writesNamespace } },
    ]);
    const firstPort = await freePortRun(3);
    const replicas = [0, 1, 2].map((index) => new Replica(index, firstPort + index, path.join(dir, `replica-${index}`)));
    const replicaPrefixes = await Promise.all(replicas.map((replica) => partitions.commandPrefix(`replica-${replica.index}`)));
    const start = async (replica: Replica) => {
      replica.process = await startServerProcess(
        replica.dataDir,
        [
          '--kubeconfig',
          plane.kubeconfig,
          '--port',
          String(replica.port),
          '--tls-cert-file',
          certFile,
          '--tls-private-key-file',
          keyFile,
          '--storage',
          'etcd',
          '--etcd-servers',
          etcd.servers.join(','),
          ...leaseFlags,
          ...allowMirrorOf(sim.url),
        ],
        { commandPrefix: replicaPrefixes[replica.index] },
      );
      replica.stopped = false;
      replica.incarnations++;
    };
    cleanups.push(async () => {
      for (const replica of replicas) {
        if (replica.stopped && replica.process) process.kill(replica.process.pid, 'SIGCONT');
        await replica.process?.kill();
      }
    });
    await Promise.all(replicas.map(start));
    const endpointSlice = (replica: Replica, ready: boolean) => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${serviceName}-${replica.index}`, namespace: serviceNamespace, labels: { 'kubernetes.io/service-name': serviceName } },
      addressType: 'FQDN',
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready } }],
      ports: [{ name: 'https', port: replica.port }],
    });
    // As a kubelet's readiness probe would: a replica killed or stopped is taken out of the Service until it serves again.
    const setReady = (replica: Replica, ready: boolean) => mustApply(plane, [endpointSlice(replica, ready)]);
    await mustApply(
      plane,
      replicas.map((replica) => endpointSlice(replica, true)),
    );
    await registerAggregatedServer(plane, {
      namespace: serviceNamespace,
      service: serviceName,
      port: replicas[0]!.port,
      caBundlePem: readFileSync(plane.caCert, 'utf8'),
      groupVersions: servedGroupVersions(),
    });
    // registerAggregatedServer's own slice names replica 0 again: one slice per replica is what routes.
    await plane.kubectl(['delete', 'endpointslice', serviceName, '-n', serviceNamespace]);

    // The workload: shared objects, then clusters in turn.
    const examples = loadExamples(sim.url);
    // The identity Secret goes last at the end: what is deleted before it needs it to delete its cloud resources.
    const [identity, ...images] = clusterObjects(examples, 'chaos-0', 1).shared;
    const identityFile = path.join(dir, 'identity.yaml');
    const imagesFile = path.join(dir, 'images.yaml');
    await writeFile(identityFile, stringify(identity));
    await writeFile(imagesFile, images.map((object) => stringify(object)).join('---\n'));
    const clusterFiles: string[] = [];
    for (let i = 0; i < options.clusters; i++) {
      const objects = clusterObjects(examples, `chaos-${i}`, 1);
      const file = path.join(dir, `cluster-${i}.yaml`);
      await writeFile(file, [...objects.cluster, ...objects.controlPlane.flat(), ...objects.workers.flat()].map((object) => stringify(object)).join('---\n'));
      clusterFiles.push(file);
    }
    const untilOk = async (args: string[], deadline: number) => {
      for (;;) {
        const result = await kubectl(args);
        if (result.code === 0) return;
        if (Date.now() > deadline) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
        await sleep(1000);
      }
    };
    for (const file of [identityFile, imagesFile]) await untilOk(['apply', '-f', file], Date.now() + 120_000);

    const faults = () => {
      for (const status of [500, 503]) sim.faults.add({ service: '*', rate: 0.02, status });
      sim.faults.add({ service: '*', rate: 0.01, status: 409, message: 'injected conflict' });
      sim.faults.add({ service: '*', rate: 0.01, status: 429, retryAfterSeconds: 1 });
      sim.faults.add({ service: '*', rate: 0.05, latencyMs: 300 });
    };
    faults();

    const api = new ApiClient(plane);
    cleanups.push(async () => api.close());
    const writer = new Writer(api, seededRandom(options.seed + 1));
    const disruptions = Object.fromEntries(disruptionKinds.map((kind) => [kind, 0])) as Record<DisruptionKind, number>;
    const duplicates: Duplicate[] = [];
    const startedAt = Date.now();
    const endsAt = startedAt + options.minutes * 60_000;
    const over = () => Date.now() >= endsAt;
    let clustersApplied = 0;
    let clustersDeleted = 0;

    const currentLeader = () =>
      pollUntil('a replica to lead', async () => replicas.find((replica) => replica.leads()), { timeoutMs: 120_000, intervalMs: 100 });
    const disrupt = async (kind: DisruptionKind) => {
      const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!;
      const kill = async (replica: Replica) => {
        await setReady(replica, false);
        await replica.process!.kill();
        replica.retire(Date.now());
        await sleep(between(1000, 5000));
        await start(replica);
        await setReady(replica, true);
      };
      const etcdPorts = etcd.servers.map((url) => Number(new URL(url).port));
      const peerPorts = etcd.peers.map((url) => Number(new URL(url).port));
      switch (kind) {
        case 'kill-leader':
          return kill(await currentLeader());
        case 'kill-follower': {
          const leader = await currentLeader();
          return kill(pick(replicas.filter((replica) => replica !== leader)));
        }
        case 'kill-etcd-member': {
          const member = Math.floor(random() * 3);
          await etcd.killMember(member);
          await sleep(between(3000, 15_000));
          return etcd.restartMember(member);
        }
        case 'stop-leader': {
          const leader = await currentLeader();
          await setReady(leader, false);
          process.kill(leader.process!.pid, 'SIGSTOP');
          leader.stopped = true;
          leader.retire(Date.now());
          await sleep(leaseSeconds * 1000 + between(1000, 5000));
          process.kill(leader.process!.pid, 'SIGCONT');
          leader.stopped = false;
          return setReady(leader, true);
        }
        case 'partition-replica-from-etcd': {
          const group = `replica-${pick(replicas).index}`;
          await partitions.drop(group, etcdPorts);
          await sleep(between(5000, 20_000));
          return partitions.heal(group, etcdPorts);
        }
        case 'partition-etcd-member': {
          const group = `etcd-${Math.floor(random() * 3)}`;
          await partitions.drop(group, peerPorts);
          await sleep(between(5000, 20_000));
          return partitions.heal(group, peerPorts);
        }
        case 'restart-kube-apiserver': {
          const stopped = await plane.stopApiServer();
          await sleep(between(1000, 5000));
          return stopped.start();
        }
      }
    };

    const disrupter = async () => {
      let order: DisruptionKind[] = [];
      for (;;) {
        await sleep(between(...options.disruptionGapSeconds) * 1000);
        if (over()) return;
        // Every kind once per round, in a seeded order.
        if (order.length === 0) order = [...disruptionKinds].sort(() => random() - 0.5);
        const kind = order.shift()!;
        const began = Date.now();
        log(`${new Date(began).toISOString()} ${kind}`);
        await disrupt(kind);
        disruptions[kind]++;
        log(`${new Date().toISOString()} ${kind} over after ${((Date.now() - began) / 1000).toFixed(1)} s`);
      }
    };

    const clusterLoop = async () => {
      const alive: string[] = [];
      for (let i = 0; !over(); i++) {
        const file = clusterFiles[i % clusterFiles.length]!;
        await untilOk(['apply', '-f', file], Date.now() + 300_000);
        alive.push(file);
        clustersApplied++;
        if (alive.length > options.clustersAlive) {
          await untilOk(['delete', '-f', alive.shift()!, '--wait=false', '--ignore-not-found'], Date.now() + 300_000);
          clustersDeleted++;
        }
        const next = Date.now() + options.clusterEverySeconds * 1000;
        while (!over() && Date.now() < next) await sleep(500);
      }
    };

    const censusLoop = async () => {
      while (!over()) {
        for (let attempt = 0; attempt < 5; attempt++) {
          const found = await census.ours().catch(() => undefined);
          if (found) {
            duplicates.push(...found.duplicates);
            break;
          }
        }
        const next = Date.now() + 30_000;
        while (!over() && Date.now() < next) await sleep(500);
      }
    };

    const sampler = setInterval(() => {
      for (const replica of replicas) replica.sampleRss();
    }, 5000);
    cleanups.push(async () => clearInterval(sampler));
    await Promise.all([disrupter(), clusterLoop(), censusLoop(), writer.run(over)]);
    log(`${new Date().toISOString()} chaos over; deleting every cluster`);

    // Converge: every cluster and Image (they hold Glance images) deleted, then the identity they need for it; then the checks.
    const deleteStarted = Date.now();
    for (const file of [...clusterFiles, imagesFile]) await untilOk(['delete', '-f', file, '--wait=false', '--ignore-not-found'], Date.now() + 300_000);
    await waitForDeletion(kubectl, 900);
    await untilOk(['delete', '-f', identityFile, '--ignore-not-found'], Date.now() + 300_000);
    const finalDeletionSeconds = (Date.now() - deleteStarted) / 1000;
    sim.faults.clear();
    const left = await census.ours();
    duplicates.push(...left.duplicates);
    const { verified, lost } = await writer.verify();
    for (const replica of replicas) replica.sampleRss();
    const leadership = leaderless(replicas, Date.now());
    const sorted = [...api.latenciesMs].sort((a, b) => a - b);
    const quantile = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    return {
      seed: options.seed,
      minutes: options.minutes,
      disruptions,
      acknowledgedWrites: writer.acknowledged,
      objectsVerified: verified,
      lost,
      // A census sees a name held twice every 30 s for as long as it is: each counts once.
      duplicates: [...new Map(duplicates.map((duplicate) => [JSON.stringify([duplicate.kind, duplicate.name, duplicate.owner]), duplicate])).values()],
      leaked: Object.values(left.counts).reduce((sum, n) => sum + n, 0),
      inventoryChange: census.sinceBaseline(),
      longestLeaderlessMs: leadership.longestMs,
      leaderChanges: leadership.changes,
      requests: api.requests,
      requestsWithoutAnswer: api.withoutAnswer,
      statuses: api.statuses,
      latencyMs: { p50: quantile(0.5), p99: quantile(0.99), max: sorted.at(-1) ?? 0 },
      clustersApplied,
      clustersDeleted,
      finalDeletionSeconds,
      replicas: replicas.map((replica) => ({
        replica: replica.index,
        incarnations: replica.incarnations,
        peakRssMb: Math.round(replica.peakRssKb / 1024),
        lastRssMb: Math.round(replica.lastRssKb / 1024),
      })),
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: Error) => log(`cleanup: ${error.message}`));
  }
}

async function mustApply(plane: ControlPlane, items: unknown[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const result = await plane.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    if (result.code === 0) return;
    if (attempt >= 30) throw new Error(`kubectl apply: ${result.stderr}`);
    await sleep(1000);
  }
}
