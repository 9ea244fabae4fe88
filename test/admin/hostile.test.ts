/**
 * The hostile-input suite for /admin/v1 over real HTTPS: paths, names,
 * methods and callers the admin API must refuse with a Kubernetes Status,
 * never a 500, and without calling the reconciler; a read-only caller
 * starting preflights without end (issue 47), and a preflight of a cluster
 * whose cloud name is unknown, against the real reconciler.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import type { AdminHooks } from '../../src/admin/router.js';
import { servedKinds } from '../../src/served-kinds.js';
import { kubectlOk, request, startTestServer, type TestServer } from '../../harness/test-server.js';
import { seed, teamAObjects } from '../../harness/inventory-fixtures.js';
import { startInventoryServer, tokens, type InventoryServer } from '../../harness/inventory-server.js';

let server: InventoryServer;
const forced: string[] = [];
const hooks: AdminHooks = {
  queue: () => ({ controllers: [] }),
  reconcile: async (kind, namespace, name) => {
    forced.push(`${kind} ${namespace}/${name}`);
    return name === 'c1';
  },
  preflight: async () => {
    preflights++;
    return { passed: true };
  },
};
let preflights = 0;

beforeAll(async () => {
  server = await startInventoryServer({ admin: hooks });
  await seed(server, teamAObjects(1));
});

afterAll(async () => {
  await server?.close();
});

interface Case {
  name: string;
  method?: string;
  path: string;
  token?: string;
  body?: string;
  status: number;
  reason: string;
}

const inventory = '/admin/v1/namespaces/team-a/clusters/c1/inventory';
const cases: Case[] = [
  { name: 'no credentials', path: inventory, token: undefined, status: 401, reason: 'Unauthorized' },
  { name: 'a token nobody issued', path: inventory, token: 'forged', status: 401, reason: 'Unauthorized' },
  { name: 'a caller granted nothing', path: inventory, token: tokens.dave, status: 403, reason: 'Forbidden' },
  { name: 'the queue for a caller who is no admin', path: '/admin/v1/queue', token: tokens.bob, status: 403, reason: 'Forbidden' },
  { name: 'a namespace of dots, encoded', path: '/admin/v1/namespaces/%2e%2e/clusters/c1/inventory', status: 404, reason: 'NotFound' },
  { name: 'a slash encoded in a name', path: '/admin/v1/namespaces/team-a/clusters/c1%2Fx/inventory', status: 404, reason: 'NotFound' },
  { name: 'malformed percent-encoding', path: '/admin/v1/namespaces/%zz/clusters/c1/inventory', status: 404, reason: 'NotFound' },
  { name: 'a 300-character name', path: `/admin/v1/namespaces/team-a/clusters/${'c'.repeat(300)}/inventory`, status: 400, reason: 'BadRequest' },
  { name: 'a name with capitals', path: '/admin/v1/namespaces/team-a/clusters/C1/inventory', status: 404, reason: 'NotFound' },
  { name: 'a trailing slash', path: `${inventory}/`, status: 404, reason: 'NotFound' },
  { name: 'an unknown admin path', path: '/admin/v1/secrets', status: 404, reason: 'NotFound' },
  { name: 'DELETE on an inventory', method: 'DELETE', path: inventory, status: 405, reason: 'MethodNotAllowed' },
  { name: 'GET on a reconcile', path: '/admin/v1/namespaces/team-a/openstackclusters/c1/reconcile', status: 405, reason: 'MethodNotAllowed' },
  {
    name: 'a reconcile of a kind that cannot be reconciled',
    method: 'POST',
    path: '/admin/v1/namespaces/team-a/secrets/c1/reconcile',
    status: 404,
    reason: 'NotFound',
  },
  {
    name: 'a reconcile of an object that does not exist',
    method: 'POST',
    path: '/admin/v1/namespaces/team-a/openstackclusters/nothing/reconcile',
    status: 404,
    reason: 'NotFound',
  },
  {
    name: 'a reconcile by a caller who may only read',
    method: 'POST',
    path: '/admin/v1/namespaces/team-a/openstackclusters/c1/reconcile',
    token: tokens.alice,
    status: 403,
    reason: 'Forbidden',
  },
  {
    name: 'a reconcile with a body of garbage',
    method: 'POST',
    path: '/admin/v1/namespaces/team-a/openstackclusters/nothing/reconcile',
    body: '\u0000'.repeat(1024),
    status: 404,
    reason: 'NotFound',
  },
  { name: 'a preflight of a cluster that does not exist', path: '/admin/v1/namespaces/team-a/clusters/nothing/preflight', status: 404, reason: 'NotFound' },
];

describe('admin API hostile inputs', () => {
  for (const testCase of cases) {
    it(testCase.name, async () => {
      const before = forced.length;
      const token = 'token' in testCase ? testCase.token : server.adminToken;
      const answer = await server.request(testCase.method ?? 'GET', testCase.path, { token, body: testCase.body });
      expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(testCase.status);
      expect(answer.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: testCase.reason, code: testCase.status });
      // Only a request that reached an existing object's reconcile may call the hook.
      if (testCase.status !== 404) expect(forced.length).toBe(before);
      expect((await server.request('GET', '/readyz')).status).toBe(200);
    });
  }

  it('forcing the same reconcile many times queues it, each answered 202', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => server.request('POST', '/admin/v1/namespaces/team-a/openstackclusters/c1/reconcile', { token: server.adminToken })),
    );
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([202]));
  });
});

describe('preflight runs', () => {
  it('lets a caller who may only read the cluster start three at once, then answers 429 with Retry-After without asking the cloud', async () => {
    const before = preflights;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => server.request('GET', '/admin/v1/namespaces/team-a/clusters/c1/preflight', { token: tokens.alice })),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(3);
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(new Set(refused.map((answer) => answer.status))).toEqual(new Set([429]));
    expect(Number(refused[0]!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused[0]!.body).toMatchObject({
      kind: 'Status',
      reason: 'TooManyRequests',
      message: expect.stringMatching(/^too many preflight runs by alice; try again in \d+ s$/),
    });
    expect(preflights - before).toBe(3);
    // Another user has a count of their own.
    expect((await server.request('GET', '/admin/v1/namespaces/team-a/clusters/c1/preflight', { token: tokens.bob })).status).toBe(200);
  });
});

describe('a preflight the reconciler cannot run', () => {
  let app: TestServer;

  beforeAll(async () => {
    app = await startTestServer({ kinds: servedKinds, reconciler: { resyncPeriodMs: 60_000 } });
    const cloudsYaml =
      'clouds:\n  openstack:\n    auth:\n      auth_url: https://127.0.0.1:1/v3\n      username: u\n      password: p\n      project_name: p\n';
    await kubectlOk(
      app,
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'cloud', namespace: 'default' }, stringData: { 'clouds.yaml': cloudsYaml } },
          ...[
            ['no-such-cloud', 'cloud'],
            ['no-such-secret', 'missing'],
          ].map(([name, secret]) => ({
            apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
            kind: 'OpenStackCluster',
            metadata: { name, namespace: 'default', labels: { 'cluster.x-k8s.io/cluster-name': name } },
            spec: { identityRef: { name: secret, cloudName: name === 'no-such-cloud' ? 'nope' : 'openstack' } },
          })),
        ],
      }),
    );
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
  });

  it.each([
    ['no-such-cloud', /cloud "nope"/],
    ['no-such-secret', /default\/missing does not exist/],
  ])("answers %s's preflight with a 409 Status saying why, not a 500", async (name, why) => {
    const token = (await readFile(app.tokenPath, 'utf8')).trim();
    const answer = await request(app, 'GET', `/admin/v1/namespaces/default/clusters/${name}/preflight`, {
      anonymous: true,
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(answer.status, answer.body).toBe(409);
    expect(answer.json()).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409, message: expect.stringMatching(why) });
  });
});
