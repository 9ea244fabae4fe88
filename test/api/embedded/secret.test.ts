/**
 * The core v1 Secret as kubectl sees it: the legacy /api group, stringData
 * folded into data and never stored, strategic merge patches from kubectl
 * apply, patch and edit, the protobuf body of kubectl create secret,
 * immutability, kube's validation messages without the secret values, and
 * watches.
 */
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { embeddedClusterApiKinds } from '../../../src/api/embedded/kinds.js';
import { infrastructureKinds } from '../../../src/api/infrastructure/kinds.js';
import { openWatch, request, startTestServer, type TestServer } from '../../../harness/test-server.js';
import { kubectlExpectations } from './kubectl.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ kinds: [...infrastructureKinds, ...embeddedClusterApiKinds] });
});

afterAll(async () => {
  await server?.stop();
});

const base = '/api/v1/namespaces/default/secrets';
const b64 = (text: string) => Buffer.from(text).toString('base64');

function secret(name: string, fields: Record<string, unknown>, metadata: Record<string, unknown> = {}): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default', ...metadata }, ...fields });
}

const { ok, fails } = kubectlExpectations(() => server);

async function rawPost(path: string, contentType: string, body: Buffer): Promise<{ status: number; body: { message: string } }> {
  const result = await request(server, 'POST', path, { headers: { 'Content-Type': contentType }, body });
  return { status: result.status, body: result.json() };
}

async function getJson(name: string): Promise<any> {
  return JSON.parse(await ok(['get', 'secret', name, '-o', 'json']));
}

describe('kubectl apply, get, describe and delete', () => {
  it('creates a Secret with data and stringData; stringData lands in data and is not stored', async () => {
    const manifest = secret('creds', { type: 'Opaque', data: { password: b64('s3cret') }, stringData: { username: 'admin' } });
    expect(await ok(['apply', '-f', '-'], manifest)).toBe('secret/creds created\n');

    const stored = await getJson('creds');
    expect(stored.data).toEqual({ password: b64('s3cret'), username: b64('admin') });
    expect(stored.stringData).toBeUndefined();
    expect(stored.type).toBe('Opaque');
    const raw = await server.storage.get('/registry/secrets/default/creds');
    expect(raw?.value.stringData).toBeUndefined();
    expect(raw?.value.data).toEqual(stored.data);

    const table = (await ok(['get', 'secrets', 'creds'])).split('\n');
    expect(table[0]).toMatch(/^NAME\s+TYPE\s+DATA\s+AGE$/);
    expect(table[1]).toMatch(/^creds\s+Opaque\s+2\s+\d+s$/);

    const described = await ok(['describe', 'secret', 'creds']);
    expect(described).toMatch(/Type:\s+Opaque/);
    expect(described).toMatch(/password:\s+6 bytes/);
    expect(described).toMatch(/username:\s+5 bytes/);
    expect(described).not.toContain('s3cret');

    expect(await ok(['delete', 'secret', 'creds'])).toBe('secret "creds" deleted\n');
    expect(await fails(['get', 'secret', 'creds'])).toContain('secrets "creds" not found');
  });

  it('re-applies a change as a strategic merge patch: changed, added and removed keys', async () => {
    await ok(['apply', '-f', '-'], secret('rotated', { data: { keep: b64('k'), drop: b64('d') }, stringData: { token: 'one' } }));
    const result = await server.kubectl(['apply', '-f', '-', '-v=8'], {
      input: secret('rotated', { data: { keep: b64('k'), added: b64('a') }, stringData: { token: 'two' } }, { labels: { tier: 'db' } }),
    });
    expect(result.stdout).toBe('secret/rotated configured\n');
    expect(result.stderr).toContain('Content-Type: application/strategic-merge-patch+json');
    const stored = await getJson('rotated');
    expect(stored.data).toEqual({ keep: b64('k'), added: b64('a'), token: b64('two') });
    expect(stored.metadata.labels).toEqual({ tier: 'db' });
    expect(stored.stringData).toBeUndefined();
  });

  it('takes the protobuf body kubectl create secret sends, as kube-apiserver does', async () => {
    const created = await server.kubectl(['create', 'secret', 'generic', 'literal', '--from-literal=token=abc', '--from-literal=user=admin', '-v=8']);
    expect(created.stdout, created.stderr).toBe('secret/literal created\n');
    expect(created.stderr).toContain('Content-Type: application/vnd.kubernetes.protobuf');
    const stored = await getJson('literal');
    expect(stored).toMatchObject({ type: 'Opaque', data: { token: b64('abc'), user: b64('admin') }, metadata: { name: 'literal', namespace: 'default' } });
    expect(stored.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const registry = ['create', 'secret', 'docker-registry', 'pull', '--docker-server=registry.example', '--docker-username=u', '--docker-password=p'];
    expect(await ok([...registry, '--dry-run=server', '-o', 'jsonpath={.type}'])).toBe('kubernetes.io/dockerconfigjson');
    // The server validates what arrived in protobuf as it does JSON: a TLS Secret needs its two keys.
    const refused = await fails(['create', 'secret', 'generic', 'half-tls', '--type=kubernetes.io/tls', '--from-literal=tls.crt=x']);
    expect(refused).toContain('tls.key');
  });

  it('answers a protobuf body it cannot read with 400, and one for a kind without protobuf with 415', async () => {
    const garbage = await rawPost('/api/v1/namespaces/default/secrets', 'application/vnd.kubernetes.protobuf', Buffer.from('not protobuf'));
    expect(garbage.status).toBe(400);
    expect(garbage.body.message).toContain('not a Kubernetes protobuf object');
    const crd = await rawPost('/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters', 'application/vnd.kubernetes.protobuf', Buffer.from('k8s\0'));
    expect(crd.status).toBe(415);
    expect(crd.body.message).toContain('accepted media types include: application/json, application/yaml');
  });

  it('holds the JSON inside a protobuf body (managedFields) to the depth limit of JSON bodies', async () => {
    const deep = `${'{"f:a":'.repeat(5000)}{}${'}'.repeat(5000)}`;
    // Secret{metadata{name, managedFields[{manager, fieldsV1{Raw}}]}} in a runtime.Unknown, field by field.
    const fieldsV1 = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .string(deep)
      .finish();
    const entry = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .string('kubectl')
      .uint32((7 << 3) | 2)
      .bytes(fieldsV1)
      .finish();
    const metadata = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .string('deep')
      .uint32((17 << 3) | 2)
      .bytes(entry)
      .finish();
    const secretMessage = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .bytes(metadata)
      .finish();
    const typeMeta = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .string('v1')
      .uint32((2 << 3) | 2)
      .string('Secret')
      .finish();
    const unknown = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .bytes(typeMeta)
      .uint32((2 << 3) | 2)
      .bytes(secretMessage)
      .finish();
    const refused = await rawPost(base, 'application/vnd.kubernetes.protobuf', Buffer.concat([Buffer.from('k8s\0'), unknown]));
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('nests more than');
    expect(await fails(['get', 'secret', 'deep'])).toContain('not found');
  });

  it('labels and annotates', async () => {
    await ok(['apply', '-f', '-'], secret('tagged', { data: { a: b64('a') } }));
    expect(await ok(['label', 'secret', 'tagged', 'team=infra'])).toBe('secret/tagged labeled\n');
    expect(await ok(['annotate', 'secret', 'tagged', 'note=rotated'])).toBe('secret/tagged annotated\n');
    const stored = await getJson('tagged');
    expect(stored.metadata.labels).toEqual({ team: 'infra' });
    expect(stored.metadata.annotations.note).toBe('rotated');
    expect(await ok(['get', 'secrets', '-l', 'team=infra', '-o', 'name'])).toBe('secret/tagged\n');
  });

  it('merges finalizers with kubectl patch and edit, which send $setElementOrder and $deleteFromPrimitiveList', async () => {
    await ok(['apply', '-f', '-'], secret('held', { data: { a: b64('a') } }, { finalizers: ['example.com/a', 'example.com/b'] }));
    await ok(['patch', 'secret', 'held', '-p', '{"metadata":{"finalizers":["example.com/c"]}}']);
    expect((await getJson('held')).metadata.finalizers).toEqual(['example.com/c', 'example.com/a', 'example.com/b']);

    const edit = await server.kubectl(['edit', 'secret', 'held', '-v=8'], {
      env: { KUBE_EDITOR: 'sed -i -e /example.com.b/d -e s#example.com/c#example.com/d#' },
    });
    expect(edit.stdout, edit.stderr).toBe('secret/held edited\n');
    expect(edit.stderr).toContain('$deleteFromPrimitiveList/finalizers');
    expect(edit.stderr).toContain('$setElementOrder/finalizers');
    expect((await getJson('held')).metadata.finalizers).toEqual(['example.com/d', 'example.com/a']);

    await ok(['patch', 'secret', 'held', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
  });

  it('refuses a strategic merge patch of ownerReferences, which kube merges by uid', async () => {
    await ok(['apply', '-f', '-'], secret('owned', { data: { a: b64('a') } }));
    const owner = '{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Secret","name":"creds","uid":"0b7a0a9e-2f7c-4c1c-9d7a-2f1b1e0c7a11"}]}}';
    const refused = await fails(['patch', 'secret', 'owned', '-p', owner]);
    expect(refused).toContain('metadata.ownerReferences');
    expect(refused).toContain('--type=merge');
    await ok(['patch', 'secret', 'owned', '--type=merge', '-p', owner]);
    expect((await getJson('owned')).metadata.ownerReferences).toHaveLength(1);
  });
});

describe('validation', () => {
  it('rejects invalid base64 and bad keys with 422 causes that do not quote the value', async () => {
    const body = secret('broken', { data: { token: 'bm90!!YmFzZTY0', 'bad key': b64('x') } });
    const response = await request(server, 'POST', base, { headers: { 'Content-Type': 'application/json' }, body });
    expect(response.status).toBe(422);
    const status = response.json();
    expect(status.reason).toBe('Invalid');
    expect(status.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'data[token]',
        message: 'Invalid value: "<secret contents redacted>": illegal base64 data at input byte 4',
      },
      expect.objectContaining({ reason: 'FieldValueInvalid', field: 'data[bad key]', message: expect.stringContaining('a valid config key must consist of') }),
    ]);
    expect(response.body).not.toContain('bm90');
    expect(await fails(['apply', '-f', '-'], body)).toContain('data[token]: Invalid value: "<secret contents redacted>"');
  });

  it('rejects bad base64 padding and stringData keys that cannot be data keys', async () => {
    const padding = await fails(['apply', '-f', '-'], secret('padded', { data: { a: 'YWJj=' } }));
    expect(padding).toContain('data[a]: Invalid value: "<secret contents redacted>": illegal base64 data at input byte 4');
    const key = await fails(['apply', '-f', '-'], secret('keyed', { stringData: { '..': 'x' } }));
    expect(key).toContain(`data[..]: Invalid value: "..": must not be '..'`);
  });

  it('requires the keys of well-known types and keeps the type once set', async () => {
    const tls = await fails(['apply', '-f', '-'], secret('cert', { type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c') } }));
    expect(tls).toContain('data[tls.key]: Required value');
    await ok(['apply', '-f', '-'], secret('cert', { type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c'), 'tls.key': b64('k') } }));
    const retyped = await fails(['patch', 'secret', 'cert', '-p', '{"type":"Opaque"}']);
    expect(retyped).toContain('type: Invalid value: "Opaque": field is immutable');
  });

  it('freezes data and type of an immutable Secret, stringData included, but not its labels', async () => {
    await ok(['apply', '-f', '-'], secret('frozen', { data: { a: b64('a') }, immutable: true }));
    const changed = await fails(['patch', 'secret', 'frozen', '-p', JSON.stringify({ stringData: { a: 'b' } })]);
    expect(changed).toContain('data: Forbidden: field is immutable when `immutable` is set');
    const thawed = await fails(['patch', 'secret', 'frozen', '--type=merge', '-p', '{"immutable":false}']);
    expect(thawed).toContain('immutable: Forbidden: field is immutable when `immutable` is set');
    const response = await request(server, 'PATCH', `${base}/frozen`, {
      headers: { 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify({ data: { a: b64('other') } }),
    });
    expect(response.status).toBe(422);
    expect(response.json().details.causes).toEqual([
      { reason: 'FieldValueForbidden', field: 'data', message: 'Forbidden: field is immutable when `immutable` is set' },
    ]);
    // The same value through stringData is no change.
    await ok(['patch', 'secret', 'frozen', '-p', JSON.stringify({ stringData: { a: 'a' } })]);
    await ok(['label', 'secret', 'frozen', 'still=labelled']);
    expect(await ok(['delete', 'secret', 'frozen'])).toBe('secret "frozen" deleted\n');
  });

  it('does not echo secret values in decoding errors', async () => {
    const response = await request(server, 'POST', base, {
      headers: { 'Content-Type': 'application/json' },
      body: '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"},"data":{"p":c2VjcmV0}}',
    });
    expect(response.status).toBe(400);
    expect(response.json().message).toBe("error decoding request body: Unexpected token 'c' in JSON");
  });

  it('takes apiVersion and kind from the endpoint when the body leaves them out, as for kube built-ins', async () => {
    const response = await request(server, 'POST', base, {
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'untyped' }, data: { a: b64('a') } }),
    });
    expect(response.status).toBe(201);
    expect(response.json()).toMatchObject({ apiVersion: 'v1', kind: 'Secret', type: 'Opaque' });
  });
});

describe('watch', () => {
  it('streams Secret events to kubectl get -w', async () => {
    const child = server.spawnKubectl([
      'get',
      'secrets',
      '--watch',
      '--output-watch-events',
      '-o',
      'jsonpath={.type} {.object.metadata.name}{"\\n"}',
      '--field-selector',
      'metadata.name=watched',
    ]);
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    const waitFor = (text: string) => vi.waitFor(() => expect(output).toContain(text), { timeout: 10_000, interval: 10 });
    await ok(['apply', '-f', '-'], secret('watched', { data: { a: b64('a') } }));
    await waitFor('ADDED watched');
    await ok(['label', 'secret', 'watched', 'stage=two']);
    await waitFor('MODIFIED watched');
    await ok(['delete', 'secret', 'watched']);
    await waitFor('DELETED watched');
    child.kill();
  });

  it('selects Secrets by type with kubectl --field-selector, as kube-apiserver does, and names any other field as unsupported', async () => {
    await ok(['apply', '-f', '-'], secret('plain', { type: 'Opaque', data: { a: b64('a') } }));
    await ok(['apply', '-f', '-'], secret('tls', { type: 'kubernetes.io/tls', data: { 'tls.crt': b64('c'), 'tls.key': b64('k') } }));
    const tls = (await ok(['get', 'secrets', '--field-selector', 'type=kubernetes.io/tls', '-o', 'name'])).split('\n');
    expect(tls).toContain('secret/tls');
    expect(tls).not.toContain('secret/plain');
    expect(await ok(['get', 'secrets', '--field-selector', 'type!=kubernetes.io/tls,metadata.name=plain', '-o', 'name'])).toBe('secret/plain\n');
    expect(await fails(['get', 'secrets', '--field-selector', 'data.a=x'])).toContain('field label not supported: data.a');
    await ok(['delete', 'secret', 'plain', 'tls']);
  });

  it('sends v1 objects and bookmarks on the raw watch', async () => {
    await ok(['apply', '-f', '-'], secret('streamed', { data: { a: b64('a') } }));
    const list = await request(server, 'GET', base);
    expect(list.json()).toMatchObject({ apiVersion: 'v1', kind: 'SecretList' });
    const watch = await openWatch(
      server,
      `${base}?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&fieldSelector=metadata.name%3Dstreamed`,
    );
    const events = await watch.waitFor(2);
    watch.close();
    expect(events[0]).toMatchObject({ type: 'ADDED', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'streamed' } } });
    expect(events[1]).toMatchObject({ type: 'BOOKMARK', object: { apiVersion: 'v1', kind: 'Secret' } });
  });
});
