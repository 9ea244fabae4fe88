/**
 * The API machinery as kubectl sees it: the real kubectl binary against the
 * real server, on the Widget test kind.
 */
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { request, startTestServer, type TestServer } from '../../harness/test-server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ bookmarkIntervalMs: 1000 });
});

afterAll(async () => {
  await server?.stop();
});

function widget(name: string, spec: Record<string, unknown> = { color: 'red' }, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name, namespace: 'default', ...extra }, spec });
}

async function ok(args: string[], input?: string): Promise<string> {
  const result = await server.kubectl(args, { input });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

async function fails(args: string[], input?: string): Promise<string> {
  const result = await server.kubectl(args, { input });
  expect(result.code, `kubectl ${args.join(' ')} should fail; stdout: ${result.stdout}`).not.toBe(0);
  return result.stderr;
}

describe('discovery', () => {
  it('lists our resources with short names, scope and verbs', async () => {
    const out = await ok(['api-resources', '--api-group=testing.capo.dev', '-o', 'wide']);
    const widgets = out.split('\n').find((line) => line.startsWith('widgets'));
    expect(widgets).toMatch(/^widgets\s+wd\s+testing\.capo\.dev\/v1\s+true\s+Widget\s+create,delete,deletecollection,get,list,patch,update,watch\s+testing/);
    const gadgets = out.split('\n').find((line) => line.startsWith('gadgets'));
    expect(gadgets).toMatch(/^gadgets\s+testing\.capo\.dev\/v1\s+false\s+Gadget/);
  });

  it('lists every served group-version', async () => {
    const out = await ok(['api-versions']);
    expect(out.split('\n')).toEqual(expect.arrayContaining(['testing.capo.dev/v1', 'testing.capo.dev/v1alpha1']));
  });

  it('explains fields from the OpenAPI document', async () => {
    const out = await ok(['explain', 'widgets.spec.ports']);
    expect(out).toContain('KIND:       Widget');
    expect(out).toContain('Ports the widget listens on.');
    expect(out).toMatch(/port\s+<integer> -required-/);
    const alpha = await ok(['explain', 'widgets.spec', '--api-version=testing.capo.dev/v1alpha1']);
    expect(alpha).toContain('size');
    expect(alpha).not.toContain('replicas');
  });
});

describe('create, get and print', () => {
  it('creates and prints with printer columns, wide and yaml', async () => {
    expect(await ok(['create', '-f', '-'], widget('print-a', { color: 'red', replicas: 3, tags: ['x', 'y'] }))).toContain(
      'widget.testing.capo.dev/print-a created',
    );
    const table = await ok(['get', 'widgets', 'print-a']);
    expect(table.split('\n')[0]).toMatch(/^NAME\s+COLOR\s+REPLICAS\s+READY\s+AGE$/);
    // Like CRDs, a missing value is an empty cell.
    expect(table.split('\n')[1]).toMatch(/^print-a\s+red\s+3\s+\d+s$/);
    const wide = await ok(['get', 'wd', 'print-a', '-o', 'wide']);
    expect(wide.split('\n')[0]).toMatch(/^NAME\s+COLOR\s+REPLICAS\s+READY\s+TAGS\s+AGE$/);
    expect(wide).toContain('["x","y"]');
    const yaml = await ok(['get', 'widget', 'print-a', '-o', 'yaml']);
    expect(yaml).toMatch(/uid: [0-9a-f-]{36}/);
    expect(yaml).toContain('generation: 1');
    expect(yaml).toMatch(/resourceVersion: "\d+"/);
    expect(yaml).toContain('replicas: 3');
  });

  it('fills defaults and rejects duplicates', async () => {
    await ok(['create', '-f', '-'], widget('print-b', { color: 'green', ports: [{ name: 'http', port: 80 }] }));
    const json = JSON.parse(await ok(['get', 'widget', 'print-b', '-o', 'json']));
    expect(json.spec.replicas).toBe(1);
    expect(json.spec.ports[0].protocol).toBe('TCP');
    const err = await fails(['create', '-f', '-'], widget('print-b'));
    expect(err).toContain('Error from server (AlreadyExists): error when creating "STDIN": widgets.testing.capo.dev "print-b" already exists');
  });

  it('describes an object', async () => {
    const out = await ok(['describe', 'widget', 'print-b']);
    expect(out).toMatch(/Name:\s+print-b/);
    expect(out).toMatch(/API Version:\s+testing.capo.dev\/v1/);
    expect(out).toMatch(/Color:\s+green/);
  });

  it('serves other versions through conversion', async () => {
    const alpha = JSON.parse(await ok(['get', 'widgets.v1alpha1.testing.capo.dev', 'print-a', '-o', 'json']));
    expect(alpha.apiVersion).toBe('testing.capo.dev/v1alpha1');
    expect(alpha.spec.size).toBe(3);
    expect(alpha.spec.replicas).toBeUndefined();
  });

  it('lists all namespaces with a NAMESPACE column and shows labels', async () => {
    const out = await ok(['get', 'widgets', '-A', '--show-labels']);
    expect(out.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+COLOR\s+REPLICAS\s+READY\s+AGE\s+LABELS$/);
    expect(out).toMatch(/default\s+print-a\s+red/);
  });

  it('rejects invalid objects with field causes', async () => {
    let err = await fails(['create', '-f', '-'], widget('Bad_Name'));
    expect(err).toContain('The Widget "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain');
    err = await fails(['create', '-f', '-'], widget('bad-color', { color: 'purple' }));
    expect(err).toContain('spec.color: Unsupported value: "purple": supported values: "red", "green", "blue"');
    err = await fails(['create', '-f', '-'], widget('bad-label', { color: 'red' }, { labels: { 'bad key!': 'x' } }));
    expect(err).toContain('metadata.labels: Invalid value: "bad key!"');
    err = await fails(['create', '-f', '-'], widget('unknown-field', { color: 'red', bogus: 1 }));
    expect(err).toContain('unknown field "spec.bogus"');
    const warned = await server.kubectl(['create', '--validate=warn', '-f', '-'], { input: widget('unknown-warn', { color: 'red', bogus: 1 }) });
    expect(warned.code).toBe(0);
    expect(warned.stderr).toContain('Warning: unknown field "spec.bogus"');
    expect(JSON.parse(await ok(['get', 'widget', 'unknown-warn', '-o', 'json'])).spec.bogus).toBeUndefined();
    err = await fails(['create', '-f', '-'], 'apiVersion: testing.capo.dev/v1\nkind: Widget\nmetadata: {name: broken\n');
    expect(err).toMatch(/error|yaml/i);
  });

  it('dry-runs a create without storing it', async () => {
    const out = await ok(['create', '--dry-run=server', '-o', 'json', '-f', '-'], widget('dry'));
    expect(JSON.parse(out).metadata.uid).toMatch(/[0-9a-f-]{36}/);
    expect(await fails(['get', 'widget', 'dry'])).toContain('NotFound');
  });
});

describe('updates', () => {
  it('applies client-side: created, configured, unchanged', async () => {
    const file = path.join(server.dataDir, 'apply.yaml');
    await writeFile(file, widget('applied', { color: 'red', replicas: 1 }));
    expect(await ok(['apply', '-f', file])).toContain('widget.testing.capo.dev/applied created');
    await writeFile(file, widget('applied', { color: 'blue', replicas: 2 }));
    expect(await ok(['apply', '-f', file])).toContain('widget.testing.capo.dev/applied configured');
    expect(await ok(['apply', '-f', file])).toContain('widget.testing.capo.dev/applied unchanged');
    const json = JSON.parse(await ok(['get', 'widget', 'applied', '-o', 'json']));
    expect(json.spec).toMatchObject({ color: 'blue', replicas: 2 });
    expect(json.metadata.generation).toBe(2);
  });

  it('edits through KUBE_EDITOR', async () => {
    await ok(['create', '-f', '-'], widget('edited', { color: 'red' }));
    const editor = path.join(server.dataDir, 'editor.sh');
    await writeFile(editor, '#!/bin/sh\nsed -i "s/color: red/color: green/" "$1"\n');
    await chmod(editor, 0o755);
    const result = await server.kubectl(['edit', 'widget', 'edited'], { env: { KUBE_EDITOR: editor, EDITOR: editor } });
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('widget.testing.capo.dev/edited edited');
    expect(await ok(['get', 'widget', 'edited', '-o', 'jsonpath={.spec.color} {.metadata.generation}'])).toBe('green 2');
  });

  it('patches with merge and json patches; strategic merge is refused', async () => {
    await ok(['create', '-f', '-'], widget('patched', { color: 'red', tags: ['a'] }));
    await ok(['patch', 'widget', 'patched', '--type', 'merge', '-p', '{"spec":{"color":"blue"}}']);
    await ok(['patch', 'widget', 'patched', '--type', 'json', '-p', '[{"op":"add","path":"/spec/tags/-","value":"b"}]']);
    expect(await ok(['get', 'widget', 'patched', '-o', 'jsonpath={.spec.color} {.spec.tags}'])).toBe('blue ["a","b"]');
    const failedTest = await fails(['patch', 'widget', 'patched', '--type', 'json', '-p', '[{"op":"test","path":"/metadata/name","value":"nope"}]']);
    expect(failedTest).toContain('the server rejected our request due to an error in our request');
    const strategic = await fails(['patch', 'widget', 'patched', '-p', '{"spec":{"color":"red"}}']);
    expect(strategic).toContain('application/strategic-merge-patch+json');
  });

  it('keeps status out of main writes and spec out of status writes', async () => {
    await ok(['create', '-f', '-'], widget('split', { color: 'red' }));
    await ok(['patch', 'widget', 'split', '--subresource=status', '--type=merge', '-p', '{"status":{"ready":true},"spec":{"color":"blue"}}']);
    expect(await ok(['get', 'widget', 'split', '-o', 'jsonpath={.status.ready} {.spec.color} {.metadata.generation}'])).toBe('true red 1');
    await ok(['patch', 'widget', 'split', '--type=merge', '-p', '{"status":{"ready":false},"spec":{"color":"green"}}']);
    expect(await ok(['get', 'widget', 'split', '-o', 'jsonpath={.status.ready} {.spec.color} {.metadata.generation}'])).toBe('true green 2');
  });

  it('refuses a replace with a stale resourceVersion', async () => {
    await ok(['create', '-f', '-'], widget('stale', { color: 'red' }));
    const current = JSON.parse(await ok(['get', 'widget', 'stale', '-o', 'json']));
    await ok(['patch', 'widget', 'stale', '--type', 'merge', '-p', '{"spec":{"color":"blue"}}']);
    current.spec.color = 'green';
    const err = await fails(['replace', '-f', '-'], JSON.stringify(current));
    expect(err).toContain(
      'Operation cannot be fulfilled on widgets.testing.capo.dev "stale": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it('applies server-side with managed fields and conflicts', async () => {
    const manifest = (color: string, replicas: number) =>
      `apiVersion: testing.capo.dev/v1\nkind: Widget\nmetadata:\n  name: ssa\n  namespace: default\nspec:\n  color: ${color}\n  replicas: ${replicas}\n`;
    expect(await ok(['apply', '--server-side', '-f', '-'], manifest('red', 1))).toContain('serverside-applied');
    await ok(['apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', '-'], manifest('blue', 1));
    const conflict = await fails(['apply', '--server-side', '-f', '-'], manifest('red', 1));
    expect(conflict).toContain('conflict with "other"');
    expect(conflict).toContain('.spec.color');
    await ok(['apply', '--server-side', '--force-conflicts', '-f', '-'], manifest('red', 1));
    const yaml = await ok(['get', 'widget', 'ssa', '-o', 'yaml', '--show-managed-fields']);
    expect(yaml).toContain('manager: kubectl');
    expect(yaml).toContain('operation: Apply');
    expect(yaml).toContain('f:color: {}');
  });
});

describe('watch, wait and delete', () => {
  it('streams ADDED, MODIFIED and DELETED to get -w', async () => {
    await ok(['create', '-f', '-'], widget('watched', { color: 'red' }));
    const child = server.spawnKubectl([
      'get',
      'widgets',
      '--watch',
      '--output-watch-events',
      '-o',
      'jsonpath={.type} {.object.metadata.name}{"\\n"}',
      '--field-selector',
      'metadata.name=watched',
    ]);
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    // Each event is a line kubectl prints: wait for the line, not for time to pass.
    const waitFor = (text: string) => vi.waitFor(() => expect(output).toContain(text), { timeout: 10_000, interval: 10 });
    await waitFor('ADDED watched');
    await ok(['label', 'widget', 'watched', 'stage=two']);
    await waitFor('MODIFIED watched');
    await ok(['delete', 'widget', 'watched']);
    await waitFor('DELETED watched');
    child.kill();
  });

  it('waits for a condition', async () => {
    await ok(['create', '-f', '-'], widget('waited', { color: 'red' }));
    const watchers = async () => Number(/^apiserver_registered_watchers (\d+)/m.exec((await request(server, 'GET', '/metrics')).body)?.[1] ?? 0);
    const before = await watchers();
    const waiting = server.kubectl(['wait', '--for=condition=Ready', 'widget/waited', '--timeout=30s']);
    // The condition changes only once kubectl wait watches the object, so it must see it happen.
    await vi.waitFor(async () => expect(await watchers()).toBeGreaterThan(before), { timeout: 10_000, interval: 20 });
    await ok(['patch', 'widget', 'waited', '--subresource=status', '--type=merge', '-p', '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}']);
    const result = await waiting;
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('widget.testing.capo.dev/waited condition met');
  });

  it('deletes in two phases while a finalizer is pending', async () => {
    await ok(['create', '-f', '-'], widget('finalized', { color: 'red' }, { finalizers: ['testing.capo.dev/hold'] }));
    await ok(['delete', 'widget', 'finalized', '--wait=false']);
    const terminating = JSON.parse(await ok(['get', 'widget', 'finalized', '-o', 'json']));
    expect(terminating.metadata.deletionTimestamp).toBeDefined();
    expect(terminating.metadata.generation).toBe(2);
    const forbidden = await fails([
      'patch',
      'widget',
      'finalized',
      '--type',
      'merge',
      '-p',
      '{"metadata":{"finalizers":["testing.capo.dev/hold","testing.capo.dev/new"]}}',
    ]);
    expect(forbidden).toContain('no new finalizers can be added if the object is being deleted');
    const waitDeleted = server.kubectl(['wait', '--for=delete', 'widget/finalized', '--timeout=30s']);
    await ok(['patch', 'widget', 'finalized', '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    expect((await waitDeleted).code).toBe(0);
    expect(await fails(['get', 'widget', 'finalized'])).toContain('widgets.testing.capo.dev "finalized" not found');
  });
});

describe('selection and paging', () => {
  it('filters by labels and fields', async () => {
    await ok(['create', '-f', '-'], widget('sel-a', { color: 'red' }, { labels: { tier: 'front', env: 'prod' } }));
    await ok(['create', '-f', '-'], widget('sel-b', { color: 'red' }, { labels: { tier: 'back', env: 'prod' } }));
    await ok(['create', '-f', '-'], widget('sel-c', { color: 'red' }, { labels: { tier: 'back' } }));
    const names = async (args: string[]) => (await ok(['get', 'widgets', ...args, '-o', 'name'])).trim().split('\n').filter(Boolean).sort();
    expect(await names(['-l', 'tier=back'])).toEqual(['widget.testing.capo.dev/sel-b', 'widget.testing.capo.dev/sel-c']);
    expect(await names(['-l', 'env=prod,tier!=back'])).toEqual(['widget.testing.capo.dev/sel-a']);
    expect(await names(['-l', 'tier in (front,back),!env'])).toEqual(['widget.testing.capo.dev/sel-c']);
    expect(await names(['--field-selector', 'metadata.name=sel-a'])).toEqual(['widget.testing.capo.dev/sel-a']);
    expect(await fails(['get', 'widgets', '--field-selector', 'spec.color=red'])).toContain('"spec.color" is not a known field selector');
  });

  it('pages through a list with --chunk-size', async () => {
    for (let i = 0; i < 7; i++) await ok(['create', '-f', '-'], widget(`page-${i}`, { color: 'blue' }, { labels: { paged: 'yes' } }));
    const result = await server.kubectl(['get', 'widgets', '-l', 'paged=yes', '--chunk-size=2', '-o', 'name', '-v=6']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(7);
    const pageRequests = result.stderr.split('\n').filter((l) => l.includes('limit=2'));
    expect(pageRequests.length).toBeGreaterThanOrEqual(4);
    expect(result.stderr).toContain('continue=');
  });

  it('deletes a collection', async () => {
    const out = await ok(['delete', 'widgets', '-l', 'paged=yes']);
    expect(out.trim().split('\n')).toHaveLength(7);
    expect((await ok(['get', 'widgets', '-l', 'paged=yes', '-o', 'name'])).trim()).toBe('');
  });
});
