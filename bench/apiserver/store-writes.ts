/**
 * ResourceStore writes in one process, without HTTP: what a write costs the server itself (decoding,
 * copies, validation, field management, the commit) when it starts from the watch cache's frozen
 * copy, as the reconciler's status writes do. OpenStackClusters of bench/apiserver's size with a
 * Ready cluster's status, on SQLite in memory behind the watch cache, written by the reconciler's
 * client (KindClient); each write changes one condition's message (a status patch) or one label (a
 * patch of the main resource).
 *
 *   node dist/bench/apiserver/store-writes.js               # 200 objects, 20,000 writes of each kind
 *   node dist/bench/apiserver/store-writes.js --writes 2000 # a quick look
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { UserInfo } from '../../src/apiserver/auth/user.js';
import { ResourceStore, type WriteOptions } from '../../src/apiserver/store/resource-store.js';
import type { JsonObject } from '../../src/storage/interface.js';
import { SqliteStorage } from '../../src/storage/sqlite.js';
import { WatchCache } from '../../src/storage/watch-cache.js';
import { servedKinds } from '../../src/served-kinds.js';
import { KindClient, metaOf } from '../../src/reconcile/objects.js';
import { sourceRevision, table } from '../common.js';
import { objectName, openStackCluster } from './open-stack-cluster.js';

const { values } = parseArgs({ options: { objects: { type: 'string', default: '200' }, writes: { type: 'string', default: '20000' } } });
const objects = Number(values.objects);
const writes = Number(values.writes);
const namespace = 'bench';
const user: UserInfo = { name: 'bench', groups: ['system:masters'] };
const options: WriteOptions = { dryRun: false, fieldManager: 'capo-apiserver', fieldValidation: 'Ignore', user };

const definition = servedKinds.find((kind) => kind.kind === 'OpenStackCluster')!;
const version = definition.versions.find((candidate) => candidate.name === 'v1beta2')!;

/** What a Ready cluster's status holds: its network, router, load balancer, security groups and conditions. */
function readyStatus(index: number): JsonObject {
  const id = (what: string) => `${what}-${String(index).padStart(6, '0')}-0000-4000-8000-000000000000`;
  const identified = (what: string) => ({ id: id(what), name: `k8s-clusterapi-cluster-${namespace}-${objectName(index)}-${what}`, tags: ['bench'] });
  const network = { ...identified('network'), subnets: [{ ...identified('subnet'), cidr: `10.${index % 250}.0.0/24` }] };
  return {
    initialization: { provisioned: true },
    network,
    externalNetwork: identified('external'),
    router: { ...identified('router'), ips: ['203.0.113.7'] },
    apiServerManagedLoadBalancer: { ...identified('loadbalancer'), ip: '203.0.113.10', internalIP: '10.0.0.10', loadBalancerNetwork: network },
    controlPlaneSecurityGroup: { id: id('controlplane'), name: 'controlplane' },
    workerSecurityGroup: { id: id('worker'), name: 'worker' },
    failureDomains: [{ name: 'nova', controlPlane: true }],
    conditions: ['Ready', 'NetworkReady', 'SecurityGroupsReady', 'APIEndpointReady', 'BastionReady'].map((type) => ({
      type,
      status: 'True',
      reason: type,
      message: '',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    })),
  };
}

/** Blocks of writes, timed apart: on a shared machine the fastest block is the figure least disturbed by others. */
const blocks = 10;

async function timed(name: string, write: (index: number, round: number) => Promise<unknown>): Promise<string[]> {
  const perBlock = Math.ceil(writes / blocks);
  const wallUs: number[] = [];
  const cpuUs: number[] = [];
  for (let block = 0, round = 0; block < blocks; block++) {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (const end = Math.min(writes, round + perBlock); round < end; round++) await write(round % objects, round);
    const cpu = process.cpuUsage(cpuBefore);
    wallUs.push((1000 * (performance.now() - started)) / perBlock);
    cpuUs.push((cpu.user + cpu.system) / perBlock);
  }
  const medianAndMin = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} / ${sorted[0]!.toFixed(1)}`;
  };
  return [name, String(writes), medianAndMin(wallUs), medianAndMin(cpuUs)];
}

async function main(): Promise<void> {
  process.stdout.write(`# bench/apiserver/store-writes (code ${sourceRevision()}, Node ${process.version}, ${os.cpus().length} CPUs)\n\n`);
  const backend = SqliteStorage.open(':memory:');
  const storage = new WatchCache(backend);
  const store = new ResourceStore(definition, storage);
  for (let index = 0; index < objects; index++) {
    await store.create(namespace, openStackCluster(index), version, options);
    await store.patch(namespace, objectName(index), (current) => ({ ...(current as JsonObject), status: readyStatus(index) }), version, 'status', options);
  }
  // Reads the cache has caught up with, so that every write starts from its copy.
  await storage.list(store.prefix(namespace));
  const client = new KindClient(store);
  const targets = await Promise.all(
    Array.from({ length: objects }, async (_, index) => {
      const object = (await client.get({ namespace, name: objectName(index) }))!;
      return { namespace, name: objectName(index), uid: metaOf(object).uid! };
    }),
  );
  const statusWrite = (index: number, round: number) =>
    client.updateStatus(targets[index]!, (status) => {
      (status.conditions as JsonObject[])[0]!.message = `round ${round}`;
    });
  const labelWrite = (index: number, round: number) =>
    client.update(targets[index]!, (object) => {
      metaOf(object).labels!.round = String(round);
    });
  // Warm-up: the first writes run cold code.
  for (let round = 0; round < Math.min(writes, 2000); round++) await statusWrite(round % objects, -round);
  const rows = [
    ['write', 'writes', `µs each, wall (median / fastest of ${blocks} blocks)`, 'µs CPU each (median / fastest)'],
    await timed('status patch', statusWrite),
    await timed('label patch', labelWrite),
  ];
  // A write that changed nothing would cost less and measure nothing: the last of each must be stored.
  const last = (await client.get(targets[(writes - 1) % objects]!))!;
  const lastRound = String(writes - 1);
  if ((last.status as { conditions: JsonObject[] }).conditions[0]!.message !== `round ${lastRound}` || metaOf(last).labels?.round !== lastRound)
    throw new Error('the last writes were not stored');
  process.stdout.write(`${objects} OpenStackClusters with a Ready status, SQLite in memory behind the watch cache\n\n${table(rows)}\n`);
  await storage.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`bench/apiserver/store-writes failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
