import { describe, expect, it } from 'vitest';
import { parseFieldSelector } from '../../../src/apiserver/selectors/fields.js';
import { badRequest } from '../kube-messages.js';

const unknown = (field: string) => `${field} is not a known field selector: only "metadata.name", "metadata.namespace"`;
/** What a CRD-like kind without selectable fields answers to. */
const crd = { fields: ['metadata.name', 'metadata.namespace'], builtIn: false };
/** An object's selectable fields, as ResourceStrategy.fieldsOf gives them. */
const fieldsOf = ({ name, namespace }: { name?: string; namespace?: string }) => ({ 'metadata.name': name ?? '', 'metadata.namespace': namespace ?? '' });

describe('parseFieldSelector: syntax', () => {
  it.each<[string, string, string | undefined]>([
    ['', '', undefined],
    [',,', '', undefined],
    ['metadata.name=foo', 'metadata.name=foo', 'foo'],
    ['metadata.name==foo', 'metadata.name=foo', 'foo'],
    ['metadata.name!=foo', 'metadata.name!=foo', undefined],
    ['metadata.name=', 'metadata.name=', ''],
    ['metadata.namespace=ns', 'metadata.namespace=ns', undefined],
    ['metadata.namespace=ns,metadata.name=a', 'metadata.name=a,metadata.namespace=ns', 'a'],
    ['metadata.name!=a,metadata.name=b', 'metadata.name!=a,metadata.name=b', 'b'],
    // Terms are sorted as text before anything else, so "a" comes first whatever the order sent.
    ['metadata.name=b,metadata.name=a', 'metadata.name=a,metadata.name=b', 'a'],
    ['metadata.name=a,', 'metadata.name=a', 'a'],
    ['metadata.name=a\\,b', 'metadata.name=a\\,b', 'a,b'],
    ['metadata.name=a\\=b', 'metadata.name=a\\=b', 'a=b'],
    ['metadata.name=a\\\\b', 'metadata.name=a\\\\b', 'a\\b'],
    ['metadata.name=\\,\\=\\\\', 'metadata.name=\\,\\=\\\\', ',=\\'],
    ['metadata.name=a b', 'metadata.name=a b', 'a b'],
  ])('%j', (text, canonical, name) => {
    const selector = parseFieldSelector(text);
    expect(selector.toString()).toBe(canonical);
    expect(selector.name).toBe(name);
    expect(selector.empty).toBe(canonical === '');
  });
});

describe('parseFieldSelector: matching', () => {
  it.each<[string, { name?: string; namespace?: string }, boolean]>([
    ['', {}, true],
    ['metadata.name=foo', { name: 'foo', namespace: 'ns' }, true],
    ['metadata.name=foo', { name: 'bar', namespace: 'ns' }, false],
    ['metadata.name==foo', { name: 'foo' }, true],
    ['metadata.name!=foo', { name: 'bar' }, true],
    ['metadata.name!=foo', { name: 'foo' }, false],
    ['metadata.namespace=ns', { name: 'a', namespace: 'ns' }, true],
    ['metadata.namespace=ns', { name: 'a', namespace: 'other' }, false],
    // A cluster-scoped object has the empty namespace.
    ['metadata.namespace=ns', { name: 'a' }, false],
    ['metadata.namespace=', { name: 'a' }, true],
    ['metadata.namespace!=ns', { name: 'a' }, true],
    ['metadata.namespace=ns,metadata.name=a', { name: 'a', namespace: 'ns' }, true],
    ['metadata.namespace=ns,metadata.name=a', { name: 'b', namespace: 'ns' }, false],
    ['metadata.name!=a,metadata.name!=b', { name: 'c' }, true],
    ['metadata.name!=a,metadata.name!=b', { name: 'b' }, false],
    ['metadata.name=a\\,b', { name: 'a,b' }, true],
  ])('%j on %j → %s', (text, meta, expected) => {
    expect(parseFieldSelector(text, crd).matches(fieldsOf(meta))).toBe(expected);
  });
});

describe('parseFieldSelector: errors', () => {
  it.each([
    ['spec.x=y', unknown('"spec.x"')],
    ['status.phase!=Running', unknown('"status.phase"')],
    ['metadata.uid=1', unknown('"metadata.uid"')],
    ['metadata.name =x', unknown('"metadata.name "')],
    ['=x', unknown('""')],
    ['spec\n=x', unknown('"spec\\n"')],
    ['spec."q"=x', unknown('"spec.\\"q\\""')],
    // The first unknown field in sorted order is the one reported.
    ['spec.b=1,spec.a=1', unknown('"spec.a"')],
    ['foo', "invalid selector: 'foo'; can't understand 'foo'"],
    ['metadata.name=a,bar', "invalid selector: 'metadata.name=a,bar'; can't understand 'bar'"],
    // Syntax errors anywhere win over unknown fields.
    ['spec.x=1,zzz', "invalid selector: 'spec.x=1,zzz'; can't understand 'zzz'"],
    ['metadata.name=a=b', 'invalid field selector: unescaped character in value: 61'],
    ['metadata.name!==b', 'invalid field selector: unescaped character in value: 61'],
    ['metadata.name\\=a=b', 'invalid field selector: unescaped character in value: 61'],
    ['metadata.name=a\\x', 'invalid field selector: invalid escape sequence: \\x'],
    ['metadata.name=a\\', 'invalid field selector: invalid escape sequence: \\'],
    ['metadata.name=a\\é', 'invalid field selector: invalid escape sequence: \\é'],
  ])('%j', (text, message) => {
    expect(badRequest(() => parseFieldSelector(text, crd))).toBe(message);
  });
});

describe('parseFieldSelector: selectable fields', () => {
  const secret = { fields: ['metadata.name', 'metadata.namespace', 'type'], builtIn: true };
  const gadget = { fields: ['metadata.name', 'metadata.namespace', 'spec.color'], builtIn: false };

  it('matches a kind\'s own field, "" standing for unset', () => {
    const opaque = parseFieldSelector('type=Opaque', secret);
    expect(opaque.matches({ 'metadata.name': 'a', 'metadata.namespace': 'ns', type: 'Opaque' })).toBe(true);
    expect(opaque.matches({ 'metadata.name': 'a', 'metadata.namespace': 'ns', type: 'kubernetes.io/tls' })).toBe(false);
    expect(parseFieldSelector('spec.color!=', gadget).matches({ 'spec.color': '' })).toBe(false);
  });

  it('refuses other fields as kube-apiserver does: "field label not supported" for built-in kinds, the list for CRDs', () => {
    expect(badRequest(() => parseFieldSelector('data=x', secret))).toBe('field label not supported: data');
    expect(badRequest(() => parseFieldSelector('spec.size=1', gadget))).toBe(
      '"spec.size" is not a known field selector: only "metadata.name", "metadata.namespace", "spec.color"',
    );
  });

  it('accepts any field label when no kind is known yet, so a pinned name can be read first', () => {
    expect(parseFieldSelector('type=Opaque,metadata.name=a').name).toBe('a');
  });
});
