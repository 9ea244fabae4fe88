import { describe, expect, it } from 'vitest';
import {
  goQuote,
  isDns1123Label,
  isDns1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  nameIsDnsSubdomain,
  validatePathSegmentName,
} from '../../../src/apiserver/validation/names.js';
import { LABEL, LABEL_VALUE, NAME_PART, SUBDOMAIN, TOO_MANY_SLASHES } from '../kube-messages.js';

// kube's texts, written out rather than derived from the implementation.

const a = (n: number) => 'a'.repeat(n);
/** A 253-character subdomain made of 63-character labels. */
const subdomain253 = [a(63), a(63), a(63), a(61)].join('.');

describe('isDns1123Subdomain', () => {
  it.each(['a', '0', 'abc', 'a-b', 'a.b', 'a--b', '1.2.3.4', 'example.com', 'infrastructure.cluster.x-k8s.io', subdomain253, a(253)])('accepts %j', (value) => {
    expect(isDns1123Subdomain(value)).toEqual([]);
  });

  it.each([
    ['', [SUBDOMAIN]],
    ['A', [SUBDOMAIN]],
    ['aBc', [SUBDOMAIN]],
    ['-a', [SUBDOMAIN]],
    ['a-', [SUBDOMAIN]],
    ['.a', [SUBDOMAIN]],
    ['a.', [SUBDOMAIN]],
    ['a..b', [SUBDOMAIN]],
    ['a_b', [SUBDOMAIN]],
    ['a b', [SUBDOMAIN]],
    ['a/b', [SUBDOMAIN]],
    ['a%b', [SUBDOMAIN]],
    ['.', [SUBDOMAIN]],
    ['..', [SUBDOMAIN]],
    ['é', [SUBDOMAIN]],
    ['a\n', [SUBDOMAIN]],
    [a(254), ['must be no more than 253 characters']],
    [`${subdomain253}a`, ['must be no more than 253 characters']],
    [`${a(254)}-`, ['must be no more than 253 characters', SUBDOMAIN]],
  ])('rejects %j', (value, expected) => {
    expect(isDns1123Subdomain(value)).toEqual(expected);
  });
});

describe('isDns1123Label', () => {
  it.each(['a', '0', 'a-b', '123-abc', a(63)])('accepts %j', (value) => {
    expect(isDns1123Label(value)).toEqual([]);
  });

  it.each([
    ['', [LABEL]],
    ['A', [LABEL]],
    ['-a', [LABEL]],
    ['a-', [LABEL]],
    ['a_b', [LABEL]],
    ['a.b', ['must not contain dots']],
    ['a.', [LABEL]],
    [a(64), ['must be no more than 63 characters']],
    [`${a(63)}.a`, ['must be no more than 63 characters', 'must not contain dots']],
    [`${a(64)}-`, ['must be no more than 63 characters', LABEL]],
  ])('rejects %j', (value, expected) => {
    expect(isDns1123Label(value)).toEqual(expected);
  });
});

describe('isQualifiedName', () => {
  it.each([
    'a',
    'A',
    'MyName',
    'my.name',
    'my_name',
    '123-abc',
    'a-_.b',
    'example.com/MyName',
    'cluster.x-k8s.io/cluster-name',
    'kubectl.kubernetes.io/last-applied-configuration',
    a(63),
    `${subdomain253}/${a(63)}`,
  ])('accepts %j', (value) => {
    expect(isQualifiedName(value)).toEqual([]);
  });

  it.each([
    ['', ['name part must be non-empty', NAME_PART]],
    ['/', ['prefix part must be non-empty', 'name part must be non-empty', NAME_PART]],
    ['/a', ['prefix part must be non-empty']],
    ['a/', ['name part must be non-empty', NAME_PART]],
    ['-a', [NAME_PART]],
    ['a-', [NAME_PART]],
    ['_a', [NAME_PART]],
    ['.a', [NAME_PART]],
    ['a b', [NAME_PART]],
    ['a:b', [NAME_PART]],
    ['Example.com/a', [`prefix part ${SUBDOMAIN}`]],
    ['example_com/a', [`prefix part ${SUBDOMAIN}`]],
    ['a/b/c', [TOO_MANY_SLASHES]],
    [a(64), ['name part must be no more than 63 bytes']],
    [`${a(64)}-`, ['name part must be no more than 63 bytes', NAME_PART]],
    [`${a(254)}/a`, ['prefix part must be no more than 253 bytes']],
    [`-/-`, [`prefix part ${SUBDOMAIN}`, NAME_PART]],
  ])('rejects %j', (value, expected) => {
    expect(isQualifiedName(value)).toEqual(expected);
  });

  it('measures the name part in UTF-8 bytes, like Go', () => {
    // 32 two-byte characters: 32 characters but 64 bytes.
    expect(isQualifiedName('é'.repeat(32))).toEqual(['name part must be no more than 63 bytes', NAME_PART]);
  });
});

describe('isValidLabelValue', () => {
  it.each(['', 'a', 'A', 'MyValue', 'my_value', '12345', 'a.b-c_d', a(63)])('accepts %j', (value) => {
    expect(isValidLabelValue(value)).toEqual([]);
  });

  it.each([
    ['-a', [LABEL_VALUE]],
    ['a-', [LABEL_VALUE]],
    ['a b', [LABEL_VALUE]],
    ['a/b', [LABEL_VALUE]],
    ['a:b', [LABEL_VALUE]],
    [a(64), ['must be no more than 63 bytes']],
    [`${a(64)}_`, ['must be no more than 63 bytes', LABEL_VALUE]],
  ])('rejects %j', (value, expected) => {
    expect(isValidLabelValue(value)).toEqual(expected);
  });
});

describe('validatePathSegmentName', () => {
  it.each([
    ['a', false, []],
    ['...', false, []],
    ['.a', false, []],
    ['.', false, ["may not be '.'"]],
    ['..', false, ["may not be '..'"]],
    ['a/b', false, ["may not contain '/'"]],
    ['a%b', false, ["may not contain '%'"]],
    ['a/%', false, ["may not contain '/'", "may not contain '%'"]],
    ['', false, []],
    // A prefix gets a suffix appended, so "." and ".." are fine there.
    ['.', true, []],
    ['..', true, []],
    ['a/', true, ["may not contain '/'"]],
    ['%', true, ["may not contain '%'"]],
  ] as const)('%j (prefix %s)', (name, prefix, expected) => {
    expect(validatePathSegmentName(name, prefix)).toEqual(expected);
  });
});

describe('nameIsDnsSubdomain', () => {
  it.each([
    ['foo-', true, []],
    ['my-machine-', true, []],
    ['foo-', false, [SUBDOMAIN]],
    ['-', true, [SUBDOMAIN]],
    ['Foo-', true, [SUBDOMAIN]],
    ['foo.-', true, []],
    ['foo', true, []],
    ['foo.', true, [SUBDOMAIN]],
  ] as const)('%j (prefix %s)', (name, prefix, expected) => {
    expect(nameIsDnsSubdomain(name, prefix)).toEqual(expected);
  });
});

describe('goQuote', () => {
  it.each([
    ['abc', '"abc"'],
    ['a"b', '"a\\"b"'],
    ['a\\b', '"a\\\\b"'],
    ['a\nb\tc', '"a\\nb\\tc"'],
    ['\x01', '"\\x01"'],
    ['\x7f', '"\\x7f"'],
    ['é☃', '"é☃"'],
  ])('%j', (value, expected) => {
    expect(goQuote(value)).toBe(expected);
  });
});
