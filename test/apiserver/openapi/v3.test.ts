import { describe, expect, it } from 'vitest';
import { buildOpenApiV3, type Operation, type PathItem } from '../../../src/apiserver/openapi/v3.js';
import { GROUP, gadget, inventory } from '../schema/sample-kind.js';
import { explain, fieldsBelow, unresolvedRefs } from './documents.js';

const document = buildOpenApiV3(GROUP, 'v1beta1', [gadget, inventory]);
const base = `/apis/${GROUP}/v1beta1`;
const collection = `${base}/namespaces/{namespace}/gadgets`;
const item = `${collection}/{name}`;
const model = 'io.x-k8s.cluster.infrastructure.v1beta1.Gadget';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';

const path = (p: string): PathItem => document.paths[p];
const op = (p: string, method: 'get' | 'post' | 'put' | 'patch' | 'delete'): Operation => path(p)[method]!;
const paramNames = (operation: Operation) => (operation.parameters ?? []).map((p) => p.name);

describe('buildOpenApiV3', () => {
  it('is an OpenAPI 3.0 document whose references all resolve', () => {
    expect(document.openapi).toBe('3.0.0');
    expect(unresolvedRefs(document, '#/components/schemas/')).toEqual([]);
    // Nothing but JSON in it.
    expect(JSON.parse(JSON.stringify(document))).toEqual(document);
  });

  it('has the paths kube serves for the group-version, and only those', () => {
    expect(Object.keys(document.paths)).toEqual([`${base}/gadgets`, `${base}/inventories`, `${base}/inventories/{name}`, collection, item, `${item}/status`]);
    expect(Object.keys(path(collection)).sort()).toEqual(['delete', 'get', 'parameters', 'post']);
    expect(Object.keys(path(item)).sort()).toEqual(['delete', 'get', 'parameters', 'patch', 'put']);
    expect(Object.keys(path(`${item}/status`)).sort()).toEqual(['get', 'parameters', 'patch', 'put']);
  });

  it('tags every operation with its action and a single GVK object', () => {
    const actions: string[] = [];
    for (const [p, pathItem] of Object.entries(document.paths)) {
      for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
        const operation = pathItem[method];
        if (!operation) continue;
        actions.push(`${method} ${p.slice(base.length)} ${operation['x-kubernetes-action']}`);
        const kind = p.includes('inventories') ? 'Inventory' : 'Gadget';
        expect(operation['x-kubernetes-group-version-kind']).toEqual({ group: GROUP, version: 'v1beta1', kind });
      }
    }
    expect(actions).toEqual([
      'get /gadgets list',
      'get /inventories list',
      'get /inventories/{name} get',
      'get /namespaces/{namespace}/gadgets list',
      'post /namespaces/{namespace}/gadgets post',
      'delete /namespaces/{namespace}/gadgets deletecollection',
      'get /namespaces/{namespace}/gadgets/{name} get',
      'put /namespaces/{namespace}/gadgets/{name} put',
      'patch /namespaces/{namespace}/gadgets/{name} patch',
      'delete /namespaces/{namespace}/gadgets/{name} delete',
      'get /namespaces/{namespace}/gadgets/{name}/status get',
      'put /namespaces/{namespace}/gadgets/{name}/status put',
      'patch /namespaces/{namespace}/gadgets/{name}/status patch',
    ]);
  });

  it('accepts JSON, merge and apply patches, never strategic merge patches', () => {
    for (const p of [item, `${item}/status`]) {
      expect(Object.keys(op(p, 'patch').requestBody!.content)).toEqual([
        'application/json-patch+json',
        'application/merge-patch+json',
        'application/apply-patch+yaml',
      ]);
      expect(op(p, 'patch').requestBody!.content['application/apply-patch+yaml'].schema).toEqual({
        $ref: `#/components/schemas/${META}Patch`,
      });
    }
  });

  it('declares the write parameters on the PATCH operation itself, where kubectl looks for fieldValidation', () => {
    expect(paramNames(op(item, 'patch'))).toEqual(['dryRun', 'fieldManager', 'fieldValidation', 'force']);
    expect(op(item, 'patch').parameters!.find((p) => p.name === 'fieldValidation')).toMatchObject({
      in: 'query',
      schema: { type: 'string', uniqueItems: true },
    });
    expect(paramNames(op(collection, 'post'))).toEqual(['dryRun', 'fieldManager', 'fieldValidation']);
    expect(paramNames(op(item, 'put'))).toEqual(['dryRun', 'fieldManager', 'fieldValidation']);
    expect(paramNames(op(item, 'delete'))).toEqual([
      'dryRun',
      'gracePeriodSeconds',
      'ignoreStoreReadErrorWithClusterBreakingPotential',
      'orphanDependents',
      'propagationPolicy',
    ]);
    expect(paramNames(op(item, 'get'))).toEqual(['resourceVersion']);
  });

  it('declares list parameters, and parameters every operation shares on the path', () => {
    const listParameters = [
      'allowWatchBookmarks',
      'continue',
      'fieldSelector',
      'labelSelector',
      'limit',
      'resourceVersion',
      'resourceVersionMatch',
      'sendInitialEvents',
      'timeoutSeconds',
      'watch',
    ];
    expect(paramNames(op(collection, 'get'))).toEqual(listParameters);
    expect(path(collection).parameters!.map((p) => `${p.in}:${p.name}`)).toEqual(['path:namespace', 'query:pretty']);
    expect(path(item).parameters!.map((p) => `${p.in}:${p.name}`)).toEqual(['path:name', 'path:namespace', 'query:pretty']);
    expect(path(item).parameters![0]).toMatchObject({ required: true, description: 'name of the Gadget' });
    // A path with one operation keeps all of them on the path.
    expect(path(`${base}/gadgets`).parameters!.map((p) => p.name)).toEqual([...listParameters, 'pretty'].sort());
    expect(op(`${base}/gadgets`, 'get').parameters).toBeUndefined();
    const types = Object.fromEntries(path(`${base}/gadgets`).parameters!.map((p) => [p.name, p.schema.type]));
    expect(types).toMatchObject({ watch: 'boolean', limit: 'integer', timeoutSeconds: 'integer', labelSelector: 'string' });
  });

  it('names operations and tags them as kube-apiserver does', () => {
    const prefix = 'InfrastructureClusterXK8sIoV1beta1';
    expect(op(`${base}/gadgets`, 'get').operationId).toBe(`list${prefix}GadgetForAllNamespaces`);
    expect(op(collection, 'get').operationId).toBe(`list${prefix}NamespacedGadget`);
    expect(op(collection, 'delete').operationId).toBe(`delete${prefix}CollectionNamespacedGadget`);
    expect(op(item, 'patch').operationId).toBe(`patch${prefix}NamespacedGadget`);
    expect(op(`${item}/status`, 'put').operationId).toBe(`replace${prefix}NamespacedGadgetStatus`);
    expect(op(`${base}/inventories/{name}`, 'get').operationId).toBe(`read${prefix}Inventory`);
    expect(op(item, 'get').tags).toEqual(['infrastructureClusterXK8sIo_v1beta1']);
    expect(op(collection, 'post').description).toBe('create a Gadget');
    expect(op(`${item}/status`, 'patch').description).toBe('partially update status of the specified Gadget');
  });

  it('answers with the kind, its list or a Status', () => {
    const schemaOf = (o: Operation, code: string) => o.responses[code].content!['application/json'].schema.$ref;
    expect(schemaOf(op(collection, 'get'), '200')).toBe(`#/components/schemas/${model}List`);
    expect(Object.keys(op(collection, 'post').responses)).toEqual(['200', '201', '202', '401']);
    expect(schemaOf(op(collection, 'post'), '201')).toBe(`#/components/schemas/${model}`);
    expect(schemaOf(op(item, 'delete'), '200')).toBe(`#/components/schemas/${META}Status`);
    expect(op(item, 'get').responses['401']).toEqual({ description: 'Unauthorized' });
    expect(op(collection, 'post').requestBody).toMatchObject({ required: true });
    expect(op(item, 'delete').requestBody).not.toHaveProperty('required');
  });

  it('publishes each kind and its list under CRD-style names with a GVK list', () => {
    const schemas = document.components.schemas;
    expect(schemas[model]['x-kubernetes-group-version-kind']).toEqual([{ group: GROUP, kind: 'Gadget', version: 'v1beta1' }]);
    expect(schemas[`${model}List`]).toMatchObject({
      type: 'object',
      required: ['items'],
      properties: { items: { type: 'array', items: { $ref: `#/components/schemas/${model}` } } },
      'x-kubernetes-group-version-kind': [{ group: GROUP, kind: 'GadgetList', version: 'v1beta1' }],
    });
    expect(schemas[model].description).toBe('Gadget is a sample kind for tests.');
  });

  it('refers to ObjectMeta through allOf, with the field description beside it', () => {
    const properties = document.components.schemas[model].properties as Record<string, Record<string, unknown>>;
    expect(properties.metadata).toEqual({
      allOf: [{ $ref: `#/components/schemas/${META}ObjectMeta` }],
      description: expect.stringContaining('Standard object metadata'),
    });
    expect(properties.apiVersion).toMatchObject({ type: 'string' });
  });

  it('carries the self-contained meta/v1 schemas', () => {
    for (const name of [
      'ObjectMeta',
      'ListMeta',
      'ManagedFieldsEntry',
      'OwnerReference',
      'Time',
      'FieldsV1',
      'Status',
      'StatusDetails',
      'StatusCause',
      'DeleteOptions',
      'Preconditions',
      'WatchEvent',
      'Patch',
    ]) {
      expect(document.components.schemas).toHaveProperty([`${META}${name}`]);
    }
    const objectMeta = document.components.schemas[`${META}ObjectMeta`] as { properties: Record<string, unknown> };
    expect(objectMeta.properties.ownerReferences).toMatchObject({
      type: 'array',
      items: { $ref: `#/components/schemas/${META}OwnerReference` },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['uid'],
    });
    expect(objectMeta.properties.creationTimestamp).toMatchObject({
      allOf: [{ $ref: `#/components/schemas/${META}Time` }],
    });
    expect(objectMeta.properties.finalizers).toMatchObject({ 'x-kubernetes-list-type': 'set' });
  });

  it('writes the x-kubernetes extensions as CRDs do', () => {
    const spec = document.components.schemas[model].properties as Record<string, Record<string, Record<string, unknown>>>;
    const fields = spec.spec.properties as unknown as Record<string, Record<string, unknown>>;
    expect(fields.size).toEqual({
      description: 'Size, as a number or a quantity.',
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      'x-kubernetes-int-or-string': true,
    });
    expect(fields.ports).toMatchObject({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] });
    expect(spec.spec['x-kubernetes-validations']).toHaveLength(1);
    expect(fields.template).toMatchObject({
      'x-kubernetes-embedded-resource': true,
      required: ['kind', 'apiVersion'],
      properties: { metadata: { allOf: [{ $ref: `#/components/schemas/${META}ObjectMeta` }] } },
    });
  });

  it('only contains served versions, each with its own schema', () => {
    const v1beta2 = buildOpenApiV3(GROUP, 'v1beta2', [gadget, inventory]);
    expect(Object.keys(v1beta2.paths)).toContain(`/apis/${GROUP}/v1beta2/namespaces/{namespace}/gadgets`);
    expect(Object.keys(v1beta2.paths).some((p) => p.includes('inventories'))).toBe(false);
    const spec = (v1beta2.components.schemas['io.x-k8s.cluster.infrastructure.v1beta2.Gadget'].properties as Record<string, Record<string, unknown>>).spec;
    expect(Object.keys(spec.properties as object)).toEqual(['mode']);
    expect(buildOpenApiV3(GROUP, 'v1alpha1', [gadget]).paths).toEqual({});
  });

  it('lets kubectl explain find the kind and its fields', () => {
    expect(explain(document, GROUP, 'v1beta1', 'gadgets', [])).toBe(document.components.schemas[model]);
    expect(explain(document, GROUP, 'v1beta1', 'gadgets', ['spec', 'mode'])).toMatchObject({
      description: 'How the gadget spins.',
      enum: ['Fast', 'Slow'],
    });
    expect(explain(document, GROUP, 'v1beta1', 'gadgets', ['spec', 'ports', 'port'])).toMatchObject({
      description: 'Port number.',
    });
    expect(explain(document, GROUP, 'v1beta1', 'gadgets', ['metadata', 'ownerReferences', 'uid'])).toMatchObject({
      type: 'string',
    });
    expect(explain(document, GROUP, 'v1beta1', 'inventories', ['items'])).toMatchObject({ type: 'array' });
    expect(explain(document, GROUP, 'v1beta1', 'gadgets', ['spec', 'nope'])).toBeUndefined();
  });

  it('lets kubectl explain --recursive walk every field', () => {
    const fields = fieldsBelow(document, document.components.schemas[model]);
    expect(fields).toEqual(
      expect.arrayContaining([
        'apiVersion',
        'metadata.managedFields.fieldsV1',
        'metadata.ownerReferences.blockOwnerDeletion',
        'spec.network.mtu',
        'spec.volumes.sizeGiB',
        'status.conditions.type',
      ]),
    );
  });
});
