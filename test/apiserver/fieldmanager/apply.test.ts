import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/apiserver/errors.js';
import { ApplyConflictError, FieldManager } from '../../../src/apiserver/fieldmanager/index.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { applyCtx, config, ctx, entries, entry, GV, newManager, schema, specOf, T0, T1, T2, T3, widget } from './fixtures.js';

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

function conflictOf(run: () => unknown): ApplyConflictError {
  const error = thrown(run);
  expect(error).toBeInstanceOf(ApplyConflictError);
  return error as ApplyConflictError;
}

describe('apply', () => {
  it('creates the object with a single Apply entry', () => {
    const created = newManager().apply(undefined, config({ replicas: 2, ports: [{ name: 'http', port: 80 }] }, { labels: { app: 'w' } }), applyCtx('capi', T0));
    expect(created).toEqual({
      apiVersion: GV,
      kind: 'Widget',
      metadata: {
        name: 'w',
        namespace: 'default',
        labels: { app: 'w' },
        managedFields: [
          {
            manager: 'capi',
            operation: 'Apply',
            apiVersion: GV,
            time: T0,
            fieldsType: 'FieldsV1',
            fieldsV1: {
              'f:metadata': { 'f:labels': { 'f:app': {} } },
              'f:spec': { 'f:ports': { 'k:{"name":"http"}': { '.': {}, 'f:name': {}, 'f:port': {} } }, 'f:replicas': {} },
            },
          },
        ],
      },
      spec: { replicas: 2, ports: [{ name: 'http', port: 80 }] },
    });
  });

  it('makes the applier own exactly the applied fields', () => {
    const fm = newManager();
    const first = fm.apply(undefined, config({ replicas: 2, image: 'a' }), applyCtx('capi', T0));
    const second = fm.apply(first, config({ replicas: 2, paused: true }), applyCtx('capi', T1));
    expect(entry(second, 'capi')!.fieldsV1).toEqual({ 'f:spec': { 'f:paused': {}, 'f:replicas': {} } });
    expect(entry(second, 'capi')!.time).toBe(T1);
  });

  it('removes a field the applier dropped from its configuration', () => {
    const fm = newManager();
    const first = fm.apply(undefined, config({ replicas: 2, image: 'a', tags: ['x', 'y'] }, { labels: { a: '1', b: '2' } }), applyCtx('capi', T0));
    const second = fm.apply(first, config({ replicas: 2, tags: ['x'] }, { labels: { a: '1' } }), applyCtx('capi', T1));
    expect(specOf(second)).toEqual({ replicas: 2, tags: ['x'] });
    expect((second.metadata as JsonObject).labels).toEqual({ a: '1' });
  });

  it('removes a whole struct the applier no longer sets, unowned fields inside it included', () => {
    const fm = newManager();
    const first = fm.apply(undefined, config({ extra: { a: 1 } }), applyCtx('capi', T0));
    const defaulted = { ...first, spec: { extra: { a: 1, b: 2 } } };
    const second = fm.apply(defaulted, config({ replicas: 1 }), applyCtx('capi', T1));
    expect(specOf(second)).toEqual({ replicas: 1 });
  });

  it('keeps a dropped field another manager owns, and only drops the ownership', () => {
    const fm = newManager();
    let obj = fm.apply(undefined, config({ replicas: 2, image: 'a' }), applyCtx('capi', T0));
    obj = fm.apply(obj, config({ image: 'a' }), applyCtx('other', T1));
    obj = fm.apply(obj, config({ replicas: 2 }), applyCtx('capi', T2));
    expect(specOf(obj)).toEqual({ replicas: 2, image: 'a' });
    expect(entry(obj, 'capi')!.fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });
    expect(entry(obj, 'other')!.fieldsV1).toEqual({ 'f:spec': { 'f:image': {} } });
  });

  it('keeps a dropped field an Update manager has since taken', () => {
    const fm = newManager();
    let obj = fm.apply(undefined, config({ replicas: 2, image: 'a' }), applyCtx('capi', T0));
    obj = fm.update(obj, { ...obj, spec: { replicas: 2, image: 'b' } }, ctx('kubectl-edit', T1));
    obj = fm.apply(obj, config({ replicas: 2 }), applyCtx('capi', T2));
    expect(specOf(obj)).toEqual({ replicas: 2, image: 'b' });
  });

  it('shares ownership of equal values without conflict', () => {
    const fm = newManager();
    let obj = fm.apply(undefined, config({ replicas: 2 }), applyCtx('a', T0));
    obj = fm.apply(obj, config({ replicas: 2 }), applyCtx('b', T1));
    expect(entry(obj, 'a')!.fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });
    expect(entry(obj, 'b')!.fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });
    // Nothing changed, so kube gives the new applier no time.
    expect(entry(obj, 'b')).not.toHaveProperty('time');
  });

  it('conflicts with another applier over a different value', () => {
    const fm = newManager();
    const obj = fm.apply(undefined, config({ replicas: 2 }), applyCtx('a', T0));
    const conflict = conflictOf(() => fm.apply(obj, config({ replicas: 3 }), applyCtx('b', T1)));
    expect(conflict.conflicts).toEqual([{ manager: 'a', operation: 'Apply', apiVersion: GV, field: '.spec.replicas' }]);
    expect(conflict.message).toBe('Apply failed with 1 conflict: conflict with "a": .spec.replicas');
    expect(conflict.code).toBe(409);
  });

  it('conflicts with an Update manager', () => {
    const fm = newManager();
    let obj = fm.update(undefined, widget({ replicas: 1 }), ctx('kubectl-create', T0));
    obj = fm.apply(obj, config({ image: 'x' }), applyCtx('capi', T1));
    const conflict = conflictOf(() => fm.apply(obj, config({ image: 'x', replicas: 5 }), applyCtx('capi', T2)));
    expect(conflict.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-create" using example.com/v1: .spec.replicas');
  });

  it('moves ownership with force', () => {
    const fm = newManager();
    let obj = fm.apply(undefined, config({ replicas: 2, image: 'a' }), applyCtx('a', T0));
    obj = fm.apply(obj, config({ replicas: 3 }), applyCtx('b', T1, true));
    expect(specOf(obj)).toEqual({ replicas: 3, image: 'a' });
    expect(entry(obj, 'a')!.fieldsV1).toEqual({ 'f:spec': { 'f:image': {} } });
    expect(entry(obj, 'b')).toMatchObject({ time: T1, fieldsV1: { 'f:spec': { 'f:replicas': {} } } });
  });

  it('drops the entry of a manager whose last field is forced away', () => {
    const fm = newManager();
    let obj = fm.apply(undefined, config({ replicas: 2 }), applyCtx('a', T0));
    obj = fm.apply(obj, config({ replicas: 3 }), applyCtx('b', T1, true));
    expect(entries(obj).map((e) => e.manager)).toEqual(['b']);
  });

  it('does not touch the object or times on a repeated apply', () => {
    const fm = newManager();
    const obj = fm.apply(undefined, config({ replicas: 2 }, { labels: { a: 'b' } }), applyCtx('a', T0));
    const again = fm.apply(obj, config({ replicas: 2 }, { labels: { a: 'b' } }), applyCtx('a', T1));
    expect(again).toEqual(obj);
  });

  it('rejects managedFields in the applied configuration', () => {
    const error = thrown(() => newManager().apply(undefined, config({}, { managedFields: [] }), applyCtx('a', T0)));
    expect(error).toMatchObject({ code: 400, reason: 'BadRequest', message: 'metadata.managedFields must be nil' });
  });

  it('rejects duplicate list items in the applied configuration', () => {
    const caught = thrown(() => newManager().apply(undefined, config({ tags: ['a', 'a'] }), applyCtx('a', T0)));
    expect(caught).toBeInstanceOf(ApiError);
    expect((caught as ApiError).message).toBe(
      'failed to create typed patch object (default/w; example.com/v1, Kind=Widget): .spec.tags: duplicate entries for key [="a"]',
    );
  });
});

describe('apply on an object without managedFields', () => {
  function untracked(): JsonObject {
    return widget({ replicas: 1, image: 'a' }, { labels: { app: 'w' } });
  }

  it('records what exists under before-first-apply first, so nothing is pruned', () => {
    const obj = newManager().apply(untracked(), config({ paused: true }), applyCtx('capi', T1));
    expect(specOf(obj)).toEqual({ replicas: 1, image: 'a', paused: true });
    expect(entries(obj)).toEqual([
      expect.objectContaining({ manager: 'capi', operation: 'Apply', time: T1, fieldsV1: { 'f:spec': { 'f:paused': {} } } }),
      {
        manager: 'before-first-apply',
        operation: 'Update',
        apiVersion: GV,
        time: T1,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { '.': {}, 'f:image': {}, 'f:replicas': {} } },
      },
    ]);
  });

  it('reports conflicts against before-first-apply', () => {
    const conflict = conflictOf(() => newManager().apply(untracked(), config({ replicas: 4 }), applyCtx('capi', T1)));
    expect(conflict.message).toBe('Apply failed with 1 conflict: conflict with "before-first-apply" using example.com/v1: .spec.replicas');
  });

  it('tracks again after a reset, starting with before-first-apply', () => {
    const fm = newManager();
    let obj = fm.update(undefined, untracked(), ctx('creator', T0));
    obj = fm.update(obj, { ...obj, metadata: { ...(obj.metadata as JsonObject), managedFields: [] } }, ctx('resetter', T1));
    obj = fm.apply(obj, config({ replicas: 1 }), applyCtx('capi', T2));
    expect(entries(obj).map((e) => `${e.operation}:${e.manager}`)).toEqual(['Apply:capi', 'Update:before-first-apply']);
  });
});

describe('apply merge', () => {
  it('merges map-list items by key: live order kept, new items appended, fields merged', () => {
    const fm = newManager();
    let obj = fm.update(
      undefined,
      widget({
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 81, protocol: 'UDP' },
        ],
      }),
      ctx('creator', T0),
    );
    obj = fm.apply(
      obj,
      config({
        ports: [
          { name: 'b', port: 82 },
          { name: 'c', port: 83 },
        ],
      }),
      applyCtx('capi', T1, true),
    );
    expect(specOf(obj).ports).toEqual([
      { name: 'a', port: 80 },
      { name: 'b', port: 82, protocol: 'UDP' },
      { name: 'c', port: 83 },
    ]);
    expect(entry(obj, 'creator')!.fieldsV1).toEqual({
      'f:spec': {
        '.': {},
        'f:ports': { '.': {}, 'k:{"name":"a"}': { '.': {}, 'f:name': {}, 'f:port': {} }, 'k:{"name":"b"}': { '.': {}, 'f:name': {}, 'f:protocol': {} } },
      },
    });
  });

  it('removes a map-list item the applier dropped but keeps the items of others', () => {
    const fm = newManager();
    let obj = fm.apply(
      undefined,
      config({
        ports: [
          { name: 'a', port: 1 },
          { name: 'b', port: 2 },
        ],
      }),
      applyCtx('capi', T0),
    );
    obj = fm.apply(obj, config({ ports: [{ name: 'c', port: 3 }] }), applyCtx('other', T1));
    obj = fm.apply(obj, config({ ports: [{ name: 'a', port: 1 }] }), applyCtx('capi', T2));
    expect(specOf(obj).ports).toEqual([
      { name: 'a', port: 1 },
      { name: 'c', port: 3 },
    ]);
  });

  it('removes a dropped item even when an updater owns something inside it', () => {
    const fm = newManager();
    let obj = fm.apply(undefined, config({ groups: [{ name: 'a' }, { name: 'b', members: ['c'] }] }), applyCtx('one', T0));
    obj = fm.apply(obj, config({ groups: [{ name: 'a', members: ['b'] }] }), applyCtx('two', T1));
    obj = fm.update(
      obj,
      {
        ...obj,
        spec: {
          groups: [
            { name: 'a', members: ['b'] },
            { name: 'b', members: ['c', 'd'] },
          ],
        },
      },
      ctx('ctrl', T1),
    );
    obj = fm.apply(obj, config({ groups: [{ name: 'a' }] }), applyCtx('one', T2));
    expect(specOf(obj).groups).toEqual([{ name: 'a', members: ['b'] }]);
    expect(entries(obj).map((e) => e.manager)).toEqual(['two', 'one']);
  });

  it('keeps a dropped item another applier owns, with only the owned parts inside it', () => {
    const fm = newManager();
    let obj = fm.apply(undefined, config({ groups: [{ name: 'a' }, { name: 'b', members: ['c'] }] }), applyCtx('one', T0));
    obj = fm.apply(obj, config({ groups: [{ name: 'b', members: ['d'] }] }), applyCtx('two', T1));
    obj = fm.update(obj, { ...obj, spec: { groups: [{ name: 'a' }, { name: 'b', members: ['c', 'd', 'e'] }] } }, ctx('ctrl', T1));
    obj = fm.apply(obj, config({ groups: [{ name: 'a' }] }), applyCtx('one', T2));
    expect(specOf(obj).groups).toEqual([{ name: 'a' }, { name: 'b', members: ['d', 'e'] }]);
    expect(entry(obj, 'ctrl')!.fieldsV1).toEqual({ 'f:spec': { 'f:groups': { 'k:{"name":"b"}': { 'f:members': { 'v:"e"': {} } } } } });
  });

  it('identifies items by defaulted keys', () => {
    const fm = newManager();
    let obj = fm.apply(undefined, config({ listeners: [{ port: 80, name: 'web' }] }), applyCtx('capi', T0));
    obj = fm.apply(obj, config({ listeners: [{ port: 80, protocol: 'TCP', name: 'web' }] }), applyCtx('other', T1));
    expect(specOf(obj).listeners).toEqual([{ port: 80, protocol: 'TCP', name: 'web' }]);
    expect(entry(obj, 'other')!.fieldsV1).toEqual({
      'f:spec': { 'f:listeners': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {}, 'f:protocol': {} } } },
    });
  });

  it('unions set items and owns them one by one', () => {
    const fm = newManager();
    let obj = fm.update(undefined, widget({ tags: ['x', 'y'] }), ctx('creator', T0));
    obj = fm.apply(obj, config({ tags: ['z', 'x'] }), applyCtx('capi', T1));
    expect(specOf(obj).tags).toEqual(['z', 'x', 'y']);
    expect(entry(obj, 'capi')!.fieldsV1).toEqual({ 'f:spec': { 'f:tags': { 'v:"x"': {}, 'v:"z"': {} } } });
  });

  it('replaces atomic lists and maps whole, and conflicts on them as one field', () => {
    const fm = newManager();
    let obj = fm.apply(undefined, config({ args: ['a', 'b'], resources: { cpu: '1', memory: '1Gi' } }), applyCtx('capi', T0));
    obj = fm.apply(obj, config({ args: ['c'], resources: { cpu: '2' } }), applyCtx('capi', T1));
    expect(specOf(obj)).toEqual({ args: ['c'], resources: { cpu: '2' } });
    const conflict = conflictOf(() => fm.apply(obj, config({ resources: { cpu: '3' } }), applyCtx('other', T2)));
    expect(conflict.conflicts.map((c) => c.field)).toEqual(['.spec.resources']);
  });

  it('merges granular maps per key', () => {
    const fm = newManager();
    let obj = fm.apply(undefined, config({ selector: { a: '1' } }, { annotations: { x: '1' } }), applyCtx('one', T0));
    obj = fm.apply(obj, config({ selector: { b: '2' } }, { annotations: { y: '2' } }), applyCtx('two', T1));
    expect(specOf(obj).selector).toEqual({ a: '1', b: '2' });
    expect((obj.metadata as JsonObject).annotations).toEqual({ x: '1', y: '2' });
  });

  it('walks preserved unknown fields as granular maps with atomic lists', () => {
    const fm = newManager();
    let obj = fm.apply(undefined, config({ extra: { a: { b: 1 }, l: [1] } }), applyCtx('one', T0));
    obj = fm.apply(obj, config({ extra: { a: { c: 2 }, l: [2] } }), applyCtx('two', T1, true));
    expect(specOf(obj).extra).toEqual({ a: { b: 1, c: 2 }, l: [2] });
    expect(entry(obj, 'one')!.fieldsV1).toEqual({ 'f:spec': { 'f:extra': { 'f:a': { '.': {}, 'f:b': {} } } } });
  });

  it('merges owner references by uid and finalizers as a set', () => {
    const fm = newManager();
    const ref = (uid: string) => ({ apiVersion: 'v1', kind: 'Owner', name: uid, uid });
    let obj = fm.apply(undefined, config({}, { finalizers: ['a'], ownerReferences: [ref('1')] }), applyCtx('one', T0));
    obj = fm.apply(obj, config({}, { finalizers: ['b'], ownerReferences: [ref('2')] }), applyCtx('two', T1));
    expect((obj.metadata as JsonObject).finalizers).toEqual(['a', 'b']);
    expect((obj.metadata as JsonObject).ownerReferences).toEqual([ref('1'), ref('2')]);
  });
});

describe('apply on the status subresource', () => {
  it('keeps a separate Apply entry and never owns spec', () => {
    const fm = newManager();
    let obj = fm.apply(undefined, config({ replicas: 1 }), applyCtx('ctrl', T0));
    obj = fm.apply(obj, { ...config(undefined), status: { ready: true } }, applyCtx('ctrl', T1, false, { subresource: 'status' }));
    expect(entries(obj)).toEqual([
      expect.objectContaining({ manager: 'ctrl', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }),
      {
        manager: 'ctrl',
        operation: 'Apply',
        apiVersion: GV,
        time: T1,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:status': { 'f:ready': {} } },
        subresource: 'status',
      },
    ]);
    // The main-resource applier's spec is not pruned by the status applier's config.
    expect(specOf(obj)).toEqual({ replicas: 1 });
  });

  it('conflicts with the status Update manager, naming the subresource', () => {
    const fm = newManager();
    let obj = fm.update(undefined, widget({ replicas: 1 }), ctx('creator', T0));
    obj = fm.update(obj, { ...obj, status: { ready: false } }, ctx('ctrl', T1, { subresource: 'status' }));
    const conflict = conflictOf(() =>
      fm.apply(obj, { ...config(undefined), status: { ready: true } }, applyCtx('other', T2, false, { subresource: 'status' })),
    );
    expect(conflict.message).toBe('Apply failed with 1 conflict: conflict with "ctrl" with subresource "status" using example.com/v1: .status.ready');
  });
});

describe('status on the main resource', () => {
  it('is neither owned nor a conflict when the kind has a status subresource', () => {
    const fm = newManager();
    let obj = fm.update(undefined, widget({ replicas: 1 }), ctx('creator', T0));
    obj = fm.update(obj, { ...obj, status: { ready: false } }, ctx('ctrl', T1, { subresource: 'status' }));
    const applied = fm.apply(obj, { ...config({ replicas: 1 }), status: { ready: true } }, applyCtx('capi', T2));
    expect(entry(applied, 'capi')!.fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });
    expect(entry(applied, 'ctrl')!.fieldsV1).toEqual({ 'f:status': { '.': {}, 'f:ready': {} } });
  });

  it('is tracked like any field when the kind has no status subresource', () => {
    const fm = new FieldManager(schema, { statusSubresource: false });
    let obj = fm.update(undefined, widget({ replicas: 1 }), ctx('creator', T0));
    obj = fm.update(obj, { ...obj, status: { ready: false } }, ctx('ctrl', T1));
    expect(entry(obj, 'ctrl')!.fieldsV1).toEqual({ 'f:status': { '.': {}, 'f:ready': {} } });
    const conflict = conflictOf(() => fm.apply(obj, { ...config(undefined), status: { ready: true } }, applyCtx('capi', T2)));
    expect(conflict.conflicts.map((c) => c.field)).toEqual(['.status.ready']);
  });
});

describe('kubectl client-side to server-side apply migration', () => {
  const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

  it('forces conflicts on fields that still hold their last-applied value and keeps the annotation in step', () => {
    const fm = newManager();
    const lastApplied = JSON.stringify({ apiVersion: GV, kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec: { replicas: 1 } });
    let obj = fm.update(undefined, widget({ replicas: 1 }, { annotations: { [LAST_APPLIED]: lastApplied } }), ctx('kubectl-client-side-apply', T0));
    obj = fm.apply(obj, config({ replicas: 2 }), applyCtx('kubectl', T1));
    expect(specOf(obj).replicas).toBe(2);
    expect(((obj.metadata as JsonObject).annotations as JsonObject)[LAST_APPLIED]).toBe(
      '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"replicas":2}}\n',
    );
    expect(entry(obj, 'kubectl', 'Apply')!.fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });
  });

  it('still conflicts when the live value moved away from last-applied', () => {
    const fm = newManager();
    const lastApplied = JSON.stringify({ apiVersion: GV, kind: 'Widget', metadata: { name: 'w' }, spec: { replicas: 1 } });
    let obj = fm.update(undefined, widget({ replicas: 1 }, { annotations: { [LAST_APPLIED]: lastApplied } }), ctx('kubectl-client-side-apply', T0));
    obj = fm.update(obj, { ...obj, spec: { replicas: 5 } }, ctx('hpa', T1));
    const conflict = conflictOf(() => fm.apply(obj, config({ replicas: 2 }), applyCtx('kubectl', T3)));
    expect(conflict.conflicts.map((c) => c.manager)).toEqual(['hpa']);
  });
});
