/**
 * The hostile-input suite for the Kubernetes API, over real HTTPS: requests
 * an attacker or a broken client sends, each with the answer kube-apiserver
 * gives. After every refused request the server is still ready and nothing
 * stored has changed (the storage revision is where it was).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startTestServer, type TestServer } from '../../harness/test-server.js';

let server: TestServer;
const group = '/apis/testing.capo.dev/v1';
const base = `${group}/namespaces/default/widgets`;

interface Case {
  name: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  anonymous?: boolean;
  status: number;
  reason?: string;
  message?: RegExp;
  /** Answered by Node's HTTP parser before any handler: no Status body. */
  bare?: boolean;
}

function widget(name: string, extra: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): string {
  return JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name, ...metadata }, spec: { color: 'red', ...extra } });
}

const json = { 'Content-Type': 'application/json' };
const yaml = { 'Content-Type': 'application/yaml' };
const mergePatch = { 'Content-Type': 'application/merge-patch+json' };
const jsonPatch = { 'Content-Type': 'application/json-patch+json' };
const apply = { 'Content-Type': 'application/apply-patch+yaml' };
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

beforeAll(async () => {
  server = await startTestServer();
  const created = await request(server, 'POST', base, { headers: json, body: widget('target') });
  expect(created.status, created.body).toBe(201);
  // One more write, so that the first resourceVersion is stale.
  const labelled = await request(server, 'PATCH', `${base}/target`, { headers: mergePatch, body: '{"metadata":{"labels":{"role":"target"}}}' });
  expect(labelled.status, labelled.body).toBe(200);
});

afterAll(async () => {
  await server?.stop();
});

async function check(testCase: Case): Promise<void> {
  const before = await server.storage.currentRevision();
  const res = await request(server, testCase.method ?? 'GET', testCase.path, { headers: testCase.headers, body: testCase.body, anonymous: testCase.anonymous });
  expect(res.status, res.body.slice(0, 500)).toBe(testCase.status);
  if (!testCase.bare) {
    const status = res.json();
    expect(status.kind).toBe('Status');
    if (testCase.reason) expect(status.reason).toBe(testCase.reason);
    if (testCase.message) expect(status.message).toMatch(testCase.message);
  }
  expect(await server.storage.currentRevision()).toBe(before);
  expect((await request(server, 'GET', '/readyz', { anonymous: true })).status).toBe(200);
}

function suite(title: string, cases: Case[]): void {
  describe(title, () => {
    for (const testCase of cases) it(testCase.name, () => check(testCase));
  });
}

suite('paths and names', [
  { name: 'malformed percent-encoding, authenticated', path: `${group}/namespaces/%E0%A4%A/widgets`, status: 400, reason: 'BadRequest' },
  { name: 'malformed percent-encoding, anonymous', path: `${group}/namespaces/%zz/widgets`, anonymous: true, status: 401, reason: 'Unauthorized' },
  { name: 'an unknown group', path: '/apis/nothing.example.com/v1/things', status: 404, reason: 'NotFound' },
  { name: 'an unknown version', path: '/apis/testing.capo.dev/v9/widgets', status: 404, reason: 'NotFound' },
  { name: 'an unknown resource', path: `${group}/namespaces/default/nothings`, status: 404, reason: 'NotFound' },
  { name: 'an unknown subresource', path: `${base}/target/scale`, status: 404 },
  { name: 'a name with a slash encoded', path: `${base}/a%2Fb`, status: 404 },
  { name: 'a name of dots', path: `${base}/..`, status: 404 },
  { name: 'a 300-character name', path: `${base}/${'a'.repeat(300)}`, status: 404 },
  { name: 'a namespaced kind read cluster-wide by name', path: `${group}/widgets/target`, status: 404 },
  { name: 'a PATCH on a collection', method: 'PATCH', path: base, headers: mergePatch, body: '{}', status: 405, reason: 'MethodNotAllowed' },
  { name: 'anonymous reads of objects', path: base, anonymous: true, status: 401, reason: 'Unauthorized' },
  { name: 'a bearer token nobody issued', path: base, anonymous: true, headers: { Authorization: 'Bearer forged' }, status: 401, reason: 'Unauthorized' },
  {
    name: 'forged identity headers without credentials',
    path: base,
    anonymous: true,
    headers: { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' },
    status: 401,
  },
]);

suite('list and watch parameters', [
  { name: 'a label selector with an unbalanced set', path: `${base}?labelSelector=${encodeURIComponent('env in (a,b')}`, status: 400, reason: 'BadRequest' },
  {
    name: 'a URL of 100 KB (a label selector of 10,000 terms)',
    path: `${base}?labelSelector=${encodeURIComponent(Array.from({ length: 10_000 }, (_, i) => `k${i}=v`).join(','))}`,
    status: 431,
    bare: true,
  },
  { name: 'a header of 100 KB', path: base, headers: { 'X-Padding': 'p'.repeat(100_000) }, status: 431, bare: true },
  { name: 'a label selector with an invalid key', path: `${base}?labelSelector=${encodeURIComponent('-bad=1')}`, status: 400 },
  { name: 'a field selector on an unsupported field', path: `${base}?fieldSelector=spec.color%3Dred`, status: 400, reason: 'BadRequest' },
  { name: 'a field selector with no operator', path: `${base}?fieldSelector=metadata.name`, status: 400 },
  { name: 'a resourceVersion that is not a number', path: `${base}?resourceVersion=abc`, status: 400 },
  { name: 'a negative resourceVersion', path: `${base}?resourceVersion=-1`, status: 400 },
  { name: 'an exponent as resourceVersion', path: `${base}?resourceVersion=1e30`, status: 400 },
  { name: 'a negative limit', path: `${base}?limit=-5`, status: 400 },
  { name: 'an exponent as limit', path: `${base}?limit=1e30`, status: 400 },
  { name: 'an unsupported resourceVersionMatch', path: `${base}?resourceVersion=1&resourceVersionMatch=Sometimes`, status: 422 },
  {
    name: 'a forged continue token',
    path: `${base}?limit=1&continue=${Buffer.from('{"v":"meta.k8s.io/v1","rv":99999999,"start":"x"}').toString('base64url')}`,
    status: 400,
    reason: 'BadRequest',
  },
  { name: 'continue with a resourceVersion', path: `${base}?limit=1&continue=abc&resourceVersion=5`, status: 400 },
  { name: 'a fractional watch timeout', path: `${base}?watch=true&timeoutSeconds=1.5`, status: 400 },
  { name: 'a negative watch timeout', path: `${base}?watch=true&timeoutSeconds=-1`, status: 400 },
  { name: 'a watch of a resourceVersion long gone', path: `${base}?watch=true&resourceVersion=abc`, status: 400 },
  { name: 'sendInitialEvents without resourceVersionMatch', path: `${base}?watch=true&sendInitialEvents=true`, status: 422 },
  { name: 'a non-boolean allowWatchBookmarks', path: `${base}?watch=true&allowWatchBookmarks=maybe`, status: 400 },
  {
    name: 'an includeObject that does not exist',
    path: `${base}?includeObject=Everything`,
    headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    status: 400,
  },
  { name: 'an Accept nothing can satisfy', path: base, headers: { Accept: 'application/x-protobuf' }, status: 406, reason: 'NotAcceptable' },
]);

suite('create and update bodies', [
  { name: 'an empty body', method: 'POST', path: base, headers: json, body: '', status: 400, reason: 'BadRequest' },
  { name: 'truncated JSON', method: 'POST', path: base, headers: json, body: '{"apiVersion":', status: 400 },
  { name: 'a JSON array', method: 'POST', path: base, headers: json, body: '[]', status: 400 },
  { name: 'a JSON string', method: 'POST', path: base, headers: json, body: '"widget"', status: 400 },
  { name: 'invalid UTF-8', method: 'POST', path: base, headers: json, body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), status: 400 },
  { name: 'a NUL byte in a name', method: 'POST', path: base, headers: json, body: widget('bad\u0000name'), status: 422, reason: 'Invalid' },
  { name: 'plain text', method: 'POST', path: base, headers: { 'Content-Type': 'text/plain' }, body: 'hello', status: 415, reason: 'UnsupportedMediaType' },
  { name: 'a form-encoded body', method: 'POST', path: base, headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'a=1', status: 415 },
  { name: 'a PUT on the collection', method: 'PUT', path: base, headers: json, body: widget('x1'), status: 405, reason: 'MethodNotAllowed' },
  { name: 'a POST on an object', method: 'POST', path: `${base}/target`, headers: json, body: widget('target'), status: 405 },
  { name: 'JSON nested 10,000 deep', method: 'POST', path: base, headers: json, body: nested(10_000), status: 400, message: /nests more than 100 levels deep/ },
  { name: 'YAML nested 10,000 deep', method: 'POST', path: base, headers: yaml, body: '['.repeat(10_000) + ']'.repeat(10_000), status: 400 },
  {
    name: 'a YAML alias bomb',
    method: 'POST',
    path: base,
    headers: yaml,
    body: 'a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n',
    status: 400,
    reason: 'BadRequest',
  },
  { name: 'YAML with two documents', method: 'POST', path: base, headers: yaml, body: 'a: 1\n---\nb: 2\n', status: 400 },
  {
    name: 'a body over 3 MiB',
    method: 'POST',
    path: base,
    headers: json,
    body: widget('big', { junk: 'x'.repeat(3 * 1024 * 1024) }),
    status: 413,
    reason: 'RequestEntityTooLarge',
  },
  { name: 'a body with no kind', method: 'POST', path: base, headers: json, body: '{"apiVersion":"testing.capo.dev/v1","metadata":{"name":"x"}}', status: 400 },
  { name: 'a body of another kind', method: 'POST', path: base, headers: json, body: widget('x2').replace('"Widget"', '"Gadget"'), status: 400 },
  { name: 'a body of another group', method: 'POST', path: base, headers: json, body: widget('x3').replace('testing.capo.dev/v1', 'apps/v1'), status: 400 },
  {
    name: 'metadata that is a string',
    method: 'POST',
    path: base,
    headers: json,
    body: '{"apiVersion":"testing.capo.dev/v1","kind":"Widget","metadata":"x","spec":{"color":"red"}}',
    status: 400,
  },
  { name: 'a name with capitals', method: 'POST', path: base, headers: json, body: widget('Target'), status: 422, reason: 'Invalid' },
  { name: 'a 300-character name', method: 'POST', path: base, headers: json, body: widget('a'.repeat(300)), status: 422 },
  { name: 'a namespace that does not match the path', method: 'POST', path: base, headers: json, body: widget('x4', {}, { namespace: 'other' }), status: 400 },
  { name: 'a label value of 64 characters', method: 'POST', path: base, headers: json, body: widget('x5', {}, { labels: { a: 'b'.repeat(64) } }), status: 422 },
  { name: 'a label key with two slashes', method: 'POST', path: base, headers: json, body: widget('x6', {}, { labels: { 'a/b/c': 'd' } }), status: 422 },
  {
    name: 'annotations over 256 KiB',
    method: 'POST',
    path: base,
    headers: json,
    body: widget('x7', {}, { annotations: { a: 'b'.repeat(262_145) } }),
    status: 422,
  },
  {
    name: 'a finalizer that is no qualified name',
    method: 'POST',
    path: base,
    headers: json,
    body: widget('x9', {}, { finalizers: ['not a finalizer!'] }),
    status: 422,
  },
  {
    name: 'a resourceVersion on create',
    method: 'POST',
    path: base,
    headers: json,
    body: widget('rv-on-create', {}, { resourceVersion: '12345' }),
    status: 400,
    message: /resourceVersion should not be set/,
  },
  { name: 'a wrongly typed spec field', method: 'POST', path: base, headers: json, body: widget('x10', { replicas: 'many' }), status: 422, reason: 'Invalid' },
  {
    name: 'a number past any integer',
    method: 'POST',
    path: base,
    headers: json,
    body: widget('x11', { replicas: Number.POSITIVE_INFINITY }).replace('null', '1e400'),
    status: 422,
  },
  { name: 'an enum value that does not exist', method: 'POST', path: base, headers: json, body: widget('x12', { color: 'purple' }), status: 422 },
  {
    name: 'duplicate fields under Strict',
    method: 'POST',
    path: `${base}?fieldValidation=Strict`,
    headers: json,
    body: '{"apiVersion":"testing.capo.dev/v1","kind":"Widget","metadata":{"name":"x"},"spec":{"color":"red","color":"blue"}}',
    status: 400,
    message: /duplicate field "spec.color"/,
  },
  {
    name: 'unknown fields under Strict',
    method: 'POST',
    path: `${base}?fieldValidation=Strict`,
    headers: json,
    body: widget('x13', { nonsense: 1 }),
    status: 400,
    message: /unknown field "spec.nonsense"/,
  },
  { name: 'a fieldValidation that does not exist', method: 'POST', path: `${base}?fieldValidation=Lenient`, headers: json, body: widget('x14'), status: 422 },
  { name: 'a dryRun that does not exist', method: 'POST', path: `${base}?dryRun=Some`, headers: json, body: widget('x15'), status: 422 },
  {
    name: 'a fieldManager of 200 characters',
    method: 'POST',
    path: `${base}?fieldManager=${'m'.repeat(200)}`,
    headers: json,
    body: widget('x16'),
    status: 422,
  },
  { name: 'an update without a resourceVersion', method: 'PUT', path: `${base}/target`, headers: json, body: widget('target'), status: 422 },
  {
    name: 'an update with a stale resourceVersion',
    method: 'PUT',
    path: `${base}/target`,
    headers: json,
    body: widget('target', {}, { resourceVersion: '1' }).replace('"red"', '"blue"'),
    status: 409,
    reason: 'Conflict',
  },
  {
    name: 'an update whose name differs from the path',
    method: 'PUT',
    path: `${base}/target`,
    headers: json,
    body: widget('other', {}, { resourceVersion: '1' }),
    status: 400,
  },
  { name: 'a delete with DeleteOptions of the wrong kind', method: 'DELETE', path: `${base}/target`, headers: json, body: '{"kind":"Widget"}', status: 400 },
  { name: 'a delete with a malformed body', method: 'DELETE', path: `${base}/target`, headers: json, body: '{"propagationPolicy":', status: 400 },
  {
    name: 'a delete with an unknown propagation policy',
    method: 'DELETE',
    path: `${base}/target`,
    headers: json,
    body: '{"propagationPolicy":"Sideways"}',
    status: 422,
  },
]);

suite('patches and apply', [
  {
    name: 'a JSON patch copy bomb',
    method: 'PATCH',
    path: `${base}/target`,
    headers: jsonPatch,
    body: JSON.stringify([
      { op: 'add', path: '/spec/junk', value: { s: 'x'.repeat(1024) } },
      ...Array.from({ length: 25 }, (_, i) => ({ op: 'copy', from: '/spec/junk', path: `/spec/junk/c${i}` })),
    ]),
    status: 422,
    reason: 'Invalid',
  },
  {
    name: 'a JSON patch of 10,001 operations',
    method: 'PATCH',
    path: `${base}/target`,
    headers: jsonPatch,
    body: JSON.stringify(Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/kind', value: 'Widget' }))),
    status: 413,
  },
  { name: 'a JSON patch that is an object', method: 'PATCH', path: `${base}/target`, headers: jsonPatch, body: '{"op":"add"}', status: 400 },
  {
    name: 'a JSON patch with an unknown op',
    method: 'PATCH',
    path: `${base}/target`,
    headers: jsonPatch,
    body: '[{"op":"explode","path":"/spec"}]',
    status: 400,
  },
  {
    name: 'a JSON patch with a pointer missing its slash',
    method: 'PATCH',
    path: `${base}/target`,
    headers: jsonPatch,
    body: '[{"op":"remove","path":"spec"}]',
    status: 400,
  },
  {
    name: 'a JSON patch test that fails',
    method: 'PATCH',
    path: `${base}/target`,
    headers: jsonPatch,
    body: '[{"op":"test","path":"/spec/color","value":"blue"}]',
    status: 422,
  },
  {
    name: 'a JSON patch past an array end',
    method: 'PATCH',
    path: `${base}/target`,
    headers: jsonPatch,
    body: '[{"op":"add","path":"/spec/tags","value":[]},{"op":"add","path":"/spec/tags/5","value":"x"}]',
    status: 422,
  },
  {
    name: 'a JSON patch whose result nests past the limit',
    method: 'PATCH',
    path: `${base}/target`,
    headers: jsonPatch,
    body: JSON.stringify([
      { op: 'add', path: '/spec/junk', value: JSON.parse(nested(90)) },
      { op: 'add', path: `/spec/junk${'/a'.repeat(89)}/b`, value: JSON.parse(nested(20)) },
    ]),
    status: 422,
  },
  {
    name: 'a JSON patch that changes the name',
    method: 'PATCH',
    path: `${base}/target`,
    headers: jsonPatch,
    body: '[{"op":"replace","path":"/metadata/name","value":"other"}]',
    status: 400,
  },
  { name: 'a merge patch that is an array', method: 'PATCH', path: `${base}/target`, headers: mergePatch, body: '[1,2]', status: 400 },
  { name: 'a merge patch that is a number', method: 'PATCH', path: `${base}/target`, headers: mergePatch, body: '42', status: 400 },
  { name: 'a merge patch nested 10,000 deep', method: 'PATCH', path: `${base}/target`, headers: mergePatch, body: `{"spec":${nested(10_000)}}`, status: 400 },
  { name: 'a merge patch of an invalid value', method: 'PATCH', path: `${base}/target`, headers: mergePatch, body: '{"spec":{"replicas":-1}}', status: 422 },
  {
    name: 'a strategic merge patch on a custom kind',
    method: 'PATCH',
    path: `${base}/target`,
    headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
    body: '{}',
    status: 415,
  },
  {
    name: 'a patch of an object that does not exist',
    method: 'PATCH',
    path: `${base}/missing`,
    headers: mergePatch,
    body: '{}',
    status: 404,
    reason: 'NotFound',
  },
  { name: 'apply without a fieldManager', method: 'PATCH', path: `${base}/target`, headers: apply, body: widget('target'), status: 422 },
  { name: 'apply with force on a merge patch', method: 'PATCH', path: `${base}/target?force=true`, headers: mergePatch, body: '{}', status: 422 },
  {
    name: 'apply with a non-boolean force',
    method: 'PATCH',
    path: `${base}/target?fieldManager=m&force=perhaps`,
    headers: apply,
    body: widget('target'),
    status: 400,
  },
  {
    name: 'apply with managedFields set',
    method: 'PATCH',
    path: `${base}/target?fieldManager=m`,
    headers: apply,
    body: widget('target', {}, { managedFields: [] }),
    status: 400,
  },
  { name: 'apply of malformed YAML', method: 'PATCH', path: `${base}/target?fieldManager=m`, headers: apply, body: 'spec: [unclosed', status: 400 },
  {
    name: 'apply of a YAML alias bomb',
    method: 'PATCH',
    path: `${base}/target?fieldManager=m`,
    headers: apply,
    body: 'a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n',
    status: 400,
  },
  {
    name: 'apply with duplicate fields under Strict',
    method: 'PATCH',
    path: `${base}/target?fieldManager=m&fieldValidation=Strict`,
    headers: apply,
    body: 'apiVersion: testing.capo.dev/v1\nkind: Widget\nmetadata:\n  name: target\nspec:\n  color: red\n  color: blue\n',
    status: 400,
  },
  { name: 'apply naming another object', method: 'PATCH', path: `${base}/target?fieldManager=m`, headers: apply, body: widget('other'), status: 400 },
  {
    name: 'apply that conflicts with another manager',
    method: 'PATCH',
    path: `${base}/target?fieldManager=intruder`,
    headers: apply,
    body: widget('target', { color: 'blue' }),
    status: 409,
    reason: 'Conflict',
  },
]);

describe('forged server-owned metadata', () => {
  it('keeps forged managedFields, uid and creationTimestamp out of a created object', async () => {
    const body = widget('forged', {}, { managedFields: [{ manager: 5, fieldsV1: 'nonsense' }], uid: 'forged-uid', creationTimestamp: '1999-01-01T00:00:00Z' });
    const res = await request(server, 'POST', base, { headers: json, body });
    expect(res.status, res.body).toBe(201);
    const { metadata } = res.json();
    expect(metadata.uid).not.toBe('forged-uid');
    expect(metadata.creationTimestamp).not.toBe('1999-01-01T00:00:00Z');
    expect(metadata.managedFields.map((entry: { manager: unknown }) => entry.manager)).toEqual(['unknown']);
  });
});
