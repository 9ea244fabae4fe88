/**
 * /graphql over real HTTPS: authentication, per-namespace authorization,
 * another kind's fields only to callers that may list it (issue 47, M6),
 * SSH key gating, error codes, selection and paging, limits and CSRF.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getIntrospectionQuery } from '../../src/graphql/graphql-js.js';
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

const ansibleQuery = `query AnsibleInventory($namespace: String, $name: String, $labelSelector: String) {
  inventory(namespace: $namespace, name: $name, labelSelector: $labelSelector) {
    revision
    groups { name hosts children vars }
    hosts { name vars }
  }
}`;

async function ok(query: string, variables: Record<string, unknown>, token: string): Promise<any> {
  const answer = await server.graphql(query, variables, { token });
  expect(answer.body.errors).toBeUndefined();
  expect(answer.status).toBe(200);
  return answer.body.data;
}

async function failure(query: string, variables: Record<string, unknown>, token?: string) {
  const answer = await server.graphql(query, variables, { token });
  expect(answer.body.errors).toHaveLength(1);
  return { status: answer.status, body: answer.body, error: answer.body.errors[0], code: answer.body.errors[0].extensions.code };
}

const hostNames = (inventory: { hosts: { name: string }[] }) => inventory.hosts.map((h) => h.name);
const group = (inventory: { groups: any[] }, name: string) => inventory.groups.find((g) => g.name === name);

describe('authentication', () => {
  it('answers UNAUTHENTICATED with HTTP 401 and no data without credentials or with a bad token', async () => {
    for (const token of [undefined, 'not-a-token']) {
      const { status, body, code } = await failure(ansibleQuery, {}, token);
      expect(status).toBe(401);
      expect(code).toBe('UNAUTHENTICATED');
      expect(body).not.toHaveProperty('data');
    }
  });

  it('accepts a client certificate as well as a bearer token', async () => {
    const answer = await server.graphql('{ inventory(namespace: "team-a", name: "c1") { hosts { name } } }', {}, { certificate: true });
    expect(answer.status).toBe(200);
    expect(hostNames(answer.body.data.inventory)).toEqual(['c1-cp-0', 'c1-md-000', 'c1-md-001', 'c1-bastion']);
  });

  it('serves introspection to authenticated callers only', async () => {
    const introspection = await ok(getIntrospectionQuery(), {}, tokens.dave);
    expect(introspection.__schema.queryType.name).toBe('Query');
    expect((await failure(getIntrospectionQuery(), {})).code).toBe('UNAUTHENTICATED');
  });
});

describe('the inventory query the Ansible plugin sends', () => {
  it('gives Kubespray groups, host addresses and the cluster variables as group variables', async () => {
    const { inventory } = await ok(ansibleQuery, { namespace: 'team-a', name: 'c1' }, tokens.bob);
    expect(hostNames(inventory)).toEqual(['c1-cp-0', 'c1-md-000', 'c1-md-001', 'c1-bastion']);
    expect(group(inventory, 'kube_control_plane').hosts).toEqual(['c1-cp-0']);
    expect(group(inventory, 'etcd').hosts).toEqual(['c1-cp-0']);
    expect(group(inventory, 'kube_node').hosts).toEqual(['c1-md-000', 'c1-md-001']);
    expect(group(inventory, 'bastion').hosts).toEqual(['c1-bastion']);
    expect(group(inventory, 'k8s_cluster').children).toEqual(['kube_control_plane', 'kube_node']);
    expect(group(inventory, 'c1').vars).toMatchObject({
      kube_network_plugin: 'cilium',
      master_virtual_vip: '10.6.0.10',
      cilium_openstack_security_group_ids: ['sg-1', 'sg-2'],
    });
    expect(inventory.hosts[1].vars).toMatchObject({
      ansible_host: '10.6.1.1',
      ip: '10.6.1.1',
      ansible_user: 'ubuntu',
      ansible_ssh_common_args: '-o ProxyJump=ubuntu@203.0.113.10',
    });
    expect(Number(inventory.revision)).toBeGreaterThan(0);
  });

  it('also returns the exact ansible-inventory --list JSON', async () => {
    const { inventory } = await ok('{ inventory(namespace: "team-a", name: "c1") { ansibleList hosts { name vars } } }', {}, tokens.bob);
    const list = inventory.ansibleList;
    expect(list.all).toEqual({ children: ['k8s_cluster', 'etcd', 'bastion', 'c1'] });
    expect(list.kube_node).toEqual({ hosts: ['c1-md-000', 'c1-md-001'] });
    expect(list.k8s_cluster).toEqual({ children: ['kube_control_plane', 'kube_node'] });
    expect(list._meta.hostvars).toEqual(Object.fromEntries(inventory.hosts.map((h: any) => [h.name, h.vars])));
  });

  it('selects clusters by label', async () => {
    const { inventory } = await ok(ansibleQuery, { labelSelector: 'env in (dev)' }, tokens.bob);
    expect(hostNames(inventory)).toEqual([]);
    const all = await ok(ansibleQuery, { labelSelector: 'env in (dev,prod)' }, server.adminToken);
    expect(hostNames(all.inventory)).toEqual(['c1-cp-0', 'c1-md-000', 'c1-md-001', 'c1-bastion', 'c2-cp-0', 'c2-bastion']);
  });
});

describe('authorization per namespace', () => {
  it('shows a caller only the namespaces where it may list OpenStackClusters, and inventories where it may also list their nodes and ClusterExtensions', async () => {
    expect(hostNames((await ok(ansibleQuery, {}, tokens.erin)).inventory)).toEqual(['c1-cp-0', 'c1-md-000', 'c1-md-001', 'c1-bastion']);
    expect(hostNames((await ok(ansibleQuery, {}, server.adminToken)).inventory)).toEqual([
      'c1-cp-0',
      'c1-md-000',
      'c1-md-001',
      'c1-bastion',
      'c2-cp-0',
      'c2-bastion',
    ]);
    for (const token of [tokens.alice, tokens.carol, tokens.dave]) expect(hostNames((await ok(ansibleQuery, {}, token)).inventory)).toEqual([]);
    const clusters = await ok('{ clusters { totalCount edges { node { id } } } }', {}, tokens.carol);
    expect(clusters.clusters).toEqual({ totalCount: 1, edges: [{ node: { id: 'OpenStackCluster/team-b/c2' } }] });
    const both = await ok('{ clusters { totalCount } }', {}, tokens.erin);
    expect(both.clusters.totalCount).toBe(2);
  });

  it('answers FORBIDDEN for a namespace the caller may not read, with no data', async () => {
    const { body, error, code } = await failure(ansibleQuery, { namespace: 'team-b' }, tokens.alice);
    expect(code).toBe('FORBIDDEN');
    expect(error.message).toBe(
      'openstackclusters.infrastructure.cluster.x-k8s.io is forbidden: User "alice" cannot list resource "openstackclusters" in API group "infrastructure.cluster.x-k8s.io" in the namespace "team-b"',
    );
    expect(body.data).toBeNull();
    expect((await failure('{ cluster(namespace: "team-a", name: "c1") { name } }', {}, tokens.carol)).code).toBe('FORBIDDEN');
  });

  it('names the SSH key Secret only to callers that may get it', async () => {
    const query = `{ cluster(namespace: "team-a", name: "c1") { sshPrivateKeySecret { namespace name key } extensions { spec } inventory { hosts { vars } } } }`;
    const allowed = (await ok(query, {}, tokens.bob)).cluster;
    expect(allowed.sshPrivateKeySecret).toEqual({ namespace: 'team-a', name: 'c1-ssh', key: 'ssh-privatekey' });
    expect(allowed.extensions.spec.ssh).toEqual({ user: 'ubuntu', privateKeySecretRef: { name: 'c1-ssh', key: 'ssh-privatekey' } });
    for (const host of allowed.inventory.hosts)
      expect(host.vars.ansible_ssh_private_key_secret).toEqual({ namespace: 'team-a', name: 'c1-ssh', key: 'ssh-privatekey' });

    const denied = (await ok(query, {}, tokens.erin)).cluster;
    expect(denied.sshPrivateKeySecret).toBeNull();
    expect(denied.extensions.spec.ssh).toEqual({ user: 'ubuntu' });
    for (const host of denied.inventory.hosts) {
      expect(host.vars).not.toHaveProperty('ansible_ssh_private_key_secret');
      expect(host.vars.ansible_user).toBe('ubuntu');
    }
  });
});

describe('clusters and cluster', () => {
  it('gives a cluster with its extensions, variables, machines and nodes', async () => {
    const { cluster } = await ok(
      `{ cluster(namespace: "team-a", name: "c1") {
          id clusterName labels ready vars
          extensions { status missing { variable reason } conditions { type status } }
          machines { id controlPlane instanceState addresses { type address } }
          nodes { name role groups profile phase ready vars }
        } }`,
      {},
      tokens.erin,
    );
    expect(cluster.id).toBe('OpenStackCluster/team-a/c1');
    expect(cluster.clusterName).toBe('c1');
    expect(cluster.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': 'c1', team: 'a', env: 'prod' });
    expect(cluster.vars.openstack_region_name).toBe('RegionOne');
    expect(cluster.extensions.status.loadBalancers.controlPlane.vip).toBe('10.6.0.10');
    expect(cluster.extensions.status).not.toHaveProperty('ownedResources');
    expect(cluster.ready).toBe(cluster.extensions.conditions.some((c: any) => c.type === 'Ready' && c.status === 'True'));
    expect(cluster.machines.map((m: any) => [m.id, m.controlPlane])).toEqual([
      ['OpenStackMachine/team-a/c1-cp-0', true],
      ['OpenStackMachine/team-a/c1-md-000', false],
      ['OpenStackMachine/team-a/c1-md-001', false],
    ]);
    expect(cluster.machines[0].addresses).toContainEqual({ type: 'InternalIP', address: '10.6.0.20' });
    expect(cluster.nodes.map((n: any) => [n.name, n.role, n.groups, n.profile])).toEqual([
      ['c1-cp-0', 'control-plane', ['kube_control_plane', 'etcd'], 'm1.large'],
      ['c1-md-000', 'worker', ['kube_node'], 'm1.medium'],
      ['c1-md-001', 'worker', ['kube_node'], 'm1.medium'],
    ]);
    expect(cluster.nodes[0].vars.ansible_host).toBe('10.6.0.20');
  });

  it('pages clusters as a Relay connection and filters by label', async () => {
    const page = `query Page($after: String, $labelSelector: String) { clusters(first: 1, after: $after, labelSelector: $labelSelector) {
      totalCount edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;
    const first = (await ok(page, {}, server.adminToken)).clusters;
    expect(first.totalCount).toBe(2);
    expect(first.edges.map((e: any) => e.node.id)).toEqual(['OpenStackCluster/team-a/c1']);
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false, startCursor: first.edges[0].cursor, endCursor: first.edges[0].cursor });
    const second = (await ok(page, { after: first.pageInfo.endCursor }, server.adminToken)).clusters;
    expect(second.edges.map((e: any) => e.node.id)).toEqual(['OpenStackCluster/team-b/c2']);
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const third = (await ok(page, { after: second.pageInfo.endCursor }, server.adminToken)).clusters;
    expect(third).toMatchObject({ edges: [], pageInfo: { hasNextPage: false, startCursor: null, endCursor: null } });
    const dev = (await ok(page, { labelSelector: 'env=dev' }, server.adminToken)).clusters;
    expect(dev.edges.map((e: any) => e.node.id)).toEqual(['OpenStackCluster/team-b/c2']);
  });
});

describe('error codes', () => {
  it('answers NOT_FOUND for an unknown cluster', async () => {
    const single = await failure('{ cluster(namespace: "team-a", name: "nope") { name } }', {}, tokens.alice);
    expect(single.code).toBe('NOT_FOUND');
    expect(single.error.message).toBe('OpenStackCluster nope not found in namespace team-a');
    const inventory = await failure(ansibleQuery, { name: 'c2' }, tokens.alice);
    expect(inventory.code).toBe('NOT_FOUND');
    expect(inventory.error.message).toBe('OpenStackCluster c2 not found in any namespace you may read');
  });

  it.each([
    [{ labelSelector: 'env=,=x' }, "found '=', expected: identifier after ','"],
    [{ namespace: 'Team_A' }, 'namespace: must be a lowercase RFC 1123 label'],
    [{ name: '-c1' }, 'name: must be a lowercase RFC 1123 subdomain'],
  ])('answers BAD_USER_INPUT for %j', async (variables, message) => {
    const { code, error } = await failure(ansibleQuery, variables, server.adminToken);
    expect(code).toBe('BAD_USER_INPUT');
    expect(error.message).toContain(message);
  });

  it('answers BAD_USER_INPUT for a bad page size or cursor', async () => {
    expect((await failure('{ clusters(first: 0) { totalCount } }', {}, server.adminToken)).error).toMatchObject({
      message: 'first: first must be between 1 and 500',
      extensions: { code: 'BAD_USER_INPUT' },
    });
    expect((await failure('{ clusters(after: "bm90LWEtY3Vyc29y") { totalCount } }', {}, server.adminToken)).error).toMatchObject({
      message: 'after: "bm90LWEtY3Vyc29y" is not a cursor of this connection',
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });
});

describe('limits and request hygiene', () => {
  // __Type.ofType refers to __Type: the one way to nest without end in this schema.
  const nested = (levels: number) => `{ __schema { types { fields { type { ${'ofType { '.repeat(levels)}name${' }'.repeat(levels)} } } } } }`;

  it('refuses a query nested too deep before reading storage', async () => {
    expect((await ok(nested(10), {}, tokens.dave)).__schema.types.length).toBeGreaterThan(0);
    server.storage.reads = 0;
    const { status, error } = await failure(nested(11), {}, tokens.dave);
    expect(status).toBe(400);
    expect(error.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'depth', allowed: 15, requested: 16 });
    expect(error.message).toBe('the operation nests 16 fields deep; the limit is 15');
    expect(server.storage.reads).toBe(0);
  });

  it('refuses a query that costs too much before reading storage, counting aliases, pages and fragments', async () => {
    server.storage.reads = 0;
    const expensive = `query Expensive { a: clusters(first: 500) { ...Hosts } b: clusters(first: 500) { ...Hosts } }
      fragment Hosts on ClusterConnection { edges { node { machines { name } } } }`;
    const { status, error } = await failure(expensive, {}, server.adminToken);
    expect(status).toBe(400);
    // Per alias: clusters 1 + edges (1 + 500 × (node 1 + machines (1 + 10 × name 1))).
    expect(error.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'cost', allowed: 10_000, requested: 2 * (1 + 1 + 500 * (1 + 1 + 10)) });
    expect(error.message).toBe(
      'operation Expensive costs 12004; the limit is 10000. A list multiplies the cost of what it selects by its page size: ' +
        'ask for a smaller page (first: 25 is the default) and fetch the next with after: <pageInfo.endCursor>, or ask for fewer fields',
    );
    expect(server.storage.reads).toBe(0);
  });

  it('answers the natural nested query (clusters, their machines, addresses and variables) within the cost limit by default', async () => {
    const natural = '{ clusters { edges { node { namespace name vars machines { name addresses { type address } } } } pageInfo { hasNextPage endCursor } } }';
    const data = await ok(natural, {}, server.adminToken);
    expect(data.clusters.edges.length).toBeGreaterThan(0);
  });

  it('measures each fragment once: fragments that spread the next one twice are refused at once, by a user with no rights', async () => {
    // F0 spreads F1 twice, F1 spreads F2 twice...: 2^levels paths through a document of a few KB.
    const fanOut = (levels: number) => {
      const fragments = Array.from({ length: levels }, (_, i) => `fragment F${i} on Cluster { name ...F${i + 1} ...F${i + 1} }`);
      return `{ clusters(first: 1) { edges { node { ...F0 } } } }\n${fragments.join('\n')}\nfragment F${levels} on Cluster { name }`;
    };
    for (const levels of [24, 60]) {
      server.storage.reads = 0;
      const { status, code, error } = await failure(fanOut(levels), {}, tokens.dave);
      expect(status).toBe(400);
      expect(code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(error.extensions.limit).toBe('cost');
      expect(server.storage.reads).toBe(0);
    }
  });

  it('still counts a fragment spread in two places at its full cost in each', async () => {
    const twice = `{ a: clusters(first: 500) { ...Names } b: clusters(first: 500) { ...Names } }
      fragment Names on ClusterConnection { edges { node { name machines { name } } } }`;
    const { error } = await failure(twice, {}, server.adminToken);
    expect(error.extensions).toMatchObject({ limit: 'cost', requested: 2 * (1 + 1 + 500 * (1 + 1 + 1 + 10)) });
  });

  it('refuses a document of more than 5,000 tokens before validating it', async () => {
    server.storage.reads = 0;
    const aliases = Array.from({ length: 2000 }, (_, i) => `a${i}: __typename`).join(' ');
    const { status, code, error } = await failure(`{ ${aliases} }`, {}, tokens.dave);
    expect(status).toBe(400);
    expect(code).toBe('GRAPHQL_PARSE_FAILED');
    expect(error.message).toMatch(/Document contains more that 5000 tokens/);
    expect(server.storage.reads).toBe(0);
  });

  it('prevents CSRF: a simple request without a preflight-forcing header is refused', async () => {
    const query = encodeURIComponent('{ inventory { revision } }');
    const simple = await server.request('GET', `/graphql?query=${query}`, { token: tokens.alice });
    expect(simple.status).toBe(400);
    expect(simple.body.errors[0].message).toContain('Cross-Site Request Forgery (CSRF)');
    const textPlain = await server.request('POST', '/graphql', {
      token: tokens.alice,
      headers: { 'Content-Type': 'text/plain' },
      body: JSON.stringify({ query: '{ inventory { revision } }' }),
    });
    expect(textPlain.status).toBe(400);
    const preflighted = await server.request('GET', `/graphql?query=${query}`, { token: tokens.alice, headers: { 'apollo-require-preflight': 'true' } });
    expect(preflighted.status).toBe(200);
    expect(preflighted.body.data.inventory.revision).toMatch(/^\d+$/);
  });
});

/*
 * A cluster's fields that show another kind (machines, nodes, the ClusterExtension with its variables
 * and readiness, the Ansible inventory) are answered only to callers that may list that kind in the
 * cluster's namespace, as REST would ask; others get null on that field with a FORBIDDEN error on its
 * path, and the rest of the answer.
 */
const everyField = `{ cluster(namespace: "team-a", name: "c1") {
  id name clusterName labels
  machines { name spec status }
  nodes { name spec }
  extensions { spec status vars }
  vars
  ready
  inventory { hosts { name vars } }
} }`;

const refusal = (resource: string, group: string, user = 'alice', namespace = 'team-a') =>
  `${resource}.${group} is forbidden: User "${user}" cannot list resource "${resource}" in API group "${group}" in the namespace "${namespace}"`;
const machines = refusal('openstackmachines', 'infrastructure.cluster.x-k8s.io');
const nodes = refusal('openstacknodes', 'extensions.capo-apiserver.io');
const extensions = refusal('clusterextensions', 'extensions.capo-apiserver.io');

describe('another kind than OpenStackCluster (issue 47, M6), to a caller allowed only OpenStackClusters', () => {
  it('gets the cluster, and null with FORBIDDEN on each field that shows another kind', async () => {
    const answer = await server.graphql(everyField, {}, { token: tokens.alice });
    expect(answer.status).toBe(200);
    const { cluster } = answer.body.data;
    expect(cluster).toMatchObject({ id: 'OpenStackCluster/team-a/c1', name: 'c1', clusterName: 'c1' });
    expect(cluster).toMatchObject({ machines: null, nodes: null, extensions: null, vars: null, ready: null, inventory: null });
    const errors = Object.fromEntries(answer.body.errors.map((error: any) => [error.path.join('.'), [error.extensions.code, error.message]]));
    expect(errors).toEqual({
      'cluster.machines': ['FORBIDDEN', machines],
      'cluster.nodes': ['FORBIDDEN', nodes],
      'cluster.extensions': ['FORBIDDEN', extensions],
      'cluster.vars': ['FORBIDDEN', extensions],
      'cluster.ready': ['FORBIDDEN', extensions],
      'cluster.inventory': ['FORBIDDEN', nodes],
    });
    // Nothing of a machine, node or host anywhere in the answer.
    expect(JSON.stringify(answer.body)).not.toMatch(/c1-cp-0|c1-md-00|10\.6\.0\.20/);
  });

  it('gets the same through the clusters connection, per edge', async () => {
    const answer = await server.graphql('{ clusters { edges { node { name machines { name } nodes { name } } } } }', {}, { token: tokens.alice });
    expect(answer.body.data.clusters.edges).toEqual([{ node: { name: 'c1', machines: null, nodes: null } }]);
    expect(answer.body.errors.map((error: any) => [error.path.join('.'), error.extensions.code])).toEqual([
      ['clusters.edges.0.node.machines', 'FORBIDDEN'],
      ['clusters.edges.0.node.nodes', 'FORBIDDEN'],
    ]);
  });

  it('is refused the inventory of a named namespace or cluster, and has none without', async () => {
    for (const variables of [{ namespace: 'team-a' }, { name: 'c1' }, { namespace: 'team-a', name: 'c1' }]) {
      const answer = await server.graphql(
        'query ($namespace: String, $name: String) { inventory(namespace: $namespace, name: $name) { hosts { name } } }',
        variables,
        { token: tokens.alice },
      );
      expect(answer.body.data).toBeNull();
      expect(answer.body.errors).toMatchObject([{ message: nodes, extensions: { code: 'FORBIDDEN' } }]);
    }
    const unnamed = await server.graphql('{ inventory { hosts { name } groups { name vars } } }', {}, { token: tokens.alice });
    expect(unnamed.body.errors).toBeUndefined();
    expect(unnamed.body.data.inventory.hosts).toEqual([]);
    expect(JSON.stringify(unnamed.body)).not.toMatch(/c1|RegionOne/);
  });
});

describe('another kind than OpenStackCluster, to callers allowed more', () => {
  it('answers every field to a caller allowed every kind, with no error', async () => {
    for (const token of [tokens.bob, tokens.erin, server.adminToken]) {
      const answer = await server.graphql(everyField, {}, { token });
      expect(answer.body.errors).toBeUndefined();
      const { cluster } = answer.body.data;
      expect(cluster.machines.map((m: any) => m.name)).toEqual(['c1-cp-0', 'c1-md-000', 'c1-md-001']);
      expect(cluster.machines[0].status.addresses).toContainEqual({ type: 'InternalIP', address: '10.6.0.20' });
      expect(cluster.nodes.map((n: any) => n.name)).toEqual(['c1-cp-0', 'c1-md-000', 'c1-md-001']);
      expect(cluster.vars.openstack_region_name).toBe('RegionOne');
      expect(cluster.extensions.vars).toEqual(cluster.vars);
      expect(typeof cluster.ready).toBe('boolean');
      expect(cluster.inventory.hosts.map((h: any) => h.name)).toEqual(['c1-cp-0', 'c1-md-000', 'c1-md-001', 'c1-bastion']);
    }
  });

  it('answers per namespace: erin reads team-a whole, and only the clusters of team-b', async () => {
    const answer = await server.graphql('{ clusters { edges { node { name machines { name } ready } } } }', {}, { token: tokens.erin });
    expect(answer.body.data.clusters.edges).toEqual([
      { node: { name: 'c1', machines: [{ name: 'c1-cp-0' }, { name: 'c1-md-000' }, { name: 'c1-md-001' }], ready: expect.any(Boolean) } },
      { node: { name: 'c2', machines: null, ready: null } },
    ]);
    expect(answer.body.errors.map((error: any) => [error.path.join('.'), error.message])).toEqual([
      ['clusters.edges.1.node.machines', refusal('openstackmachines', 'infrastructure.cluster.x-k8s.io', 'erin', 'team-b')],
      ['clusters.edges.1.node.ready', refusal('clusterextensions', 'extensions.capo-apiserver.io', 'erin', 'team-b')],
    ]);
    const inventory = await server.graphql('{ inventory { hosts { name } } }', {}, { token: tokens.erin });
    expect(inventory.body.data.inventory.hosts.map((h: any) => h.name)).toEqual(['c1-cp-0', 'c1-md-000', 'c1-md-001', 'c1-bastion']);
  });
});
