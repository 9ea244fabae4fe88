import { describe, expect, it } from 'vitest';
import {
  dedupOwnerReferences,
  validateObjectMetaOnCreate,
  validateObjectMetaOnUpdate,
  type MetaValidation,
} from '../../../src/apiserver/validation/objectmeta.js';
import { LABEL, LABEL_VALUE, NAME_PART, SUBDOMAIN, TOO_MANY_SLASHES } from '../kube-messages.js';

const PREFER_DOMAIN = 'prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers';
const PREFER_PATH = 'prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers';

const namespaced = { namespaced: true };
const clusterScoped = { namespaced: false };
const owner = (extra: Record<string, unknown> = {}) => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Machine',
  name: 'm1',
  uid: 'u1',
  ...extra,
});

function messages(result: MetaValidation): string[] {
  return result.errors.map((e) => e.toString());
}

describe('validateObjectMetaOnCreate', () => {
  it.each<[string, unknown, { namespaced: boolean }, string[]]>([
    ['a valid namespaced object', { name: 'a', namespace: 'ns' }, namespaced, []],
    ['a valid cluster-scoped object', { name: 'a.b-c' }, clusterScoped, []],
    ['a 253-character name', { name: 'a'.repeat(253), namespace: 'ns' }, namespaced, []],
    ['generateName alone (name not generated yet)', { generateName: 'machine-', namespace: 'ns' }, namespaced, []],
    ['generateName with its generated name', { name: 'machine-x7k2p', generateName: 'machine-', namespace: 'ns' }, namespaced, []],
    ['neither name nor generateName', { namespace: 'ns' }, namespaced, ['metadata.name: Required value: name or generateName is required']],
    ['metadata that is not an object', 'nope', clusterScoped, ['metadata.name: Required value: name or generateName is required']],
    ['an upper-case name', { name: 'Foo', namespace: 'ns' }, namespaced, [`metadata.name: Invalid value: "Foo": ${SUBDOMAIN}`]],
    ['a name with a slash', { name: 'a/b', namespace: 'ns' }, namespaced, [`metadata.name: Invalid value: "a/b": ${SUBDOMAIN}`]],
    ['a name of ".."', { name: '..', namespace: 'ns' }, namespaced, [`metadata.name: Invalid value: "..": ${SUBDOMAIN}`]],
    [
      'a 254-character name',
      { name: 'a'.repeat(254), namespace: 'ns' },
      namespaced,
      [`metadata.name: Invalid value: "${'a'.repeat(254)}": must be no more than 253 characters`],
    ],
    ['an invalid generateName', { generateName: 'Foo-', namespace: 'ns' }, namespaced, [`metadata.generateName: Invalid value: "Foo-": ${SUBDOMAIN}`]],
    ['a missing namespace on a namespaced kind', { name: 'a' }, namespaced, ['metadata.namespace: Required value']],
    ['an invalid namespace', { name: 'a', namespace: 'a.b' }, namespaced, ['metadata.namespace: Invalid value: "a.b": must not contain dots']],
    ['an upper-case namespace', { name: 'a', namespace: 'NS' }, namespaced, [`metadata.namespace: Invalid value: "NS": ${LABEL}`]],
    ['a namespace on a cluster-scoped kind', { name: 'a', namespace: 'ns' }, clusterScoped, ['metadata.namespace: Forbidden: not allowed on this type']],
  ])('%s', (_title, meta, opts, expected) => {
    expect(messages(validateObjectMetaOnCreate(meta, opts))).toEqual(expected);
  });

  describe('labels', () => {
    it.each<[string, Record<string, unknown>, string[]]>([
      ['valid labels', { 'cluster.x-k8s.io/cluster-name': 'c1', app: '', 'a_b.c': 'V_1.0' }, []],
      ['a bad key', { '-a': 'v' }, [`metadata.labels: Invalid value: "-a": ${NAME_PART}`]],
      ['a key with two slashes', { 'a/b/c': 'v' }, [`metadata.labels: Invalid value: "a/b/c": ${TOO_MANY_SLASHES}`]],
      ['a bad value', { a: 'x y' }, [`metadata.labels: Invalid value: "x y": ${LABEL_VALUE}`]],
      ['a 64-character value', { a: 'v'.repeat(64) }, [`metadata.labels: Invalid value: "${'v'.repeat(64)}": must be no more than 63 bytes`]],
      [
        'a bad key and a bad value',
        { 'Bad.Prefix/k': '-v' },
        [`metadata.labels: Invalid value: "Bad.Prefix/k": prefix part ${SUBDOMAIN}`, `metadata.labels: Invalid value: "-v": ${LABEL_VALUE}`],
      ],
    ])('%s', (_title, labels, expected) => {
      expect(messages(validateObjectMetaOnCreate({ name: 'a', namespace: 'ns', labels }, namespaced))).toEqual(expected);
    });
  });

  describe('annotations', () => {
    it('validates keys case-insensitively but reports them as sent', () => {
      const result = validateObjectMetaOnCreate({ name: 'a', namespace: 'ns', annotations: { 'Example.COM/Some-Key': 'x', 'a b': 'y' } }, namespaced);
      expect(messages(result)).toEqual([`metadata.annotations: Invalid value: "a b": ${NAME_PART}`]);
    });

    it('allows exactly 262144 bytes of keys and values', () => {
      const annotations = { k: 'v'.repeat(262143) };
      expect(messages(validateObjectMetaOnCreate({ name: 'a', namespace: 'ns', annotations }, namespaced))).toEqual([]);
    });

    it('rejects more than 262144 bytes, counting keys and UTF-8 bytes', () => {
      const annotations = { k: 'v'.repeat(262141), e: 'é' };
      expect(messages(validateObjectMetaOnCreate({ name: 'a', namespace: 'ns', annotations }, namespaced))).toEqual([
        'metadata.annotations: Too long: may not be more than 262144 bytes',
      ]);
    });
  });

  describe('finalizers', () => {
    it.each<[string, string[], string[]]>([
      ['qualified names', ['example.com/cleanup', 'orphan', 'kubernetes'], []],
      ['an invalid name', ['a/b/c'], [`metadata.finalizers: Invalid value: "a/b/c": ${TOO_MANY_SLASHES}`]],
      ['an empty name', [''], ['metadata.finalizers: Invalid value: "": name part must be non-empty', `metadata.finalizers: Invalid value: "": ${NAME_PART}`]],
      [
        'orphan together with foregroundDeletion',
        ['orphan', 'foregroundDeletion'],
        ['metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set'],
      ],
    ])('%s', (_title, finalizers, expected) => {
      expect(messages(validateObjectMetaOnCreate({ name: 'a', namespace: 'ns', finalizers }, namespaced))).toEqual(expected);
    });

    it('warns about names that are not domain-qualified, sorted and once each', () => {
      const result = validateObjectMetaOnCreate(
        {
          name: 'a',
          namespace: 'ns',
          finalizers: ['x', 'openstackcluster.infrastructure.cluster.x-k8s.io', 'x', 'example.com/ok', 'foregroundDeletion', 'kubernetes'],
        },
        namespaced,
      );
      expect(result.errors).toEqual([]);
      expect(result.warnings).toEqual([
        `metadata.finalizers: "openstackcluster.infrastructure.cluster.x-k8s.io": ${PREFER_PATH}`,
        `metadata.finalizers: "x": ${PREFER_DOMAIN}`,
      ]);
    });

    it('gives no warnings when validation fails', () => {
      const result = validateObjectMetaOnCreate({ namespace: 'ns', finalizers: ['x'] }, namespaced);
      expect(result.errors).toHaveLength(1);
      expect(result.warnings).toEqual([]);
    });
  });

  describe('ownerReferences', () => {
    it.each<[string, unknown[], string[]]>([
      ['a complete reference', [owner({ controller: true, blockOwnerDeletion: true })], []],
      ['a core-group reference', [owner({ apiVersion: 'v1', kind: 'Secret' })], []],
      ['an apiVersion with an empty group', [owner({ apiVersion: '/v1' })], []],
      [
        'an empty reference',
        [{}],
        [
          'metadata.ownerReferences[0].apiVersion: Required value: must not be empty',
          'metadata.ownerReferences[0].kind: Required value: must not be empty',
          'metadata.ownerReferences[0].name: Required value: must not be empty',
          'metadata.ownerReferences[0].uid: Required value: must not be empty',
        ],
      ],
      [
        'an apiVersion with two slashes',
        [owner({ apiVersion: 'a/b/c' })],
        ['metadata.ownerReferences[0].apiVersion: Invalid value: "a/b/c": must be <group>/<version> or <version>'],
      ],
      [
        'an apiVersion without a version',
        [owner(), owner({ uid: 'u2', apiVersion: 'example.com/' })],
        ['metadata.ownerReferences[1].apiVersion: Invalid value: "example.com/": must be <group>/<version> or <version>'],
      ],
      [
        'an apiVersion of "/"',
        [owner({ apiVersion: '/' })],
        ['metadata.ownerReferences[0].apiVersion: Invalid value: "/": must be <group>/<version> or <version>'],
      ],
      [
        'an Event as owner',
        [{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u' }],
        [
          'metadata.ownerReferences[0]: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}: /v1, Kind=Event is disallowed from being an owner',
        ],
      ],
      [
        'two controllers',
        [owner({ controller: true }), { apiVersion: 'v1', kind: 'M', name: 'm2', uid: 'u2', controller: true }],
        [
          'metadata.ownerReferences: Invalid value: [{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Machine","name":"m1","uid":"u1","controller":true},{"apiVersion":"v1","kind":"M","name":"m2","uid":"u2","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for Machine/m1 and M/m2',
        ],
      ],
      ['one controller among several owners', [owner({ controller: false }), owner({ uid: 'u2', controller: true })], []],
    ])('%s', (_title, ownerReferences, expected) => {
      expect(messages(validateObjectMetaOnCreate({ name: 'a', namespace: 'ns', ownerReferences }, namespaced))).toEqual(expected);
    });

    it('reports every extra controller against the first one', () => {
      const refs = ['a', 'b', 'c'].map((n) => ({ apiVersion: 'v1', kind: 'K', name: n, uid: n, controller: true }));
      const details = validateObjectMetaOnCreate({ name: 'a', namespace: 'ns', ownerReferences: refs }, namespaced).errors.map((e) => e.detail);
      expect(details).toEqual([
        'Only one reference can have Controller set to true. Found "true" in references for K/a and K/b',
        'Only one reference can have Controller set to true. Found "true" in references for K/a and K/c',
      ]);
    });
  });

  it('reports errors in kube order: generateName, name, namespace, labels, annotations, owners, finalizers', () => {
    const result = validateObjectMetaOnCreate(
      {
        generateName: 'Xx-',
        name: 'X',
        labels: { '-': 'v' },
        annotations: { '-': 'v' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'n' }],
        finalizers: ['-'],
      },
      namespaced,
    );
    expect(result.errors.map((e) => e.field)).toEqual([
      'metadata.generateName',
      'metadata.name',
      'metadata.namespace',
      'metadata.labels',
      'metadata.annotations',
      'metadata.ownerReferences[0].uid',
      'metadata.finalizers',
    ]);
    expect(result.errors.map((e) => e.type)).toEqual([
      'FieldValueInvalid',
      'FieldValueInvalid',
      'FieldValueRequired',
      'FieldValueInvalid',
      'FieldValueInvalid',
      'FieldValueRequired',
      'FieldValueInvalid',
    ]);
  });
});

describe('validateObjectMetaOnUpdate', () => {
  const old = {
    name: 'a',
    namespace: 'ns',
    uid: 'u1',
    resourceVersion: '5',
    creationTimestamp: '2026-01-02T03:04:05Z',
    finalizers: ['example.com/a'],
  };
  const deleting = { ...old, deletionTimestamp: '2026-02-01T00:00:00Z', deletionGracePeriodSeconds: 0 };

  it.each<[string, Record<string, unknown>, Record<string, unknown>, string[]]>([
    ['an unchanged object', { ...old }, old, []],
    ['a changed name', { ...old, name: 'b' }, old, ['metadata.name: Invalid value: "b": field is immutable']],
    ['a changed namespace', { ...old, namespace: 'other' }, old, ['metadata.namespace: Invalid value: "other": field is immutable']],
    ['a changed uid', { ...old, uid: 'u2' }, old, ['metadata.uid: Invalid value: "u2": field is immutable']],
    ['a removed uid', { ...old, uid: undefined }, old, ['metadata.uid: Invalid value: "": field is immutable']],
    [
      'a changed creationTimestamp',
      { ...old, creationTimestamp: '2027-01-02T03:04:05Z' },
      old,
      ['metadata.creationTimestamp: Invalid value: "2027-01-02T03:04:05Z": field is immutable'],
    ],
    ['the same creation instant in another zone', { ...old, creationTimestamp: '2026-01-02T04:04:05+01:00' }, old, []],
    ['a removed creationTimestamp', { ...old, creationTimestamp: undefined }, old, ['metadata.creationTimestamp: Invalid value: null: field is immutable']],
    [
      'a deletionTimestamp set by a client',
      { ...old, deletionTimestamp: '2026-03-01T00:00:00+02:00' },
      old,
      ['metadata.deletionTimestamp: Invalid value: "2026-02-28T22:00:00Z": field is immutable'],
    ],
    [
      'a changed deletionTimestamp',
      { ...deleting, deletionTimestamp: '2026-03-01T00:00:00Z' },
      deleting,
      ['metadata.deletionTimestamp: Invalid value: "2026-03-01T00:00:00Z": field is immutable'],
    ],
    [
      'a removed deletionTimestamp',
      { ...deleting, deletionTimestamp: null },
      deleting,
      ['metadata.deletionTimestamp: Invalid value: null: field is immutable'],
    ],
    [
      'a deletionGracePeriodSeconds set by a client',
      { ...old, deletionGracePeriodSeconds: 30 },
      old,
      ['metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable'],
    ],
    [
      'a changed deletionGracePeriodSeconds',
      { ...deleting, deletionGracePeriodSeconds: 30 },
      deleting,
      ['metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable'],
    ],
    [
      'new finalizers on an object being deleted',
      { ...deleting, finalizers: ['z.io/b', 'example.com/a', 'a.io/c', 'z.io/b'] },
      deleting,
      ['metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"a.io/c", "z.io/b"}'],
    ],
    ['removing finalizers from an object being deleted', { ...deleting, finalizers: [] }, deleting, []],
    ['new finalizers on a live object', { ...old, finalizers: ['example.com/a', 'example.com/b'] }, old, []],
    ['invalid labels', { ...old, labels: { a: '-' } }, old, [`metadata.labels: Invalid value: "-": ${LABEL_VALUE}`]],
    ['invalid annotation keys', { ...old, annotations: { '-': '' } }, old, [`metadata.annotations: Invalid value: "-": ${NAME_PART}`]],
    [
      'invalid owner references',
      { ...old, ownerReferences: [owner({ uid: '' })] },
      old,
      ['metadata.ownerReferences[0].uid: Required value: must not be empty'],
    ],
    // kube re-validates neither finalizer names nor the orphan/foregroundDeletion pair on update.
    ['orphan with foregroundDeletion', { ...old, finalizers: ['orphan', 'foregroundDeletion'] }, old, []],
    ['an invalid finalizer name', { ...old, finalizers: ['a/b/c'] }, old, []],
  ])('%s', (_title, meta, oldMeta, expected) => {
    expect(messages(validateObjectMetaOnUpdate(meta, oldMeta, namespaced))).toEqual(expected);
  });

  it('warns only about finalizers the update adds', () => {
    const before = { ...old, finalizers: ['x'] };
    const result = validateObjectMetaOnUpdate({ ...before, finalizers: ['x', 'y', 'a/b/c', 'example.com/z'] }, before, namespaced);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([`metadata.finalizers: "a/b/c": ${TOO_MANY_SLASHES}`, `metadata.finalizers: "y": ${PREFER_DOMAIN}`]);
  });

  it('reports all problems together, in kube order', () => {
    const result = validateObjectMetaOnUpdate(
      { ...deleting, name: 'b', uid: 'u2', finalizers: ['example.com/a', 'example.com/new'], labels: { '-': '' } },
      deleting,
      namespaced,
    );
    expect(result.errors.map((e) => e.field)).toEqual(['metadata.finalizers', 'metadata.name', 'metadata.uid', 'metadata.labels']);
    expect(result.warnings).toEqual([]);
  });
});

describe('dedupOwnerReferences', () => {
  const warning = (uids: string) =>
    `.metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: ${uids}`;

  it('leaves metadata without owner references alone', () => {
    expect(dedupOwnerReferences({})).toEqual({ ownerReferences: undefined, warnings: [] });
  });

  it('returns the same list when nothing repeats', () => {
    const ownerReferences = [owner(), owner({ uid: 'u2' })];
    const result = dedupOwnerReferences({ ownerReferences });
    expect(result.ownerReferences).toBe(ownerReferences);
    expect(result.warnings).toEqual([]);
  });

  it('drops exact repeats and names their UIDs', () => {
    const a = owner({ controller: true });
    const b = owner({ uid: 'u2' });
    const result = dedupOwnerReferences({ ownerReferences: [a, b, { ...a }, { ...b }, { ...a }] });
    expect(result.ownerReferences).toEqual([a, b]);
    expect(result.warnings).toEqual([warning('u1, u2, u1')]);
  });

  it('keeps references that share a UID but differ otherwise', () => {
    const refs = [owner(), owner({ name: 'other' }), owner({ controller: false }), owner({ blockOwnerDeletion: true })];
    expect(dedupOwnerReferences({ ownerReferences: refs })).toEqual({ ownerReferences: refs, warnings: [] });
  });

  it('treats an explicit null like an absent pointer', () => {
    const result = dedupOwnerReferences({ ownerReferences: [owner(), owner({ controller: null })] });
    expect(result.ownerReferences).toEqual([owner()]);
    expect(result.warnings).toEqual([warning('u1')]);
  });
});
