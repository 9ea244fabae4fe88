import { describe, expect, it } from 'vitest';
import { compileJsonPath } from '../../../src/apiserver/printing/jsonpath.js';

const machine = {
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
  kind: 'OpenStackMachine',
  metadata: {
    name: 'capi-md-0-abcde',
    namespace: 'default',
    creationTimestamp: '2026-01-02T03:04:05Z',
    labels: { 'cluster.x-k8s.io/cluster-name': 'capi', plain: 'p' },
    ownerReferences: [
      { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineSet', name: 'capi-md-0', uid: 'u0' },
      { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine', name: 'capi-md-0-xyz', uid: 'u1', controller: true },
    ],
  },
  spec: {
    controlPlaneEndpoint: { host: '10.0.0.10', port: 6443 },
    flavor: 'm1.small',
    ports: [{ name: 'a', weight: 1 }, { name: 'b', weight: 2.5 }, { name: 'c', weight: 3 }, { name: 'd' }],
    nums: [0, 1, 2, 3, 4, 5],
    empty: [],
  },
  status: {
    ready: true,
    off: false,
    bastion: { floatingIP: '172.24.4.2' },
    gone: null,
    addresses: [
      { type: 'InternalIP', address: '10.0.0.5' },
      { type: 'ExternalIP', address: '172.24.4.9' },
    ],
  },
};

const evaluate = (expression: string, value: unknown = machine) => compileJsonPath(expression)(value);

describe('compileJsonPath: CAPO printer columns', () => {
  it.each([
    ['.status.ready', [true]],
    ['.metadata.labels.cluster\\.x-k8s\\.io/cluster-name', ['capi']],
    ['.metadata.ownerReferences[?(@.kind=="Machine")].name', ['capi-md-0-xyz']],
    ['.spec.controlPlaneEndpoint.host', ['10.0.0.10']],
    ['.status.bastion.floatingIP', ['172.24.4.2']],
    ['.metadata.creationTimestamp', ['2026-01-02T03:04:05Z']],
  ])('%s', (expression, expected) => {
    expect(evaluate(expression)).toStrictEqual(expected);
  });

  it('yields nothing for missing fields, at any depth', () => {
    const bare = { metadata: { name: 'x' } };
    expect(evaluate('.status.bastion.floatingIP', bare)).toStrictEqual([]);
    expect(evaluate('.metadata.ownerReferences[?(@.kind=="Machine")].name', bare)).toStrictEqual([]);
    expect(evaluate('.metadata.labels.cluster\\.x-k8s\\.io/cluster-name', bare)).toStrictEqual([]);
  });

  it('can be evaluated many times', () => {
    const path = compileJsonPath('.metadata.ownerReferences[?(@.kind=="Machine")].name');
    expect(path(machine)).toStrictEqual(['capi-md-0-xyz']);
    expect(path({ metadata: { ownerReferences: [{ kind: 'Machine', name: 'other' }] } })).toStrictEqual(['other']);
    expect(path(machine)).toStrictEqual(['capi-md-0-xyz']);
  });
});

describe('compileJsonPath: client-go semantics', () => {
  it.each<[string, unknown[]]>([
    // fields and null
    ['.status.gone', [null]],
    ['.status.gone.x', []],
    ['.status.ready.x', []],
    ['.spec.nums.x', []],
    [".metadata.labels['plain']", ['p']],
    // client-go parses ['a.b'] as the path .a.b
    [".metadata.labels['cluster.x-k8s.io/cluster-name']", []],
    [".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']", ['capi']],
    ['$.metadata.name', ['capi-md-0-abcde']],
    ['.metadata.name ', ['capi-md-0-abcde']],
    // indexes and slices
    ['.spec.nums[0]', [0]],
    ['.spec.nums[5]', [5]],
    ['.spec.nums[-1]', [5]],
    ['.spec.nums[-6]', [0]],
    ['.spec.nums[6]', []],
    ['.spec.nums[-7]', []],
    ['.spec.nums[1:3]', [1, 2]],
    ['.spec.nums[4:]', [4, 5]],
    ['.spec.nums[:2]', [0, 1]],
    ['.spec.nums[-2:]', [4, 5]],
    ['.spec.nums[::2]', [0, 2, 4]],
    ['.spec.nums[1:6:3]', [1, 4]],
    ['.spec.nums[0:0]', []],
    ['.spec.nums[3:2]', []],
    ['.spec.nums[::0]', []],
    ['.spec.nums[0:7]', []],
    ['.spec.empty[*]', []],
    ['.spec.empty[0]', []],
    ['.spec.nums[0,2,-1]', [0, 2, 5]],
    [".metadata['name','namespace']", ['capi-md-0-abcde', 'default']],
    // wildcards: [*] is a slice and fails on maps; .* walks map values
    ['.spec.ports[*].name', ['a', 'b', 'c', 'd']],
    ['.metadata.labels[*]', []],
    ['.metadata.labels.*', ['capi', 'p']],
    ['.spec.controlPlaneEndpoint.*', ['10.0.0.10', 6443]],
    ['.metadata.name[0]', []],
    // recursive descent
    ['..floatingIP', ['172.24.4.2']],
    ['.status..address', ['10.0.0.5', '172.24.4.9']],
    ['.metadata..name', ['capi-md-0-abcde', 'capi-md-0', 'capi-md-0-xyz']],
    ["..['floatingIP']", ['172.24.4.2']],
    // filters
    ['.status.addresses[?(@.type=="ExternalIP")].address', ['172.24.4.9']],
    [".status.addresses[?(@.type == 'InternalIP')].address", ['10.0.0.5']],
    ['.status.addresses[?(@.type!="InternalIP")].address', ['172.24.4.9']],
    ['.spec.ports[?(@.weight)].name', ['a', 'b', 'c']],
    ['.spec.ports[?(@.weight>=2.5)].name', []],
    ['.spec.ports[?(@.weight>1)].name', []],
    ['.spec.ports[?(@.name>"a")].name', ['b', 'c', 'd']],
    ['.spec.ports[?(@.name<="b")].name', ['a', 'b']],
    ['.metadata.ownerReferences[?(@.controller==true)].name', ['capi-md-0-xyz']],
    ['.metadata.ownerReferences[?(@.controller)].uid', ['u1']],
    ['.metadata.ownerReferences[?(@.kind=="Machine")]', [machine.metadata.ownerReferences[1]]],
    ['.metadata.ownerReferences[?(@.kind=="Nothing")].name', []],
    ['.spec.nums[?(@>3)]', [4, 5]],
    ['.spec.nums[?(@<=1)]', [0, 1]],
    ['.metadata.labels[?(@.x)]', []],
  ])('%s', (expression, expected) => {
    expect(evaluate(expression)).toStrictEqual(expected);
  });

  it('compares with Go types: int, float, string and bool do not mix', () => {
    const items = { items: [{ n: 1 }, { n: 2.5 }, { n: 'x' }, { n: true }] };
    expect(evaluate('.items[?(@.n==1)]', { items: [{ n: 1 }, { n: 2 }] })).toStrictEqual([{ n: 1 }]);
    expect(evaluate('.items[?(@.n==2.5)]', { items: [{ n: 2.5 }, { n: 3.5 }] })).toStrictEqual([{ n: 2.5 }]);
    // Comparing an int with a float, or ordering booleans, fails the whole evaluation.
    expect(evaluate('.items[?(@.n==1)]', items)).toStrictEqual([]);
    expect(evaluate('.items[?(@.n==1.0)]', { items: [{ n: 1 }] })).toStrictEqual([]);
    expect(evaluate('.items[?(@.n<true)]', { items: [{ n: false }] })).toStrictEqual([]);
    expect(evaluate('.items[?(@.n==true)]', { items: [{ n: true }, { n: false }] })).toStrictEqual([{ n: true }]);
  });

  it('orders strings by code point, as Go compares bytes', () => {
    const items = { items: [{ s: '\uff5e' }, { s: '\u{1f600}' }] };
    expect(evaluate('.items[?(@.s>"\uffff")].s', items)).toStrictEqual(['\u{1f600}']);
  });

  it('skips filter elements whose operand is missing, and fails on several', () => {
    expect(evaluate('.items[?(@.a=="x")].a', { items: [{}, { a: 'x' }] })).toStrictEqual(['x']);
    expect(evaluate('.items[?(@.a[*]=="x")]', { items: [{ a: ['x', 'y'] }] })).toStrictEqual([]);
  });

  it('counts a failed operand as present in an existence filter, as client-go does', () => {
    expect(evaluate('.items[?(@.a[0])].n', { items: [{ a: 'text', n: 1 }, { n: 2 }] })).toStrictEqual([1]);
  });

  it('compares two fields of the element', () => {
    const items = {
      items: [
        { a: 1, b: 1, n: 'same' },
        { a: 1, b: 2, n: 'differ' },
      ],
    };
    expect(evaluate('.items[?(@.a==@.b)].n', items)).toStrictEqual(['same']);
  });

  it('decodes escapes in quoted filter literals', () => {
    const items = { items: [{ s: 'a"b' }, { s: "it's" }, { s: 'tab\there' }, { s: 'é' }] };
    expect(evaluate('.items[?(@.s=="a\\"b")].s', items)).toStrictEqual(['a"b']);
    expect(evaluate(".items[?(@.s=='it\\'s')].s", items)).toStrictEqual(["it's"]);
    expect(evaluate('.items[?(@.s=="tab\\there")].s', items)).toStrictEqual(['tab\there']);
    expect(evaluate('.items[?(@.s=="\\u00e9")].s', items)).toStrictEqual(['é']);
  });

  it('returns the whole document for an empty path', () => {
    expect(evaluate('', { a: 1 })).toStrictEqual([{ a: 1 }]);
  });
});

describe('compileJsonPath: invalid expressions', () => {
  it.each([
    ['.a[', /unterminated array/],
    ['.a[?(@.x', /unterminated filter/],
    ['.a[?(@.x)', /unclosed filter/],
    ['.a[x]', /invalid array index x/],
    ['.a[1:2:3:4]', /invalid array index/],
    ['.a[-]', /array index - is not a number/],
    ['.a{', /unrecognized character "\{"/],
    ['.a}', /unrecognized character "\}"/],
    ['.a\t', /unrecognized character/],
    ['.a\n.b', /line breaks/],
    ['.a range', /unsupported identifier range/],
    ['.a "text"', /literals are only allowed as filter operands/],
    ['.a 5', /literals are only allowed as filter operands/],
    ['....a', /invalid multiple recursive descent/],
    ['.a[?(@.x=<"y")]', /unrecognized filter operator =</],
    ['.a[?(@.x=="y)]', /unterminated filter/],
    ['.a[?(@.x=="\\q")]', /invalid escape/],
  ])('%j', (expression, message) => {
    expect(() => compileJsonPath(expression)).toThrow(message);
  });

  it('names the expression in the message', () => {
    expect(() => compileJsonPath('.spec[oops]')).toThrow('invalid JSONPath ".spec[oops]": invalid array index oops');
  });
});
