/**
 * Wire-level contract details that client-go, the garbage collector and the
 * aggregator depend on, checked over raw HTTPS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWatch, request, startTestServer, type TestServer } from '../../harness/test-server.js';
import { SqliteStorage } from '../../src/storage/sqlite.js';

let server: TestServer;
const base = '/apis/testing.capo.dev/v1/namespaces/default/widgets';
const json = { 'Content-Type': 'application/json' };

beforeAll(async () => {
  server = await startTestServer({ bookmarkIntervalMs: 300 });
});

afterAll(async () => {
  await server?.stop();
});

function widget(name: string, labels: Record<string, string> = {}) {
  return JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name, labels }, spec: { color: 'red' } });
}

async function create(name: string, labels: Record<string, string> = {}) {
  const res = await request(server, 'POST', base, { headers: json, body: widget(name, labels) });
  expect(res.status, res.body).toBe(201);
  return res.json();
}

describe('discovery and documents', () => {
  it('serves aggregated discovery with an ETag and 304', async () => {
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
    const first = await request(server, 'GET', '/apis', { headers: { Accept: accept } });
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toMatch(/as=APIGroupDiscoveryList/);
    expect(first.headers['content-type']).toMatch(/g=apidiscovery\.k8s\.io/);
    const doc = first.json();
    expect(doc.kind).toBe('APIGroupDiscoveryList');
    const versions = doc.items.find((g: any) => g.metadata.name === 'testing.capo.dev').versions;
    expect(versions.map((v: any) => v.version)).toEqual(['v1', 'v1alpha1']);
    const widgets = versions[0].resources.find((r: any) => r.resource === 'widgets');
    expect(widgets.responseKind).toEqual({ group: 'testing.capo.dev', version: 'v1', kind: 'Widget' });
    expect(widgets.subresources[0]).toMatchObject({ subresource: 'status', verbs: ['get', 'patch', 'update'] });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[0-9a-f]+"$/);
    const second = await request(server, 'GET', '/apis', { headers: { Accept: accept, 'If-None-Match': etag } });
    expect(second.status).toBe(304);
  });

  it('serves the legacy group-version resource list with the status subresource', async () => {
    const res = await request(server, 'GET', '/apis/testing.capo.dev/v1');
    expect(res.json().resources.map((r: any) => r.name)).toEqual(['widgets', 'widgets/status', 'gadgets']);
    expect((await request(server, 'GET', '/api')).status).toBe(404);
  });

  it('serves OpenAPI v3 with hashed URLs and no strategic merge patch', async () => {
    const root = (await request(server, 'GET', '/openapi/v3')).json();
    expect(Object.keys(root.paths).sort()).toEqual(['apis/testing.capo.dev/v1', 'apis/testing.capo.dev/v1alpha1']);
    const url = root.paths['apis/testing.capo.dev/v1'].serverRelativeURL;
    const doc = await request(server, 'GET', url);
    expect(doc.headers['cache-control']).toBe('public, immutable');
    expect(doc.body).not.toContain('strategic-merge-patch');
    const stale = await request(server, 'GET', '/openapi/v3/apis/testing.capo.dev/v1?hash=0000');
    expect(stale.status).toBe(301);
    const v2 = await request(server, 'GET', '/openapi/v2', { headers: { Accept: 'application/json' } });
    expect(v2.json().swagger).toBe('2.0');
  });
});

describe('errors', () => {
  it('answers unknown paths, wrong verbs and bad media types with Status objects', async () => {
    const missing = await request(server, 'GET', '/apis/testing.capo.dev/v1/namespaces/default/nothings');
    expect(missing.json()).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
    const patch = await request(server, 'PATCH', `${base}/x`, { headers: { 'Content-Type': 'application/strategic-merge-patch+json' }, body: '{}' });
    expect(patch.status).toBe(415);
    expect(patch.json().reason).toBe('UnsupportedMediaType');
    const text = await request(server, 'POST', base, { headers: { 'Content-Type': 'text/plain' }, body: 'hi' });
    expect(text.status).toBe(415);
    const malformed = await request(server, 'POST', base, { headers: json, body: '{"apiVersion":' });
    expect(malformed.status).toBe(400);
    expect(malformed.json().reason).toBe('BadRequest');
    const wrongVersion = await request(server, 'POST', base, { headers: json, body: widget('x').replace('testing.capo.dev/v1', 'testing.capo.dev/v9') });
    expect(wrongVersion.status).toBe(400);
  });

  it('refuses writes that address the wrong scope or namespace', async () => {
    const clusterPath = await request(server, 'POST', '/apis/testing.capo.dev/v1/widgets', { headers: json, body: widget('scope') });
    expect(clusterPath.status).toBe(405);
    const otherNamespace = JSON.parse(widget('scope'));
    otherNamespace.metadata.namespace = 'elsewhere';
    const mismatch = await request(server, 'POST', base, { headers: json, body: JSON.stringify(otherNamespace) });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json().message).toBe('the namespace of the provided object does not match the namespace sent on the request');
    const scalarPatch = await request(server, 'PATCH', `${base}/scope`, { headers: { 'Content-Type': 'application/merge-patch+json' }, body: '"x"' });
    expect(scalarPatch.status).toBe(400);
    const gadget = await request(server, 'POST', '/apis/testing.capo.dev/v1/gadgets', {
      headers: json,
      body: JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Gadget', metadata: { name: 'g1' }, spec: { size: 2 } }),
    });
    expect(gadget.status).toBe(201);
    expect(gadget.json().metadata.namespace).toBeUndefined();
    expect((await request(server, 'GET', '/apis/testing.capo.dev/v1/namespaces/default/gadgets/g1')).status).toBe(404);
  });

  it('refuses oversized bodies and leaves the store unchanged', async () => {
    const huge = JSON.stringify({
      apiVersion: 'testing.capo.dev/v1',
      kind: 'Widget',
      metadata: { name: 'huge', annotations: { a: 'x'.repeat(4 * 1024 * 1024) } },
      spec: { color: 'red' },
    });
    const res = await request(server, 'POST', base, { headers: json, body: huge });
    expect(res.status).toBe(413);
    expect(res.json().reason).toBe('RequestEntityTooLarge');
    expect((await request(server, 'GET', `${base}/huge`)).status).toBe(404);
  });

  it('names the field of an invalid object in the causes', async () => {
    const res = await request(server, 'POST', base, {
      headers: json,
      body: JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name: 'neg' }, spec: { color: 'red', replicas: -1 } }),
    });
    expect(res.status).toBe(422);
    const status = res.json();
    expect(status.reason).toBe('Invalid');
    expect(status.details).toMatchObject({ name: 'neg', group: 'testing.capo.dev', kind: 'Widget' });
    expect(status.details.causes).toEqual([expect.objectContaining({ field: 'spec.replicas', reason: 'FieldValueInvalid' })]);
  });

  it('requires resourceVersion on PUT and rejects it on create', async () => {
    const created = await create('rv-rules');
    delete created.metadata.resourceVersion;
    const put = await request(server, 'PUT', `${base}/rv-rules`, { headers: json, body: JSON.stringify(created) });
    expect(put.status).toBe(422);
    expect(put.json().details.causes[0].field).toBe('metadata.resourceVersion');
    const withRv = JSON.parse(widget('rv-create'));
    withRv.metadata.resourceVersion = '5';
    const post = await request(server, 'POST', base, { headers: json, body: JSON.stringify(withRv) });
    expect(post.status).toBe(400);
  });

  it('refuses anonymous requests', async () => {
    const res = await request(server, 'GET', base, { anonymous: true });
    expect(res.status).toBe(401);
    expect(res.json().reason).toBe('Unauthorized');
    expect((await request(server, 'GET', '/readyz', { anonymous: true })).body).toBe('ok');
  });
});

describe('representations', () => {
  it('serves metadata-only lists and gets for the garbage collector', async () => {
    await create('meta-a', { m: 'yes' });
    const accept =
      'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
    const list = await request(server, 'GET', `${base}?labelSelector=m%3Dyes`, { headers: { Accept: accept } });
    expect(list.headers['content-type']).toBe('application/json');
    const body = list.json();
    expect(body.kind).toBe('PartialObjectMetadataList');
    expect(body.items[0]).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'meta-a' } });
    expect(body.items[0].spec).toBeUndefined();
    const get = await request(server, 'GET', `${base}/meta-a`, { headers: { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' } });
    expect(get.json().kind).toBe('PartialObjectMetadata');
    const wrongPairing = await request(server, 'GET', `${base}/meta-a`, {
      headers: { Accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' },
    });
    expect(wrongPairing.status).toBe(406);
  });

  it('streams metadata-only watch events', async () => {
    const list = (await request(server, 'GET', base)).json();
    const watch = await openWatch(server, `${base}?watch=true&resourceVersion=${list.metadata.resourceVersion}`, {
      Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
    });
    await create('meta-watch');
    const [event] = await watch.waitFor(1);
    watch.close();
    expect(event.type).toBe('ADDED');
    expect(event.object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'meta-watch' } });
  });

  it('serves Tables with row objects and continue tokens', async () => {
    const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    await create('table-a');
    await create('table-b');
    const res = await request(server, 'GET', `${base}?limit=1`, { headers: { Accept: accept } });
    const table = res.json();
    expect(table.kind).toBe('Table');
    expect(table.columnDefinitions.map((c: any) => c.name)).toEqual(['Name', 'Color', 'Replicas', 'Ready', 'Tags', 'Age']);
    expect(table.columnDefinitions.find((c: any) => c.name === 'Tags').priority).toBe(1);
    expect(table.rows).toHaveLength(1);
    expect(table.rows[0].object.kind).toBe('PartialObjectMetadata');
    expect(table.metadata.continue).toBeTruthy();
    expect(table.metadata.resourceVersion).toMatch(/^\d+$/);
  });
});

describe('watch', () => {
  it('resumes from a resourceVersion and reports selector transitions', async () => {
    const start = (await request(server, 'GET', base)).json().metadata.resourceVersion;
    const watch = await openWatch(server, `${base}?watch=true&resourceVersion=${start}&labelSelector=phase%3Dactive`);
    expect(watch.status).toBe(200);
    await create('transit');
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    await request(server, 'PATCH', `${base}/transit`, { headers: merge, body: '{"metadata":{"labels":{"phase":"active"}}}' });
    await request(server, 'PATCH', `${base}/transit`, { headers: merge, body: '{"spec":{"color":"blue"}}' });
    await request(server, 'PATCH', `${base}/transit`, { headers: merge, body: '{"metadata":{"labels":{"phase":"done"}}}' });
    const events = await watch.waitFor(3);
    watch.close();
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    const versions = events.map((e) => Number(e.object.metadata.resourceVersion));
    expect([...versions].sort((a, b) => a - b)).toEqual(versions);
  });

  it('gives every watcher of one event the version, representation and type it asked for', async () => {
    const start = (await request(server, 'GET', base)).json().metadata.resourceVersion;
    const from = `watch=true&resourceVersion=${start}&fieldSelector=metadata.name%3Dshared`;
    const alphaBase = '/apis/testing.capo.dev/v1alpha1/namespaces/default/widgets';
    const metadataOnly = { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json' };
    // Watchers in an order that interleaves the encodings one event needs.
    const watches = await Promise.all([
      openWatch(server, `${base}?${from}`),
      openWatch(server, `${alphaBase}?${from}`),
      openWatch(server, `${base}?${from}`, metadataOnly),
      openWatch(server, `${base}?${from}&labelSelector=phase%3Dactive`),
      openWatch(server, `${alphaBase}?${from}`),
      openWatch(server, `${base}?${from}`),
    ]);
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    const created = await request(server, 'POST', base, {
      headers: json,
      body: JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name: 'shared' }, spec: { color: 'red', replicas: 3 } }),
    });
    expect(created.status, created.body).toBe(201);
    const patched = await request(server, 'PATCH', `${base}/shared`, { headers: merge, body: '{"metadata":{"labels":{"phase":"active"}}}' });
    expect(patched.status, patched.body).toBe(200);
    const [plain, alpha, metadata, selected, alphaAgain, plainAgain] = await Promise.all(watches.map((watch, index) => watch.waitFor(index === 3 ? 1 : 2)));
    for (const watch of watches) watch.close();
    for (const events of [plain, plainAgain]) {
      expect(events.map((e) => [e.type, e.object.apiVersion, e.object.spec])).toEqual([
        ['ADDED', 'testing.capo.dev/v1', { color: 'red', replicas: 3 }],
        ['MODIFIED', 'testing.capo.dev/v1', { color: 'red', replicas: 3 }],
      ]);
    }
    for (const events of [alpha, alphaAgain]) {
      expect(events.map((e) => [e.type, e.object.apiVersion, e.object.spec])).toEqual([
        ['ADDED', 'testing.capo.dev/v1alpha1', { color: 'red', size: 3 }],
        ['MODIFIED', 'testing.capo.dev/v1alpha1', { color: 'red', size: 3 }],
      ]);
    }
    expect(metadata.map((e) => [e.type, e.object.kind, e.object.spec])).toEqual([
      ['ADDED', 'PartialObjectMetadata', undefined],
      ['MODIFIED', 'PartialObjectMetadata', undefined],
    ]);
    // The label change is a MODIFIED for the others and the object's entry into this selector.
    expect(selected.map((e) => [e.type, e.object.metadata.labels])).toEqual([['ADDED', { phase: 'active' }]]);
  });

  it('sends the initial state then an annotated bookmark for watch-list', async () => {
    await create('initial-a', { initial: 'yes' });
    await create('initial-b', { initial: 'yes' });
    const watch = await openWatch(
      server,
      `${base}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=initial%3Dyes`,
    );
    const events = await watch.waitFor(3);
    watch.close();
    expect(events.slice(0, 2).map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'initial-a'],
      ['ADDED', 'initial-b'],
    ]);
    expect(events[2].type).toBe('BOOKMARK');
    expect(events[2].object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
  });

  it('rejects sendInitialEvents without NotOlderThan', async () => {
    const res = await request(server, 'GET', `${base}?watch=true&sendInitialEvents=true`);
    expect(res.status).toBe(422);
  });

  it('sends periodic bookmarks and closes at timeoutSeconds', async () => {
    const rv = (await request(server, 'GET', base)).json().metadata.resourceVersion;
    const watch = await openWatch(server, `${base}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=2`);
    await watch.ended;
    expect(watch.events.length).toBeGreaterThanOrEqual(1);
    expect(watch.events.every((e) => e.type === 'BOOKMARK' && Number(e.object.metadata.resourceVersion) >= Number(rv))).toBe(true);
  });

  it('keeps watching for a timeoutSeconds beyond what a timer holds, and takes 0 as the server default', async () => {
    for (const [i, timeout] of ['4000000', '1e20', '0'].entries()) {
      const rv = (await request(server, 'GET', base)).json().metadata.resourceVersion;
      const watch = await openWatch(server, `${base}?watch=true&resourceVersion=${rv}&timeoutSeconds=${timeout}`);
      try {
        // Node fires timers past 2^31-1 ms at once: the watch would have ended before this create.
        await create(`long-watch-${i}`);
        const [event] = await watch.waitFor(1);
        expect(event).toMatchObject({ type: 'ADDED', object: { metadata: { name: `long-watch-${i}` } } });
      } finally {
        watch.close();
      }
    }
    expect((await request(server, 'GET', `${base}?watch=true&timeoutSeconds=1.5`)).status).toBe(400);
  });

  it('answers 410 Gone for a compacted resourceVersion', async () => {
    const small = await startTestServer({ historyRetention: { maxEvents: 2, maxAgeMs: 60_000 } });
    try {
      for (const name of ['old-1', 'old-2', 'old-3', 'old-4']) {
        await request(small, 'POST', base, { headers: json, body: widget(name) });
      }
      if (!(small.backend instanceof SqliteStorage)) throw new Error('the test server stores in SQLite');
      await small.backend.compact();
      const res = await request(small, 'GET', `${base}?watch=true&resourceVersion=1`);
      expect(res.status).toBe(410);
      expect(res.json()).toMatchObject({ kind: 'Status', reason: 'Expired', code: 410, message: expect.stringContaining('too old resource version: 1') });
      const fresh = (await request(small, 'GET', `${base}?limit=1`)).json();
      expect(fresh.metadata.continue).toBeTruthy();
    } finally {
      await small.stop();
    }
  });

  it('answers 504 for a resourceVersion from the future', async () => {
    const res = await request(server, 'GET', `${base}?resourceVersion=99999999&resourceVersionMatch=NotOlderThan`);
    expect(res.status).toBe(504);
    expect(res.json().details.causes[0].reason).toBe('ResourceVersionTooLarge');
  });
});

describe('deletion semantics', () => {
  it('honours uid preconditions and dry runs', async () => {
    await create('precondition');
    const wrongUid = await request(server, 'DELETE', `${base}/precondition`, {
      headers: json,
      body: JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-it' } }),
    });
    expect(wrongUid.status).toBe(409);
    const dry = await request(server, 'DELETE', `${base}/precondition?dryRun=All`);
    expect(dry.status).toBe(200);
    expect((await request(server, 'GET', `${base}/precondition`)).status).toBe(200);
  });

  it('deletes a collection by label and reports each item', async () => {
    await create('coll-a', { coll: 'yes' });
    await create('coll-b', { coll: 'yes' });
    const res = await request(server, 'DELETE', `${base}?labelSelector=coll%3Dyes`, {
      headers: json,
      body: '{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1","propagationPolicy":"Background"}',
    });
    expect(res.status).toBe(200);
    expect(
      res
        .json()
        .items.map((i: any) => i.metadata.name)
        .sort(),
    ).toEqual(['coll-a', 'coll-b']);
  });
});

describe('operations', () => {
  it('reports health verbosely and exports metrics', async () => {
    const verbose = await request(server, 'GET', '/readyz?verbose', { anonymous: true });
    expect(verbose.body).toContain('[+]storage ok');
    expect(verbose.body).toContain('readyz check passed');
    const metrics = await request(server, 'GET', '/metrics');
    expect(metrics.headers['content-type']).toContain('text/plain; version=0.0.4');
    expect(metrics.body).toMatch(/apiserver_request_total\{[^}]*resource="widgets"[^}]*\} \d+/);
  });
});
