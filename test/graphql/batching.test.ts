/**
 * No N+1: a query's storage reads are the same for a cluster of 3 hosts and
 * one of 23, however many nested fields ask for machines, nodes and hosts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cluster, machine, server as openStackServer } from '../../harness/inventory-objects.js';
import { seed, teamAObjects, teamBObjects } from '../../harness/inventory-fixtures.js';
import { startInventoryServer, tokens, type InventoryServer } from '../../harness/inventory-server.js';

let server: InventoryServer;

beforeAll(async () => {
  server = await startInventoryServer();
  await seed(server, [...teamAObjects(2), ...teamBObjects()]);
});

afterAll(async () => {
  await server?.close();
});

const everything = `{
  inventory { revision groups { name hosts vars } hosts { name vars } ansibleList }
  clusters(first: 10) { edges { node {
    vars extensions { spec status missing { variable } } sshPrivateKeySecret { name }
    machines { name addresses { address } } nodes { name phase vars } inventory { hosts { name vars } }
  } } }
  c1: cluster(namespace: "team-a", name: "c1") { nodes { name } machines { name } }
}`;

async function readsOf(query: string, token: string): Promise<{ reads: number; hosts: number }> {
  server.storage.reads = 0;
  const answer = await server.graphql(query, {}, { token });
  expect(answer.body.errors).toBeUndefined();
  return { reads: server.storage.reads, hosts: answer.body.data.inventory.hosts.length };
}

it('reads storage the same number of times whatever the number of hosts', async () => {
  // Both measurements follow writes, so neither is served from a snapshot kept from an earlier read.
  const small = await readsOf(everything, tokens.bob);
  expect(small.hosts).toBe(4);
  // One revision read: the server's inventory cache follows the writes through its watch, so no list.
  expect(small.reads).toBe(1);

  const more = Array.from({ length: 20 }, (_, i) => `c1-md-x${i}`);
  await seed(
    server,
    more.flatMap((name, i) => [machine(name, { address: `10.6.2.${i + 1}` }), openStackServer(name)]),
  );
  await seed(server, [
    cluster((c) => {
      c.metadata.name = 'c3';
      c.metadata.labels['cluster.x-k8s.io/cluster-name'] = 'c3';
      c.status.bastion.name = 'c3-bastion';
    }),
  ]);

  const large = await readsOf(everything, tokens.bob);
  expect(large.hosts).toBe(25);
  expect(large.reads).toBe(small.reads);
  expect((await readsOf(everything, server.adminToken)).reads).toBeLessThanOrEqual(small.reads);
});
