import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/apiserver/errors.js';
import { applyJsonPatch } from '../../../src/apiserver/patch/jsonpatch.js';

function thrown(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected an ApiError');
}

/** The one 422 kube answers for every operation that does not apply; the reason stays on `cause`. */
function expectNotApplicable(fn: () => unknown, reason: string): void {
  const error = thrown(fn);
  expect(error.toStatus()).toStrictEqual({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server rejected our request due to an error in our request',
    reason: 'Invalid',
    details: {},
    code: 422,
  });
  expect((error.cause as Error).message).toBe(reason);
}

function expectBadRequest(fn: () => unknown, message: string): void {
  const error = thrown(fn);
  expect(error.code).toBe(400);
  expect(error.reason).toBe('BadRequest');
  expect(error.message).toBe(message);
}

describe('applyJsonPatch', () => {
  // RFC 6902 Appendix A examples that succeed.
  const appendixA: [string, unknown, unknown[], unknown][] = [
    ['A.1 adding an object member', { foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }], { baz: 'qux', foo: 'bar' }],
    ['A.2 adding an array element', { foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }], { foo: ['bar', 'qux', 'baz'] }],
    ['A.3 removing an object member', { baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' }],
    ['A.4 removing an array element', { foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }], { foo: ['bar', 'baz'] }],
    ['A.5 replacing a value', { baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }], { baz: 'boo', foo: 'bar' }],
    [
      'A.6 moving a value',
      { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
      [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
      { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
    ],
    [
      'A.7 moving an array element',
      { foo: ['all', 'grass', 'cows', 'eat'] },
      [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
      { foo: ['all', 'cows', 'eat', 'grass'] },
    ],
    [
      'A.8 testing a value: success',
      { baz: 'qux', foo: ['a', 2, 'c'] },
      [
        { op: 'test', path: '/baz', value: 'qux' },
        { op: 'test', path: '/foo/1', value: 2 },
      ],
      { baz: 'qux', foo: ['a', 2, 'c'] },
    ],
    [
      'A.10 adding a nested member object',
      { foo: 'bar' },
      [{ op: 'add', path: '/child', value: { grandchild: {} } }],
      { foo: 'bar', child: { grandchild: {} } },
    ],
    ['A.11 ignoring unrecognized elements', { foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }], { foo: 'bar', baz: 'qux' }],
    ['A.14 ~ escape ordering', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: 10 }], { '/': 9, '~1': 10 }],
    ['A.16 adding an array value', { foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }], { foo: ['bar', ['abc', 'def']] }],
  ];
  it.each(appendixA)('%s', (_name, document, patch, expected) => {
    expect(applyJsonPatch(document, patch)).toStrictEqual(expected);
  });

  // RFC 6902 Appendix A examples that fail (A.13, duplicate keys, is settled by the JSON parser before us).
  it('A.9 testing a value: error', () => {
    expectNotApplicable(() => applyJsonPatch({ baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }]), 'testing value /baz failed: test failed');
  });
  it('A.12 adding to a nonexistent target', () => {
    expectNotApplicable(
      () => applyJsonPatch({ foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }]),
      'add operation does not apply: doc is missing path: /baz/bat',
    );
  });
  it('A.15 comparing strings and numbers', () => {
    expectNotApplicable(() => applyJsonPatch({ '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }]), 'testing value /~01 failed: test failed');
  });

  const more: [string, unknown, unknown[], unknown][] = [
    ['add replaces an existing member', { a: 1 }, [{ op: 'add', path: '/a', value: 2 }], { a: 2 }],
    ['add at the end index', { a: [1] }, [{ op: 'add', path: '/a/1', value: 2 }], { a: [1, 2] }],
    ['add with the whole document as target', { a: 1 }, [{ op: 'add', path: '', value: [1] }], [1]],
    ['add a null value', {}, [{ op: 'add', path: '/a', value: null }], { a: null }],
    ['add to an empty key', {}, [{ op: 'add', path: '/', value: 1 }], { '': 1 }],
    ['replace keeps key order', { a: 1, b: 2, c: 3 }, [{ op: 'replace', path: '/b', value: 9 }], { a: 1, b: 9, c: 3 }],
    ['replace the whole document', { a: 1 }, [{ op: 'replace', path: '', value: 'x' }], 'x'],
    ['replace an array element', [1, 2, 3], [{ op: 'replace', path: '/1', value: 'b' }], [1, 'b', 3]],
    ['remove the last array element', { a: [1, 2] }, [{ op: 'remove', path: '/a/1' }], { a: [1] }],
    [
      'copy deep-copies',
      { a: { b: [1] } },
      [
        { op: 'copy', from: '/a', path: '/c' },
        { op: 'add', path: '/c/b/-', value: 2 },
      ],
      { a: { b: [1] }, c: { b: [1, 2] } },
    ],
    ['move onto itself', { a: 1, b: 2 }, [{ op: 'move', from: '/a', path: '/a' }], { b: 2, a: 1 }],
    ['move to the root', { a: { b: 1 } }, [{ op: 'move', from: '/a', path: '' }], { b: 1 }],
    [
      'test compares objects regardless of key order',
      { a: { x: 1, y: [1, { z: null }] } },
      [{ op: 'test', path: '/a', value: { y: [1, { z: null }], x: 1 } }],
      { a: { x: 1, y: [1, { z: null }] } },
    ],
    ['test the whole document', { a: 1 }, [{ op: 'test', path: '', value: { a: 1 } }], { a: 1 }],
    ['an empty patch', { a: 1 }, [], { a: 1 }],
    ['escaped keys', { 'a/b': { '~': 1 } }, [{ op: 'replace', path: '/a~1b/~0', value: 2 }], { 'a/b': { '~': 2 } }],
    [
      'kube-style managedFields reset',
      { metadata: { name: 'x', managedFields: [{ manager: 'm' }] } },
      [{ op: 'replace', path: '/metadata/managedFields', value: [{}] }],
      { metadata: { name: 'x', managedFields: [{}] } },
    ],
  ];
  it.each(more)('%s', (_name, document, patch, expected) => {
    expect(applyJsonPatch(document, patch)).toStrictEqual(expected);
  });

  const failures: [string, unknown, unknown[], string][] = [
    ['remove a missing member', { a: 1 }, [{ op: 'remove', path: '/b' }], 'remove operation does not apply: doc is missing path: /b'],
    ['remove the root', { a: 1 }, [{ op: 'remove', path: '' }], 'remove operation does not apply: doc is missing path: '],
    ['replace a missing member', { a: 1 }, [{ op: 'replace', path: '/b', value: 1 }], 'replace operation does not apply: doc is missing path: /b'],
    ['add past the end of an array', { a: [1] }, [{ op: 'add', path: '/a/2', value: 1 }], 'add operation does not apply: invalid array index "2" in path /a/2'],
    ['add with a negative index', { a: [1] }, [{ op: 'add', path: '/a/-1', value: 1 }], 'add operation does not apply: invalid array index "-1" in path /a/-1'],
    [
      'add with a leading zero index',
      { a: [1, 2] },
      [{ op: 'add', path: '/a/01', value: 1 }],
      'add operation does not apply: invalid array index "01" in path /a/01',
    ],
    ['remove with the append index', { a: [1] }, [{ op: 'remove', path: '/a/-' }], 'remove operation does not apply: invalid array index "-" in path /a/-'],
    [
      'replace past the end of an array',
      { a: [1] },
      [{ op: 'replace', path: '/a/1', value: 1 }],
      'replace operation does not apply: invalid array index "1" in path /a/1',
    ],
    [
      'test past the end of an array',
      { a: [1] },
      [{ op: 'test', path: '/a/1', value: 1 }],
      'test operation does not apply: invalid array index "1" in path /a/1',
    ],
    ['traverse through a scalar', { a: 1 }, [{ op: 'add', path: '/a/b', value: 1 }], 'add operation does not apply: doc is missing path: /a/b'],
    ['test a missing member', { a: 1 }, [{ op: 'test', path: '/b', value: null }], 'test operation does not apply: doc is missing path: /b'],
    ['copy from a missing member', { a: 1 }, [{ op: 'copy', from: '/b', path: '/c' }], 'copy operation does not apply: doc is missing path: /b'],
    [
      'move into its own child',
      { a: { b: 1 } },
      [{ op: 'move', from: '/a', path: '/a/b/c' }],
      'move operation does not apply: from /a is a prefix of path /a/b/c',
    ],
    [
      'a later operation fails after earlier ones succeed',
      { a: 1 },
      [
        { op: 'add', path: '/b', value: 2 },
        { op: 'test', path: '/b', value: 3 },
      ],
      'testing value /b failed: test failed',
    ],
  ];
  it.each(failures)('422 when it cannot %s', (_name, document, patch, reason) => {
    expectNotApplicable(() => applyJsonPatch(document, patch), reason);
  });

  const malformed: [string, unknown, string][] = [
    ['an object', { op: 'add' }, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch'],
    ['a string', 'x', 'json: cannot unmarshal string into Go value of type jsonpatch.Patch'],
    ['null', null, 'json: cannot unmarshal null into Go value of type jsonpatch.Patch'],
    ['an array of numbers', [1], 'json: cannot unmarshal number into Go value of type jsonpatch.Operation'],
    ['an array of arrays', [[]], 'json: cannot unmarshal array into Go value of type jsonpatch.Operation'],
    ['an unknown op', [{ op: 'merge', path: '/a' }], 'Unexpected kind: merge'],
    ['no op', [{ path: '/a' }], 'Unexpected kind: unknown'],
    ['a non-string op', [{ op: 1, path: '/a' }], 'Unexpected kind: unknown'],
    ['no path', [{ op: 'remove' }], 'remove operation, missing path field'],
    ['a non-string path', [{ op: 'remove', path: 1 }], 'remove operation, path field must be a string'],
    ['no value', [{ op: 'add', path: '/a' }], 'add operation, missing value field'],
    ['no from', [{ op: 'copy', path: '/a' }], 'copy operation, missing from field'],
    ['a relative pointer', [{ op: 'remove', path: 'a' }], 'remove operation, path field is not a valid JSON pointer: "a"'],
    ['a bad escape', [{ op: 'remove', path: '/a~2' }], 'remove operation, path field is not a valid JSON pointer: "/a~2"'],
    ['a dangling escape', [{ op: 'move', from: '/a~', path: '/b' }], 'move operation, from field is not a valid JSON pointer: "/a~"'],
  ];
  it.each(malformed)('400 for %s', (_name, patch, message) => {
    expectBadRequest(() => applyJsonPatch({ a: 1 }, patch), message);
  });

  it('rejects a malformed operation even after one that would fail to apply', () => {
    expectBadRequest(() => applyJsonPatch({}, [{ op: 'test', path: '/a', value: 1 }, { op: 'bogus' }]), 'Unexpected kind: bogus');
  });

  it('allows 10000 operations and refuses 10001 with 413', () => {
    const op = { op: 'test', path: '/a', value: 1 };
    expect(
      applyJsonPatch(
        { a: 1 },
        Array.from({ length: 10000 }, () => op),
      ),
    ).toStrictEqual({ a: 1 });
    const error = thrown(() =>
      applyJsonPatch(
        { a: 1 },
        Array.from({ length: 10001 }, () => op),
      ),
    );
    expect(error.toStatus()).toStrictEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
      reason: 'RequestEntityTooLarge',
      code: 413,
    });
  });

  it('modifies neither argument and shares no structure with them', () => {
    const document = { a: { b: [1, 2] }, c: 'x' };
    const value = { deep: [1] };
    const patch = [
      { op: 'add', path: '/a/b/0', value },
      { op: 'remove', path: '/c' },
      { op: 'move', from: '/a/b/1', path: '/m' },
    ];
    const documentCopy = structuredClone(document);
    const patchCopy = structuredClone(patch);
    const result = applyJsonPatch(document, patch) as { a: { b: unknown[] } };
    expect(result).toStrictEqual({ a: { b: [{ deep: [1] }, 2] }, m: 1 });
    expect(document).toStrictEqual(documentCopy);
    expect(patch).toStrictEqual(patchCopy);
    expect(result.a.b[0]).not.toBe(value);
  });

  it('leaves the input alone when a later operation fails', () => {
    const document = { a: [1] };
    expect(() =>
      applyJsonPatch(document, [
        { op: 'add', path: '/a/-', value: 2 },
        { op: 'remove', path: '/x' },
      ]),
    ).toThrow(ApiError);
    expect(document).toStrictEqual({ a: [1] });
  });

  it('treats __proto__ as an ordinary key', () => {
    const patch = JSON.parse('[{"op":"add","path":"/__proto__","value":{"polluted":true}}]');
    const result = applyJsonPatch({}, patch) as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(JSON.stringify(result)).toBe('{"__proto__":{"polluted":true}}');
    expectNotApplicable(
      () => applyJsonPatch({}, [{ op: 'test', path: '/__proto__', value: {} }]),
      'test operation does not apply: doc is missing path: /__proto__',
    );
  });
});
