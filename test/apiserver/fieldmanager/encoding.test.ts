import { describe, expect, it } from 'vitest';
import { ApplyConflictError, formatConflictMessage } from '../../../src/apiserver/fieldmanager/index.js';
import { applyCtx, config, ctx, entries, entry, GV, newManager, T0, T1, widget } from './fixtures.js';

describe('FieldsV1 encoding', () => {
  const fullSpec = {
    replicas: 1,
    image: 'nginx',
    selector: { app: 'web' },
    ports: [{ name: 'http', port: 80 }],
    listeners: [{ port: 80 }],
    tags: ['a'],
    args: ['--v=2'],
    resources: { cpu: '1' },
    extra: { a: { b: 1 }, list: [1, 2] },
  };
  const fullMeta = {
    generateName: 'w-',
    labels: { app: 'web' },
    annotations: { note: 'x' },
    finalizers: ['example.com/cleanup'],
    ownerReferences: [{ apiVersion: 'v1', kind: 'Owner', name: 'o', uid: 'u-1', controller: true }],
  };
  const full = widget(fullSpec, fullMeta);

  it('encodes a create exactly as kube does for a custom resource, keys sorted', () => {
    const created = newManager().update(undefined, full, ctx('kubectl-create', T0));
    expect(entries(created)).toHaveLength(1);
    const only = entries(created)[0]!;
    expect(Object.keys(only)).toEqual(['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);
    expect(only).toMatchObject({ manager: 'kubectl-create', operation: 'Update', apiVersion: GV, time: T0, fieldsType: 'FieldsV1' });
    // Containers created by an update own "." (kube's comparison reports them as added);
    // metadata itself never does because it is stripped.
    expect(JSON.stringify(only.fieldsV1)).toBe(
      JSON.stringify({
        'f:metadata': {
          'f:annotations': { '.': {}, 'f:note': {} },
          'f:finalizers': { '.': {}, 'v:"example.com/cleanup"': {} },
          'f:generateName': {},
          'f:labels': { '.': {}, 'f:app': {} },
          'f:ownerReferences': {
            '.': {},
            'k:{"uid":"u-1"}': { '.': {}, 'f:apiVersion': {}, 'f:controller': {}, 'f:kind': {}, 'f:name': {}, 'f:uid': {} },
          },
        },
        'f:spec': {
          '.': {},
          'f:args': {},
          'f:extra': { '.': {}, 'f:a': { '.': {}, 'f:b': {} }, 'f:list': {} },
          'f:image': {},
          'f:listeners': { '.': {}, 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {} } },
          'f:ports': { '.': {}, 'k:{"name":"http"}': { '.': {}, 'f:name': {}, 'f:port': {} } },
          'f:replicas': {},
          'f:resources': {},
          'f:selector': { '.': {}, 'f:app': {} },
          'f:tags': { '.': {}, 'v:"a"': {} },
        },
      }),
    );
  });

  it('encodes an applied configuration: only items and map entries own "."', () => {
    const applied = newManager().apply(undefined, config(fullSpec, fullMeta), applyCtx('capi', T0));
    expect(entries(applied)).toHaveLength(1);
    expect(JSON.stringify(entry(applied, 'capi')!.fieldsV1)).toBe(
      JSON.stringify({
        'f:metadata': {
          'f:annotations': { 'f:note': {} },
          'f:finalizers': { 'v:"example.com/cleanup"': {} },
          'f:generateName': {},
          'f:labels': { 'f:app': {} },
          'f:ownerReferences': { 'k:{"uid":"u-1"}': { '.': {}, 'f:apiVersion': {}, 'f:controller': {}, 'f:kind': {}, 'f:name': {}, 'f:uid': {} } },
        },
        'f:spec': {
          'f:args': {},
          'f:extra': { 'f:a': { '.': {}, 'f:b': {} }, 'f:list': {} },
          'f:image': {},
          'f:listeners': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {} } },
          'f:ports': { 'k:{"name":"http"}': { '.': {}, 'f:name': {}, 'f:port': {} } },
          'f:replicas': {},
          'f:resources': {},
          'f:selector': { 'f:app': {} },
          'f:tags': { 'v:"a"': {} },
        },
      }),
    );
  });

  it('never tracks identity or server-managed metadata, and tracks generateName like kube', () => {
    const created = newManager().update(undefined, full, ctx('m', T0));
    const meta = entries(created)[0]!.fieldsV1['f:metadata'] as Record<string, unknown>;
    for (const field of ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields']) {
      expect(meta).not.toHaveProperty(`f:${field}`);
    }
    expect(meta).toHaveProperty('f:generateName');
    expect(entries(created)[0]!.fieldsV1).not.toHaveProperty('f:apiVersion');
    expect(entries(created)[0]!.fieldsV1).not.toHaveProperty('f:kind');
  });

  it('escapes values in keys as Go does and orders numbers before strings', () => {
    const created = newManager().update(undefined, widget({ tags: ['b', 'a<b', 'a'] }), ctx('m', T0));
    const tags = (entries(created)[0]!.fieldsV1['f:spec'] as Record<string, Record<string, unknown>>)['f:tags']!;
    expect(Object.keys(tags)).toEqual(['.', 'v:"a"', 'v:"a\\u003cb"', 'v:"b"']);
  });

  it('round-trips client-provided FieldsV1 written in a different key order', () => {
    const fm = newManager();
    const stored = widget({ listeners: [{ port: 80, protocol: 'UDP' }] });
    const live = {
      ...stored,
      metadata: {
        ...(stored.metadata as object),
        managedFields: [
          {
            manager: 'x',
            operation: 'Apply',
            apiVersion: GV,
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:listeners': { 'k:{"protocol": "UDP", "port": 80}': { 'f:port': {}, '.': {} } } } },
          },
        ],
      },
    };
    const out = fm.update(live, { ...live, metadata: { ...(live.metadata as object), labels: { a: 'b' } } }, ctx('y', T1));
    expect(entry(out, 'x')!.fieldsV1).toEqual({ 'f:spec': { 'f:listeners': { 'k:{"port":80,"protocol":"UDP"}': { '.': {}, 'f:port': {} } } } });
  });
});

describe('entry order', () => {
  it('sorts Apply before Update, then by time, then by manager', () => {
    const fm = newManager();
    let obj = fm.update(undefined, widget({ replicas: 1 }), ctx('zeta', T1));
    obj = fm.update(obj, { ...obj, spec: { replicas: 1, image: 'a' } }, ctx('alpha', T1));
    obj = fm.update(obj, { ...obj, spec: { replicas: 1, image: 'a', paused: true } }, ctx('early', T0));
    obj = fm.apply(obj, config({ tags: ['x'] }), applyCtx('last-applier', T1));
    expect(entries(obj).map((e) => `${e.operation}:${e.manager}`)).toEqual(['Apply:last-applier', 'Update:early', 'Update:alpha', 'Update:zeta']);
  });
});

describe('conflict messages', () => {
  it('formats a single conflict with kube wording', () => {
    expect(formatConflictMessage([{ manager: 'kubectl-edit', operation: 'Update', apiVersion: GV, field: '.spec.replicas' }])).toBe(
      'Apply failed with 1 conflict: conflict with "kubectl-edit" using example.com/v1: .spec.replicas',
    );
  });

  it('groups several conflicts by manager, managers sorted', () => {
    const message = formatConflictMessage([
      { manager: 'foo', operation: 'Update', apiVersion: 'v1', subresource: 'status', field: '.status.ready' },
      { manager: 'bar', operation: 'Apply', apiVersion: GV, field: '.metadata.labels.app' },
      { manager: 'foo', operation: 'Update', apiVersion: 'v1', subresource: 'status', field: '.status.conditions[type="Ready"].status' },
    ]);
    expect(message).toBe(
      'Apply failed with 3 conflicts: conflicts with "bar":\n- .metadata.labels.app\n' +
        'conflicts with "foo" with subresource "status" using v1:\n- .status.ready\n- .status.conditions[type="Ready"].status',
    );
  });

  it('reports map-list and set paths as kube prints them and answers 409 Conflict', () => {
    const fm = newManager();
    const live = fm.apply(
      undefined,
      config({ listeners: [{ port: 80, name: 'web' }], tags: ['a'], ports: [{ name: 'http', port: 80 }] }),
      applyCtx('owner', T0),
    );
    let caught: unknown;
    try {
      fm.apply(live, config({ listeners: [{ port: 80, name: 'api' }], ports: [{ name: 'http', port: 81 }] }), applyCtx('other', T1));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ApplyConflictError);
    const status = (caught as ApplyConflictError).toStatus();
    expect(status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      code: 409,
      reason: 'Conflict',
      message: 'Apply failed with 2 conflicts: conflicts with "owner":\n- .spec.listeners[port=80,protocol="TCP"].name\n- .spec.ports[name="http"].port',
      details: {
        causes: [
          { reason: 'FieldManagerConflict', message: 'conflict with "owner"', field: '.spec.listeners[port=80,protocol="TCP"].name' },
          { reason: 'FieldManagerConflict', message: 'conflict with "owner"', field: '.spec.ports[name="http"].port' },
        ],
      },
    });
  });
});
