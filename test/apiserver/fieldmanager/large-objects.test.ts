/**
 * Field ownership of large objects (issue 47, H2): a one-label write to an object with a set of
 * thousands of tags or a map of thousands of keys is recorded as that label alone, and the strings
 * kube's field paths are made of are written as Go writes them on the quick path plain strings take.
 */
import { describe, expect, it } from 'vitest';
import { compare } from '../../../src/apiserver/fieldmanager/typed.js';
import { compileObjectSchema } from '../../../src/apiserver/fieldmanager/schema.js';
import { goJsonString } from '../../../src/apiserver/fieldmanager/value.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { ctx, entry, newManager, schema, T0, T1, widget } from './fixtures.js';

const tags = Array.from({ length: 7_700 }, (_, i) => `tag-${String(i).padStart(5, '0')}-${'x'.repeat(230)}`);
const selector = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, 'v']));

function labelled(object: JsonObject, value: string): JsonObject {
  return { ...object, metadata: { ...(object.metadata as JsonObject), labels: { round: value } } };
}

describe('one label written to a large object', () => {
  it('compares as that label alone, the 7,700 tags and 60,000 keys being equal', () => {
    const before = widget({ tags, selector });
    const changes = compare(before, labelled(structuredClone(before), '1'), compileObjectSchema(schema));
    expect(changes.added.paths()).toEqual([
      [{ field: 'metadata' }, { field: 'labels' }],
      [{ field: 'metadata' }, { field: 'labels' }, { field: 'round' }],
    ]);
    expect(changes.modified.isEmpty()).toBe(true);
    expect(changes.removed.isEmpty()).toBe(true);
  });

  it('gives the writer the label and leaves the creator every tag and key', () => {
    const fm = newManager();
    const created = fm.update(undefined, widget({ tags, selector }), ctx('creator', T0));
    const relabelled = fm.update(created, labelled(structuredClone(created), '1'), ctx('labeller', T1));
    expect(entry(relabelled, 'labeller')).toMatchObject({ time: T1, fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:round': {} } } } });
    const creatorSpec = (entry(relabelled, 'creator')!.fieldsV1 as Record<string, Record<string, Record<string, unknown>>>)['f:spec']!;
    expect(Object.keys(creatorSpec['f:tags']!)).toHaveLength(7_701);
    expect(Object.keys(creatorSpec['f:selector']!)).toHaveLength(60_001);
  });
});

describe('goJsonString', () => {
  it('writes a plain string between quotes, as JSON does', () => {
    for (const text of ['', 'tag-00001-xxx', 'a b/c:d', 'é😀']) {
      expect(goJsonString(text, true)).toBe(JSON.stringify(text));
      expect(goJsonString(text, false)).toBe(JSON.stringify(text));
    }
  });

  it('still escapes what Go escapes', () => {
    expect(goJsonString('a"b\\c', false)).toBe('"a\\"b\\\\c"');
    expect(goJsonString('<a&b>', true)).toBe('"\\u003ca\\u0026b\\u003e"');
    expect(goJsonString('<a&b>', false)).toBe('"<a&b>"');
    expect(goJsonString('\u2028\u0001\n', true)).toBe('"\\u2028\\u0001\\n"');
    expect(goJsonString('x\ud800', true)).toBe('"x\ufffd"');
  });
});
