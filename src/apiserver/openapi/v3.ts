/**
 * The OpenAPI v3 document of one group-version, shaped like the document
 * kube-apiserver publishes for CRDs (and, for the core group "", like
 * /openapi/v3/api/v1): what kubectl explain, kubectl's detection of
 * server-side field validation and kubectl apply's choice of patch type read.
 *
 * - every operation names its kind in `x-kubernetes-group-version-kind` (one
 *   object) and its action in `x-kubernetes-action`;
 * - each kind's schema (and its List's) sits in components.schemas under the
 *   CRD-style name, with `x-kubernetes-group-version-kind` as a list;
 * - the meta/v1 schemas they refer to are in the document too, so every $ref
 *   resolves locally;
 * - PATCH accepts JSON patch, merge patch and apply patch; strategic merge
 *   patch only for built-in kinds (kubectl sends one where it is listed,
 *   computed from the x-kubernetes-patch-* extensions of the schemas).
 */
import type { KindDefinition, KindVersion, Verb } from '../registry/kind.js';
import { countBoundKeys, extensionKeys, type StructuralSchema } from '../schema/structural-schema.js';
import { metaTypeOf, metaTypes, typeMetaSchemas, type MetaTypeName } from '../schema/objectmeta.js';
import { structuralSchemaOf } from '../schema/structural.js';

export type JsonNode = { [key: string]: unknown };

type Action = 'list' | 'post' | 'deletecollection' | 'get' | 'put' | 'patch' | 'delete';
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

type GroupVersionKind = { group: string; version: string; kind: string };

export type Parameter = {
  name: string;
  in: 'path' | 'query';
  description: string;
  required?: true;
  schema: { type: 'string' | 'integer' | 'boolean'; uniqueItems: true };
};

type MediaTypes = Record<string, { schema: { $ref: string } }>;

export type Operation = {
  description: string;
  operationId: string;
  tags: string[];
  parameters?: Parameter[];
  requestBody?: { content: MediaTypes; required?: true };
  responses: Record<string, { description: string; content?: MediaTypes }>;
  'x-kubernetes-action': Action;
  'x-kubernetes-group-version-kind': GroupVersionKind;
};

export type PathItem = { parameters?: Parameter[] } & { [method in Method]?: Operation };

export type OpenApiV3Document = {
  openapi: '3.0.0';
  info: { title: string; version: string };
  paths: Record<string, PathItem>;
  components: { schemas: Record<string, JsonNode> };
};

/** The name prefix of apimachinery's meta/v1 schemas. */
const META_V1 = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const SCHEMAS = '#/components/schemas/';

export function buildOpenApiV3(group: string, version: string, kinds: KindDefinition[]): OpenApiV3Document {
  const paths: Record<string, PathItem> = {};
  const schemas = metaSchemas();
  for (const kind of kinds) {
    const served = kind.group === group ? kind.versions.find((v) => v.name === version && v.served) : undefined;
    if (!served) continue;
    Object.assign(paths, pathItems(kind, version));
    schemas[modelName(group, version, kind.kind)] = kindSchema(kind, served);
    schemas[modelName(group, version, listKindOf(kind))] = listSchema(kind, version);
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes CRD Swagger', version: 'v0.1.0' },
    paths: sortedByKey(paths),
    components: { schemas: sortedByKey(schemas) },
  };
}

/** CRD-style schema name: the group's segments reversed, then version and kind; kube's own name in the core group. */
function modelName(group: string, version: string, kind: string): string {
  if (group === '') return `io.k8s.api.core.${version}.${kind}`;
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

function listKindOf(kind: KindDefinition): string {
  return kind.listKind ?? `${kind.kind}List`;
}

function ref(name: string): { $ref: string } {
  return { $ref: SCHEMAS + name };
}

/** A $ref cannot have siblings in OpenAPI 3.0, so a described reference wraps it in allOf. */
function described(name: string, description: string | undefined): JsonNode {
  return description === undefined ? ref(name) : { allOf: [ref(name)], description };
}

// Schemas

function kindSchema(kind: KindDefinition, version: KindVersion): JsonNode {
  return {
    ...render(structuralSchemaOf(version)),
    'x-kubernetes-group-version-kind': [{ group: kind.group, kind: kind.kind, version: version.name }],
  };
}

function listSchema(kind: KindDefinition, version: string): JsonNode {
  const listKind = listKindOf(kind);
  return {
    description: `${listKind} is a list of ${kind.kind}`,
    type: 'object',
    properties: {
      apiVersion: render(typeMetaSchemas.apiVersion),
      items: {
        description: `List of ${kind.plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        type: 'array',
        items: ref(modelName(kind.group, version, kind.kind)),
      },
      kind: render(typeMetaSchemas.kind),
      metadata: described(
        `${META_V1}ListMeta`,
        'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
      ),
    },
    required: ['items'],
    'x-kubernetes-group-version-kind': [{ group: kind.group, kind: listKind, version }],
  };
}

const PLAIN_KEYS = [
  'type',
  'format',
  'description',
  'nullable',
  'enum',
  'default',
  'pattern',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  ...countBoundKeys,
] as const satisfies readonly (keyof StructuralSchema)[];

const EXTENSION_KEYS = ['x-kubernetes-int-or-string', ...extensionKeys] as const;

/** A structural schema as published; uses of meta/v1 types become references (except at a definition's root). */
function render(schema: StructuralSchema, isDefinition = false): JsonNode {
  const named = isDefinition ? undefined : metaTypeOf(schema);
  if (named) {
    const own = schema.description === metaTypes[named].description ? undefined : schema.description;
    return described(META_V1 + named, own);
  }
  const out: JsonNode = {};
  for (const key of PLAIN_KEYS) if (schema[key] !== undefined) out[key] = schema[key];
  const properties: Record<string, JsonNode> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) properties[name] = render(property);
  const required = [...(schema.required ?? [])];
  if (schema['x-kubernetes-embedded-resource']) {
    // As kube does for embedded resources: their type and object metadata are spelled out.
    properties.apiVersion = render(typeMetaSchemas.apiVersion);
    properties.kind = render(typeMetaSchemas.kind);
    properties.metadata = described(
      `${META_V1}ObjectMeta`,
      'Standard object metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
    );
    for (const name of ['kind', 'apiVersion']) if (!required.includes(name)) required.push(name);
  }
  if (Object.keys(properties).length > 0) out.properties = properties;
  if (required.length > 0) out.required = required;
  if (schema.items) out.items = render(schema.items);
  if (schema.additionalProperties !== undefined) {
    out.additionalProperties = typeof schema.additionalProperties === 'boolean' ? schema.additionalProperties : render(schema.additionalProperties);
  }
  if (schema['x-kubernetes-int-or-string']) out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  for (const key of EXTENSION_KEYS) if (schema[key] !== undefined) out[key] = schema[key];
  return out;
}

function metaSchemas(): Record<string, JsonNode> {
  const schemas: Record<string, JsonNode> = {};
  for (const [name, schema] of Object.entries(metaTypes) as [MetaTypeName, StructuralSchema][]) {
    schemas[META_V1 + name] = render(schema, true);
  }
  const string = (description: string): JsonNode => ({ type: 'string', description });
  const integer = (format: 'int32' | 'int64', description: string): JsonNode => ({ type: 'integer', format, description });
  const typeMeta = { apiVersion: render(typeMetaSchemas.apiVersion), kind: render(typeMetaSchemas.kind) };
  const listMetadata = described(`${META_V1}ListMeta`, 'Standard list metadata.');

  schemas[`${META_V1}ListMeta`] = {
    description: 'Metadata of lists and of other responses that are not stored objects.',
    type: 'object',
    properties: {
      continue: string(
        'Set when the list was cut short by a limit: pass it as the continue parameter to get the next chunk. ' +
          'It can expire; the list then has to be started over without it.',
      ),
      remainingItemCount: integer('int64', 'Estimated number of items after this chunk. Only set for chunked lists without selectors, and not exact.'),
      resourceVersion: string('Version of the store the list was read at. Opaque to clients; pass it back to watch from that point.'),
      selfLink: string('Deprecated and no longer set by the server.'),
    },
  };
  schemas[`${META_V1}Status`] = {
    description: 'Result of a call that returns no object of its own, such as a failure or a deletion.',
    type: 'object',
    properties: {
      ...typeMeta,
      code: integer('int32', 'Suggested HTTP status code; 0 when not set.'),
      details: described(
        `${META_V1}StatusDetails`,
        'More data about the reason. Which fields are set depends on the reason; clients must not rely on a fixed shape.',
      ),
      message: string('Human-readable description of what happened.'),
      metadata: listMetadata,
      reason: string('Machine-readable cause of a failure, such as NotFound or Conflict; empty when none applies.'),
      status: string('Outcome of the call: "Success" or "Failure".'),
    },
  };
  schemas[`${META_V1}StatusDetails`] = {
    description: 'More data about a Status, for clients that act on its reason.',
    type: 'object',
    properties: {
      causes: {
        description: 'The individual problems behind the failure, such as one per invalid field.',
        type: 'array',
        items: ref(`${META_V1}StatusCause`),
        'x-kubernetes-list-type': 'atomic',
      },
      group: string('API group of the resource concerned, if any.'),
      kind: string('Kind of the resource concerned; it can differ from the kind the request was about.'),
      name: string('Name of the resource concerned, when there is one.'),
      retryAfterSeconds: integer('int32', 'Seconds to wait before retrying, when a retry makes sense.'),
      uid: string('UID of the resource concerned, when there is one.'),
    },
  };
  schemas[`${META_V1}StatusCause`] = {
    description: 'One problem behind a failed request.',
    type: 'object',
    properties: {
      field: string('Path of the field at fault, such as spec.ports[0].name; may be empty.'),
      message: string('Human-readable description of the problem.'),
      reason: string('Machine-readable kind of problem, such as FieldValueInvalid; empty when unknown.'),
    },
  };
  schemas[`${META_V1}DeleteOptions`] = {
    description: 'Options of a delete request.',
    type: 'object',
    properties: {
      ...typeMeta,
      dryRun: {
        description: QUERY_PARAMETERS.dryRun.description,
        type: 'array',
        items: { type: 'string' },
        'x-kubernetes-list-type': 'atomic',
      },
      gracePeriodSeconds: integer('int64', QUERY_PARAMETERS.gracePeriodSeconds.description),
      ignoreStoreReadErrorWithClusterBreakingPotential: {
        type: 'boolean',
        description: QUERY_PARAMETERS.ignoreStoreReadErrorWithClusterBreakingPotential.description,
      },
      orphanDependents: { type: 'boolean', description: QUERY_PARAMETERS.orphanDependents.description },
      preconditions: described(`${META_V1}Preconditions`, 'Conditions that must hold for the deletion to go ahead.'),
      propagationPolicy: string(QUERY_PARAMETERS.propagationPolicy.description),
    },
  };
  schemas[`${META_V1}Preconditions`] = {
    description: 'Conditions a write only goes ahead under.',
    type: 'object',
    properties: {
      resourceVersion: string('The resourceVersion the target must have.'),
      uid: string('The UID the target must have.'),
    },
  };
  schemas[`${META_V1}WatchEvent`] = {
    description: 'One event of a watch stream.',
    type: 'object',
    properties: {
      object: described(
        'io.k8s.apimachinery.pkg.runtime.RawExtension',
        'What the event is about: the new state for ADDED and MODIFIED, the last state for DELETED, an object ' +
          'carrying only a resourceVersion for BOOKMARK, and a Status for ERROR.',
      ),
      type: string('ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.'),
    },
    required: ['type', 'object'],
  };
  schemas['io.k8s.apimachinery.pkg.runtime.RawExtension'] = {
    description: 'An object of any kind, embedded as it is.',
    type: 'object',
  };
  schemas[`${META_V1}Patch`] = {
    description: 'Body of a PATCH request; the Content-Type header says which kind of patch it is.',
    type: 'object',
  };
  return schemas;
}

// Paths

interface Route {
  path: string;
  method: Method;
  action: Action;
  /** kube's route operation name, e.g. listNamespacedFoo, from which the operationId is made. */
  operation: string;
  description: string;
}

const ALL_VERBS: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const VERB_OF: Record<Action, Verb> = {
  list: 'list',
  post: 'create',
  deletecollection: 'deletecollection',
  get: 'get',
  put: 'update',
  patch: 'patch',
  delete: 'delete',
};

function routes(kind: KindDefinition, version: string): Route[] {
  const name = kind.kind;
  const scope = kind.namespaced ? 'Namespaced' : '';
  const base = kind.group === '' ? `/api/${version}` : `/apis/${kind.group}/${version}`;
  const collection = kind.namespaced ? `${base}/namespaces/{namespace}/${kind.plural}` : `${base}/${kind.plural}`;
  const item = `${collection}/{name}`;
  const all: Route[] = [];
  const add = (path: string, method: Method, action: Action, operation: string, description: string): void => {
    all.push({ path, method, action, operation, description });
  };
  if (kind.namespaced) {
    add(`${base}/${kind.plural}`, 'get', 'list', `list${name}ForAllNamespaces`, `list objects of kind ${name}`);
  }
  add(collection, 'get', 'list', `list${scope}${name}`, `list objects of kind ${name}`);
  add(collection, 'post', 'post', `create${scope}${name}`, `create${article(name)}${name}`);
  add(collection, 'delete', 'deletecollection', `deletecollection${scope}${name}`, `delete collection of ${name}`);
  add(item, 'get', 'get', `read${scope}${name}`, `read the specified ${name}`);
  add(item, 'put', 'put', `replace${scope}${name}`, `replace the specified ${name}`);
  add(item, 'delete', 'delete', `delete${scope}${name}`, `delete${article(name)}${name}`);
  add(item, 'patch', 'patch', `patch${scope}${name}`, `partially update the specified ${name}`);
  if (kind.subresources.status) {
    add(`${item}/status`, 'get', 'get', `read${scope}${name}Status`, `read status of the specified ${name}`);
    add(`${item}/status`, 'put', 'put', `replace${scope}${name}Status`, `replace status of the specified ${name}`);
    add(`${item}/status`, 'patch', 'patch', `patch${scope}${name}Status`, `partially update status of the specified ${name}`);
  }
  const verbs = new Set(kind.verbs ?? ALL_VERBS);
  return all.filter((route) => verbs.has(VERB_OF[route.action]));
}

/** kube's article for a kind in operation descriptions; plurals get none. */
function article(noun: string): string {
  if (noun.endsWith('s') && !noun.endsWith('ss')) return ' ';
  return /^[aeiou]/i.test(noun) ? ' an ' : ' a ';
}

function pathItems(kind: KindDefinition, version: string): Record<string, PathItem> {
  const byPath = new Map<string, Route[]>();
  for (const route of routes(kind, version)) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  const items: Record<string, PathItem> = {};
  for (const [path, group] of byPath) {
    const parameters = group.map((route) => parametersOf(route, kind));
    // Like kube-openapi, parameters every operation of a path has are declared once, on the path.
    const common = parameters[0].filter((p) => parameters.every((list) => list.some((q) => sameParameter(p, q))));
    const item: PathItem = {};
    group.forEach((route, i) => {
      const own = parameters[i].filter((p) => !common.some((q) => sameParameter(p, q)));
      item[route.method] = operation(route, kind, version, own);
    });
    if (common.length > 0) item.parameters = sortedParameters(common);
    items[path] = item;
  }
  return items;
}

function operation(route: Route, kind: KindDefinition, version: string, parameters: Parameter[]): Operation {
  const kindRef = ref(modelName(kind.group, version, kind.kind));
  const op: Operation = {
    description: route.description,
    operationId: operationId(route.operation, kind.group, version),
    tags: [`${validOperationId(trimmedGroup(kind.group), false)}_${validOperationId(version, false)}`],
    responses: responses(route.action, kindRef, ref(modelName(kind.group, version, listKindOf(kind)))),
    'x-kubernetes-action': route.action,
    'x-kubernetes-group-version-kind': { group: kind.group, version, kind: kind.kind },
  };
  if (parameters.length > 0) op.parameters = sortedParameters(parameters);
  const body = requestBody(route.action, kindRef, kind.builtIn === true);
  if (body) op.requestBody = body;
  return op;
}

const RESPONSE_TYPES = ['application/json', 'application/yaml'];
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];
const BUILT_IN_PATCH_TYPES = [...PATCH_TYPES, 'application/strategic-merge-patch+json'];

function content(types: readonly string[], schema: { $ref: string }): MediaTypes {
  return Object.fromEntries(types.map((type) => [type, { schema }]));
}

function responses(action: Action, kindRef: { $ref: string }, listRef: { $ref: string }): Operation['responses'] {
  const status = ref(`${META_V1}Status`);
  const reply = (description: string, schema: { $ref: string }) => ({ description, content: content(RESPONSE_TYPES, schema) });
  const unauthorized = { description: 'Unauthorized' };
  switch (action) {
    case 'list':
      return { '200': reply('OK', listRef), '401': unauthorized };
    case 'post':
      return {
        '200': reply('OK', kindRef),
        '201': reply('Created', kindRef),
        '202': reply('Accepted', kindRef),
        '401': unauthorized,
      };
    case 'put':
      return { '200': reply('OK', kindRef), '201': reply('Created', kindRef), '401': unauthorized };
    case 'get':
    case 'patch':
      return { '200': reply('OK', kindRef), '401': unauthorized };
    case 'delete':
      return { '200': reply('OK', status), '202': reply('Accepted', status), '401': unauthorized };
    case 'deletecollection':
      return { '200': reply('OK', status), '401': unauthorized };
  }
}

function requestBody(action: Action, kindRef: { $ref: string }, builtIn: boolean): Operation['requestBody'] {
  switch (action) {
    case 'post':
    case 'put':
      return { content: content(RESPONSE_TYPES, kindRef), required: true };
    case 'patch':
      return { content: content(builtIn ? BUILT_IN_PATCH_TYPES : PATCH_TYPES, ref(`${META_V1}Patch`)), required: true };
    case 'delete':
      return { content: content(RESPONSE_TYPES, ref(`${META_V1}DeleteOptions`)) };
    default:
      return undefined;
  }
}

// Parameters

type QueryParameterName =
  | 'allowWatchBookmarks'
  | 'continue'
  | 'dryRun'
  | 'fieldManager'
  | 'fieldSelector'
  | 'fieldValidation'
  | 'force'
  | 'gracePeriodSeconds'
  | 'ignoreStoreReadErrorWithClusterBreakingPotential'
  | 'labelSelector'
  | 'limit'
  | 'orphanDependents'
  | 'pretty'
  | 'propagationPolicy'
  | 'resourceVersion'
  | 'resourceVersionMatch'
  | 'sendInitialEvents'
  | 'timeoutSeconds'
  | 'watch';

const QUERY_PARAMETERS: Record<QueryParameterName, { type: Parameter['schema']['type']; description: string }> = {
  allowWatchBookmarks: {
    type: 'boolean',
    description:
      'Ask for BOOKMARK events, which carry only a resourceVersion and let a watch resume from a more recent ' +
      'point. Servers may ignore it. Only meaningful with watch.',
  },
  continue: {
    type: 'string',
    description: 'The continue token of a previous chunked list response, to get the next chunk of the same query. ' + 'Expired tokens fail with 410 Gone.',
  },
  dryRun: {
    type: 'string',
    description: 'When present, the request is checked but nothing is persisted. "All" is the only accepted value.',
  },
  fieldManager: {
    type: 'string',
    description:
      'Name of the client or workflow making the change, at most 128 printable characters. Required for ' +
      'apply patches; otherwise derived from the user agent.',
  },
  fieldSelector: { type: 'string', description: 'Only objects whose fields match this selector. Defaults to all.' },
  fieldValidation: {
    type: 'string',
    description:
      'What happens to fields of the request body the schema does not know, and to duplicate fields: ' +
      '"Ignore" drops them silently, "Warn" (the default) drops them with a warning for each, "Strict" rejects ' +
      'the request listing all of them.',
  },
  force: {
    type: 'boolean',
    description: 'Take over fields other managers own instead of failing with a conflict. Only for apply patches.',
  },
  gracePeriodSeconds: {
    type: 'integer',
    description: 'Seconds before the object is deleted; 0 means at once. When unset, the default of the kind applies.',
  },
  ignoreStoreReadErrorWithClusterBreakingPotential: {
    type: 'boolean',
    description:
      'Delete the object even when it cannot be read from storage (it is corrupt). Finalizers and other ' +
      'safeguards are skipped, which can break the cluster; use with care.',
  },
  labelSelector: { type: 'string', description: 'Only objects whose labels match this selector. Defaults to all.' },
  limit: {
    type: 'integer',
    description: 'Maximum number of items to return. When there are more, the response carries a continue token for the rest.',
  },
  orphanDependents: {
    type: 'boolean',
    description: 'Deprecated in favour of propagationPolicy: whether dependents are orphaned instead of garbage collected.',
  },
  pretty: { type: 'string', description: "If 'true', the output is pretty-printed." },
  propagationPolicy: {
    type: 'string',
    description: 'How dependents are garbage collected: "Orphan", "Background" or "Foreground".',
  },
  resourceVersion: {
    type: 'string',
    description: 'Which versions of the data may answer the request (see resourceVersionMatch). Unset means the latest; ' + '"0" means any, possibly cached.',
  },
  resourceVersionMatch: {
    type: 'string',
    description: 'How resourceVersion applies to a list: "Exact" or "NotOlderThan". Needs resourceVersion.',
  },
  sendInitialEvents: {
    type: 'boolean',
    description:
      'With watch, start the stream with an ADDED event for every current object, then a BOOKMARK annotated ' +
      '"k8s.io/initial-events-end": "true". Needs resourceVersionMatch=NotOlderThan.',
  },
  timeoutSeconds: {
    type: 'integer',
    description: 'Time limit for the list or watch call, whatever the activity.',
  },
  watch: {
    type: 'boolean',
    description: 'Stream changes to the selected objects as added, modified and deleted events instead of listing them.',
  },
};

const LIST_PARAMETERS: QueryParameterName[] = [
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
const WRITE_PARAMETERS: QueryParameterName[] = ['dryRun', 'fieldManager', 'fieldValidation'];

/** What kube derives from the options type of each action (ListOptions, CreateOptions, ...). */
const ACTION_PARAMETERS: Record<Action, QueryParameterName[]> = {
  list: LIST_PARAMETERS,
  deletecollection: LIST_PARAMETERS,
  get: ['resourceVersion'],
  post: WRITE_PARAMETERS,
  put: WRITE_PARAMETERS,
  patch: [...WRITE_PARAMETERS, 'force'],
  delete: ['dryRun', 'gracePeriodSeconds', 'ignoreStoreReadErrorWithClusterBreakingPotential', 'orphanDependents', 'propagationPolicy'],
};

function parametersOf(route: Route, kind: KindDefinition): Parameter[] {
  const schema = (type: Parameter['schema']['type']) => ({ type, uniqueItems: true as const });
  const parameters: Parameter[] = [];
  if (route.path.includes('{namespace}')) {
    parameters.push({
      name: 'namespace',
      in: 'path',
      description: 'object name and auth scope, such as for teams and projects',
      required: true,
      schema: schema('string'),
    });
  }
  if (route.path.includes('{name}')) {
    parameters.push({
      name: 'name',
      in: 'path',
      description: `name of the ${kind.kind}`,
      required: true,
      schema: schema('string'),
    });
  }
  for (const name of ['pretty' as const, ...ACTION_PARAMETERS[route.action]]) {
    const { type, description } = QUERY_PARAMETERS[name];
    parameters.push({ name, in: 'query', description, schema: schema(type) });
  }
  return parameters;
}

function sameParameter(a: Parameter, b: Parameter): boolean {
  return a.name === b.name && a.in === b.in;
}

function sortedParameters(parameters: Parameter[]): Parameter[] {
  return [...parameters].sort((a, b) => compare(a.name, b.name) || compare(a.in, b.in));
}

// Operation ids and tags, as kube-apiserver's OpenAPI config makes them.

const OPERATION_VERBS = ['get', 'log', 'read', 'replace', 'patch', 'delete', 'deletecollection', 'watch', 'connect', 'proxy', 'list', 'create'];

function operationId(operation: string, group: string, version: string): string {
  // The shortest verb that prefixes the name: deletecollectionFoo counts as delete + CollectionFoo.
  const verb = OPERATION_VERBS.filter((v) => operation.startsWith(v)).sort((a, b) => a.length - b.length)[0] ?? '';
  const rest = operation.slice(verb.length);
  return verb + validOperationId(trimmedGroup(group), true) + validOperationId(version, true) + validOperationId(rest, true);
}

function trimmedGroup(group: string): string {
  if (group === '') return 'core';
  return group.endsWith('.k8s.io') ? group.slice(0, -'.k8s.io'.length) : group;
}

/** Letters, digits (not first) and underscores kept; anything else is dropped and capitalises what follows. */
function validOperationId(text: string, capitalizeFirst: boolean): string {
  let out = '';
  let capitalize = capitalizeFirst;
  [...text].forEach((char, i) => {
    if (/\p{L}/u.test(char) || char === '_' || (i !== 0 && /\p{Nd}/u.test(char))) {
      out += capitalize ? char.toUpperCase() : char;
      capitalize = false;
    } else {
      capitalize = true;
    }
  });
  return out;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedByKey<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => compare(a, b)));
}
