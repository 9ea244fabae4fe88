import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { KindVersion } from '../../../src/apiserver/registry/kind.js';
import type { StructuralSchema } from '../../../src/apiserver/schema/structural-schema.js';
import { objectMetaSchema } from '../../../src/apiserver/schema/objectmeta.js';
import { structuralSchemaOf } from '../../../src/apiserver/schema/structural.js';
import { v1beta1 } from './sample-kind.js';

function version(schema: z.ZodObject): KindVersion {
  return { name: 'v1', served: true, storage: true, schema, printerColumns: [] };
}

const root = structuralSchemaOf(v1beta1);
const spec = root.properties!.spec;
const field = (name: string): StructuralSchema => spec.properties![name];

describe('structuralSchemaOf', () => {
  it('describes the whole object: type meta, ObjectMeta and the version fields', () => {
    expect(root.type).toBe('object');
    expect(root.description).toBe('Gadget is a sample kind for tests.');
    expect(Object.keys(root.properties!)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect(root.properties!.apiVersion.type).toBe('string');
    expect(root.properties!.kind.type).toBe('string');
    expect(root.properties!.metadata).toBe(objectMetaSchema);
    expect(root.required).toEqual(['spec']);
  });

  it('is computed once per version object', () => {
    expect(structuralSchemaOf(v1beta1)).toBe(root);
  });

  it('keeps descriptions, enums, patterns, lengths and real bounds', () => {
    expect(field('mode')).toEqual({ type: 'string', description: 'How the gadget spins.', enum: ['Fast', 'Slow'] });
    expect(field('name')).toMatchObject({ type: 'string', pattern: '^[a-z][a-z0-9-]*$', maxLength: 10 });
    expect(field('ports').maxItems).toBe(3);
  });

  it('drops the safe-integer bounds zod adds to every integer', () => {
    expect(field('replicas')).toEqual({ type: 'integer', description: 'How many copies run.', minimum: 1 });
    expect(field('ports').items!.properties!.port).toMatchObject({ minimum: 1, maximum: 65535 });
    expect(field('network').properties!.mtu).not.toHaveProperty('maximum');
  });

  it('turns the int32 range into format int32', () => {
    expect(field('count32')).toEqual({ type: 'integer', format: 'int32', description: 'A 32-bit counter.' });
  });

  it('turns a union of integer and string into x-kubernetes-int-or-string', () => {
    expect(field('size')).toEqual({
      description: 'Size, as a number or a quantity.',
      'x-kubernetes-int-or-string': true,
    });
  });

  it('marks nullable fields and keeps defaults out of required', () => {
    expect(field('nickname')).toMatchObject({ type: 'string', nullable: true, minLength: 1 });
    expect(field('flavor')).toMatchObject({ default: 'm1.small' });
    expect(spec.required).toEqual(['mode']);
    expect(field('network').default).toEqual({ id: 'default', mtu: 1500 });
  });

  it('passes the x-kubernetes extensions through', () => {
    expect(field('ports')).toMatchObject({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] });
    expect(field('tags')).toMatchObject({ 'x-kubernetes-list-type': 'set', items: { type: 'string' } });
    expect(field('template')).toMatchObject({
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(spec['x-kubernetes-validations']).toEqual([
      {
        rule: "self.mode != 'Slow' || !has(self.replicas) || self.replicas <= 1",
        message: 'slow gadgets run a single replica',
      },
    ]);
  });

  it('writes maps as additionalProperties and loose objects as preserve-unknown-fields', () => {
    expect(field('labels')).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
    expect(field('volumes').additionalProperties).toMatchObject({ properties: { sizeGiB: { default: 10 } } });
    expect(field('extra')).toMatchObject({ properties: { known: { type: 'string' } } });
    expect(field('extra')['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(field('extra')).not.toHaveProperty('additionalProperties');
  });

  it('keeps a known format instead of the pattern zod spells it with', () => {
    expect(field('contact')).toEqual({ type: 'string', format: 'email', description: 'Who to call.' });
  });

  it('never says additionalProperties: false', () => {
    const strict = structuralSchemaOf(version(z.object({ spec: z.strictObject({ a: z.string() }) })));
    expect(strict.properties!.spec).toEqual({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] });
  });

  it('lets values of any shape preserve unknown fields', () => {
    const any = structuralSchemaOf(version(z.object({ spec: z.object({ raw: z.unknown(), map: z.record(z.string(), z.unknown()) }) })));
    expect(any.properties!.spec.properties!.raw).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    expect(any.properties!.spec.properties!.map).toEqual({
      type: 'object',
      additionalProperties: { 'x-kubernetes-preserve-unknown-fields': true },
    });
  });

  it('inlines schemas registered with an id and merges unions of literals', () => {
    const shared = z.object({ x: z.string() }).meta({ id: 'Shared', description: 'shared' });
    const schema = structuralSchemaOf(version(z.object({ a: shared.optional(), b: z.array(shared), c: z.union([z.literal('p'), z.literal('q')]) })));
    expect(schema.properties!.a).toEqual({
      type: 'object',
      description: 'shared',
      properties: { x: { type: 'string' } },
      required: ['x'],
    });
    expect(schema.properties!.b.items).toEqual(schema.properties!.a);
    expect(schema.properties!.c).toEqual({ type: 'string', enum: ['p', 'q'] });
  });

  it('rejects schemas that are not structural, naming the field', () => {
    const union = version(z.object({ spec: z.object({ either: z.union([z.string(), z.object({ a: z.string() })]) }) }));
    expect(() => structuralSchemaOf(union)).toThrow(/v1\.spec\.either.*union/);
    const tuple = version(z.object({ pair: z.tuple([z.string(), z.boolean()]) }));
    expect(() => structuralSchemaOf(tuple)).toThrow(/v1\.pair\[\]/);
    const catchall = version(z.object({ spec: z.object({ a: z.string() }).catchall(z.string()) }));
    expect(() => structuralSchemaOf(catchall)).toThrow(/both properties and additionalProperties/);
  });
});
