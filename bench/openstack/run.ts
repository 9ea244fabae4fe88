/**
 * OpenStack client and simulator benchmark. Runs the simulator
 * (bench/openstack/simulator.ts) in its own process and measures, from this
 * (the load) process:
 *   1. the simulator's throughput with a raw keep-alive node:http client and
 *      one pre-issued token, 32 requests in flight;
 *   2. what OpenStackSession plus the typed calls cost over that raw client,
 *      in CPU per call and in latency, one call and 32 calls in flight,
 *      split into steps by two clients in between (raw + JSON.parse, and got
 *      with the session's options + JSON.parse);
 *   3. the simulator's memory with the population (servers and ports) in place.
 * It is a measurement, not a test: no targets are set, but a wrong answer
 * from the simulator or a second Keystone token aborts the run or sets a
 * non-zero exit code.
 *
 *   npm run bench:openstack                     # the full run
 *   npm run bench:openstack -- --quick          # a small run that checks the harness
 *   npm run bench:openstack -- --cpu-prof DIR   # then: node dist/bench/apiserver/profile.js DIR/load (or DIR/simulator)
 *
 * Every phase is a bounded loop on loopback; the simulator stops when this
 * process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session as InspectorSession } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { got } from 'got';
import { MetricsRegistry } from '../../src/observability/metrics.js';
import { createServiceClients, loadCloud, novaMicroversion, OpenStackSession, type CloudConfig, type ServiceClients } from '../../src/openstack/index.js';
import type { MemoryReply, SimulatorHello } from './simulator.js';
import { mb, monotonicUs, phaseMarks, pool, pseudoRandom, sampleMachine, sampleProcess, sourceRevision, summarize, type Summary, table } from '../common.js';
import { RawClient } from '../raw-client.js';

// ---- configuration ---------------------------------------------------------

interface Config {
  servers: number;
  ports: number;
  concurrency: number;
  networkReads: number;
  portReads: number;
  serverLists: number;
  cycles: number;
  /** Calls per (call, in-flight level, client) in the overhead comparison; servers/detail uses a tenth. */
  overheadCalls: number;
  /** Unmeasured calls before each measured series, so JIT warm-up is not charged to whichever client goes first. */
  warmup: number;
  cpuProfDir?: string;
}

const usage = `Usage: node dist/bench/openstack/run.js [options]
  --quick            a small run (10 servers, 100 ports, a tenth of the requests) to check the harness
  --cpu-prof DIR     profile both processes; summarize with
                       node dist/bench/apiserver/profile.js DIR/load
                       node dist/bench/apiserver/profile.js DIR/simulator
`;

function parseConfig(): Config {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      'cpu-prof': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const quick = values.quick ?? false;
  const scale = quick ? 0.1 : 1;
  return {
    servers: 100 * scale,
    ports: 1_000 * scale,
    concurrency: 32,
    networkReads: 20_000 * scale,
    portReads: 20_000 * scale,
    serverLists: 2_000 * scale,
    cycles: 5_000 * scale,
    overheadCalls: 3_000 * scale,
    warmup: 300 * scale,
    cpuProfDir: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined,
  };
}

// ---- statistics ------------------------------------------------------------

const ms = (value: number) => (Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) >= 10 ? value.toFixed(1) : value.toFixed(2));
const signedMs = (value: number) => `${value >= 0 ? '+' : ''}${ms(value)}`;
const thousands = (value: number) => Math.round(value).toLocaleString('en-US');

// ---- processes -------------------------------------------------------------

interface SimulatorProcess {
  hello: SimulatorHello;
  child: ChildProcess;
  memory(): Promise<MemoryReply>;
  stop(): Promise<void>;
}

async function startSimulatorProcess(config: Config): Promise<SimulatorProcess> {
  const entry = fileURLToPath(new URL('./simulator.js', import.meta.url));
  const profileDir = config.cpuProfDir === undefined ? undefined : path.join(config.cpuProfDir, 'simulator');
  const nodeArgs = ['--expose-gc', ...(profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`])];
  const child = spawn(process.execPath, [...nodeArgs, entry], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Lines from the simulator, in order: the hello, then one reply per `memory` request.
  const waiting: ((line: string) => void)[] = [];
  const early: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const next = waiting.shift();
    if (next) next(line);
    else early.push(line);
  });
  const nextLine = (what: string, timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      const queued = early.shift();
      if (queued !== undefined) return resolve(queued);
      const timer = setTimeout(() => reject(new Error(`simulator: no ${what} within ${timeoutMs / 1000} s`)), timeoutMs);
      waiting.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
    });
  const died = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`simulator exited with code ${code} before serving`))));
  died.catch(() => undefined);
  const hello = JSON.parse(await Promise.race([nextLine('hello', 30_000), died])) as SimulatorHello;
  return {
    hello,
    child,
    async memory() {
      child.stdin!.write('memory\n');
      return JSON.parse(await nextLine('memory reply', 30_000)) as MemoryReply;
    },
    async stop() {
      // Closing stdin asks for a clean exit (the CPU profile is written on exit); kill only if it hangs.
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---- the raw client --------------------------------------------------------

/** Headers the session sends for Nova calls, so both clients get the same (2.60) representation. */
const computeHeaders = { 'OpenStack-API-Version': `compute ${novaMicroversion}`, 'X-OpenStack-Nova-API-Version': novaMicroversion };

/** The raw client with a token fixed in advance; it never re-authenticates. */
class TokenClient extends RawClient {
  token = '';

  constructor(base: URL) {
    super(base, new http.Agent({ keepAlive: true, maxSockets: 64 }), () => ({ Accept: 'application/json', 'X-Auth-Token': this.token }));
  }

  /** One password token for the whole run. */
  async authenticate(cloud: CloudConfig): Promise<void> {
    const auth = cloud.auth;
    if (auth.method !== 'password' || !('name' in auth.user) || !('name' in auth.project))
      throw new Error('the simulator cloud is expected to use a password and names');
    const body = JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: auth.user.name, domain: auth.user.domain, password: auth.password } } },
        scope: { project: { name: auth.project.name, domain: auth.project.domain } },
      },
    });
    const identityPath = `${new URL(cloud.authUrl).pathname}/auth/tokens?nocatalog`;
    const response = await this.request('POST', identityPath, { body });
    const subject = response.headers['x-subject-token'];
    if (response.status !== 201 || typeof subject !== 'string') throw new Error(`token request answered ${response.status}`);
    this.token = subject;
  }
}

/**
 * got with the options OpenStackSession passes it, and nothing of the
 * session around it: separates the HTTP library's cost from the session's
 * own (token, retries, metrics, schema validation).
 */
class GotClient {
  readonly agents = { http: new http.Agent({ keepAlive: true }) };

  constructor(
    private readonly base: string,
    private readonly token: () => string,
  ) {}

  async getJson(urlPath: string, compute: boolean): Promise<unknown> {
    const headers: Record<string, string> = {
      'User-Agent': 'capo-bench/1',
      Accept: 'application/json',
      'X-Auth-Token': this.token(),
      ...(compute ? computeHeaders : {}),
    };
    const response = await got(this.base + urlPath, {
      method: 'GET',
      headers,
      responseType: 'text',
      throwHttpErrors: false,
      followRedirect: false,
      retry: { limit: 0 },
      timeout: { connect: 10_000, secureConnect: 10_000, request: 30_000 },
      agent: this.agents,
    });
    if (response.statusCode !== 200) throw new Error(`GET ${urlPath}: expected 200, got ${response.statusCode}`);
    return JSON.parse(response.body);
  }
}

// ---- phases ----------------------------------------------------------------

interface PhaseCost {
  wallSeconds: number;
  simulatorCpuSeconds: number;
  loadCpuSeconds: number;
  /** CPU the rest of the machine used meanwhile: on a shared host, the sign that a figure was disturbed. */
  otherCpuSeconds: number;
  stealSeconds: number;
}

const costs: { name: string; cost: PhaseCost }[] = [];

/** Wall time and the CPU each process spent, to tell a saturated simulator from a busy client. */
async function measured<T>(pid: number, name: string, body: () => Promise<T>): Promise<{ value: T; cost: PhaseCost }> {
  const simulatorBefore = sampleProcess(pid).cpuSeconds;
  const machineBefore = sampleMachine();
  const loadBefore = process.cpuUsage();
  const startUs = monotonicUs();
  const started = performance.now();
  const value = await body();
  const wallSeconds = (performance.now() - started) / 1000;
  phaseMarks.push({ name, startUs, endUs: monotonicUs() });
  const load = process.cpuUsage(loadBefore);
  const machineAfter = sampleMachine();
  const simulatorCpuSeconds = sampleProcess(pid).cpuSeconds - simulatorBefore;
  const loadCpuSeconds = (load.user + load.system) / 1e6;
  const cost: PhaseCost = {
    wallSeconds,
    simulatorCpuSeconds,
    loadCpuSeconds,
    otherCpuSeconds: Math.max(0, machineAfter.busySeconds - machineBefore.busySeconds - simulatorCpuSeconds - loadCpuSeconds),
    stealSeconds: machineAfter.stealSeconds - machineBefore.stealSeconds,
  };
  costs.push({ name, cost });
  return { value, cost };
}

interface Population {
  networkId: string;
  portIds: string[];
  serverIds: string[];
  serverRate: number;
  portRate: number;
  activeAfterMs: number;
}

/** Built through the session and the typed calls, as the controllers would: the setup doubles as a correctness check of both. */
async function populate(clients: ServiceClients, config: Config, countCall: () => void): Promise<Population> {
  const call = <T>(promise: Promise<T>) => {
    countCall();
    return promise;
  };
  const images = await call(clients.glance.listImages({ status: 'active' }));
  if (images.length === 0) throw new Error('the simulator offers no active image');
  const flavor = await call(clients.nova.findFlavorByName('m1.tiny'));
  if (!flavor) throw new Error('the simulator has no m1.tiny flavor');
  const network = await call(clients.neutron.createNetwork({ name: 'bench-net' }));
  // A /20 leaves room for every port of the run (population, servers' ports and in-flight creates).
  await call(clients.neutron.createSubnet({ network_id: network.id, cidr: '10.20.0.0/20', ip_version: 4, name: 'bench-subnet' }));

  const serverIds: string[] = new Array(config.servers);
  const serversStarted = performance.now();
  await pool(config.servers, 8, async (i) => {
    const created = await call(
      clients.nova.createServer({
        name: `bench-server-${String(i).padStart(4, '0')}`,
        flavorRef: flavor.id,
        imageRef: images[0].id,
        networks: [{ uuid: network.id }],
        metadata: { bench: 'capo' },
        tags: ['capo-bench'],
      }),
    );
    serverIds[i] = created.id;
  });
  const serverRate = config.servers / ((performance.now() - serversStarted) / 1000);
  // Servers go ACTIVE after the simulator's transition delay; servers/detail should list them as a controller would see them.
  const deadline = performance.now() + 60_000;
  for (;;) {
    const servers = await call(clients.nova.listServers());
    const failed = servers.find((s) => s.status === 'ERROR');
    if (failed) throw new Error(`server ${failed.name} went to ERROR`);
    if (servers.length === config.servers && servers.every((s) => s.status === 'ACTIVE')) break;
    if (performance.now() > deadline)
      throw new Error(`servers not ACTIVE after 60 s (${servers.filter((s) => s.status === 'ACTIVE').length}/${config.servers})`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const activeAfterMs = performance.now() - serversStarted;

  const portIds: string[] = new Array(config.ports);
  const portsStarted = performance.now();
  await pool(config.ports, config.concurrency, async (i) => {
    const port = await call(
      clients.neutron.createPort({ network_id: network.id, name: `bench-port-${String(i).padStart(4, '0')}`, description: 'bench/openstack' }),
    );
    portIds[i] = port.id;
  });
  const portRate = config.ports / ((performance.now() - portsStarted) / 1000);
  return { networkId: network.id, portIds, serverIds, serverRate, portRate, activeAfterMs };
}

/** One GET in its raw and its typed form; `check` validates a parsed raw body (used on a sample, to keep the raw client cheap). */
interface ReadCall {
  name: string;
  path: (i: number) => string;
  compute: boolean;
  typed: (clients: ServiceClients, i: number) => Promise<unknown>;
  check: (body: unknown, i: number) => string | undefined;
  /** Calls per series relative to Config.overheadCalls: the server list is a hundred times the bytes. */
  weight: number;
}

function readCalls(population: Population, config: Config): ReadCall[] {
  const random = pseudoRandom(42);
  const portOrder = Array.from({ length: 1 << 16 }, () => population.portIds[Math.floor(random.next().value * population.portIds.length)]);
  const portAt = (i: number) => portOrder[i & 0xffff];
  const listOf = (body: unknown, key: string) => (body as Record<string, unknown>)[key] as { id: string }[] | undefined;
  return [
    {
      name: 'networks?name=x',
      path: () => '/network/v2.0/networks?name=x',
      compute: false,
      typed: (clients) => clients.neutron.listNetworks({ name: 'x' }),
      check: (body) => (listOf(body, 'networks')?.length === 0 ? undefined : 'expected no network named x'),
      weight: 1,
    },
    {
      name: 'port by id',
      path: (i) => `/network/v2.0/ports/${portAt(i)}`,
      compute: false,
      typed: (clients, i) => clients.neutron.getPort(portAt(i)),
      check: (body, i) => ((body as { port?: { id?: string } }).port?.id === portAt(i) ? undefined : 'wrong port'),
      weight: 1,
    },
    {
      name: `servers/detail (${config.servers})`,
      path: () => '/compute/v2.1/servers/detail',
      compute: true,
      typed: (clients) => clients.nova.listServers(),
      check: (body) => (listOf(body, 'servers')?.length === config.servers ? undefined : `expected ${config.servers} servers`),
      weight: 0.1,
    },
  ];
}

interface ThroughputResult {
  name: string;
  count: number;
  cost: PhaseCost;
  latencies: Summary;
  responseBytes: number;
}

const checkEvery = 100;

async function throughputPhase(pid: number, raw: TokenClient, call: ReadCall, count: number, config: Config): Promise<ThroughputResult> {
  // Fresh connections for each phase: see Clients.dropIdleConnections.
  raw.agent.destroy();
  await pool(
    config.warmup,
    config.concurrency,
    async (i) => void (await raw.expect(200, 'GET', call.path(i), { headers: call.compute ? computeHeaders : {} })),
  );
  const latencies = new Float64Array(count);
  let bytes = 0;
  const { cost } = await measured(pid, `throughput: ${call.name}`, () =>
    pool(count, config.concurrency, async (i) => {
      const response = await raw.expect(200, 'GET', call.path(i), { headers: call.compute ? computeHeaders : {} });
      latencies[i] = response.ms;
      bytes += response.body.length;
      if (i % checkEvery === 0) {
        const problem = call.check(JSON.parse(response.body.toString('utf8')), i);
        if (problem) throw new Error(`GET ${call.path(i)}: ${problem}`);
      }
    }),
  );
  return { name: call.name, count, cost, latencies: summarize(latencies), responseBytes: bytes / count };
}

async function cyclePhase(pid: number, raw: TokenClient, population: Population, config: Config) {
  const create = new Float64Array(config.cycles);
  const remove = new Float64Array(config.cycles);
  const cycle = async (i: number, record: boolean) => {
    const body = JSON.stringify({ port: { network_id: population.networkId, name: `bench-cycle-${i}` } });
    const created = await raw.expect(201, 'POST', '/network/v2.0/ports', { body });
    const id = (JSON.parse(created.body.toString('utf8')) as { port: { id: string } }).port.id;
    const deleted = await raw.expect(204, 'DELETE', `/network/v2.0/ports/${id}`);
    if (record) {
      create[i] = created.ms;
      remove[i] = deleted.ms;
    }
  };
  // Fresh connections for each phase: see Clients.dropIdleConnections.
  raw.agent.destroy();
  await pool(config.warmup, config.concurrency, (i) => cycle(i, false));
  const { cost } = await measured(pid, 'throughput: port create+delete', () => pool(config.cycles, config.concurrency, (i) => cycle(i, true)));
  return { cost, create: summarize(create), remove: summarize(remove) };
}

type ClientKind = 'raw' | 'raw + JSON.parse' | 'got + JSON.parse' | 'session';
const clientKinds: ClientKind[] = ['raw', 'raw + JSON.parse', 'got + JSON.parse', 'session'];

interface OverheadResult {
  call: string;
  inFlight: number;
  client: ClientKind;
  calls: number;
  cost: PhaseCost;
  latencies: Summary;
}

interface Clients {
  raw: TokenClient;
  got: GotClient;
  typed: ServiceClients;
  countCall: () => void;
  /**
   * The simulator closes keep-alive connections after 5 s idle, and reusing
   * one as it closes fails with "socket hang up" (the session would retry it,
   * spoiling the request count). So every series starts on fresh connections,
   * opened by its warm-up. Called between series only, with nothing in flight.
   */
  dropIdleConnections: () => void;
}

async function overheadSeries(
  pid: number,
  all: Clients,
  call: ReadCall,
  inFlight: number,
  client: ClientKind,
  calls: number,
  warmup: number,
): Promise<OverheadResult> {
  const { raw } = all;
  all.dropIdleConnections();
  const latencies = new Float64Array(calls);
  const once = async (i: number): Promise<number> => {
    if (client === 'session') {
      all.countCall();
      const started = performance.now();
      await call.typed(all.typed, i);
      return performance.now() - started;
    }
    if (client === 'got + JSON.parse') {
      const started = performance.now();
      await all.got.getJson(call.path(i), call.compute);
      return performance.now() - started;
    }
    const started = performance.now();
    const response = await raw.expect(200, 'GET', call.path(i), { headers: call.compute ? computeHeaders : {} });
    if (client === 'raw + JSON.parse') JSON.parse(response.body.toString('utf8'));
    return performance.now() - started;
  };
  await pool(warmup, inFlight, async (i) => void (await once(i)));
  const { cost } = await measured(pid, `overhead: ${call.name}, ${inFlight} in flight, ${client}`, () =>
    pool(calls, inFlight, async (i) => {
      latencies[i] = await once(i);
    }),
  );
  return { call: call.name, inFlight, client, calls, cost, latencies: summarize(latencies) };
}

/** The session's own counters, read back through the Prometheus text it would expose. */
async function sessionCounters(registry: MetricsRegistry): Promise<{ tokenIssues: number; requests: number; byStatus: Map<string, number> }> {
  let tokenIssues = 0;
  let requests = 0;
  const byStatus = new Map<string, number>();
  for (const line of (await registry.scrape()).body.split('\n')) {
    const issues = /^openstack_token_issues_total (\S+)$/.exec(line);
    if (issues) tokenIssues = Number(issues[1]);
    const request = /^openstack_api_requests_total\{.*status="([^"]*)".*\} (\S+)$/.exec(line);
    if (request) {
      requests += Number(request[2]);
      byStatus.set(request[1], (byStatus.get(request[1]) ?? 0) + Number(request[2]));
    }
  }
  return { tokenIssues, requests, byStatus };
}

// ---- profiling the load process ---------------------------------------------

/** The load process profiles itself through the inspector, so `npm run` needs no node flags. */
async function startLoadProfile(): Promise<() => Promise<object>> {
  const session = new InspectorSession();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    return profile;
  };
}

// ---- report ----------------------------------------------------------------

const perCallUs = (seconds: number, calls: number) => ((seconds * 1e6) / calls).toFixed(0);
const share = (seconds: number, wall: number) => `${seconds.toFixed(1)} (${((100 * seconds) / wall).toFixed(0)}%)`;

async function main(): Promise<void> {
  const config = parseConfig();
  const cpus = os.cpus();
  const log = (text: string) => process.stdout.write(`${text}\n`);

  log('capo-apiserver OpenStack client and simulator benchmark (bench/openstack)');
  log(
    `machine: ${cpus.length} cores (${cpus[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()}, node ${process.version}`,
  );
  log(`code: git ${sourceRevision()}`);

  const idleBefore = sampleMachine();
  await new Promise((r) => setTimeout(r, 2_000));
  const background = (sampleMachine().busySeconds - idleBefore.busySeconds) / 2;
  log(
    `background: other processes used ${(100 * background).toFixed(0)}% of a core over the 2 s before the run${background > 0.1 ? ' (not a quiet machine: expect disturbed figures)' : ''}`,
  );

  if (config.cpuProfDir) {
    mkdirSync(path.join(config.cpuProfDir, 'load'), { recursive: true });
    mkdirSync(path.join(config.cpuProfDir, 'simulator'), { recursive: true });
  }
  const stopLoadProfile = config.cpuProfDir ? await startLoadProfile() : undefined;
  const simulator = await startSimulatorProcess(config);
  const { hello } = simulator;
  const pid = hello.pid;
  log(`simulator: pid ${pid} at ${hello.url}, status transitions after ${hello.transitionDelayMs} ms, demo quotas lifted: ${hello.unlimitedQuotas.join(', ')}`);
  log(
    `load: ${config.servers} servers and ${config.ports} ports; raw reads ${thousands(config.networkReads)} + ${thousands(config.portReads)} + ${thousands(config.serverLists)}, ` +
      `${thousands(config.cycles)} port create+delete pairs, ${config.concurrency} in flight; overhead series of ${thousands(config.overheadCalls)} calls ` +
      `(servers/detail: ${thousands(config.overheadCalls / 10)}) after ${config.warmup} unmeasured`,
  );

  const registry = new MetricsRegistry({ processMetrics: false });
  const cloud = loadCloud({ cloudsYaml: hello.cloudsYaml, cloudName: hello.cloudName });
  const session = await OpenStackSession.create(cloud, { metrics: registry });
  const clients = createServiceClients(session);
  let sessionCalls = 0;
  const countCall = () => void sessionCalls++;
  const raw = new TokenClient(new URL(hello.url));
  const gotClient = new GotClient(hello.url, () => raw.token);
  try {
    const memory: { state: string; rssKb: number; reply: MemoryReply }[] = [];
    const memoryAt = async (state: string) => {
      const rssKb = sampleProcess(pid).rssKb;
      memory.push({ state, rssKb, reply: await simulator.memory() });
    };
    await memoryAt('started, empty');

    log(`\n[1/4] populating through OpenStackSession: network, subnet, ${config.servers} servers, ${config.ports} ports...`);
    const { value: population } = await measured(pid, 'populate', () => populate(clients, config, countCall));
    log(
      `      servers ${population.serverRate.toFixed(0)}/s (all ACTIVE after ${(population.activeAfterMs / 1000).toFixed(1)} s), ports ${population.portRate.toFixed(0)}/s`,
    );
    await raw.authenticate(cloud);
    const portsListed = await raw.expect(200, 'GET', '/network/v2.0/ports?fields=id');
    const portCount = (JSON.parse(portsListed.body.toString('utf8')) as { ports: unknown[] }).ports.length;
    await memoryAt(`${config.servers} servers, ${thousands(portCount)} ports (${thousands(config.ports)} + the servers')`);

    const calls = readCalls(population, config);
    const counts = [config.networkReads, config.portReads, config.serverLists];
    log(`[2/4] simulator throughput, raw client, ${config.concurrency} in flight...`);
    const throughput: ThroughputResult[] = [];
    for (const [index, call] of calls.entries()) {
      const result = await throughputPhase(pid, raw, call, counts[index], config);
      throughput.push(result);
      log(`      ${call.name}: ${(result.count / result.cost.wallSeconds).toFixed(0)}/s`);
    }
    await memoryAt('after the raw reads');
    const cycles = await cyclePhase(pid, raw, population, config);
    log(`      port create+delete: ${(config.cycles / cycles.cost.wallSeconds).toFixed(0)} pairs/s`);
    await memoryAt(`after ${thousands(config.cycles)} create+delete pairs`);

    log(`[3/4] client overhead: ${clientKinds.join(' vs ')} (OpenStackSession + typed calls)...`);
    const overhead: OverheadResult[] = [];
    const all: Clients = {
      raw,
      got: gotClient,
      typed: clients,
      countCall,
      dropIdleConnections() {
        raw.agent.destroy();
        gotClient.agents.http.destroy();
        session.close();
      },
    };
    for (const call of calls) {
      for (const inFlight of [1, config.concurrency]) {
        const n = Math.max(10, Math.round(config.overheadCalls * call.weight));
        const warmup = Math.max(10, Math.round(config.warmup * call.weight));
        for (const client of clientKinds) overhead.push(await overheadSeries(pid, all, call, inFlight, client, n, warmup));
        const [r, , , s] = overhead.slice(-clientKinds.length);
        log(
          `      ${call.name}, ${inFlight} in flight: client CPU ${perCallUs(r.cost.loadCpuSeconds, r.calls)} → ${perCallUs(s.cost.loadCpuSeconds, s.calls)} µs/call`,
        );
      }
    }

    log('[4/4] memory...');
    await memoryAt('end');
    const end = sampleProcess(pid);
    const counters = await sessionCounters(registry);

    log('\nSimulator throughput (raw node:http client, keep-alive, one pre-issued token)');
    log(
      table([
        ['request', 'count', 'in flight', 'requests/s', 'latency p50 / p99', 'response', 'simulator CPU per request', 'load CPU per request'],
        ...throughput.map((t) => [
          `GET ${t.name}`,
          thousands(t.count),
          String(config.concurrency),
          `${thousands(t.count / t.cost.wallSeconds)}/s`,
          `${ms(t.latencies.p50)} / ${ms(t.latencies.p99)} ms`,
          `${thousands(t.responseBytes)} B`,
          `${perCallUs(t.cost.simulatorCpuSeconds, t.count)} µs`,
          `${perCallUs(t.cost.loadCpuSeconds, t.count)} µs`,
        ]),
        [
          'POST port + DELETE it',
          `${thousands(config.cycles)} pairs`,
          String(config.concurrency),
          `${thousands(config.cycles / cycles.cost.wallSeconds)} pairs/s (${thousands((2 * config.cycles) / cycles.cost.wallSeconds)} req/s)`,
          `POST ${ms(cycles.create.p50)} / ${ms(cycles.create.p99)}, DELETE ${ms(cycles.remove.p50)} / ${ms(cycles.remove.p99)} ms`,
          '',
          `${perCallUs(cycles.cost.simulatorCpuSeconds, config.cycles)} µs per pair`,
          `${perCallUs(cycles.cost.loadCpuSeconds, config.cycles)} µs per pair`,
        ],
      ]),
    );

    log('\nClient overhead: the same GETs through each client (client CPU = process.cpuUsage of the load process ÷ calls)');
    log(
      table([
        ['call', 'in flight', 'client', 'calls', 'calls/s', 'client CPU per call', 'simulator CPU per call', 'latency p50 / p99'],
        ...overhead.map((o) => [
          o.call,
          String(o.inFlight),
          o.client,
          thousands(o.calls),
          `${thousands(o.calls / o.cost.wallSeconds)}/s`,
          `${perCallUs(o.cost.loadCpuSeconds, o.calls)} µs`,
          `${perCallUs(o.cost.simulatorCpuSeconds, o.calls)} µs`,
          `${ms(o.latencies.p50)} / ${ms(o.latencies.p99)} ms`,
        ]),
      ]),
    );
    log('\nSession + typed calls minus raw, split into steps (client CPU per call; each step adds to the previous one)');
    const deltas: string[][] = [['call', 'in flight', 'session − raw', 'JSON.parse', 'got over node:http', 'session + zod over got', 'latency p50 / p99']];
    for (let i = 0; i < overhead.length; i += clientKinds.length) {
      const [r, p, g, s] = overhead.slice(i, i + clientKinds.length);
      const cpu = (o: OverheadResult) => (o.cost.loadCpuSeconds * 1e6) / o.calls;
      const step = (to: OverheadResult, from: OverheadResult) => `${cpu(to) - cpu(from) >= 0 ? '+' : ''}${(cpu(to) - cpu(from)).toFixed(0)} µs`;
      deltas.push([
        r.call,
        String(r.inFlight),
        `${step(s, r)} (${cpu(r).toFixed(0)} → ${cpu(s).toFixed(0)})`,
        step(p, r),
        step(g, p),
        step(s, g),
        `${signedMs(s.latencies.p50 - r.latencies.p50)} / ${signedMs(s.latencies.p99 - r.latencies.p99)} ms`,
      ]);
    }
    log(table(deltas));

    const expectedRequests = sessionCalls + counters.tokenIssues;
    const statuses = [...counters.byStatus]
      .sort()
      .map(([status, n]) => `${status}: ${thousands(n)}`)
      .join(', ');
    log(
      `\nsession: ${counters.tokenIssues} Keystone token issue(s) for the whole run (must be 1); ${thousands(counters.requests)} HTTP requests ` +
        `for ${thousands(sessionCalls)} typed calls + the token (${counters.requests === expectedRequests ? 'no retries, no re-authentication' : `EXPECTED ${thousands(expectedRequests)}`}); by status ${statuses}`,
    );

    log('\nSimulator memory');
    log(
      table([
        ['state', 'RSS as found', 'RSS after full GC', 'heap used after GC', 'heap total after GC', 'external + array buffers'],
        ...memory.map((m) => {
          const after = (bytes: number) => (m.reply.collected ? `${(bytes / 2 ** 20).toFixed(1)} MB` : 'n/a (no --expose-gc)');
          return [
            m.state,
            `${mb(m.rssKb)} MB`,
            after(m.reply.memory.rss),
            after(m.reply.memory.heapUsed),
            after(m.reply.memory.heapTotal),
            after(m.reply.memory.external + m.reply.memory.arrayBuffers),
          ];
        }),
        ['peak of the run (VmHWM)', `${mb(end.hwmKb)} MB`, '', '', '', ''],
      ]),
    );

    log('\nWhere the time went (CPU seconds, % of one core)');
    log(
      table([
        ['phase', 'wall s', 'simulator CPU s', 'load CPU s', 'other processes CPU s', 'steal s'],
        ...costs.map(({ name, cost }) => [
          name,
          cost.wallSeconds.toFixed(2),
          share(cost.simulatorCpuSeconds, cost.wallSeconds),
          share(cost.loadCpuSeconds, cost.wallSeconds),
          share(cost.otherCpuSeconds, cost.wallSeconds),
          cost.stealSeconds.toFixed(1),
        ]),
      ]),
    );
    log(
      `\nnotes: ${population.serverIds.length} servers on one network with one port each, plus ${population.portIds.length} ports (name and description); ` +
        `every ${checkEvery}th raw response is parsed and checked; percentiles are nearest-rank; the simulator and this process share the machine's ${cpus.length} cores.`,
    );
    const disturbed = costs
      .filter(({ cost }) => cost.otherCpuSeconds / cost.wallSeconds > 0.1 || cost.stealSeconds / cost.wallSeconds > 0.1)
      .map(({ name }) => name);
    if (disturbed.length > 0) {
      log(
        `warning: other processes (or the hypervisor) took more than 10% of a core during ${disturbed.length} phase(s): ${disturbed.join('; ')}. Those figures are disturbed; rerun on a quiet machine`,
      );
    }
    if (counters.tokenIssues !== 1 || counters.requests !== expectedRequests) {
      process.exitCode = 1;
      log(`error: expected 1 token issue and ${expectedRequests} session requests, got ${counters.tokenIssues} and ${counters.requests}`);
    }
  } finally {
    raw.agent.destroy();
    gotClient.agents.http.destroy();
    session.close();
    await simulator.stop();
    if (config.cpuProfDir && stopLoadProfile) {
      const profile = await stopLoadProfile();
      writeFileSync(path.join(config.cpuProfDir, 'load', 'load.cpuprofile'), JSON.stringify(profile));
      const marks = `${JSON.stringify(phaseMarks, null, 2)}\n`;
      writeFileSync(path.join(config.cpuProfDir, 'load', 'phases.json'), marks);
      writeFileSync(path.join(config.cpuProfDir, 'simulator', 'phases.json'), marks);
      log(
        `\nCPU profiles and phases.json written to ${config.cpuProfDir}/load and ${config.cpuProfDir}/simulator; summarize with node dist/bench/apiserver/profile.js <dir>`,
      );
      log('(figures from a profiled run are inflated by the profiler; quote figures from unprofiled runs)');
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
