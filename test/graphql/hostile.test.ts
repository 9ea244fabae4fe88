/**
 * The hostile-input suite for /graphql over real HTTPS: documents, variables
 * and bodies built to exhaust or confuse the server. Each is refused with a
 * GraphQL error carrying a code before any resolver reads storage, and the
 * server stays ready.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed, teamAObjects } from '../../harness/inventory-fixtures.js';
import { startInventoryServer, tokens, type InventoryServer } from '../../harness/inventory-server.js';

let server: InventoryServer;

beforeAll(async () => {
  server = await startInventoryServer();
  await seed(server, teamAObjects(1));
});

afterAll(async () => {
  await server?.close();
});

interface Case {
  name: string;
  /** A document, or a whole request body (string: sent as is). */
  query?: string;
  variables?: Record<string, unknown>;
  body?: unknown;
  headers?: Record<string, string>;
  status: number;
  code: string;
  message?: RegExp;
  /** Refused before execution: no storage read at all. (Refusals during execution are HTTP 200, as GraphQL has it.) */
  noReads?: boolean;
}

const fanOut = (levels: number) =>
  `{ clusters { edges { node { ...F0 } } } }\n${Array.from({ length: levels }, (_, i) => `fragment F${i} on Cluster { name ...F${i + 1} ...F${i + 1} }`).join('\n')}\nfragment F${levels} on Cluster { name }`;

const cases: Case[] = [
  { name: 'fragment fan-out of 24 levels', query: fanOut(24), status: 400, code: 'GRAPHQL_VALIDATION_FAILED', noReads: true },
  { name: 'fragment fan-out of 200 levels', query: fanOut(200), status: 400, code: 'GRAPHQL_VALIDATION_FAILED', noReads: true },
  {
    name: 'fragments that spread each other',
    query: '{ clusters { edges { node { ...A } } } } fragment A on Cluster { name ...B } fragment B on Cluster { ...A }',
    status: 400,
    code: 'GRAPHQL_VALIDATION_FAILED',
    noReads: true,
  },
  {
    name: 'a document nested 20 fields deep',
    query: `{ __schema { ${'types { fields { type { ofType { '.repeat(5)}name${' } } } }'.repeat(5)} } }`,
    status: 400,
    code: 'GRAPHQL_VALIDATION_FAILED',
    noReads: true,
  },
  {
    name: '2,000 aliases',
    query: `{ ${Array.from({ length: 2000 }, (_, i) => `a${i}: inventory { revision }`).join(' ')} }`,
    status: 400,
    code: 'GRAPHQL_PARSE_FAILED',
    noReads: true,
  },
  {
    name: '100 aliases of a list',
    query: `{ ${Array.from({ length: 100 }, (_, i) => `a${i}: clusters(first: 500) { edges { node { name } } }`).join(' ')} }`,
    status: 400,
    code: 'GRAPHQL_VALIDATION_FAILED',
    noReads: true,
  },
  {
    name: '3,000 repeated directives',
    query: `{ inventory ${'@include(if: true) '.repeat(3000)}{ revision } }`,
    status: 400,
    code: 'GRAPHQL_PARSE_FAILED',
    noReads: true,
  },
  { name: 'a syntax error', query: '{ clusters { ', status: 400, code: 'GRAPHQL_PARSE_FAILED', noReads: true },
  { name: 'an unknown field', query: '{ secrets { name } }', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', noReads: true },
  { name: 'a mutation the schema does not have', query: 'mutation { deleteEverything }', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', noReads: true },
  { name: 'a subscription', query: 'subscription { clusters { totalCount } }', status: 400, code: 'GRAPHQL_VALIDATION_FAILED', noReads: true },
  {
    name: 'two anonymous operations',
    query: '{ inventory { revision } } { inventory { revision } }',
    status: 400,
    code: 'GRAPHQL_VALIDATION_FAILED',
    noReads: true,
  },
  { name: 'a first of a million', query: '{ clusters(first: 1000000) { edges { node { name } } } }', status: 200, code: 'BAD_USER_INPUT' },
  { name: 'a negative first', query: '{ clusters(first: -1) { edges { node { name } } } }', status: 200, code: 'BAD_USER_INPUT' },
  {
    name: 'a first past 32 bits',
    query: '{ clusters(first: 99999999999) { edges { node { name } } } }',
    status: 400,
    code: 'GRAPHQL_VALIDATION_FAILED',
    noReads: true,
  },
  { name: 'a cursor that is no cursor', query: '{ clusters(after: "%%%") { edges { node { name } } } }', status: 200, code: 'BAD_USER_INPUT' },
  { name: 'a malformed label selector', query: '{ clusters(labelSelector: "env in (a,") { edges { node { name } } } }', status: 200, code: 'BAD_USER_INPUT' },
  {
    name: 'a label selector of 5,000 terms in a variable (past the 100 a selector may have)',
    query: 'query Q($s: String) { clusters(labelSelector: $s) { edges { node { name } } } }',
    variables: { s: Array.from({ length: 5000 }, (_, i) => `k${i}=v`).join(',') },
    status: 200,
    code: 'BAD_USER_INPUT',
  },
  {
    name: 'a variable of the wrong type',
    query: 'query Q($n: Int) { clusters(first: $n) { edges { node { name } } } }',
    variables: { n: 'many' },
    status: 400,
    code: 'BAD_USER_INPUT',
    noReads: true,
  },
  {
    name: 'a variable nested 10,000 deep',
    query: 'query Q($n: String) { inventory(namespace: $n) { revision } }',
    body: `{"query":"query Q($n: String) { inventory(namespace: $n) { revision } }","variables":{"n":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`,
    status: 400,
    code: 'BAD_USER_INPUT',
    noReads: true,
  },
  {
    name: 'a batched request',
    body: [{ query: '{ inventory { revision } }' }, { query: '{ inventory { revision } }' }],
    status: 400,
    code: 'BAD_REQUEST',
    noReads: true,
  },
  { name: 'a body that is not JSON', body: '{"query": ', status: 400, code: 'BAD_REQUEST', noReads: true },
  { name: 'a body with no query', body: { variables: {} }, status: 400, code: 'BAD_REQUEST', noReads: true },
  { name: 'a query that is a number', body: { query: 42 }, status: 400, code: 'BAD_REQUEST', noReads: true },
  { name: 'a body over 256 KiB', body: { query: `{ inventory { revision } } # ${'x'.repeat(300 * 1024)}` }, status: 413, code: 'BAD_REQUEST', noReads: true },
  {
    name: 'an operation name that does not exist',
    body: { query: 'query A { inventory { revision } }', operationName: 'B' },
    status: 400,
    code: 'OPERATION_RESOLUTION_FAILURE',
    noReads: true,
  },
];

describe('GraphQL hostile inputs', () => {
  for (const testCase of cases) {
    it(testCase.name, async () => {
      server.storage.reads = 0;
      const body = testCase.body ?? { query: testCase.query, variables: testCase.variables ?? {} };
      const answer = await server.request('POST', '/graphql', { token: tokens.bob, headers: testCase.headers, body });
      expect(answer.status, JSON.stringify(answer.body).slice(0, 400)).toBe(testCase.status);
      if (testCase.code) {
        expect(answer.body.errors?.[0]?.extensions?.code, JSON.stringify(answer.body).slice(0, 400)).toBe(testCase.code);
        if (testCase.message) expect(answer.body.errors[0].message).toMatch(testCase.message);
      } else {
        expect(answer.body.errors).toBeUndefined();
      }
      if (testCase.noReads) expect(server.storage.reads).toBe(0);
      expect((await server.request('GET', '/readyz')).status).toBe(200);
    });
  }
});
