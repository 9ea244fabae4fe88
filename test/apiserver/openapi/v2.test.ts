import { describe, expect, it } from 'vitest';
import { buildOpenApiV2 } from '../../../src/apiserver/openapi/v2.js';
import { GROUP, gadget, inventory } from '../schema/sample-kind.js';
import { unresolvedRefs } from './documents.js';

type Node = Record<string, any>;

const document = buildOpenApiV2([gadget, inventory]) as Node;
const model = 'io.x-k8s.cluster.infrastructure.v1beta1.Gadget';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const item = `/apis/${GROUP}/v1beta1/namespaces/{namespace}/gadgets/{name}`;

describe('buildOpenApiV2', () => {
  it('is a Swagger 2.0 document whose references all resolve into definitions', () => {
    expect(document.swagger).toBe('2.0');
    expect(unresolvedRefs(document, '#/definitions/')).toEqual([]);
    expect(JSON.stringify(document)).not.toContain('#/components/');
  });

  it('covers every served group-version and no other', () => {
    const paths = Object.keys(document.paths);
    expect(paths).toContain(`/apis/${GROUP}/v1beta1/namespaces/{namespace}/gadgets`);
    expect(paths).toContain(`/apis/${GROUP}/v1beta2/namespaces/{namespace}/gadgets`);
    expect(paths).toContain(`/apis/${GROUP}/v1beta1/inventories`);
    expect(paths.some((p) => p.includes('v1alpha1'))).toBe(false);
    expect(Object.keys(document.definitions)).toEqual(
      expect.arrayContaining([model, `${model}List`, 'io.x-k8s.cluster.infrastructure.v1beta2.Gadget', `${META}ObjectMeta`]),
    );
  });

  it('keeps the operation-level GVK and action, and consumes no strategic merge patch', () => {
    const patch = document.paths[item].patch;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: GROUP, version: 'v1beta1', kind: 'Gadget' });
    expect(patch['x-kubernetes-action']).toBe('patch');
    expect(patch.consumes).toEqual(['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
    expect(patch.produces).toEqual(['application/json', 'application/yaml']);
    expect(patch.schemes).toEqual(['https']);
  });

  it('turns request bodies into body parameters and parameter schemas into types', () => {
    const patch = document.paths[item].patch;
    expect(patch.parameters.map((p: Node) => p.name)).toEqual(['body', 'dryRun', 'fieldManager', 'fieldValidation', 'force']);
    expect(patch.parameters[0]).toEqual({ name: 'body', in: 'body', required: true, schema: { $ref: `#/definitions/${META}Patch` } });
    expect(patch.parameters[3]).toMatchObject({ name: 'fieldValidation', in: 'query', type: 'string', uniqueItems: true });
    expect(document.paths[item].delete.parameters[0]).toEqual({
      name: 'body',
      in: 'body',
      schema: { $ref: `#/definitions/${META}DeleteOptions` },
    });
    expect(document.paths[item].get.consumes).toEqual(['application/json', 'application/yaml']);
    expect(document.paths[item].parameters[0]).toMatchObject({ name: 'name', in: 'path', required: true, type: 'string' });
    expect(document.paths[item].get.responses['200']).toEqual({ description: 'OK', schema: { $ref: `#/definitions/${model}` } });
  });

  it('writes references with siblings directly, as Swagger 2.0 allows', () => {
    const metadata = document.definitions[model].properties.metadata;
    expect(metadata.$ref).toBe(`#/definitions/${META}ObjectMeta`);
    expect(metadata.description).toContain('Standard object metadata');
    expect(metadata).not.toHaveProperty('allOf');
    expect(document.definitions[model]['x-kubernetes-group-version-kind']).toEqual([{ group: GROUP, kind: 'Gadget', version: 'v1beta1' }]);
  });

  it('removes what kube removes from v2 schemas', () => {
    const spec = document.definitions[model].properties.spec;
    expect(spec.properties.size).toEqual({ description: 'Size, as a number or a quantity.', 'x-kubernetes-int-or-string': true });
    expect(spec.properties.flavor).not.toHaveProperty('default');
    expect(spec.properties.nickname).not.toHaveProperty('type');
    expect(spec.properties.nickname).not.toHaveProperty('nullable');
    expect(spec.properties.extra).not.toHaveProperty('properties');
    expect(spec.properties.extra).not.toHaveProperty('type');
    expect(spec.properties.template).toEqual({
      description: 'An object to create.',
      required: ['kind', 'apiVersion'],
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(spec.properties.ports.items.properties.protocol).toEqual({
      type: 'string',
      description: 'Transport protocol.',
      enum: ['TCP', 'UDP'],
    });
  });

  it('is empty but well formed without kinds', () => {
    expect(buildOpenApiV2([])).toEqual({
      swagger: '2.0',
      info: { title: 'Kubernetes CRD Swagger', version: 'v0.1.0' },
      paths: {},
      definitions: {},
    });
  });
});
