/**
 * Hostile bodies over HTTPS: what decoding and patching refuse before any
 * walker runs, with kube's answers, and that the stored object is untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startTestServer, type TestServer } from '../../../harness/test-server.js';

let server: TestServer;
const base = '/apis/testing.capo.dev/v1/namespaces/default/widgets';
const json = { 'Content-Type': 'application/json' };
const jsonPatch = { 'Content-Type': 'application/json-patch+json' };

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.stop();
});

function widget(name: string, spec: Record<string, unknown> = { color: 'red' }): string {
  return JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name }, spec });
}

async function createWidget(name: string): Promise<string> {
  const created = await request(server, 'POST', base, { headers: json, body: widget(name) });
  expect(created.status, created.body).toBe(201);
  return created.json().metadata.resourceVersion;
}

async function expectUnchanged(name: string, resourceVersion: string): Promise<void> {
  const current = await request(server, 'GET', `${base}/${name}`);
  expect(current.json().metadata.resourceVersion).toBe(resourceVersion);
}

function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

describe('JSON patch bounds', () => {
  it('refuses copies that would add more than 3 MiB, without growing the object', async () => {
    const resourceVersion = await createWidget('copy-bomb');
    // Each copy doubles the subtree: 26 operations would reach 2^25 times 1 KiB.
    const operations: unknown[] = [{ op: 'add', path: '/spec/junk', value: { seed: 'x'.repeat(1024) } }];
    for (let i = 0; i < 25; i++) operations.push({ op: 'copy', from: '/spec/junk', path: `/spec/junk/c${i}` });
    const res = await request(server, 'PATCH', `${base}/copy-bomb`, { headers: jsonPatch, body: JSON.stringify(operations) });
    expect(res.status, res.body).toBe(422);
    expect(res.json()).toMatchObject({ kind: 'Status', reason: 'Invalid' });
    expect(res.json().details.causes[0].message).toMatch(/accumulated size increase of copy is \d+, exceeding the limit 3145728/);
    await expectUnchanged('copy-bomb', resourceVersion);
    expect((await request(server, 'GET', '/readyz')).status).toBe(200);
  });

  it('still applies copies within the budget', async () => {
    await createWidget('copy-small');
    const operations = [
      { op: 'add', path: '/spec/tags', value: ['a'] },
      { op: 'copy', from: '/metadata/name', path: '/spec/tags/-' },
    ];
    const res = await request(server, 'PATCH', `${base}/copy-small`, { headers: jsonPatch, body: JSON.stringify(operations) });
    expect(res.status, res.body).toBe(200);
    expect(res.json().spec.tags).toEqual(['a', 'copy-small']);
  });

  it('refuses operations that would nest the object past the limit', async () => {
    const resourceVersion = await createWidget('deepening');
    // Each add lands one level below the previous one: small operations, unbounded depth.
    const operations = [{ op: 'add', path: '/spec/junk', value: {} }];
    let path = '/spec/junk';
    for (let i = 0; i < 200; i++) {
      operations.push({ op: 'add', path: `${path}/a`, value: {} });
      path += '/a';
    }
    const res = await request(server, 'PATCH', `${base}/deepening`, { headers: jsonPatch, body: JSON.stringify(operations) });
    expect(res.status, res.body).toBe(422);
    expect(res.json().details.causes[0].message).toMatch(/nest more than 100 levels deep/);
    await expectUnchanged('deepening', resourceVersion);
  });
});

describe('nesting depth', () => {
  it('answers 400 for a body nested 10,000 deep, for JSON and YAML', async () => {
    for (const headers of [json, { 'Content-Type': 'application/yaml' }]) {
      const res = await request(server, 'POST', base, { headers, body: nested(10_000) });
      expect(res.status, res.body).toBe(400);
      expect(res.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
      expect(res.json().message).toMatch(/nests more than 100 levels deep/);
    }
  });

  it('answers 400 for deep patch bodies of every type', async () => {
    const resourceVersion = await createWidget('deep-patches');
    const deepSpec = JSON.parse(nested(150));
    const bodies: Array<[string, string]> = [
      ['application/merge-patch+json', JSON.stringify({ spec: deepSpec })],
      ['application/json-patch+json', JSON.stringify([{ op: 'add', path: '/spec/junk', value: deepSpec }])],
      [
        'application/apply-patch+yaml',
        JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name: 'deep-patches' }, spec: deepSpec }),
      ],
    ];
    for (const [contentType, body] of bodies) {
      const res = await request(server, 'PATCH', `${base}/deep-patches?fieldManager=probe`, { headers: { 'Content-Type': contentType }, body });
      expect(res.status, `${contentType}: ${res.body}`).toBe(400);
      expect(res.json().message).toMatch(/nests more than 100 levels deep/);
    }
    await expectUnchanged('deep-patches', resourceVersion);
  });

  it('accepts a body within the limit', async () => {
    const res = await request(server, 'POST', base, { headers: json, body: widget('within-limit', { color: 'red', junk: JSON.parse(nested(90)) }) });
    expect(res.status, res.body).toBe(201);
  });
});

describe('YAML', () => {
  it('answers an alias bomb with 400 BadRequest', async () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (const [name, previous] of [
      ['b', 'a'],
      ['c', 'b'],
      ['d', 'c'],
      ['e', 'd'],
      ['f', 'e'],
    ]) {
      levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(',')}]`);
    }
    const res = await request(server, 'POST', base, { headers: { 'Content-Type': 'application/yaml' }, body: levels.join('\n') });
    expect(res.status, res.body).toBe(400);
    expect(res.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    expect(res.json().message).toMatch(/^error converting YAML to JSON: yaml: .*alias/i);
  });
});

describe('duplicate fields', () => {
  const duplicated = '{"apiVersion":"testing.capo.dev/v1","kind":"Widget","metadata":{"name":"NAME"},"spec":{"color":"red","tags":[],"color":"blue"}}';
  const duplicatedYaml = 'apiVersion: testing.capo.dev/v1\nkind: Widget\nmetadata:\n  name: NAME\nspec:\n  color: red\n  color: blue\n';

  it('refuses them under fieldValidation=Strict, for JSON, YAML and apply', async () => {
    const cases: Array<[string, string, string]> = [
      ['POST', base, 'application/json'],
      ['POST', base, 'application/yaml'],
      ['PATCH', `${base}/strict-apply`, 'application/apply-patch+yaml'],
    ];
    for (const [method, path, contentType] of cases) {
      const body = (contentType === 'application/json' ? duplicated : duplicatedYaml).replace('NAME', 'strict-apply');
      const res = await request(server, method, `${path}?fieldValidation=Strict&fieldManager=probe`, { headers: { 'Content-Type': contentType }, body });
      expect(res.status, `${contentType}: ${res.body}`).toBe(400);
      expect(res.json().message).toBe('strict decoding error: duplicate field "spec.color"');
    }
    expect((await request(server, 'GET', `${base}/strict-apply`)).status).toBe(404);
  });

  it('warns under Warn and keeps the last value; Ignore keeps it silently', async () => {
    const warned = await request(server, 'POST', `${base}?fieldValidation=Warn`, { headers: json, body: duplicated.replace('NAME', 'warned') });
    expect(warned.status, warned.body).toBe(201);
    expect(warned.headers.warning).toContain('duplicate field \\"spec.color\\"');
    expect(warned.json().spec.color).toBe('blue');
    const ignored = await request(server, 'POST', `${base}?fieldValidation=Ignore`, { headers: json, body: duplicated.replace('NAME', 'ignored') });
    expect(ignored.status, ignored.body).toBe(201);
    expect(ignored.headers.warning).toBeUndefined();
  });
});

describe('stored size', () => {
  it('refuses a patch whose result would exceed the storage limit, and keeps the object', async () => {
    await createWidget('grows');
    // Two 512 KiB tags in two requests, each body well within the 3 MiB limit; managedFields name a set item by its value, so each tag is stored twice and the second takes the object past the 1.5 MiB a value may take (etcd's request limit).
    const addTag = (letter: string, first: boolean) =>
      JSON.stringify([{ op: 'add', path: first ? '/spec/tags' : '/spec/tags/-', value: first ? [letter.repeat(1 << 19)] : letter.repeat(1 << 19) }]);
    const grown = await request(server, 'PATCH', `${base}/grows`, { headers: jsonPatch, body: addTag('a', true) });
    expect(grown.status, grown.body.slice(0, 300)).toBe(200);
    const res = await request(server, 'PATCH', `${base}/grows`, { headers: jsonPatch, body: addTag('b', false) });
    expect(res.status, res.body.slice(0, 300)).toBe(413);
    expect(res.json()).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge' });
    await expectUnchanged('grows', grown.json().metadata.resourceVersion);
  });
});
