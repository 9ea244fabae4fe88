/**
 * The Swagger 2.0 document of every served group-version, as kube-apiserver
 * publishes CRDs in /openapi/v2. It is made from the v3 documents: references
 * point into `definitions`, request bodies become `in: body` parameters, media
 * types become consumes/produces, and what Swagger 2.0 cannot say (anyOf,
 * nullable, properties under preserve-unknown-fields, defaults) is removed as
 * kube removes it.
 */
import type { KindDefinition } from '../registry/kind.js';
import { buildOpenApiV3, type JsonNode, type Method, type Operation, type Parameter, type PathItem } from './v3.js';

export function buildOpenApiV2(kinds: KindDefinition[]): Record<string, unknown> {
  const paths: Record<string, JsonNode> = {};
  const definitions: Record<string, JsonNode> = {};
  for (const [group, version] of servedGroupVersions(kinds)) {
    const v3 = buildOpenApiV3(group, version, kinds);
    for (const [path, item] of Object.entries(v3.paths)) paths[path] = pathItem(item);
    for (const [name, schema] of Object.entries(v3.components.schemas)) definitions[name] = schemaV2(schema);
  }
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes CRD Swagger', version: 'v0.1.0' },
    paths: sortedByKey(paths),
    definitions: sortedByKey(definitions),
  };
}

function servedGroupVersions(kinds: KindDefinition[]): [string, string][] {
  const seen = new Map<string, [string, string]>();
  for (const kind of kinds) {
    for (const version of kind.versions) {
      if (version.served) seen.set(`${kind.group}/${version.name}`, [kind.group, version.name]);
    }
  }
  return [...seen.values()];
}

const METHODS: readonly Method[] = ['get', 'put', 'post', 'delete', 'patch'];
const NON_PATCH_TYPES = ['application/json', 'application/yaml'];

function pathItem(item: PathItem): JsonNode {
  const out: JsonNode = {};
  for (const method of METHODS) {
    const op = item[method];
    if (op) out[method] = operation(op);
  }
  if (item.parameters) out.parameters = item.parameters.map(parameter);
  return out;
}

function operation(op: Operation): JsonNode {
  const parameters = (op.parameters ?? []).map(parameter);
  const body = op.requestBody;
  if (body) {
    const schema = Object.values(body.content)[0].schema;
    parameters.push({ name: 'body', in: 'body', ...(body.required ? { required: true } : {}), schema: reference(schema) });
  }
  parameters.sort((a, b) => compare(String(a.name), String(b.name)) || compare(String(a.in), String(b.in)));
  const responses: Record<string, JsonNode> = {};
  let produces: string[] = [];
  for (const [code, response] of Object.entries(op.responses)) {
    const media = response.content ? Object.values(response.content)[0] : undefined;
    responses[code] = media ? { description: response.description, schema: reference(media.schema) } : { description: response.description };
    if (response.content && produces.length === 0) produces = Object.keys(response.content);
  }
  return {
    description: op.description,
    consumes: body ? Object.keys(body.content) : NON_PATCH_TYPES,
    produces,
    schemes: ['https'],
    tags: op.tags,
    operationId: op.operationId,
    ...(parameters.length > 0 ? { parameters } : {}),
    responses,
    'x-kubernetes-action': op['x-kubernetes-action'],
    'x-kubernetes-group-version-kind': op['x-kubernetes-group-version-kind'],
  };
}

function parameter(p: Parameter): JsonNode {
  return {
    name: p.name,
    in: p.in,
    description: p.description,
    ...(p.required ? { required: true } : {}),
    type: p.schema.type,
    uniqueItems: p.schema.uniqueItems,
  };
}

function reference(schema: { $ref: string }): JsonNode {
  return { $ref: schema.$ref.replace('#/components/schemas/', '#/definitions/') };
}

/** kube's ToStructuralOpenAPIV2, applied to a published v3 schema. */
function schemaV2(node: JsonNode): JsonNode {
  const out: JsonNode = {};
  for (const [key, value] of Object.entries(node)) {
    switch (key) {
      case '$ref':
        Object.assign(out, reference({ $ref: String(value) }));
        break;
      case 'allOf': {
        const parts = value as JsonNode[];
        // Swagger 2.0 allows siblings next to $ref, so the v3 wrapping is undone.
        if (parts.length === 1 && typeof parts[0].$ref === 'string' && Object.keys(parts[0]).length === 1) {
          Object.assign(out, reference({ $ref: parts[0].$ref }));
        } else {
          out.allOf = parts.map(schemaV2);
        }
        break;
      }
      case 'anyOf':
        break;
      case 'default':
        // kube prunes defaults from v2 definitions so that they merge cleanly with its own.
        break;
      case 'properties':
        out.properties = Object.fromEntries(Object.entries(value as Record<string, JsonNode>).map(([name, property]) => [name, schemaV2(property)]));
        break;
      case 'items':
        out.items = schemaV2(value as JsonNode);
        break;
      case 'additionalProperties':
        out.additionalProperties = typeof value === 'boolean' ? value : schemaV2(value as JsonNode);
        break;
      default:
        out[key] = value;
    }
  }
  // kubectl's v2 handling breaks on typed nullable nodes and on fields under preserve-unknown-fields.
  if (out.nullable === true) {
    delete out.nullable;
    delete out.type;
    delete out.items;
    delete out.properties;
  }
  if (out['x-kubernetes-preserve-unknown-fields'] === true) {
    delete out.items;
    delete out.properties;
    if (out.type === 'object') delete out.type;
  }
  if (out.type === 'array' && out.items === undefined) delete out.type;
  if (Array.isArray(out.required)) {
    const properties = (node.properties ?? {}) as Record<string, JsonNode>;
    const additional = node.additionalProperties;
    const required = (out.required as string[]).filter((name) => properties[name]?.nullable !== true);
    const nullableValues = typeof additional === 'object' && (additional as JsonNode).nullable === true;
    if (required.length === 0 || nullableValues) delete out.required;
    else out.required = required;
  }
  return out;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedByKey<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => compare(a, b)));
}
