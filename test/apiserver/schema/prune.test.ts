import { describe, expect, it } from 'vitest';
import { pruneUnknownFields } from '../../../src/apiserver/schema/prune.js';
import { structuralSchemaOf } from '../../../src/apiserver/schema/structural.js';
import { sampleGadget, v1beta1 } from './sample-kind.js';

const schema = structuralSchemaOf(v1beta1);

describe('pruneUnknownFields', () => {
  it('keeps a valid object as it is', () => {
    const object = sampleGadget({ ports: [{ name: 'http', port: 80 }], labels: { a: 'b' } });
    expect(pruneUnknownFields(object, schema)).toEqual({ object, unknownFields: [] });
  });

  it('drops unknown fields and names them as kube strict decoding does', () => {
    const object = sampleGadget({
      bogus: 1,
      ports: [
        { name: 'http', port: 80 },
        { name: 'https', port: 443, extra: true },
      ],
      network: { id: 'n', mtu: 1500, vlan: 3 },
      volumes: { data: { sizeGiB: 5, tier: 'gold' } },
    });
    object.status = { ready: true, phase: 'Up' };
    object.topLevel = 'x';
    const { object: pruned, unknownFields } = pruneUnknownFields(object, schema);
    expect(unknownFields).toEqual(['spec.bogus', 'spec.network.vlan', 'spec.ports[1].extra', 'spec.volumes.data.tier', 'status.phase', 'topLevel']);
    const expected = sampleGadget({
      ports: [
        { name: 'http', port: 80 },
        { name: 'https', port: 443 },
      ],
      network: { id: 'n', mtu: 1500 },
      volumes: { data: { sizeGiB: 5 } },
    });
    expect(pruned).toEqual({ ...expected, status: { ready: true } });
  });

  it('leaves the input alone', () => {
    const object = sampleGadget({ bogus: 1 });
    pruneUnknownFields(object, schema);
    expect((object.spec as Record<string, unknown>).bogus).toBe(1);
  });

  it('prunes metadata against ObjectMeta and reports it first', () => {
    const object = sampleGadget({ zzz: 1 });
    object.metadata = {
      name: 'g',
      labels: { app: 'x' },
      color: 'red',
      ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 's', uid: 'u', weight: 2 }],
      managedFields: [{ manager: 'm', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:mode': {} } } }],
    };
    const { object: pruned, unknownFields } = pruneUnknownFields(object, schema);
    expect(unknownFields).toEqual(['metadata.color', 'metadata.ownerReferences[0].weight', 'spec.zzz']);
    expect(pruned.metadata).toEqual({
      name: 'g',
      labels: { app: 'x' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 's', uid: 'u' }],
      managedFields: [{ manager: 'm', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:mode': {} } } }],
    });
  });

  it('keeps apiVersion and kind of the object whatever they hold', () => {
    const object = { ...sampleGadget(), apiVersion: 'other/v9', kind: 'Other' };
    expect(pruneUnknownFields(object, schema).object).toEqual(object);
  });

  it('keeps unknown fields under x-kubernetes-preserve-unknown-fields', () => {
    const object = sampleGadget({ extra: { known: 'k', anything: { deep: [1, 2] } } });
    expect(pruneUnknownFields(object, schema)).toEqual({ object, unknownFields: [] });
  });

  it('keeps embedded resources whole but prunes their metadata, reported last', () => {
    const object = sampleGadget({
      template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', shoeSize: 44 }, data: { a: 'b' } },
      zzz: true,
    });
    const { object: pruned, unknownFields } = pruneUnknownFields(object, schema);
    expect(unknownFields).toEqual(['spec.zzz', 'spec.template.metadata.shoeSize']);
    expect((pruned.spec as Record<string, unknown>).template).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm' },
      data: { a: 'b' },
    });
  });

  it('removes nulls of non-nullable fields that have no default, as kube decoding does', () => {
    const object = sampleGadget({ replicas: null, nickname: null, flavor: null, labels: { a: null } });
    const spec = pruneUnknownFields(object, schema).object.spec as Record<string, unknown>;
    expect(spec).not.toHaveProperty('replicas');
    expect(spec.nickname).toBeNull();
    // The default fills it in later.
    expect(spec.flavor).toBeNull();
    expect(spec.labels).toEqual({});
  });
});
