/**
 * Drift at scale: a cloud reset (issue 49). N clusters of the example's shape are built by an
 * `npm start` process (harness/server-process.ts, no embedded cloud) on a simulated cloud; then the
 * server is killed (SIGKILL), the cloud closed and started again empty on the same port (a lab
 * cloud rebuilt, a simulator started without its state: every OpenStack ID the objects recorded is
 * gone), and the server started again on the same data directory. It heals: each cluster's
 * infrastructure is made again and each machine whose server vanished is failed as CAPO fails it
 * (Ready=False, reason InstanceDeleted). The run prints the time that takes and the calls the cloud
 * served for it, beside those of the first build, and how often each recorded (vanished) resource
 * was read before it was made again: one GET each is the floor for a process whose memory of
 * verified resources starts empty; more would be a storm.
 *
 * The cloud is startSimulator with the lab profile's per-service latency (bench/reconcile/cloud.ts)
 * and one transition delay for everything: the bench cloud's pacing front cannot be started on a
 * fixed port, and the restarted server must find the new cloud where its identity says the old
 * one was. It is a measurement: an object that never reaches its state fails the run.
 *
 *   npm run bench:reset                                # 10 clusters x 10 machines
 *   npm run bench:reset -- --clusters 20 --machines 6
 *   npm run bench:reset -- --quick                     # 3 clusters x 4 machines: checks the harness
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { servedKinds } from '../../src/served-kinds.js';
import { createServiceClients, loadCloud, OpenStackSession } from '../../src/openstack/index.js';
import { startSimulator, type LatencyRule, type Simulator } from '../../src/simulator/host.js';
import { startServerProcess, type ServerProcess } from '../../harness/server-process.js';
import type { Kubectl } from '../../harness/cluster-flow.js';
import { pool, sourceRevision, table } from '../common.js';
import { byRequestShape, byServiceMethod, CallLog, countBy, type Call } from './calls.js';
import { duplicateWarnings, inventory, inventoryDelta, prepareForScale, realisticProfile, type BenchCloud } from './cloud.js';
import { ApiClient } from './kube.js';
import { clusterObjects, loadExamples, type ClusterObjects } from '../../harness/cluster-manifests.js';
import { clusterShape } from './manifests.js';

interface Config {
  clusters: number;
  machinesPerCluster: number;
  transitionDelayMs: number;
  timeoutMs: number;
}

const controlPlaneMachines = 3;
const pollIntervalMs = 1_000;
const usage = `Usage: node dist/bench/reconcile/reset.js [options]
  --clusters N       clusters (default 10)
  --machines N       machines per cluster, ${controlPlaneMachines} of them control plane (default 10)
  --transition-ms N  the cloud's delay of every asynchronous transition (default 100, as the drift tests)
  --quick            3 clusters x 4 machines: checks the harness
`;

const options = {
  clusters: { type: 'string' },
  machines: { type: 'string' },
  'transition-ms': { type: 'string' },
  quick: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** The integer an option gives, at least `min`, or `fallback` when it is not given. */
function integerOption(name: keyof typeof options, given: string | undefined, fallback: number, min: number): number {
  const parsed = given === undefined ? fallback : Number(given);
  if (Number.isInteger(parsed) && parsed >= min) return parsed;
  throw new Error(`--${name} must be an integer of at least ${min}, got ${JSON.stringify(given)}`);
}

function parseConfig(): Config {
  const { values } = parseArgs({ options, strict: true });
  if (values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const clusters = integerOption('clusters', values.clusters, values.quick ? 3 : 10, 1);
  const machinesPerCluster = integerOption('machines', values.machines, values.quick ? 4 : 10, controlPlaneMachines + 1);
  return {
    clusters,
    machinesPerCluster,
    transitionDelayMs: integerOption('transition-ms', values['transition-ms'], 100, 0),
    // Generous: two minutes, plus three seconds per machine.
    timeoutMs: 120_000 + clusters * machinesPerCluster * 3_000,
  };
}

const log = (text = '') => process.stdout.write(`${text}\n`);
const fixed = (value: number, digits = 1) => value.toFixed(digits);
const seconds = (ms: number) => `${fixed(ms / 1000)} s`;

// ---- the cloud -------------------------------------------------------------------

/** The lab profile's latency per service, as the simulator's own latency rules: reads (GET, HEAD) and writes. */
function labLatency(): LatencyRule[] {
  return Object.entries(realisticProfile.latency).flatMap(([service, costs]) =>
    ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'].map(
      (method): LatencyRule => ({ service: service as LatencyRule['service'], method, ms: method === 'GET' || method === 'HEAD' ? costs.read : costs.write }),
    ),
  );
}

/**
 * The simulator as cloud.ts's helpers take it (quotas, the public addresses, inventory); there is no
 * pacing front here, so its statistics stay zero and are not reported.
 */
async function startCloud(config: Config, calls: CallLog, port = 0): Promise<BenchCloud> {
  const simulator: Simulator = await startSimulator({ port, transitionDelayMs: config.transitionDelayMs, latency: labLatency(), onRequest: calls.record });
  const cloud: BenchCloud = {
    simulator,
    front: { served: 0, rejected: 0, peakInFlight: 0 },
    octaviaTransitions: { loadBalancer: 0, loadBalancerChild: 0 },
    resetFront() {},
    close: () => simulator.close(),
  };
  await prepareForScale(cloud, config.clusters);
  return cloud;
}

/**
 * What holds, on the new cloud, the address a cluster's API endpoint had (asked as admin, after the figures are taken):
 * the address the cloud would not give back.
 */
async function endpointHolder(cloud: BenchCloud, cluster: Listed): Promise<string> {
  const host = (cluster.spec as { controlPlaneEndpoint?: { host?: string } } | undefined)?.controlPlaneEndpoint?.host;
  if (host === undefined) return 'no spec.controlPlaneEndpoint';
  const session = await OpenStackSession.create(loadCloud({ cloudsYaml: cloud.simulator.cloudsYaml(), cloudName: 'simulator-admin' }));
  try {
    const ports = await createServiceClients(session).neutron.listPorts({ fixed_ips: [{ ip_address: host }] });
    return `${host} is held by ${ports.length === 0 ? 'no port' : ports.map((port) => `a port of device_owner ${port.device_owner}`).join(', ')}`;
  } finally {
    session.close();
  }
}

// ---- the objects, through kubectl ---------------------------------------------------

const conditionSchema = z.looseObject({ type: z.string(), status: z.string(), reason: z.string().optional(), message: z.string().optional() });
const listSchema = z.object({
  items: z.array(
    z.looseObject({
      kind: z.string(),
      metadata: z.looseObject({ name: z.string(), namespace: z.string().optional() }),
      status: z.looseObject({ conditions: z.array(conditionSchema).optional() }).optional(),
    }),
  ),
});
type Listed = z.infer<typeof listSchema>['items'][number];
type Named = { id?: string };

async function list(kubectl: Kubectl, resources: string): Promise<Listed[]> {
  const result = await kubectl(['get', resources, '-A', '-o', 'json']);
  if (result.code !== 0) throw new Error(`kubectl get ${resources} failed (${result.code}): ${result.stderr.trim()}`);
  return listSchema.parse(JSON.parse(result.stdout)).items;
}

const endpointMoved = (object: Listed) =>
  object.status?.conditions?.find((condition) => condition.type === 'APIEndpointReady' && condition.reason === 'EndpointMoved');
const readyOf = (object: Listed) => object.status?.conditions?.find((condition) => condition.type === 'Ready');
const uuidPattern = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const idsIn = (value: unknown) => new Set(JSON.stringify(value ?? null).match(uuidPattern) ?? []);

/**
 * Polls the clusters and machines every second until `reached` holds for every one of them;
 * resolves with when it first did. A run that does not get there fails naming what is missing.
 */
async function waitForAll(kubectl: Kubectl, expected: number, what: string, reached: (object: Listed) => boolean, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let lastReport = performance.now();
  for (;;) {
    const objects = await list(kubectl, 'openstackclusters,openstackmachines');
    const missing = objects.filter((object) => !reached(object));
    const at = performance.now();
    if (objects.length === expected && missing.length === 0) return at;
    const describe = () => {
      const shown = missing.slice(0, 5).map((object) => {
        const ready = readyOf(object);
        return `${object.kind} ${object.metadata.name} (Ready=${ready?.status ?? '?'} ${ready?.reason ?? ''}: ${ready?.message ?? ''})`;
      });
      return `${objects.length} of ${expected} objects listed, ${missing.length} not yet ${what}, e.g. ${shown.join('; ')}`;
    };
    if (at > deadline) throw new Error(`not ${what} after ${seconds(timeoutMs)}: ${describe()}`);
    if (at - lastReport > 30_000) {
      log(`  still waiting: ${describe()}`);
      lastReport = at;
    }
    await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
  }
}

// ---- the recorded resources ----------------------------------------------------------

/** Every resource kind an ID was seen at in the first cloud's paths (`network networks`, `compute servers`). */
function kindsOfIds(calls: Call[]): Map<string, string> {
  const kinds = new Map<string, string>();
  for (const call of calls) {
    for (const match of call.path.split('?')[0].matchAll(/\/([a-z_-]+)\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/g)) {
      if (!kinds.has(match[2])) kinds.set(match[2], `${call.service} ${match[1]}`);
    }
  }
  return kinds;
}

/** Where in a status each ID is (`status.externalNetwork.id`, list indices as []), first place found. */
function idPlaces(value: unknown, at: string, places: Map<string, string>): void {
  if (typeof value === 'string') {
    for (const id of value.match(uuidPattern) ?? []) if (!places.has(id)) places.set(id, at);
  } else if (Array.isArray(value)) {
    for (const item of value) idPlaces(item, `${at}[]`, places);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) idPlaces(item, `${at}.${key}`, places);
  }
}

interface Recorded {
  /** ID → the kind of resource: from the first cloud's paths, else where the status holds it. */
  ids: Map<string, string>;
  /** IDs in each OpenStackCluster's status at the kill. */
  byCluster: Map<string, Set<string>>;
}

/** The OpenStack IDs every object's status held when the server was killed. */
async function recordedIds(kubectl: Kubectl, firstCloud: Call[]): Promise<Recorded> {
  const kinds = kindsOfIds(firstCloud);
  const ids = new Map<string, string>();
  const byCluster = new Map<string, Set<string>>();
  for (const object of await list(kubectl, 'openstackclusters,openstackmachines,openstackservers,images.openstack.k-orc.cloud')) {
    const places = new Map<string, string>();
    idPlaces(object.status, 'status', places);
    for (const [id, place] of places) if (!ids.has(id)) ids.set(id, kinds.get(id) ?? `(no path) ${object.kind} ${place}`);
    if (object.kind === 'OpenStackCluster') byCluster.set(object.metadata.name, new Set(places.keys()));
  }
  return { ids, byCluster };
}

/** GETs of one recorded ID: by its own URL, within a list's query, and how many of the former answered 404. */
interface Counts {
  byId: number;
  inList: number;
  notFound: number;
}

/** Reads of the recorded resources on the new cloud, by kind: how many each got before it was made again (or found gone for good). */
function readsPerRecorded(recorded: Recorded, calls: Call[]): string {
  const reads = calls.filter((call) => call.method === 'GET');
  const perId = new Map<string, Counts>([...recorded.ids.keys()].map((id) => [id, { byId: 0, inList: 0, notFound: 0 }]));
  for (const call of reads) {
    const [base, query = ''] = call.path.split('?', 2);
    // The resource read is the last ID of the path (a member's read is not its pool's); IDs in the query are a list's filter.
    const read = base.match(uuidPattern)?.at(-1);
    const counts = read === undefined ? undefined : perId.get(read);
    if (counts) {
      counts.byId += 1;
      if (call.outcome === '404') counts.notFound += 1;
    }
    for (const id of new Set(query.match(uuidPattern) ?? [])) {
      const listed = perId.get(id);
      if (listed) listed.inList += 1;
    }
  }
  const sum = (of: Counts[], field: keyof Counts) => of.reduce((total, counts) => total + counts[field], 0);
  const row = (label: string, of: Counts[]) => [
    label,
    String(of.length),
    String(sum(of, 'byId')),
    fixed(sum(of, 'byId') / of.length, 2),
    String(Math.max(...of.map((counts) => counts.byId))),
    String(of.filter((counts) => counts.byId === 0).length),
    String(sum(of, 'inList')),
    String(sum(of, 'notFound')),
  ];
  const kinds = [...new Set(recorded.ids.values())].sort();
  const rows = kinds.map((kind) =>
    row(
      kind,
      [...perId].filter(([id]) => recorded.ids.get(id) === kind).map(([, counts]) => counts),
    ),
  );
  rows.push(row('all', [...perId.values()]));
  return table([
    [
      "recorded resource (kind in the first cloud's paths, else its place in a status)",
      'IDs',
      'GETs by ID',
      'per ID',
      'most for one ID',
      'IDs never read',
      'in a list query',
      '404s',
    ],
    ...rows,
  ]);
}

// ---- the report ------------------------------------------------------------------------

/** Counts by `key` for the first build and the heal side by side, in all and per cluster. */
function sideBySide(build: Call[], heal: Call[], clusters: number, key: (call: Call) => string): string {
  const first = new Map(countBy(build, key));
  const second = new Map(countBy(heal, key));
  const keys = [...new Set([...first.keys(), ...second.keys()])].sort(
    (a, b) => (second.get(b) ?? 0) + (first.get(b) ?? 0) - (second.get(a) ?? 0) - (first.get(a) ?? 0) || (a < b ? -1 : 1),
  );
  const cells = (count: number) => [String(count), fixed(count / clusters)];
  const row = (name: string, a: number, b: number) => [name, ...cells(a), ...cells(b)];
  const withoutIdentity = (calls: Call[]) => calls.filter((call) => call.service !== 'identity').length;
  return table([
    ['request', 'first build', 'per cluster', 'heal after the reset', 'per cluster'],
    ...keys.map((name) => row(name, first.get(name) ?? 0, second.get(name) ?? 0)),
    row('total', build.length, heal.length),
    row('total without identity', withoutIdentity(build), withoutIdentity(heal)),
  ]);
}

const outcomes = (calls: Call[]) =>
  countBy(calls, (call) => call.outcome)
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ');
const failures = (calls: Call[]) => calls.filter((call) => Number(call.outcome) >= 400);

// ---- main ------------------------------------------------------------------------------

async function main(): Promise<void> {
  const config = parseConfig();
  const workers = config.machinesPerCluster - controlPlaneMachines;
  const machines = config.clusters * config.machinesPerCluster;
  const objectsExpected = config.clusters + machines;
  log(`# bench/reconcile/reset (code ${sourceRevision()}, Node ${process.version}, ${os.cpus().length} CPUs)\n`);
  log(
    `${config.clusters} clusters x ${config.machinesPerCluster} machines (${controlPlaneMachines} control plane, ${workers} workers) + a bastion each, built by one \`npm start\` process ` +
      `(harness/server-process.ts); the cloud is startSimulator with the lab profile's latency per service and every transition ${config.transitionDelayMs} ms ` +
      `(not bench/reconcile/cloud.ts's paced front: it cannot be given a fixed port), no rate limit; objects polled with kubectl every ${pollIntervalMs / 1000} s.\n`,
  );
  const firstCalls = new CallLog();
  let cloud = await startCloud(config, firstCalls);
  const port = Number(new URL(cloud.simulator.url).port);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-bench-reset-'));
  // The Images' content comes from the cloud's mirror, on loopback: downloads refuse it unless allowed, that address and port only.
  const serverArgs = ['--image-download-allow', new URL(cloud.simulator.url).host];
  let server: ServerProcess | undefined;
  let api: ApiClient | undefined;
  try {
    // ---- 1. the first build
    server = await startServerProcess(dataDir, serverArgs);
    api = new ApiClient(server.url, path.join(dataDir, 'kubeconfig'), servedKinds);
    const examples = loadExamples(cloud.simulator.url);
    const clusters: ClusterObjects[] = Array.from({ length: config.clusters }, (_, index) =>
      clusterObjects(examples, `reset-${String(index).padStart(3, '0')}`, workers),
    );
    const inventoryBefore = inventory(cloud);
    const buildStarted = performance.now();
    const client = api;
    for (const object of clusters[0].shared) await client.create(object);
    await pool(clusters.length, 4, async (index) => {
      const objects = clusters[index];
      for (const object of [...objects.cluster, ...objects.controlPlane.flat(), ...objects.workers.flat()]) await client.create(object);
    });
    const built = await waitForAll(server.kubectl, objectsExpected, 'Ready', (object) => readyOf(object)?.status === 'True', config.timeoutMs);
    const build = firstCalls.between(buildStarted, built);
    await firstCalls.settle(3_000, 30_000);
    const buildTail = firstCalls.between(built);
    for (const warning of duplicateWarnings(inventoryDelta(inventoryBefore, inventory(cloud)), clusterShape(clusters[0]), config.clusters)) log(warning);
    const recorded = await recordedIds(server.kubectl, firstCalls.calls);
    log(
      `First build: all ${objectsExpected} clusters and machines Ready after ${seconds(built - buildStarted)}, ${build.length} calls (${buildTail.length} more until 3 s quiet); ${recorded.ids.size} OpenStack IDs recorded in the objects' status.`,
    );

    // ---- 2. the reset: the server killed, the cloud started again empty on the same port, the server again
    api.close();
    api = undefined;
    await server.kill();
    server = undefined;
    await cloud.close();
    const healCalls = new CallLog();
    cloud = await startCloud(config, healCalls, port);
    const restarted = performance.now();
    server = await startServerProcess(dataDir, serverArgs);
    const serving = performance.now();
    const stillOld = (object: Listed) => [...idsIn(object.status)].filter((id) => recorded.byCluster.get(object.metadata.name)?.has(id));
    /**
     * A cluster is healed once its network, router, API load balancer and bastion are new, and it is Ready or says its
     * API endpoint moved (the new cloud gave the floating IP's address to something else first: said, never hidden).
     * It was Ready before the reset, so Ready alone says nothing.
     */
    const healed = (object: Listed) => {
      const ready = readyOf(object);
      if (object.kind === 'OpenStackMachine') return ready?.status === 'False' && ready.reason === 'InstanceDeleted';
      const status = object.status as
        | { network?: Named; router?: Named; apiServerManagedLoadBalancer?: Named; apiServerLoadBalancer?: Named; bastion?: Named }
        | undefined;
      const loadBalancer = status?.apiServerManagedLoadBalancer ?? status?.apiServerLoadBalancer;
      const renewed = [status?.network, status?.router, loadBalancer, status?.bastion].every(
        (resource) => resource?.id !== undefined && !recorded.ids.has(resource.id),
      );
      return renewed && ((ready?.status === 'True' && ready.reason === 'Ready') || endpointMoved(object) !== undefined);
    };
    const healedAt = await waitForAll(
      server.kubectl,
      objectsExpected,
      'healed (clusters Ready on new resources, machines InstanceDeleted)',
      healed,
      config.timeoutMs,
    );
    const heal = healCalls.between(restarted, healedAt);
    await healCalls.settle(3_000, 30_000);
    const healTail = healCalls.between(healedAt);
    const clustersAfter = (await list(server.kubectl, 'openstackclusters')).filter((object) => object.kind === 'OpenStackCluster');
    const moved = clustersAfter.filter((object) => endpointMoved(object) !== undefined);
    const oldLeft = clustersAfter.flatMap((object) => stillOld(object).map((id) => `${object.metadata.name}: ${recorded.ids.get(id)} ${id}`));
    const messages = new Map<string, number>();
    for (const object of await list(server.kubectl, 'openstackmachines')) {
      const message = readyOf(object)?.message ?? '';
      messages.set(message, (messages.get(message) ?? 0) + 1);
    }

    // ---- the figures
    log('');
    log(
      table([
        ['figure', 'first build', 'heal after the reset'],
        [
          'until the end state',
          `${seconds(built - buildStarted)} (from the first object applied: all Ready)`,
          `${seconds(healedAt - restarted)} (from the restart; serving after ${seconds(serving - restarted)}): clusters Ready on new resources, machines InstanceDeleted`,
        ],
        [
          'calls (Keystone included)',
          `${build.length} (${fixed(build.length / config.clusters)} per cluster)`,
          `${heal.length} (${fixed(heal.length / config.clusters)} per cluster, ${fixed(heal.length / Math.max(1, build.length), 2)}x the build)`,
        ],
        ['calls after the end state until 3 s quiet', String(buildTail.length), String(healTail.length)],
        ['calls per second, mean', fixed(build.length / ((built - buildStarted) / 1000), 0), fixed(heal.length / ((healedAt - restarted) / 1000), 0)],
        ['failed calls (4xx, 5xx)', String(failures(build).length), String(failures(heal).length)],
        ['429s', String(build.filter((call) => call.outcome === '429').length), String(heal.filter((call) => call.outcome === '429').length)],
      ]),
    );
    log(`\nOutcomes, first build: ${outcomes(build)}`);
    log(`Outcomes, heal: ${outcomes(heal)}`);
    for (const [label, calls] of [
      ['first build', build],
      ['heal', heal],
    ] as const) {
      const failed = failures(calls);
      if (failed.length > 0)
        log(
          `Failed calls, ${label}: ${countBy(failed, (call) => `${call.outcome} ${byRequestShape(call)}`)
            .map(([request, count]) => `${request}: ${count}`)
            .join(', ')}`,
        );
    }
    log(`Machines' Ready messages at the end: ${[...messages].map(([message, count]) => `${count} x ${JSON.stringify(message)}`).join(', ')}`);
    log(`Recorded IDs still in a cluster's status at the end: ${oldLeft.length === 0 ? 'none' : oldLeft.join('; ')}`);
    log(`Clusters Ready again: ${clustersAfter.length - moved.length} of ${clustersAfter.length}; APIEndpointReady=False EndpointMoved: ${moved.length}`);
    for (const cluster of moved) log(`  ${cluster.metadata.name}: ${await endpointHolder(cloud, cluster)}`);
    log('\nBy service and method:');
    log(sideBySide(build, heal, config.clusters, byServiceMethod));
    log('\nBy request shape:');
    log(sideBySide(build, heal, config.clusters, byRequestShape));
    log('\nReads of the recorded resources on the new cloud, from the restart to the end state (no storm: about one GET each):');
    log(readsPerRecorded(recorded, heal));
  } catch (error) {
    if (server) {
      const file = path.join(os.tmpdir(), 'bench-reset-server.log');
      await writeFile(file, server.output());
      log(`the server's output is in ${file}`);
    }
    throw error;
  } finally {
    api?.close();
    await server?.kill();
    await cloud.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench/reconcile/reset failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
