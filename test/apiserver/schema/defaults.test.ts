import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { StructuralSchema } from '../../../src/apiserver/schema/structural-schema.js';
import { applyDefaults } from '../../../src/apiserver/schema/defaults.js';
import { structuralSchemaOf } from '../../../src/apiserver/schema/structural.js';
import { GROUP, v1beta1 } from './sample-kind.js';

const schema = structuralSchemaOf(v1beta1);

function gadget(spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: `${GROUP}/v1beta1`, kind: 'Gadget', metadata: { name: 'g' }, spec };
}

const specOf = (object: Record<string, unknown>) => object.spec as Record<string, unknown>;

describe('applyDefaults', () => {
  it('fills absent fields, and defaults inside the defaults', () => {
    const spec = specOf(applyDefaults(gadget({ mode: 'Fast' }), schema));
    expect(spec).toEqual({ mode: 'Fast', flavor: 'm1.small', network: { id: 'default', mtu: 1500 } });
  });

  it('leaves fields that are set', () => {
    const spec = specOf(applyDefaults(gadget({ mode: 'Fast', flavor: 'big', network: { id: 'n', mtu: 9000 } }), schema));
    expect(spec).toMatchObject({ flavor: 'big', network: { id: 'n', mtu: 9000 } });
  });

  it('defaults inside existing objects only', () => {
    const spec = specOf(applyDefaults(gadget({ mode: 'Fast', network: { id: 'n' } }), schema));
    expect(spec.network).toEqual({ id: 'n', mtu: 1500 });
    expect(applyDefaults(gadget({ mode: 'Fast' }), schema)).not.toHaveProperty('status');
  });

  it('defaults list items and map values', () => {
    const spec = specOf(
      applyDefaults(
        gadget({
          mode: 'Fast',
          ports: [
            { name: 'a', port: 1 },
            { name: 'b', port: 2, protocol: 'UDP' },
          ],
          volumes: { data: {} },
        }),
        schema,
      ),
    );
    expect(spec.ports).toEqual([
      { name: 'a', port: 1, protocol: 'TCP' },
      { name: 'b', port: 2, protocol: 'UDP' },
    ]);
    expect(spec.volumes).toEqual({ data: { sizeGiB: 10 } });
  });

  it('replaces nulls of non-nullable fields with their default but keeps nullable nulls', () => {
    const spec = specOf(applyDefaults(gadget({ mode: 'Fast', flavor: null, nickname: null }), schema));
    expect(spec.flavor).toBe('m1.small');
    expect(spec.nickname).toBeNull();
    const nullable: StructuralSchema = {
      type: 'object',
      properties: { x: { type: 'string', nullable: true, default: 'd' } },
    };
    expect(applyDefaults({ x: null }, nullable)).toEqual({ x: null });
    expect(applyDefaults({}, nullable)).toEqual({ x: 'd' });
  });

  it('copies default values and leaves the input alone', () => {
    const input = gadget({ mode: 'Fast' });
    const first = applyDefaults(input, schema);
    (specOf(first).network as Record<string, unknown>).id = 'changed';
    expect(specOf(applyDefaults(input, schema)).network).toEqual({ id: 'default', mtu: 1500 });
    expect(specOf(input)).toEqual({ mode: 'Fast' });
  });

  it('works from zod defaults of any JSON type', () => {
    const version = {
      name: 'v1',
      served: true,
      storage: true,
      printerColumns: [],
      schema: z.object({ spec: z.object({ list: z.array(z.string()).default(['a']), on: z.boolean().default(false) }) }),
    };
    expect(applyDefaults({ spec: {} }, structuralSchemaOf(version))).toEqual({ spec: { list: ['a'], on: false } });
  });
});
