/**
 * Forged continue tokens and malformed list parameters over HTTPS: each is a
 * 400 (or 410 for a token whose snapshot is gone), never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startTestServer, type TestServer } from '../../../harness/test-server.js';

let server: TestServer;
const base = '/apis/testing.capo.dev/v1/namespaces/default/widgets';

beforeAll(async () => {
  server = await startTestServer();
  for (const name of ['a', 'b', 'c']) {
    const body = JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name }, spec: { color: 'red' } });
    expect((await request(server, 'POST', base, { headers: { 'Content-Type': 'application/json' }, body })).status).toBe(201);
  }
});

afterAll(async () => {
  await server?.stop();
});

const token = (content: unknown) => Buffer.from(typeof content === 'string' ? content : JSON.stringify(content)).toString('base64url');

describe('continue tokens', () => {
  it('follows a real token to the next page', async () => {
    const first = (await request(server, 'GET', `${base}?limit=2`)).json();
    const next = await request(server, 'GET', `${base}?limit=2&continue=${first.metadata.continue}`);
    expect(next.status).toBe(200);
    expect(next.json().items.map((item: any) => item.metadata.name)).toEqual(['c']);
  });

  const forged: Array<[string, string]> = [
    ['a revision from the future', token({ v: 'meta.k8s.io/v1', rv: 99_999_999, start: '/testing.capo.dev/widgets/default/a' })],
    ['a revision past any integer', token({ v: 'meta.k8s.io/v1', rv: 1e30, start: '/testing.capo.dev/widgets/default/a' })],
    ['a negative revision', token({ v: 'meta.k8s.io/v1', rv: -1, start: '/testing.capo.dev/widgets/default/a' })],
    ['a fractional revision', token({ v: 'meta.k8s.io/v1', rv: 1.5, start: '/testing.capo.dev/widgets/default/a' })],
    ['a key of another namespace', token({ v: 'meta.k8s.io/v1', rv: 1, start: '/testing.capo.dev/widgets/other/a' })],
    ['a key of another resource', token({ v: 'meta.k8s.io/v1', rv: 1, start: '/testing.capo.dev/gadgets/default/a' })],
    ['no JSON', token('not json at all')],
    ['JSON of the wrong shape', token([1, 2, 3])],
    ['garbage characters', '%%%***'],
    ['10 KB of noise', 'A'.repeat(10_000)],
  ];
  for (const [what, forgedToken] of forged) {
    it(`answers 400 for a token with ${what}`, async () => {
      const res = await request(server, 'GET', `${base}?limit=2&continue=${encodeURIComponent(forgedToken)}`);
      expect(res.status, res.body).toBe(400);
      expect(res.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: expect.stringMatching(/^continue key is not valid/) });
    });
  }
});

describe('list parameters', () => {
  const malformed: Array<[string, number]> = [
    ['resourceVersion=abc', 400],
    ['resourceVersion=-1', 400],
    ['resourceVersion=1e30', 400],
    ['resourceVersion=1.5', 400],
    ['limit=-5', 400],
    ['limit=1e30', 400],
    ['limit=abc', 400],
    ['resourceVersionMatch=Sometimes&resourceVersion=1', 422],
  ];
  for (const [query, status] of malformed) {
    it(`answers ${status} for ${query}`, async () => {
      const res = await request(server, 'GET', `${base}?${query}`);
      expect(res.status, res.body).toBe(status);
      expect(res.json().kind).toBe('Status');
    });
  }
});
