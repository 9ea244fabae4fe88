/**
 * The hostile-input suite for /admin/v1 over real HTTPS: paths, names,
 * methods and callers the admin API must refuse with a Kubernetes Status,
 * never a 500, and without calling the reconciler.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminHooks } from '../../src/admin/router.js';
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
  preflight: async () => ({ passed: true }),
};

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
  { name: 'a reconcile of a kind that cannot be reconciled', method: 'POST', path: '/admin/v1/namespaces/team-a/secrets/c1/reconcile', status: 404, reason: 'NotFound' },
  { name: 'a reconcile of an object that does not exist', method: 'POST', path: '/admin/v1/namespaces/team-a/openstackclusters/nothing/reconcile', status: 404, reason: 'NotFound' },
  { name: 'a reconcile by a caller who may only read', method: 'POST', path: '/admin/v1/namespaces/team-a/openstackclusters/c1/reconcile', token: tokens.alice, status: 403, reason: 'Forbidden' },
  { name: 'a reconcile with a body of garbage', method: 'POST', path: '/admin/v1/namespaces/team-a/openstackclusters/nothing/reconcile', body: '\u0000'.repeat(1024), status: 404, reason: 'NotFound' },
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
    const answers = await Promise.all(Array.from({ length: 50 }, () => server.request('POST', '/admin/v1/namespaces/team-a/openstackclusters/c1/reconcile', { token: server.adminToken })));
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([202]));
  });
});
