import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/storage/interface.js';
import { ctx, entries, entry, GV, newManager, specOf, T0, T1, T2, T3, widget } from './fixtures.js';

function withMeta(object: JsonObject, metadata: JsonObject): JsonObject {
  return { ...object, metadata: { ...(object.metadata as JsonObject), ...metadata } };
}

describe('update ownership', () => {
  it('gives the creator every field of the object', () => {
    const created = newManager().update(undefined, widget({ replicas: 1, image: 'nginx' }, { labels: { app: 'web' } }), ctx('creator', T0));
    expect(entries(created)).toEqual([
      {
        manager: 'creator',
        operation: 'Update',
        apiVersion: GV,
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { '.': {}, 'f:image': {}, 'f:replicas': {} } },
      },
    ]);
  });

  it('moves changed fields to the writer and leaves the others and their time alone', () => {
    const fm = newManager();
    const created = fm.update(undefined, widget({ replicas: 1, image: 'nginx' }), ctx('creator', T0));
    const scaled = fm.update(created, { ...created, spec: { replicas: 3, image: 'nginx' } }, ctx('scaler', T1));
    expect(entry(scaled, 'creator')).toMatchObject({ time: T0, fieldsV1: { 'f:spec': { '.': {}, 'f:image': {} } } });
    expect(entry(scaled, 'scaler')).toMatchObject({ time: T1, fieldsV1: { 'f:spec': { 'f:replicas': {} } } });
  });

  it('drops removed fields from every manager, without giving the remover anything', () => {
    const fm = newManager();
    const created = fm.update(undefined, widget({ replicas: 1, image: 'nginx' }), ctx('creator', T0));
    const trimmed = fm.update(created, { ...created, spec: { replicas: 1 } }, ctx('trimmer', T1));
    expect(entries(trimmed).map((e) => e.manager)).toEqual(['creator']);
    expect(entry(trimmed, 'creator')).toMatchObject({ time: T0, fieldsV1: { 'f:spec': { '.': {}, 'f:replicas': {} } } });
  });

  it('drops an entry whose last field is taken', () => {
    const fm = newManager();
    let obj = fm.update(undefined, widget({ replicas: 1 }), ctx('creator', T0));
    obj = fm.update(obj, { ...obj, spec: { replicas: 2 } }, ctx('scaler', T1));
    expect(entries(obj).map((e) => e.manager)).toEqual(['creator', 'scaler']);
    // The creator still owns spec itself (".").
    obj = fm.update(obj, { ...obj, spec: {} }, ctx('other', T2));
    expect(entries(obj).map((e) => e.manager)).toEqual(['creator']);
  });

  it('keeps one Update entry per manager and API version, and refreshes its time only when it changes something', () => {
    const fm = newManager();
    const created = fm.update(undefined, widget({ replicas: 1 }), ctx('ctrl', T0));
    const same = fm.update(created, { ...created }, ctx('ctrl', T1));
    expect(entries(same)).toEqual(entries(created));
    const changed = fm.update(same, { ...same, spec: { replicas: 2 } }, ctx('ctrl', T2));
    expect(entries(changed)).toHaveLength(1);
    expect(entry(changed, 'ctrl')!.time).toBe(T2);
    const otherVersion = fm.update(changed, { ...changed, spec: { replicas: 3 } }, { ...ctx('ctrl', T3), apiVersion: 'example.com/v2' });
    expect(entries(otherVersion).map((e) => e.apiVersion)).toEqual([GV, 'example.com/v2']);
  });

  it('does not change anything on a no-op write', () => {
    const fm = newManager();
    const created = fm.update(undefined, widget({ replicas: 1 }, { labels: { a: 'b' } }), ctx('creator', T0));
    const again = fm.update(created, structuredClone(created), ctx('someone', T1));
    expect(again).toEqual(created);
  });

  it('names an unnamed manager "unknown"', () => {
    const created = newManager().update(undefined, widget({ replicas: 1 }), ctx('', T0));
    expect(entries(created)[0]!.manager).toBe('unknown');
  });

  it('folds the oldest of more than ten Update entries into ancient-changes', () => {
    const fm = newManager();
    let obj = fm.update(undefined, widget({}), ctx('creator', '2026-01-01T00:00:00Z'));
    for (let i = 0; i < 11; i++) {
      const time = `2026-01-01T00:00:${String(i + 10)}Z`;
      obj = fm.update(obj, withMeta(obj, { labels: { ...((obj.metadata as JsonObject).labels as object), [`l${i}`]: 'x' } }), ctx(`m${i}`, time));
    }
    const managers = entries(obj).map((e) => e.manager);
    expect(managers).toHaveLength(10);
    expect(managers).not.toContain('creator');
    expect(managers).not.toContain('m0');
    expect(managers).not.toContain('m1');
    expect(managers[0]).toBe('ancient-changes');
    const ancient = entry(obj, 'ancient-changes')!;
    expect(ancient.time).toBe('2026-01-01T00:00:11Z');
    expect(ancient.fieldsV1).toEqual({ 'f:metadata': { 'f:labels': { '.': {}, 'f:l0': {}, 'f:l1': {} } }, 'f:spec': {} });
  });
});

describe('client-provided managedFields', () => {
  function created() {
    const fm = newManager();
    return { fm, obj: fm.update(undefined, widget({ replicas: 1 }), ctx('creator', T0)) };
  }

  it('resets with [] and then stops tracking updates, like kube', () => {
    const { fm, obj } = created();
    const reset = fm.update(obj, { ...withMeta(obj, { managedFields: [] }), spec: { replicas: 2 } }, ctx('resetter', T1));
    expect((reset.metadata as JsonObject).managedFields).toBeUndefined();
    const later = fm.update(reset, { ...reset, spec: { replicas: 3 } }, ctx('later', T2));
    expect((later.metadata as JsonObject).managedFields).toBeUndefined();
  });

  it('resets with [{}]', () => {
    const { fm, obj } = created();
    const reset = fm.update(obj, withMeta(obj, { managedFields: [{}] }), ctx('resetter', T1));
    expect((reset.metadata as JsonObject).managedFields).toBeUndefined();
  });

  it('takes a valid list as the new baseline, then records the write on top', () => {
    const { fm, obj } = created();
    const replaced = fm.update(
      obj,
      {
        ...withMeta(obj, {
          managedFields: [{ manager: 'migrated', operation: 'Apply', apiVersion: GV, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }],
        }),
        spec: { replicas: 1, image: 'x' },
      },
      ctx('writer', T1),
    );
    expect(entries(replaced).map((e) => `${e.operation}:${e.manager}`)).toEqual(['Apply:migrated', 'Update:writer']);
    expect(entry(replaced, 'migrated')).not.toHaveProperty('time');
    expect(entry(replaced, 'writer')!.fieldsV1).toEqual({ 'f:spec': { 'f:image': {} } });
  });

  it('keeps the stored list when the sent one is invalid or absent', () => {
    const { fm, obj } = created();
    const invalid = fm.update(
      obj,
      withMeta(obj, { managedFields: [{ manager: 'x', operation: 'Bogus', apiVersion: GV, fieldsType: 'FieldsV1' }] }),
      ctx('w', T1),
    );
    expect(entries(invalid)).toEqual(entries(obj));
    const { managedFields: _omitted, ...metadata } = obj.metadata as JsonObject;
    const absent = fm.update(obj, { ...obj, metadata }, ctx('w', T1));
    expect(entries(absent)).toEqual(entries(obj));
  });

  it('normalizes entry times to UTC seconds', () => {
    const { fm, obj } = created();
    const out = fm.update(
      obj,
      withMeta(obj, {
        managedFields: [
          {
            manager: 'x',
            operation: 'Update',
            apiVersion: GV,
            time: '2026-01-02T05:04:00.900+02:00',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:replicas': {} } },
          },
        ],
      }),
      ctx('w', T1),
    );
    expect(entry(out, 'x')!.time).toBe(T0);
  });

  it('ignores managedFields sent to the status subresource', () => {
    const { fm, obj } = created();
    const status = fm.update(obj, { ...withMeta(obj, { managedFields: [] }), status: { ready: true } }, ctx('ctrl', T1, { subresource: 'status' }));
    expect(entries(status).map((e) => e.manager)).toEqual(['creator', 'ctrl']);
  });
});

describe('status subresource', () => {
  it('records status writes in a separate entry, and status and spec stay out of each other', () => {
    const fm = newManager();
    const created = fm.update(undefined, widget({ replicas: 1 }), ctx('ctrl', T0));
    const reported = fm.update(
      created,
      { ...created, status: { ready: true, conditions: [{ type: 'Ready', status: 'True' }] } },
      ctx('ctrl', T1, { subresource: 'status' }),
    );
    expect(entries(reported)).toEqual([
      expect.objectContaining({ manager: 'ctrl', operation: 'Update', time: T0, fieldsV1: { 'f:spec': { '.': {}, 'f:replicas': {} } } }),
      {
        manager: 'ctrl',
        operation: 'Update',
        apiVersion: GV,
        time: T1,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:status': { '.': {}, 'f:conditions': { '.': {}, 'k:{"type":"Ready"}': { '.': {}, 'f:status': {}, 'f:type': {} } }, 'f:ready': {} } },
        subresource: 'status',
      },
    ]);
    // A main-resource write does not own (nor take) status, as with a CRD's status subresource.
    const mainWrite = fm.update(reported, { ...reported, status: { ready: false } }, ctx('other', T2));
    expect(entry(mainWrite, 'other')).toBeUndefined();
    expect(entries(mainWrite)).toEqual(entries(reported));
  });
});

describe('untrackable objects', () => {
  it('keeps the stored managedFields when an item cannot be identified', () => {
    const fm = newManager();
    const created = fm.update(undefined, widget({ ports: [{ name: 'a', port: 1 }] }), ctx('creator', T0));
    const broken = fm.update(created, { ...created, spec: { ports: [{ port: 2 }] } }, ctx('w', T1));
    expect(specOf(broken)).toEqual({ ports: [{ port: 2 }] });
    expect(entries(broken)).toEqual(entries(created));
  });
});
