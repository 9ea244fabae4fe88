/**
 * bench:graphql — the Ansible plugin's inventory query against /graphql over
 * HTTPS for a 1,000-host cluster (and a 10-host one, to show that storage
 * reads do not grow with hosts): p50/p99 latency and storage reads per query,
 * with the storage unchanged between queries and with a write before each
 * query (so every query reads storage again).
 *
 * Objects are written straight into the SQLite storage under their
 * kinds' storage keys, status included, as the reconciler leaves them.
 */
import { openStackClusterKind, openStackMachineKind, openStackServerKind } from '../../src/api/infrastructure/kinds.js';
import { keysOf } from '../../src/apiserver/registry/keys.js';
import type { KindDefinition } from '../../src/apiserver/registry/kind.js';
import type { JsonObject } from '../../src/storage/interface.js';
import { sourceRevision, summarize, table } from '../common.js';
import { teamAObjects } from '../../harness/inventory-fixtures.js';
import { startInventoryServer, tokens, type InventoryServer } from '../../harness/inventory-server.js';

const query = `query AnsibleInventory($namespace: String, $name: String, $labelSelector: String) {
  inventory(namespace: $namespace, name: $name, labelSelector: $labelSelector) {
    revision
    groups { name hosts children vars }
    hosts { name vars }
  }
}`;

const warmup = 20;
const samples = Number(process.env.BENCH_SAMPLES ?? 200);
const kinds: Record<string, KindDefinition> = {
  OpenStackCluster: openStackClusterKind,
  OpenStackMachine: openStackMachineKind,
  OpenStackServer: openStackServerKind,
};

interface Result {
  hosts: number;
  scenario: string;
  latencyMs: ReturnType<typeof summarize>;
  readsPerQuery: ReturnType<typeof summarize>;
}

async function writeStraight(server: InventoryServer, objects: JsonObject[]): Promise<void> {
  for (const object of objects) {
    const { metadata, ...rest } = object as { metadata: { namespace: string; name: string; resourceVersion?: string } } & JsonObject;
    const { resourceVersion: _rv, ...meta } = metadata;
    await server.storage.create(keysOf(kinds[String(object.kind)]!).key(meta.namespace, meta.name), { ...rest, metadata: meta });
  }
}

async function measure(server: InventoryServer, hosts: number, scenario: string, beforeEach: (i: number) => Promise<void>): Promise<Result> {
  const latencies: number[] = [];
  const reads: number[] = [];
  for (let i = 0; i < warmup + samples; i++) {
    await beforeEach(i);
    server.storage.reads = 0;
    const started = process.hrtime.bigint();
    const answer = await server.graphql(query, { namespace: 'team-a', name: 'c1' }, { token: tokens.bob });
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (answer.status !== 200 || answer.body.errors) throw new Error(`query failed: ${answer.status} ${JSON.stringify(answer.body).slice(0, 500)}`);
    // Control plane and workers, plus the bastion.
    if (answer.body.data.inventory.hosts.length !== hosts + 1) throw new Error(`expected ${hosts + 1} hosts, got ${answer.body.data.inventory.hosts.length}`);
    if (i >= warmup) {
      latencies.push(elapsed);
      reads.push(server.storage.reads);
    }
  }
  return { hosts, scenario, latencyMs: summarize(latencies), readsPerQuery: summarize(reads) };
}

async function benchCluster(hosts: number): Promise<Result[]> {
  const server = await startInventoryServer();
  try {
    await writeStraight(server, teamAObjects(hosts - 1));
    const tick = '/registry/bench.capo.dev/ticks/tick';
    await server.storage.create(tick, { tick: 0 });
    const bump = async (i: number) => {
      const entry = (await server.storage.get(tick))!;
      await server.storage.update(tick, { tick: i }, entry.modRevision);
    };
    return [await measure(server, hosts, 'unchanged storage', async () => undefined), await measure(server, hosts, 'a write before each query', bump)];
  } finally {
    await server.close();
  }
}

const results = [...(await benchCluster(10)), ...(await benchCluster(1000))];
const ms = (value: number) => value.toFixed(2);
console.log(
  `bench:graphql — Ansible inventory query over HTTPS, ${samples} sequential queries after ${warmup} warm-up, source ${sourceRevision()}, node ${process.version}`,
);
console.log(
  table([
    ['hosts', 'storage', 'p50 ms', 'p99 ms', 'max ms', 'reads/query (min-max)'],
    ...results.map((r) => [
      String(r.hosts),
      r.scenario,
      ms(r.latencyMs.p50),
      ms(r.latencyMs.p99),
      ms(r.latencyMs.max),
      `${r.readsPerQuery.p50} (${Math.min(r.readsPerQuery.p50, r.readsPerQuery.max)}-${r.readsPerQuery.max})`,
    ]),
  ]),
);
const target = results.filter((r) => r.hosts === 1000).every((r) => r.latencyMs.p99 <= 50);
console.log(`target p99 <= 50 ms at 1,000 hosts: ${target ? 'met' : 'NOT met'}`);
