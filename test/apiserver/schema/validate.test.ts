import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errors } from '../../../src/apiserver/errors.js';
import type { KindVersion } from '../../../src/apiserver/registry/kind.js';
import { validateAgainstSchema } from '../../../src/apiserver/schema/validate.js';
import { GROUP, sampleGadget, v1beta1 } from './sample-kind.js';

/** kube's `field: body` texts for an object whose spec is the sample spec plus `spec`. */
function check(spec: Record<string, unknown>, version: KindVersion = v1beta1): string[] {
  return validateAgainstSchema(version, sampleGadget(spec)).map((e) => e.toString());
}

const SKIPPED_RULES =
  '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

/** The sample kind has CEL rules, so kube adds a notice after every blocking error. */
const blocking = (...lines: string[]): string[] => [...lines, SKIPPED_RULES];

describe('validateAgainstSchema', () => {
  it('accepts a valid object', () => {
    expect(
      check({
        replicas: 2,
        name: 'web-1',
        nickname: null,
        ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
        tags: ['a', 'b'],
        size: '10Gi',
        labels: { a: 'b' },
        contact: 'ops@example.com',
        template: { apiVersion: 'v1', kind: 'ConfigMap', anything: true },
      }),
    ).toEqual([]);
    expect(check({ size: 3 })).toEqual([]);
  });

  it('reports a missing required field', () => {
    const object = sampleGadget();
    delete (object.spec as Record<string, unknown>).mode;
    expect(validateAgainstSchema(v1beta1, object).map(String)).toEqual(blocking('spec.mode: Required value'));
    const { spec: _spec, ...withoutSpec } = sampleGadget();
    expect(validateAgainstSchema(v1beta1, withoutSpec).map(String)).toEqual(blocking('spec: Required value'));
  });

  it('reports an enum violation with the supported values', () => {
    expect(check({ mode: 'Medium' })).toEqual(blocking('spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow"'));
  });

  it('reports a type mismatch the way kube-openapi words it', () => {
    expect(check({ replicas: '3' })).toEqual(blocking('spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"'));
    expect(check({ replicas: 1.5 })).toEqual(blocking('spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"'));
    expect(check({ network: 'n' })).toEqual(blocking('spec.network: Invalid value: "string": spec.network in body must be of type object: "string"'));
    expect(check({ size: true })).toEqual(blocking('spec.size: Invalid value: "boolean": spec.size in body must be of type integer,string: "boolean"'));
    expect(check({ tags: ['a', 7] })).toEqual(blocking('spec.tags[1]: Invalid value: "integer": spec.tags[1] in body must be of type string: "integer"'));
  });

  it('names map values with dots, as kube-openapi does', () => {
    expect(check({ labels: { app: 1 } })).toEqual(
      blocking('spec.labels.app: Invalid value: "integer": spec.labels.app in body must be of type string: "integer"'),
    );
  });

  it('reports a pattern mismatch', () => {
    expect(check({ name: 'Bad' })).toEqual(['spec.name: Invalid value: "Bad": spec.name in body should match \'^[a-z][a-z0-9-]*$\'']);
  });

  it('reports lengths', () => {
    expect(check({ name: 'abcdefghijk' })).toEqual(blocking('spec.name: Too long: may not be more than 10 bytes'));
    expect(check({ nickname: '' })).toEqual(['spec.nickname: Invalid value: "": spec.nickname in body should be at least 1 chars long']);
  });

  it('reports bounds', () => {
    expect(check({ replicas: 0 })).toEqual(['spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1']);
    expect(check({ ports: [{ name: 'a', port: 70000 }] })).toEqual([
      'spec.ports[0].port: Invalid value: 70000: spec.ports[0].port in body should be less than or equal to 65535',
    ]);
  });

  it('reports too many items, and still checks the items', () => {
    const ports = [1, 2, 3, 4].map((port) => ({ name: `p${port}`, port }));
    ports[3].port = 0;
    expect(check({ ports })).toEqual(
      blocking(
        'spec.ports[3].port: Invalid value: 0: spec.ports[3].port in body should be greater than or equal to 1',
        'spec.ports: Too many: 4: must have at most 3 items',
      ),
    );
  });

  it('reports duplicates in map and set lists', () => {
    const ports = [
      { name: 'a', port: 1 },
      { name: 'a', port: 2 },
      { name: 'a', port: 3 },
    ];
    expect(check({ ports, tags: ['x', 'y', 'x'] })).toEqual(['spec.ports[1]: Duplicate value: {"name":"a"}', 'spec.tags[2]: Duplicate value: "x"']);
  });

  it('reports a known string format by name', () => {
    expect(check({ contact: 'nobody' })).toEqual(blocking('spec.contact: Invalid value: "nobody": spec.contact in body must be of type email: "nobody"'));
  });

  it('reports an int32 out of range as kube-openapi does', () => {
    expect(check({ count32: 2 ** 31 })).toEqual(['<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.count32']);
  });

  it('reports a failed refinement like a failed CEL rule, leaving out object values', () => {
    expect(check({ mode: 'Slow', replicas: 3 })).toEqual(['spec: Invalid value: slow gadgets run a single replica']);
    expect(check({ motto: 'forbidden' })).toEqual(['spec.motto: Invalid value: "forbidden": the motto must not be forbidden']);
  });

  it('still runs refinements after non-blocking errors', () => {
    expect(check({ mode: 'Slow', replicas: 3, name: 'Bad' })).toEqual([
      'spec.name: Invalid value: "Bad": spec.name in body should match \'^[a-z][a-z0-9-]*$\'',
      'spec: Invalid value: slow gadgets run a single replica',
    ]);
  });

  it('skips refinements after a blocking error, and says so', () => {
    expect(check({ mode: 'Slow', replicas: 3, size: true })).toEqual([
      'spec.size: Invalid value: "boolean": spec.size in body must be of type integer,string: "boolean"',
      SKIPPED_RULES,
    ]);
  });

  it('leaves metadata, apiVersion and kind to others', () => {
    const object = { ...sampleGadget(), apiVersion: 7, metadata: { name: 3 } };
    expect(validateAgainstSchema(v1beta1, object)).toEqual([]);
  });

  it('falls back on zod for what the structural schema cannot say', () => {
    const version: KindVersion = {
      name: 'v1',
      served: true,
      storage: true,
      printerColumns: [],
      schema: z.object({
        spec: z.object({
          code: z
            .string()
            .regex(/^[a-z]+$/)
            .regex(/^.{3}$/),
        }),
      }),
    };
    const object = (code: string) => ({ apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: {}, spec: { code } });
    expect(validateAgainstSchema(version, object('abcd')).map(String)).toEqual(['spec.code: Invalid value: "abcd": spec.code in body should match \'^.{3}$\'']);
  });

  it('produces causes and a message errors.invalid renders like kube', () => {
    const error = errors.invalid(GROUP, 'Gadget', 'g', validateAgainstSchema(v1beta1, sampleGadget({ mode: 'Medium', replicas: 0 })));
    expect(error.message).toBe(
      'Gadget.infrastructure.cluster.x-k8s.io "g" is invalid: [spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow", ' +
        'spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1, ' +
        SKIPPED_RULES +
        ']',
    );
    expect(error.details?.causes?.[0]).toEqual({
      reason: 'FieldValueNotSupported',
      message: 'Unsupported value: "Medium": supported values: "Fast", "Slow"',
      field: 'spec.mode',
    });
  });
});
