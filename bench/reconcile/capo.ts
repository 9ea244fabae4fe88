/**
 * Beside CAPO: one cluster provisioned on the same paced simulated cloud (bench/reconcile/cloud.ts),
 * first by the real CAPO manager with Cluster API's core manager and kube-apiserver (all built by
 * ../shared/k8s), then by this server in its embedded mode, from the same manifests applied with
 * the same kubectl. Calls are counted at the cloud (every request it served, Keystone's included),
 * so one rule measures both sides. The shape is what CAPO supports of the example: a managed
 * network and router, managed security groups, the API load balancer with its floating IP, three
 * control-plane and three worker machines; no bastion, no ingress load balancer. Each side goes
 * through four phases: the cluster alone, the workers, the control plane (each measured to Ready
 * by a kubectl watch), a steady-state window with a short resync, and the delete, after which
 * whatever the cloud still holds is listed.
 *
 *   npm run bench:capo                         # lab profile
 *   npm run bench:capo -- --profile public     # a slow public cloud (1 s calls, 90 s amphorae, 5% 503)
 *   npm run bench:capo -- --only ours          # one side (capo | ours)
 *   npm run bench:capo -- --tag-creation       # a Neutron that takes tags in the create body (2024.1 on)
 *   npm run bench:capo -- --trace /tmp/capo    # each side's calls in /tmp/capo-<side>.jsonl
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import {
  capoUnavailable,
  kubectlWith,
  startClusterApiManager,
  startControlPlane,
  type ClusterApiManager,
  type ControlPlane,
} from '../../harness/control-plane.js';
import { servedKinds } from '../../src/served-kinds.js';
import { createServiceClients, loadCloud, OpenStackSession } from '../../src/openstack/index.js';
import { embeddedCredentials, startApp } from '../../src/app.js';
import { sourceRevision, table } from '../common.js';
import { byRequestShape, byServiceMethod, CallLog, countBy, type Call } from './calls.js';
import { cloudProfiles, describeProfile, inventory, inventoryDelta, startBenchCloud, type BenchCloud, type CloudProfile } from './cloud.js';
import { clusterSteps, criticalPath, machinesPhysicalLimitMs, physicalLimitSteps, type ClusterShape } from './critical-path.js';

const group = 'infrastructure.cluster.x-k8s.io';
const clusterName = 'bench';
const shape: ClusterShape = { controlPlane: 3, workers: 3, apiPorts: 1, ingressPorts: 0, bastion: false };
/** Resync of both reconcilers while steady state is measured; the figure is scaled to their common default, 10 min. */
const steadyResyncMs = 10_000;
const steadyWindowMs = 60_000;
const defaultResyncMs = 10 * 60_000;

const seconds = (ms: number) => (ms / 1000).toFixed(1);
const fixed = (value: number, digits = 1) => value.toFixed(digits);
const log = (line = '') => process.stdout.write(`${line}\n`);
const isRead = (call: Call) => call.method === 'GET' || call.method === 'HEAD';

// ---- the manifests, the same for both sides ----------------------------------------

type Manifest = Record<string, unknown>;

function identitySecret(cloudsYaml: string): Manifest {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${clusterName}-cloud-config`, namespace: 'default' },
    stringData: { 'clouds.yaml': cloudsYaml },
  };
}

/** The cluster without its machines: bootstrap data, Cluster, OpenStackCluster (v1beta1, as CAPO v0.14 serves it). */
function clusterManifests(): Manifest[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${clusterName}-bootstrap`, namespace: 'default', labels: { 'cluster.x-k8s.io/cluster-name': clusterName } },
      type: 'cluster.x-k8s.io/secret',
      stringData: { format: 'cloud-config', value: '#cloud-config\n' },
    },
    {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: clusterName, namespace: 'default' },
      spec: {
        clusterNetwork: { pods: { cidrBlocks: ['192.168.0.0/16'] } },
        infrastructureRef: { apiGroup: group, kind: 'OpenStackCluster', name: clusterName },
      },
    },
    {
      apiVersion: `${group}/v1beta1`,
      kind: 'OpenStackCluster',
      // The label finds the Cluster where no Cluster API sets owner references (embedded mode); CAPO ignores it.
      metadata: { name: clusterName, namespace: 'default', labels: { 'cluster.x-k8s.io/cluster-name': clusterName } },
      spec: {
        identityRef: { name: `${clusterName}-cloud-config`, cloudName: 'openstack' },
        externalNetwork: { filter: { name: 'public' } },
        managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['8.8.8.8'] }],
        managedSecurityGroups: { allowAllInClusterTraffic: true },
        apiServerLoadBalancer: { enabled: true },
      },
    },
  ];
}

function machineManifests(role: 'control-plane' | 'worker', count: number): Manifest[] {
  return Array.from({ length: count }, (_, index) => {
    const name = `${clusterName}-${role}-${index}`;
    const labels = { 'cluster.x-k8s.io/cluster-name': clusterName, ...(role === 'control-plane' && { 'cluster.x-k8s.io/control-plane': '' }) };
    return [
      {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: { name, namespace: 'default', labels },
        spec: {
          clusterName,
          version: 'v1.33.1',
          bootstrap: { dataSecretName: `${clusterName}-bootstrap` },
          infrastructureRef: { apiGroup: group, kind: 'OpenStackMachine', name },
        },
      },
      {
        apiVersion: `${group}/v1beta1`,
        kind: 'OpenStackMachine',
        metadata: { name, namespace: 'default', labels },
        spec: { flavor: 'm1.small', image: { filter: { name: 'ubuntu-22.04' } } },
      },
    ];
  }).flat();
}

// ---- a side: something that turns the manifests into a cluster ------------------------

interface Side {
  /** Short, for file names. */
  key: 'capo' | 'ours';
  name: string;
  kubeconfig: string;
  cloud: BenchCloud;
  calls: CallLog;
  /** Deletes the cluster the way its users do. */
  deleteCluster(): Promise<void>;
  stop(): Promise<void>;
}

/** kubectl as the side's user (harness/control-plane.ts bounds each call); its stdout, or an error with its stderr. */
async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  const { code, stdout, stderr } = await kubectlWith(kubeconfig)(args, input);
  if (code !== 0) throw new Error(`kubectl ${args.join(' ')}: exit ${code}: ${stderr.slice(-2000)}`);
  return stdout;
}

const apply = (side: Side, manifests: Manifest[]) =>
  kubectl(side.kubeconfig, ['apply', '-f', '-'], manifests.map((manifest) => stringify(manifest)).join('---\n'));

/**
 * A cloud in use: the project has touched Neutron before, so its `default` security group exists
 * (Neutron creates it on a project's first need) and is not counted as something a side left.
 */
async function benchCloud(profile: CloudProfile): Promise<{ cloud: BenchCloud; calls: CallLog }> {
  const calls = new CallLog();
  const cloud = await startBenchCloud({ profile, maxInFlight: Infinity, retryAfterSeconds: 1, onRequest: calls.record });
  const session = await OpenStackSession.create(loadCloud({ cloudsYaml: cloud.simulator.cloudsYaml(), cloudName: 'simulator' }));
  try {
    await createServiceClients(session).neutron.listSecurityGroups({ name: 'default' });
  } finally {
    session.close();
  }
  return { cloud, calls };
}

async function startCapoSide(profile: CloudProfile): Promise<Side> {
  const { cloud, calls } = await benchCloud(profile);
  let plane: ControlPlane | undefined;
  const managers: ClusterApiManager[] = [];
  try {
    plane = await startControlPlane({ crds: ['capi', 'capo', 'orc'] });
    managers.push(await startClusterApiManager(plane, 'capi-manager'));
    managers.push(await startClusterApiManager(plane, 'capo-manager', [], [`--sync-period=${steadyResyncMs / 1000}s`]));
  } catch (error) {
    await Promise.all(managers.map((manager) => manager.stop()));
    await plane?.stop();
    await cloud.close();
    throw error;
  }
  const started = plane;
  return {
    key: 'capo',
    name: 'CAPO v0.14.2 + Cluster API v1.12.5',
    kubeconfig: started.kubeconfig,
    cloud,
    calls,
    async deleteCluster() {
      await kubectl(started.kubeconfig, ['delete', 'cluster', clusterName, '--wait=false']);
    },
    async stop() {
      await Promise.all(managers.map((manager) => manager.stop()));
      await started.stop();
      await cloud.close();
    },
  };
}

async function startOurSide(profile: CloudProfile): Promise<Side> {
  const { cloud, calls } = await benchCloud(profile);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-bench-capo-'));
  const app = await startApp({ dataDir, host: '127.0.0.1', port: 0, kinds: servedKinds, reconciler: { resyncPeriodMs: steadyResyncMs } });
  const { kubeconfigPath } = embeddedCredentials(app);
  return {
    key: 'ours',
    name: `capo-apiserver ${sourceRevision()} (embedded)`,
    kubeconfig: kubeconfigPath,
    cloud,
    calls,
    // No Cluster API here: deleting the objects is what `kubectl delete -f` does.
    async deleteCluster() {
      const kinds = ['machines.cluster.x-k8s.io', `openstackmachines.${group}`, 'clusters.cluster.x-k8s.io', `openstackclusters.${group}`];
      await kubectl(kubeconfigPath, ['delete', kinds.join(','), '--all', '--wait=false']);
    },
    async stop() {
      await app.close();
      await cloud.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

// ---- watching objects over kubectl -----------------------------------------------------

/** When each object of a kind was first seen Ready and when it was deleted, from a `kubectl get -w`. */
class ReadyWatch {
  readonly readyAt = new Map<string, number>();
  readonly deletedAt = new Map<string, number>();
  private readonly child: ChildProcess;
  private readonly waiters = new Set<() => void>();

  constructor(kubeconfig: string, resource: string) {
    const fields = '{.type}{" "}{.object.metadata.name}{" "}{.object.status.ready}{"\\n"}';
    this.child = spawn('kubectl', ['--kubeconfig', kubeconfig, 'get', resource, '--watch', '--output-watch-events', '-o', `jsonpath=${fields}`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      const [type, name, ready] = line.trim().split(' ');
      if (!name) return;
      const now = performance.now();
      if (type === 'DELETED') this.deletedAt.set(name, now);
      else if (ready === 'true' && !this.readyAt.has(name)) this.readyAt.set(name, now);
      for (const waiter of this.waiters) waiter();
    });
  }

  /** Resolves once `done()` holds, checked on every event; rejects after `timeoutMs`. */
  until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out after ${seconds(timeoutMs)} s waiting for ${what}`));
      }, timeoutMs);
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  stop(): void {
    this.child.kill();
  }
}

// ---- one side's run ---------------------------------------------------------------------

interface Phase {
  name: string;
  readyMs: number;
  calls: Call[];
  per: number;
}

interface SideResult {
  side: string;
  phases: Phase[];
  steady: { calls: Call[]; rounds: number; owned: number };
  deleteMs: number;
  deleteCalls: Call[];
  leftAfterDelete: [string, number][];
}

/** Calls that ended after `from`, once the cloud has been quiet for 3 s: a phase's last pass still belongs to it. */
async function phaseCalls(side: Side, from: number): Promise<Call[]> {
  await side.calls.settle(3_000, 30_000);
  return side.calls.between(from);
}

/** Every call the side's cloud served, as JSON lines with times in s from `origin`, for reading. */
async function writeTrace(file: string, side: Side, origin: number, marks: { t: number; mark: string }[]): Promise<void> {
  const at = (ms: number) => Number(((ms - origin) / 1000).toFixed(3));
  const lines = [
    ...side.calls.calls.map((call) => ({
      t: at(call.startMs),
      end: at(call.endMs),
      call: `${call.service} ${call.method} ${call.path}`,
      outcome: call.outcome,
    })),
    ...marks,
  ].sort((a, b) => a.t - b.t);
  await writeFile(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  log(`(calls written to ${file})`);
}

async function runSide(side: Side, timeoutMs: number, traceFile?: string): Promise<SideResult> {
  log(`\n### ${side.name}\n`);
  const clusters = new ReadyWatch(side.kubeconfig, `openstackclusters.v1beta1.${group}`);
  const machines = new ReadyWatch(side.kubeconfig, `openstackmachines.v1beta1.${group}`);
  try {
    await apply(side, [identitySecret(side.cloud.simulator.cloudsYaml('openstack'))]);
    const before = inventory(side.cloud);
    const phases: Phase[] = [];
    const origin = performance.now();
    const marks: { t: number; mark: string }[] = [];
    const mark = (what: string, ms = performance.now()) => marks.push({ t: Number(((ms - origin) / 1000).toFixed(3)), mark: what });
    const phase = async (name: string, manifests: Manifest[], watch: ReadyWatch, names: string[]) => {
      const from = performance.now();
      mark(`${name} applied`, from);
      await apply(side, manifests);
      await watch.until(`${name} Ready`, () => names.every((object) => watch.readyAt.has(object)), timeoutMs);
      for (const object of names) mark(`${object} Ready`, watch.readyAt.get(object));
      const readyMs = Math.max(...names.map((object) => watch.readyAt.get(object)!)) - from;
      phases.push({ name, readyMs, calls: await phaseCalls(side, from), per: names.length });
      log(`${name}: Ready after ${seconds(readyMs)} s`);
    };
    const names = (manifests: Manifest[]) =>
      manifests.filter((manifest) => manifest.kind === 'OpenStackMachine').map((manifest) => (manifest.metadata as { name: string }).name);
    await phase('cluster', clusterManifests(), clusters, [clusterName]);
    const workers = machineManifests('worker', shape.workers);
    await phase('workers', workers, machines, names(workers));
    const controlPlane = machineManifests('control-plane', shape.controlPlane);
    await phase('control plane', controlPlane, machines, names(controlPlane));
    const owned = inventoryDelta(before, inventory(side.cloud));

    // Steady state: one resync period for passes still requeued from convergence, then the window.
    await new Promise((resolve) => setTimeout(resolve, steadyResyncMs * 1.5));
    const windowFrom = performance.now();
    await new Promise((resolve) => setTimeout(resolve, steadyWindowMs));
    const steadyCalls = side.calls.between(windowFrom, performance.now());

    const deleteFrom = performance.now();
    await side.deleteCluster();
    const all = [clusterName, ...names(workers), ...names(controlPlane)];
    await clusters.until('the OpenStackCluster to be deleted', () => clusters.deletedAt.has(clusterName), timeoutMs);
    await machines.until('the OpenStackMachines to be deleted', () => all.slice(1).every((name) => machines.deletedAt.has(name)), timeoutMs);
    const deleteMs = Math.max(clusters.deletedAt.get(clusterName)!, ...all.slice(1).map((name) => machines.deletedAt.get(name)!)) - deleteFrom;
    log(`delete: all objects gone after ${seconds(deleteMs)} s`);
    mark('delete started', deleteFrom);
    if (traceFile) await writeTrace(traceFile, side, origin, marks);
    return {
      side: side.name,
      phases,
      steady: { calls: steadyCalls, rounds: steadyWindowMs / steadyResyncMs, owned: owned.reduce((sum, [, count]) => sum + count, 0) },
      deleteMs,
      deleteCalls: await phaseCalls(side, deleteFrom),
      leftAfterDelete: inventoryDelta(before, inventory(side.cloud)),
    };
  } finally {
    clusters.stop();
    machines.stop();
  }
}

// ---- the report ----------------------------------------------------------------------------

function report(profile: CloudProfile, results: SideResult[]): void {
  const physical = criticalPath(physicalLimitSteps(profile, shape));
  const sequential = criticalPath(clusterSteps(profile, shape));
  const clusterLimit = criticalPath(physicalLimitSteps(profile, { ...shape, controlPlane: 0, workers: 0 }));
  log(`\n## Side by side (profile ${profile.name})\n`);
  const cell = (pick: (result: SideResult) => string) => results.map(pick);
  const phase = (result: SideResult, name: string) => result.phases.find((candidate) => candidate.name === name)!;
  const perPhase = (name: string) => cell((result) => fixed(phase(result, name).calls.length / phase(result, name).per));
  const steadyPerHour = (result: SideResult) => (result.steady.calls.length / result.steady.rounds) * (3_600_000 / defaultResyncMs);
  log(
    table([
      ['figure', ...results.map((result) => result.side)],
      [`cluster Ready (applied alone; limit ${seconds(clusterLimit.totalMs)} s)`, ...cell((result) => `${seconds(phase(result, 'cluster').readyMs)} s`)],
      [
        `3 workers Ready (applied to a Ready cluster; limit ${seconds(machinesPhysicalLimitMs(profile, 0))} s)`,
        ...cell((result) => `${seconds(phase(result, 'workers').readyMs)} s`),
      ],
      [
        `3 control-plane machines Ready (then applied; limit ${seconds(machinesPhysicalLimitMs(profile, shape.apiPorts))} s)`,
        ...cell((result) => `${seconds(phase(result, 'control plane').readyMs)} s`),
      ],
      ['calls for the cluster', ...perPhase('cluster')],
      ['calls per worker machine', ...perPhase('workers')],
      ['calls per control-plane machine', ...perPhase('control plane')],
      ['owned resources at steady state', ...cell((result) => String(result.steady.owned))],
      [
        `GETs per owned resource per resync (${seconds(steadyResyncMs)} s resync)`,
        ...cell((result) => fixed(result.steady.calls.filter(isRead).length / result.steady.rounds / result.steady.owned, 2)),
      ],
      ['non-GET calls at steady state', ...cell((result) => String(result.steady.calls.filter((call) => !isRead(call)).length))],
      [`steady-state calls per hour at a ${defaultResyncMs / 60_000} min resync`, ...cell((result) => fixed(steadyPerHour(result), 0))],
      ['delete: all objects gone', ...cell((result) => `${seconds(result.deleteMs)} s`)],
      ['delete: calls', ...cell((result) => String(result.deleteCalls.length))],
      [
        'left in the cloud after delete',
        ...cell((result) => (result.leftAfterDelete.length === 0 ? 'nothing' : result.leftAfterDelete.map(([kind, count]) => `${kind} ${count}`).join(', '))),
      ],
    ]),
  );
  log(
    `\nPhysical limit from the profile: the cluster alone ${seconds(clusterLimit.totalMs)} s; workers ${seconds(machinesPhysicalLimitMs(profile, 0))} s and control-plane machines ${seconds(machinesPhysicalLimitMs(profile, shape.apiPorts))} s once it is provisioned; everything applied at once ${seconds(physical.totalMs)} s`,
  );
  log(`(the same work built child by child, as the load balancer must be on a cloud refusing a fully populated create: ${seconds(sequential.totalMs)} s)`);
  log(
    table([['physical limit chain', 'costs ms', 'done at s'], ...physical.chain.map(({ step, finishMs }) => [step.name, String(step.ms), seconds(finishMs)])]),
  );
  for (const name of ['cluster', 'workers', 'control plane']) {
    log(`\nCalls by service and method, ${name} (per object):`);
    const columns = results.map((result) => phase(result, name));
    const counted = columns.map((column) => new Map(countBy(column.calls, byServiceMethod)));
    const keys = [...new Set(counted.flatMap((counts) => [...counts.keys()]))].sort();
    log(
      table([
        ['request', ...results.map((result) => result.side)],
        ...keys.map((key) => [key, ...counted.map((counts, index) => fixed((counts.get(key) ?? 0) / columns[index].per))]),
      ]),
    );
  }
  for (const result of results) {
    log(`\n${result.side}: cluster calls by request`);
    log(table([['request', 'count'], ...countBy(phase(result, 'cluster').calls, byRequestShape).map(([key, count]) => [key, String(count)])]));
    log(`${result.side}: steady-state calls per resync round by request`);
    log(table([['request', 'per round'], ...countBy(result.steady.calls, byRequestShape).map(([key, count]) => [key, fixed(count / result.steady.rounds)])]));
    const statuses = countBy([...result.phases.flatMap((candidate) => candidate.calls), ...result.deleteCalls], (call) => call.outcome);
    log(`${result.side}: outcomes ${statuses.map(([status, count]) => `${status}: ${count}`).join(', ')}`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      profile: { type: 'string', default: 'lab' },
      only: { type: 'string' },
      trace: { type: 'string' },
      'tag-creation': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const chosen = cloudProfiles[values.profile ?? 'lab'];
  if (!chosen) throw new Error(`--profile must be one of ${Object.keys(cloudProfiles).join(', ')}, got ${values.profile}`);
  const profile = values['tag-creation'] ? { ...chosen, neutron: { tagCreation: true } } : chosen;
  if (values.only !== undefined && !['capo', 'ours'].includes(values.only)) throw new Error(`--only must be capo or ours, got ${values.only}`);
  const unavailable = values.only === 'ours' ? undefined : capoUnavailable();
  if (unavailable) throw new Error(`CAPO cannot run here: ${unavailable}`);
  log(`# bench/reconcile/capo (code ${sourceRevision()}, Node ${process.version}, ${os.cpus().length} CPUs, profile ${profile.name})\n`);
  log(describeProfile(profile));
  // Time to Ready on the slow profile is minutes per phase.
  const timeoutMs = profile.transitions.loadBalancer * 10 + 5 * 60_000;
  const results: SideResult[] = [];
  for (const start of [...(values.only !== 'ours' ? [startCapoSide] : []), ...(values.only !== 'capo' ? [startOurSide] : [])]) {
    const side = await start(profile);
    try {
      results.push(await runSide(side, timeoutMs, values.trace === undefined ? undefined : path.resolve(`${values.trace}-${side.key}.jsonl`)));
    } finally {
      await side.stop();
    }
  }
  report(profile, results);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench/reconcile/capo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
