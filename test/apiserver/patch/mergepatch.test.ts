import { describe, expect, it } from 'vitest';
import { applyMergePatch } from '../../../src/apiserver/patch/mergepatch.js';

describe('applyMergePatch', () => {
  // RFC 7386 Appendix A, row by row.
  const appendixA: [unknown, unknown, unknown][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  it.each(appendixA)('%j + %j = %j', (target, patch, expected) => {
    expect(applyMergePatch(target, patch)).toStrictEqual(expected);
  });

  it('handles the RFC 7386 section 3 example', () => {
    const target = {
      title: 'Goodbye!',
      author: { givenName: 'John', familyName: 'Doe' },
      tags: ['example', 'sample'],
      content: 'This will be unchanged',
    };
    const patch = { title: 'Hello!', phoneNumber: '+01-123-456-7890', author: { familyName: null }, tags: ['example'] };
    expect(applyMergePatch(target, patch)).toStrictEqual({
      title: 'Hello!',
      author: { givenName: 'John' },
      tags: ['example'],
      content: 'This will be unchanged',
      phoneNumber: '+01-123-456-7890',
    });
  });

  it('keeps nulls inside replacement arrays', () => {
    expect(applyMergePatch({ a: [1] }, { a: [null, { b: null }] })).toStrictEqual({ a: [null, { b: null }] });
  });

  it('deletes a missing key without complaint', () => {
    expect(applyMergePatch({ a: 1 }, { b: null })).toStrictEqual({ a: 1 });
  });

  it('modifies neither argument and shares no structure with them', () => {
    const target = { metadata: { labels: { a: '1' } }, spec: { list: [1, 2] } };
    const patch = { metadata: { labels: { b: '2', a: null } }, spec: { list: [3] }, status: { c: { d: 1 } } };
    const targetCopy = structuredClone(target);
    const patchCopy = structuredClone(patch);
    const result = applyMergePatch(target, patch) as typeof target & typeof patch;
    expect(target).toStrictEqual(targetCopy);
    expect(patch).toStrictEqual(patchCopy);
    expect(result).toStrictEqual({ metadata: { labels: { b: '2' } }, spec: { list: [3] }, status: { c: { d: 1 } } });
    expect(result.spec.list).not.toBe(patch.spec.list);
    expect(result.status.c).not.toBe(patch.status.c);
  });

  it('treats __proto__ as an ordinary key', () => {
    const patch = JSON.parse('{"__proto__":{"polluted":true}}');
    const result = applyMergePatch({}, patch) as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.hasOwn(result, '__proto__')).toBe(true);
    expect(JSON.stringify(result)).toBe('{"__proto__":{"polluted":true}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
