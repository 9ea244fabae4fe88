/** How the converters treat the conversion-data annotation, versions and partial objects. */
import { describe, expect, it } from 'vitest';
import {
  conversionDataAnnotation,
  openStackClusterConverter,
  openStackMachineConverter as converter,
} from '../../../../src/api/infrastructure/conversion/index.js';
import type { JsonObject } from '../../../../src/storage/interface.js';
import { deepFreeze, GROUP } from './crd-schema.js';
import { annotated, FLAVOR_ID, object, stashOf, T0 } from './objects.js';

const KIND = 'OpenStackMachine';
const image = { id: 'b7c8d9e0-2222-4333-8444-555566667777' };
const lossySpoke = () =>
  object('v1beta1', KIND, { spec: { image, flavor: 'm1.small', flavorID: FLAVOR_ID } }, { annotations: { 'example.com/owner': 'team-a' } });

describe('conversion-data annotation', () => {
  it('is the key Cluster API uses', () => {
    expect(conversionDataAnnotation).toBe('cluster.x-k8s.io/conversion-data');
  });

  it('sits beside the other annotations and leaves with nothing else', () => {
    const hub = converter.toStorage(lossySpoke());
    expect((hub.metadata as JsonObject).annotations).toEqual({
      'example.com/owner': 'team-a',
      [conversionDataAnnotation]: expect.any(String),
    });
    expect(converter.fromStorage(hub, 'v1beta1').metadata).toEqual(lossySpoke().metadata);
  });

  it('is removed with the annotations map it was alone in', () => {
    const spoke = object('v1beta1', KIND, { spec: { image, flavor: 'm1.small', flavorID: FLAVOR_ID } });
    const hub = converter.toStorage(spoke);
    expect(Object.keys((hub.metadata as JsonObject).annotations as JsonObject)).toEqual([conversionDataAnnotation]);
    expect(converter.fromStorage(hub, 'v1beta1').metadata).toEqual({ name: 'capo-e2e', namespace: 'default', generation: 3 });
  });

  it('is not added when nothing is lost, and a stale one is dropped', () => {
    const spoke = object('v1beta1', KIND, { spec: { image, flavor: 'm1.small' } });
    expect(stashOf(converter.toStorage(spoke))).toBeUndefined();
    const stale = annotated(
      spoke,
      conversionDataAnnotation,
      JSON.stringify({ apiVersion: `${GROUP}/v1beta2`, kind: KIND, spec: { flavor: { id: FLAVOR_ID } } }),
    );
    // The stash says the hub had flavor.id, but the object now says flavor m1.small: the object wins.
    expect(converter.toStorage(stale)).toEqual(object('v1beta2', KIND, { spec: { image, flavor: { filter: { name: 'm1.small' } } } }));
  });

  it.each([
    ['not JSON', '{oops'],
    ['JSON that is not an object', '[1,2]'],
    ['data of another kind', JSON.stringify({ apiVersion: `${GROUP}/v1beta2`, kind: 'OpenStackCluster', spec: { flavor: { id: 'x' } } })],
    ['data of the source version', JSON.stringify({ apiVersion: `${GROUP}/v1beta1`, kind: KIND, spec: { flavor: 'x' } })],
  ])('ignores and removes data that is %s', (_, data) => {
    const spoke = object('v1beta1', KIND, { spec: { image, flavorID: FLAVOR_ID } });
    expect(converter.toStorage(annotated(spoke, conversionDataAnnotation, data))).toEqual(
      object('v1beta2', KIND, { spec: { image, flavor: { id: FLAVOR_ID } } }),
    );
  });

  it('gives a v1beta1 client back the object it wrote, through any number of reads and writes', () => {
    let spoke = lossySpoke();
    for (let i = 0; i < 3; i++) spoke = deepFreeze(converter.fromStorage(deepFreeze(converter.toStorage(spoke)), 'v1beta1'));
    expect(spoke).toEqual(lossySpoke());
  });
});

describe('versions', () => {
  const hub = object('v1beta2', KIND, { spec: { image, flavor: { id: FLAVOR_ID } } });

  it('passes the storage version through untouched', () => {
    expect(converter.toStorage(hub)).toBe(hub);
    expect(converter.fromStorage(hub, 'v1beta2')).toBe(hub);
  });

  it('sets apiVersion to the target version and leaves kind and metadata alone', () => {
    const metadata = {
      name: 'm',
      namespace: 'ns',
      uid: 'u-1',
      resourceVersion: '42',
      generation: 7,
      labels: { a: 'b' },
      finalizers: ['openstackmachine.infrastructure.cluster.x-k8s.io'],
    };
    const spoke = converter.fromStorage({ ...hub, metadata }, 'v1beta1');
    expect(spoke.apiVersion).toBe(`${GROUP}/v1beta1`);
    expect(spoke.kind).toBe(KIND);
    expect(spoke.metadata).toEqual(metadata);
  });

  it('refuses versions it does not know', () => {
    expect(() => converter.fromStorage(hub, 'v1alpha7')).toThrow(/v1alpha7/);
    expect(() => converter.toStorage({ ...hub, apiVersion: `${GROUP}/v1alpha7` })).toThrow(/v1alpha7/);
  });
});

describe('partial objects', () => {
  it.each<[string, JsonObject, JsonObject]>([
    ['no spec and no status', {}, {}],
    ['an apply configuration setting one field', { spec: { flavor: 'm1.small' } }, { spec: { flavor: { filter: { name: 'm1.small' } } } }],
    ['an empty spec and status (a status is never without ready in v1beta1)', { spec: {}, status: { ready: false } }, { spec: {}, status: {} }],
    [
      'a status with conditions only',
      { status: { ready: false, conditions: [{ type: 'Ready', status: 'Unknown', lastTransitionTime: T0, reason: 'Pending' }] } },
      { status: { conditions: [{ type: 'Ready', status: 'Unknown', lastTransitionTime: T0, reason: 'Pending', message: '', observedGeneration: 3 }] } },
    ],
  ])('%s: gets no invented fields beyond those CAPO writes', (_, spoke, hub) => {
    expect(converter.toStorage(object('v1beta1', KIND, spoke))).toEqual(object('v1beta2', KIND, hub));
    expect(converter.fromStorage(object('v1beta2', KIND, hub), 'v1beta1')).toEqual(object('v1beta1', KIND, spoke));
  });

  it('never writes to its input', () => {
    const input = object('v1beta1', 'OpenStackCluster', {
      spec: { identityRef: { name: 'c', cloudName: 'o' }, networkMTU: 1400, externalRouterIPs: [], bastion: { spec: { flavor: 'a', flavorID: 'b', image } } },
      status: {
        ready: true,
        failureDomains: { b: {}, a: { controlPlane: false } },
        conditions: [{ type: 'Ready', status: 'True', severity: 'Info', lastTransitionTime: T0 }],
      },
    });
    const copy = structuredClone(input);
    const hub = deepFreeze(openStackClusterConverter.toStorage(input));
    openStackClusterConverter.fromStorage(hub, 'v1beta1');
    expect(input).toEqual(copy);
  });
});
