/**
 * Soak benchmark: the server as its own process (`node dist/src/main.js`,
 * as a supervisor runs it) under mixed load for a long time, killed with
 * SIGKILL every few minutes and started again on the same data directory.
 * The simulated cloud runs in this process, so it outlives every kill.
 *
 * Load, bounded in rate: real kubectl building and deleting example clusters
 * (the reconciler drives the cloud) and applying Secrets; raw HTTPS creates,
 * merge patches and deletes of Secrets; GraphQL inventory queries; a watch
 * kept open. Every write the server acknowledged is recorded.
 *
 * At the end, with the last server left running: every acknowledged write is
 * there (or a later write whose answer was lost in a kill), the clusters are
 * deleted and nothing of them is left in the cloud, no resource was ever held
 * twice under one name and owner, and the peak RSS of the late incarnations
 * is not above that of the early ones by more than the margin. A failed
 * check exits 1. It is a benchmark: it prints figures, nothing is timed.
 *
 *   npm run bench:soak                         # 20 minutes, a kill every 2-4 minutes
 *   npm run bench:soak -- --minutes 3 --seed 7 --kill-every 40-80
 */
import https from 'node:https';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml, stringify } from 'yaml';
import { startSimulator } from '../../src/simulator/host.js';
import { CloudCensus, type Duplicate } from '../../harness/census.js';
import { waitForDeletion, type Kubectl } from '../../harness/cluster-flow.js';
import { allowMirrorOf, startServerProcess, type ServerProcess } from '../../harness/server-process.js';
import { mb, sampleProcess, sourceRevision, table } from '../common.js';
import { RawClient } from '../raw-client.js';
import { clusterObjects, loadExamples, type KubeObject } from '../../harness/cluster-manifests.js';
import { freshSeed, seededRandom } from '../../src/simulator/seeded-random.js';

// ---- configuration ---------------------------------------------------------

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '20' },
    seed: { type: 'string' },
    'kill-every': { type: 'string', default: '120-240' },
  },
});
const minutes = Number(values.minutes);
const [killMinSeconds, killMaxSeconds] = values['kill-every'].split('-').map(Number);
if (!(minutes > 0) || !(killMinSeconds > 0) || !(killMaxSeconds >= killMinSeconds)) {
  throw new Error('usage: --minutes N (> 0) --kill-every MIN-MAX (seconds) [--seed N]');
}
const seed = values.seed === undefined ? freshSeed() : Number(values.seed);

const random = seededRandom(seed);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Peak RSS of a late incarnation may exceed the early ones' by this much before it counts as growth. */
const rssMargin = 1.25;
const clusterEveryMs = 90_000;
const clustersAlive = 2;

// ---- the server under test ---------------------------------------------------

interface Incarnation {
  pid: number;
  startedAt: number;
  readyMs: number;
  peakRssKb: number;
  lastRssKb: number;
}

const counts = new Map<string, number>();
const count = (what: string) => counts.set(what, (counts.get(what) ?? 0) + 1);

class ServerUnderTest {
  process!: ServerProcess;
  client!: RawClient;
  readonly incarnations: Incarnation[] = [];
  private credentials!: { ca: string; cert: string; key: string; token: string };

  constructor(
    readonly dataDir: string,
    /** The simulated cloud whose mirror the server downloads ORC Image content from. */
    readonly cloudUrl: string,
  ) {}

  async start(): Promise<void> {
    const started = Date.now();
    this.process = await startServerProcess(this.dataDir, allowMirrorOf(this.cloudUrl));
    const config = parseYaml(await readFile(path.join(this.dataDir, 'kubeconfig'), 'utf8'));
    const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
    this.credentials = {
      ca: decode(config.clusters[0].cluster['certificate-authority-data']),
      cert: decode(config.users[0].user['client-certificate-data']),
      key: decode(config.users[0].user['client-key-data']),
      token: (await readFile(path.join(this.dataDir, 'token'), 'utf8')).trim(),
    };
    const agent = new https.Agent({ keepAlive: true, maxSockets: 8, ca: this.credentials.ca, cert: this.credentials.cert, key: this.credentials.key });
    this.client = new RawClient(new URL(this.process.url), agent);
    while ((await this.client.request('GET', '/readyz').catch(() => ({ status: 0 }))).status !== 200) await sleep(50);
    this.incarnations.push({ pid: this.process.pid, startedAt: started, readyMs: Date.now() - started, peakRssKb: 0, lastRssKb: 0 });
  }

  get kubectl(): Kubectl {
    return this.process.kubectl;
  }

  get token(): string {
    return this.credentials.token;
  }

  async kill(): Promise<void> {
    await this.process.kill();
    this.client.agent.destroy();
    count('kills');
  }

  sampleRss(): void {
    const current = this.incarnations.at(-1);
    if (!current) return;
    try {
      const { rssKb } = sampleProcess(current.pid);
      current.lastRssKb = rssKb;
      current.peakRssKb = Math.max(current.peakRssKb, rssKb);
    } catch {
      // The process is between a kill and its restart.
    }
  }
}

// ---- what the server acknowledged -------------------------------------------

/** Per Secret: the value of its last acknowledged write (undefined: deleted), and the values of writes whose answer was lost. */
interface LedgerEntry {
  acked: string | undefined;
  uncertain: Set<string | undefined>;
}

class Ledger {
  readonly entries = new Map<string, LedgerEntry>();
  /** Secrets acknowledged to exist and not touched by an uncertain write: the only ones the load changes further. */
  readonly live: string[] = [];
  acknowledged = 0;

  ack(name: string, value: string | undefined): void {
    this.entries.set(name, { acked: value, uncertain: new Set() });
    this.acknowledged++;
    const index = this.live.indexOf(name);
    if (value === undefined && index >= 0) this.live.splice(index, 1);
    if (value !== undefined && index < 0) this.live.push(name);
  }

  lost(name: string, value: string | undefined): void {
    const entry = this.entries.get(name) ?? { acked: undefined, uncertain: new Set() };
    entry.uncertain.add(value);
    this.entries.set(name, entry);
    const index = this.live.indexOf(name);
    if (index >= 0) this.live.splice(index, 1);
  }
}

const namespace = 'soak';
const secretPath = (name?: string) => `/api/v1/namespaces/${namespace}/secrets${name ? `/${name}` : ''}`;
const secret = (name: string, value: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace },
  data: { v: Buffer.from(value).toString('base64') },
});

// ---- load --------------------------------------------------------------------

async function rawWrites(server: ServerUnderTest, ledger: Ledger, until: number): Promise<void> {
  let next = 0;
  while (Date.now() < until) {
    await sleep(100);
    const roll = random();
    const existing = ledger.live.length > 0 ? ledger.live[Math.floor(random() * ledger.live.length)] : undefined;
    const value = `raw-${next++}`;
    let name: string;
    let request: () => Promise<{ status: number }>;
    let outcome: string | undefined = value;
    if (existing === undefined || roll < 0.5) {
      name = `raw-${next}`;
      request = () => server.client.request('POST', secretPath(), { body: JSON.stringify(secret(name, value)) });
    } else if (roll < 0.85) {
      name = existing;
      request = () =>
        server.client.request('PATCH', secretPath(name), {
          body: JSON.stringify({ data: { v: Buffer.from(value).toString('base64') } }),
          contentType: 'application/merge-patch+json',
        });
    } else {
      name = existing;
      outcome = undefined;
      request = () => server.client.request('DELETE', secretPath(name));
    }
    try {
      const { status } = await request();
      count(`raw write ${status}`);
      if (status >= 200 && status < 300) ledger.ack(name, outcome);
    } catch {
      count('raw write without answer');
      ledger.lost(name, outcome);
    }
  }
}

async function kubectlWrites(server: ServerUnderTest, ledger: Ledger, dir: string, until: number): Promise<void> {
  let next = 0;
  while (Date.now() < until) {
    await sleep(3000);
    const name = `kubectl-${next % 20}`;
    const value = `kubectl-${next++}`;
    const file = path.join(dir, `${name}.yaml`);
    await writeFile(file, stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, stringData: { v: value } }));
    const result = await server.kubectl(['apply', '-f', file]);
    count(`kubectl apply exit ${result.code}`);
    // kubectl exits 0 only once the server answered the write.
    if (result.code === 0) ledger.ack(name, value);
    else ledger.lost(name, value);
    const listed = await server.kubectl(['get', 'openstackclusters,openstackmachines', '-A', '-o', 'name']);
    count(`kubectl get exit ${listed.code}`);
  }
}

async function graphqlQueries(server: ServerUnderTest, until: number): Promise<void> {
  const query = JSON.stringify({ query: '{ clusters { edges { node { name ready vars } } } inventory(namespace: "default") { hosts { name } } }' });
  while (Date.now() < until) {
    await sleep(250);
    try {
      const { status } = await server.client.request('POST', '/graphql', { body: query, headers: { Authorization: `Bearer ${server.token}` } });
      count(`graphql ${status}`);
    } catch {
      count('graphql without answer');
    }
  }
}

async function watchClusters(server: ServerUnderTest, until: number): Promise<void> {
  while (Date.now() < until) {
    const client = server.client;
    await new Promise<void>((resolve) => {
      const request = https.request(
        {
          host: client.host,
          port: client.port,
          path: '/apis/infrastructure.cluster.x-k8s.io/v1beta2/openstackclusters?watch=true&timeoutSeconds=60',
          agent: client.agent,
        },
        (response) => {
          count(`watch ${response.statusCode}`);
          response.on('data', (chunk: Buffer) => {
            for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) count('watch events');
          });
          response.on('end', resolve);
          response.on('error', () => resolve());
        },
      );
      request.on('error', () => resolve());
      request.end();
    });
    await sleep(500);
  }
}

/** Applies cluster i every clusterEveryMs and deletes the oldest beyond clustersAlive; kubectl is retried across kills. */
async function clusters(server: ServerUnderTest, files: string[], until: number): Promise<void> {
  const alive: string[] = [];
  for (let i = 0; Date.now() < until; i++) {
    const file = files[i % files.length];
    await untilOk(server, ['apply', '-f', file], until);
    alive.push(file);
    count('clusters applied');
    if (alive.length > clustersAlive) {
      await untilOk(server, ['delete', '-f', alive.shift()!, '--wait=false', '--ignore-not-found'], until);
      count('clusters deleted');
    }
    await sleep(clusterEveryMs);
  }
}

async function untilOk(server: ServerUnderTest, args: string[], until: number): Promise<void> {
  while (Date.now() < until) {
    const result = await server.kubectl(args);
    if (result.code === 0) return;
    count(`kubectl ${args[0]} retried`);
    await sleep(1000);
  }
}

async function killer(server: ServerUnderTest, until: number): Promise<void> {
  for (;;) {
    const waitMs = (killMinSeconds + random() * (killMaxSeconds - killMinSeconds)) * 1000;
    if (Date.now() + waitMs >= until) return;
    await sleep(waitMs);
    await server.kill();
    await server.start();
  }
}

// ---- the run -----------------------------------------------------------------

async function main(): Promise<void> {
  console.log(
    `soak: ${minutes} min, a SIGKILL every ${killMinSeconds}-${killMaxSeconds} s, seed ${seed} (replay with --seed ${seed}), source ${sourceRevision()}`,
  );
  const sim = await startSimulator({ port: 0, transitionDelayMs: 500 });
  const census = await CloudCensus.open(sim);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'capo-soak-'));
  const server = new ServerUnderTest(path.join(dir, 'data'), sim.url);
  const ledger = new Ledger();
  const duplicates: Duplicate[] = [];
  const failures: string[] = [];
  try {
    await server.start();
    const examples = loadExamples(sim.url);
    const { shared } = clusterObjects(examples, 'soak-0', 1);
    const sharedFile = path.join(dir, 'shared.yaml');
    await writeFile(sharedFile, shared.map((document) => stringify(document)).join('---\n'));
    await untilOk(server, ['apply', '-f', sharedFile], Date.now() + 60_000);
    const files: string[] = [];
    for (let i = 0; i < 4; i++) {
      const objects = clusterObjects(examples, `soak-${i}`, 1);
      const documents: KubeObject[] = [...objects.cluster, ...objects.controlPlane.flat(), ...objects.workers.flat()];
      files.push(path.join(dir, `cluster-${i}.yaml`));
      await writeFile(files[i], documents.map((document) => stringify(document)).join('---\n'));
    }

    const until = Date.now() + minutes * 60_000;
    const sampler = setInterval(() => server.sampleRss(), 5000);
    const censusTimer = setInterval(() => {
      census.ours().then(
        (found) => duplicates.push(...found.duplicates),
        () => count('census retried'),
      );
    }, 30_000);
    await Promise.all([
      killer(server, until),
      clusters(server, files, until),
      rawWrites(server, ledger, until),
      kubectlWrites(server, ledger, dir, until),
      graphqlQueries(server, until),
      watchClusters(server, until),
    ]);
    clearInterval(censusTimer);

    // Converge: every cluster deleted, then the checks, on the last incarnation.
    const deleteStarted = Date.now();
    for (const file of files) await untilOk(server, ['delete', '-f', file, '--wait=false', '--ignore-not-found'], Date.now() + 120_000);
    await waitForDeletion(server.kubectl, 600);
    const deletionSeconds = (Date.now() - deleteStarted) / 1000;
    clearInterval(sampler);
    server.sampleRss();

    let verified = 0;
    for (const [name, entry] of ledger.entries) {
      const { status, body } = await server.client.request('GET', secretPath(name));
      const actual = status === 404 ? undefined : Buffer.from(JSON.parse(body.toString('utf8')).data.v, 'base64').toString('utf8');
      if (actual === entry.acked || entry.uncertain.has(actual)) verified++;
      else failures.push(`Secret ${namespace}/${name} is ${actual ?? 'absent'}, but the last acknowledged write made it ${entry.acked ?? 'absent'}`);
    }
    const left = (await census.ours()).counts;
    const leftTotal = Object.values(left).reduce((sum, n) => sum + n, 0);
    const sinceBaseline = census.sinceBaseline();
    if (leftTotal > 0) failures.push(`resources left in the cloud: ${JSON.stringify(left)}`);
    if (Object.keys(sinceBaseline).length > 0) failures.push(`the cloud differs from before the run: ${JSON.stringify(sinceBaseline)}`);
    if (duplicates.length > 0) failures.push(`resources held twice: ${JSON.stringify(duplicates.slice(0, 5))}`);

    // Incarnations live minutes; the first one also builds the PKI and the caches. Compare the late ones with the early ones.
    const peaks = server.incarnations.map((incarnation) => incarnation.peakRssKb).filter((kb) => kb > 0);
    const third = Math.max(1, Math.floor(peaks.length / 3));
    const earlyPeak = Math.max(...peaks.slice(0, peaks.length - third));
    const latePeak = Math.max(...peaks.slice(peaks.length - third));
    if (peaks.length >= 2 && latePeak > earlyPeak * rssMargin) failures.push(`peak RSS grew from ${mb(earlyPeak)} MB to ${mb(latePeak)} MB`);

    console.log('\nload and outcomes');
    console.log(table([['what', 'count'], ...[...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([what, n]) => [what, String(n)])]));
    console.log('\nchecks');
    console.log(
      table([
        ['check', 'figure'],
        ['acknowledged writes', String(ledger.acknowledged)],
        ['Secrets verified (acknowledged state, or a write whose answer a kill lost)', `${verified} of ${ledger.entries.size}`],
        ['resources of ours left after deleting every cluster', String(leftTotal)],
        ['simulator inventory changed against the baseline', JSON.stringify(sinceBaseline)],
        ['names held twice by one owner, seen by the census every 30 s', String(duplicates.length)],
        ['deletion of every cluster to nothing left', `${deletionSeconds.toFixed(0)} s`],
      ]),
    );
    console.log('\nincarnations (peak RSS sampled every 5 s)');
    console.log(
      table([
        ['#', 'pid', 'ready after start', 'lived', 'peak RSS', 'last RSS'],
        ...server.incarnations.map((incarnation, i) => [
          String(i + 1),
          String(incarnation.pid),
          `${incarnation.readyMs} ms`,
          `${(((server.incarnations[i + 1]?.startedAt ?? Date.now()) - incarnation.startedAt) / 1000).toFixed(0)} s`,
          `${mb(incarnation.peakRssKb)} MB`,
          `${mb(incarnation.lastRssKb)} MB`,
        ]),
      ]),
    );
    console.log(`\nRSS: early incarnations peaked at ${mb(earlyPeak)} MB, the last third at ${mb(latePeak)} MB (growth allowed: x${rssMargin})`);
  } finally {
    await server.process?.kill().catch(() => undefined);
    census.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    console.log(`\nFAILED:\n${failures.map((failure) => `- ${failure}`).join('\n')}`);
    process.exit(1);
  }
  console.log('\nall checks passed');
}

await main();
