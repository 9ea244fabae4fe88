/**
 * Pruning as kube-apiserver does it for custom resources: fields the schema
 * does not know are dropped (and reported, for fieldValidation), except under
 * x-kubernetes-preserve-unknown-fields; apiVersion, kind and metadata of the
 * object and of embedded resources are always kept, metadata being pruned
 * against ObjectMeta. Then, like kube's decoder, nulls of non-nullable fields
 * without a default are removed.
 *
 * Duplicate JSON keys are not reported here: they are gone once the body has
 * been parsed, so whoever parses the body has to find them.
 */
import type { JsonObject } from '../../storage/interface.js';
import type { StructuralSchema } from './structural-schema.js';
import { objectMetaSchema } from './objectmeta.js';
import { isJsonObject } from '../../storage/json.js';
import { cloneJson } from '../../storage/json.js';

export interface PruneResult {
  /** A pruned copy; the input is left alone. */
  object: JsonObject;
  /**
   * Paths of the dropped fields as kube's strict decoding names them
   * (`metadata.foo`, `spec.ports[0].bogus`): those of the object's metadata
   * first, then the rest, then those of embedded resources' metadata, each
   * group sorted.
   */
  unknownFields: string[];
}

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

export function pruneUnknownFields(object: JsonObject, schema: StructuralSchema): PruneResult {
  const pruned = cloneJson(object) as JsonObject;
  const found: Found = { metadata: [], fields: [], embedded: [] };
  const metadataSchema = schema.properties?.metadata ?? objectMetaSchema;
  if (isJsonObject(pruned.metadata)) prune(pruned.metadata, metadataSchema, 'metadata', found.metadata, found);
  prune(pruned, { ...schema, 'x-kubernetes-embedded-resource': true }, '', found.fields, found, true);
  pruneNulls(pruned, schema);
  return {
    object: pruned,
    unknownFields: [...found.metadata.sort(), ...found.fields.sort(), ...found.embedded.sort()],
  };
}

interface Found {
  metadata: string[];
  fields: string[];
  embedded: string[];
}

function prune(value: unknown, schema: StructuralSchema | undefined, path: string, into: string[], found: Found, isRoot = false): void {
  if (schema && preservesUnknown(schema)) {
    keepUnknown(value, schema, path, into, found, isRoot);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      prune(item, schema?.items, `${path}[${i}]`, into, found);
    });
    return;
  }
  if (!isJsonObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    if (schema?.['x-kubernetes-embedded-resource'] && META_FIELDS.has(key)) {
      if (!isRoot) pruneEmbeddedMetadata(key, child, path, found);
      continue;
    }
    const known = schema?.properties?.[key] ?? mapValues(schema);
    if (known) {
      prune(child, known, join(path, key), into, found);
    } else {
      into.push(join(path, key));
      delete value[key];
    }
  }
}

/** Under x-kubernetes-preserve-unknown-fields, unknown fields stay but known ones are still pruned inside. */
function keepUnknown(value: unknown, schema: StructuralSchema, path: string, into: string[], found: Found, isRoot: boolean): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (schema.items) keepUnknown(item, schema.items, `${path}[${i}]`, into, found, false);
    });
    return;
  }
  if (!isJsonObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    if (schema['x-kubernetes-embedded-resource'] && META_FIELDS.has(key)) {
      if (!isRoot) pruneEmbeddedMetadata(key, child, path, found);
      continue;
    }
    const known = schema.properties?.[key] ?? mapValues(schema);
    if (known) prune(child, known, join(path, key), into, found);
  }
}

function pruneEmbeddedMetadata(key: string, value: unknown, path: string, found: Found): void {
  if (key === 'metadata' && isJsonObject(value)) {
    prune(value, objectMetaSchema, join(path, 'metadata'), found.embedded, found);
  }
}

/** What kube's defaulter does before defaulting: non-nullable nulls that no default will fill disappear. */
function pruneNulls(value: unknown, schema: StructuralSchema | undefined): void {
  // Below a field without a schema no null can be removed: managedFields' 60,000 keys are not walked.
  if (!schema) return;
  if (Array.isArray(value)) {
    for (const item of value) pruneNulls(item, schema.items);
    return;
  }
  if (!isJsonObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    const field = schema.properties?.[key] ?? mapValues(schema);
    if (child === null && field && !field.nullable && field.default === undefined) delete value[key];
    else pruneNulls(child, field);
  }
}

/** The schema of map values; `additionalProperties: true` keeps anything, like preserve-unknown-fields. */
function mapValues(schema: StructuralSchema | undefined): StructuralSchema | undefined {
  const additional = schema?.additionalProperties;
  if (additional === true) return { 'x-kubernetes-preserve-unknown-fields': true };
  return additional || undefined;
}

function preservesUnknown(schema: StructuralSchema): boolean {
  return schema['x-kubernetes-preserve-unknown-fields'] === true;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
