/**
 * Turns a kind version's zod schema into the Kubernetes structural schema of
 * the whole object: the JSON Schema zod emits, reshaped into what a CRD's
 * openAPIV3Schema would say, plus apiVersion, kind and metadata.
 *
 * Kind schemas must be structural: every node has a type (or is
 * int-or-string, or preserves unknown fields), objects have either properties
 * or additionalProperties, and unions are limited to int-or-string and unions
 * of enums. Anything else throws, naming the offending field.
 */
import { z } from 'zod';
import { countBoundKeys, extensionKeys, type StructuralSchema, type VersionedSchema } from './structural-schema.js';
import { objectMetaSchema, typeMetaSchemas } from './objectmeta.js';

type JsonSchema = Record<string, unknown>;

const cache = new WeakMap<VersionedSchema, StructuralSchema>();

/** The structural schema of objects of this version, metadata included. Computed once per version. */
export function structuralSchemaOf(version: VersionedSchema): StructuralSchema {
  let schema = cache.get(version);
  if (!schema) {
    schema = build(version);
    cache.set(version, schema);
  }
  return schema;
}

function build(version: VersionedSchema): StructuralSchema {
  const json = z.toJSONSchema(version.schema, {
    target: 'openapi-3.0',
    io: 'input',
    unrepresentable: 'any',
    reused: 'inline',
  }) as JsonSchema;
  const fields = new Normalizer((json.definitions ?? {}) as Record<string, JsonSchema>).schema(json, version.name);
  return {
    ...fields,
    properties: { ...typeMetaSchemas, metadata: objectMetaSchema, ...fields.properties },
  };
}

type SchemaType = NonNullable<StructuralSchema['type']>;
const TYPES = new Set<unknown>(['object', 'array', 'string', 'integer', 'number', 'boolean']);

/**
 * String formats kube-apiserver knows, by the name kube gives them, keyed by
 * zod's name: its JSON Schema output and its validation issues spell some
 * formats differently (uri/url, date-time/datetime), so both spellings are here.
 */
export const kubeFormats: Readonly<Record<string, string>> = {
  email: 'email',
  uri: 'uri',
  url: 'uri',
  uuid: 'uuid',
  guid: 'uuid',
  'date-time': 'date-time',
  datetime: 'date-time',
  date: 'date',
  duration: 'duration',
  hostname: 'hostname',
  ipv4: 'ipv4',
  ipv6: 'ipv6',
  cidrv4: 'cidr',
  cidrv6: 'cidr',
  mac: 'mac',
  base64: 'byte',
  int32: 'int32',
  int64: 'int64',
};

/** zod bounds every integer to the safe range; they are not part of the kind's contract. */
const SAFE_INTEGER_BOUND = Number.MAX_SAFE_INTEGER;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

class Normalizer {
  constructor(private readonly definitions: Record<string, JsonSchema>) {}

  schema(input: JsonSchema, where: string): StructuralSchema {
    const json = this.flatten(input, where, []);
    const out: StructuralSchema = {};
    const intOrString = json['x-kubernetes-int-or-string'] === true;
    if (json.type !== undefined && !intOrString) {
      if (!TYPES.has(json.type)) throw notStructural(where, `type ${JSON.stringify(json.type)}`);
      out.type = json.type as SchemaType;
    }
    const format = typeof json.format === 'string' ? kubeFormats[json.format] : undefined;
    if (format) out.format = format;
    if (typeof json.description === 'string') out.description = json.description;
    if (json.nullable === true) out.nullable = true;
    if (Array.isArray(json.enum)) out.enum = json.enum;
    if (json.default !== undefined) out.default = json.default;
    // zod spells out its formats as patterns too; kube checks a known format by name, so only one of them stays.
    if (typeof json.pattern === 'string' && !format) out.pattern = json.pattern;
    this.bounds(json, out);
    for (const key of countBoundKeys) if (typeof json[key] === 'number') out[key] = json[key];

    if (isSchema(json.properties) && Object.keys(json.properties).length > 0) {
      out.properties = {};
      for (const [name, property] of Object.entries(json.properties)) {
        out.properties[name] = this.schema(asSchema(property, `${where}.${name}`), `${where}.${name}`);
      }
    }
    if (Array.isArray(json.required) && json.required.length > 0) out.required = json.required as string[];
    this.additionalProperties(json, out, where);
    if (json.items !== undefined) out.items = this.schema(asSchema(json.items, `${where}[]`), `${where}[]`);

    for (const key of extensionKeys) {
      if (json[key] !== undefined) (out as Record<string, unknown>)[key] = json[key];
    }
    if (intOrString) out['x-kubernetes-int-or-string'] = true;
    if (!out.type && !intOrString) out['x-kubernetes-preserve-unknown-fields'] = true;
    return out;
  }

  /** Inlines $ref, merges allOf and resolves the unions a structural schema can express. */
  private flatten(input: JsonSchema, where: string, seen: readonly string[]): JsonSchema {
    let json = input;
    if (typeof json.$ref === 'string') {
      const name = json.$ref.slice(json.$ref.lastIndexOf('/') + 1);
      const target = this.definitions[name];
      if (!target) throw notStructural(where, `unresolvable reference ${json.$ref}`);
      if (seen.includes(name)) throw notStructural(where, `recursive reference to ${name}`);
      const { $ref: _ref, ...siblings } = json;
      json = { ...this.flatten(target, where, [...seen, name]), ...siblings };
    }
    if (Array.isArray(json.allOf)) {
      const { allOf, ...rest } = json;
      // Later parts only add what earlier ones left out (zod puts a second regex there; validation still runs it).
      let merged: JsonSchema = {};
      for (const part of allOf) merged = { ...this.flatten(asSchema(part, where), where, seen), ...merged };
      json = { ...merged, ...rest };
    }
    if (Array.isArray(json.anyOf)) {
      const { anyOf, ...rest } = json;
      json = {
        ...union(
          anyOf.map((option) => this.flatten(asSchema(option, where), where, seen)),
          where,
        ),
        ...rest,
      };
    }
    return json;
  }

  private bounds(json: JsonSchema, out: StructuralSchema): void {
    let minimum = typeof json.minimum === 'number' ? json.minimum : undefined;
    let maximum = typeof json.maximum === 'number' ? json.maximum : undefined;
    if (json.type === 'integer') {
      if (minimum === -SAFE_INTEGER_BOUND) minimum = undefined;
      if (maximum === SAFE_INTEGER_BOUND) maximum = undefined;
      if (minimum === INT32_MIN && maximum === INT32_MAX) {
        out.format = 'int32';
        minimum = maximum = undefined;
      }
    }
    if (minimum !== undefined) {
      out.minimum = minimum;
      if (json.exclusiveMinimum === true) out.exclusiveMinimum = true;
    }
    if (maximum !== undefined) {
      out.maximum = maximum;
      if (json.exclusiveMaximum === true) out.exclusiveMaximum = true;
    }
  }

  private additionalProperties(json: JsonSchema, out: StructuralSchema, where: string): void {
    const additional = json.additionalProperties;
    if (additional === undefined || additional === false) return;
    const anything = additional === true || (isSchema(additional) && Object.keys(additional).length === 0);
    if (out.properties) {
      // A loose object: its declared fields plus anything else.
      if (!anything) throw notStructural(where, 'both properties and additionalProperties');
      out['x-kubernetes-preserve-unknown-fields'] = true;
      return;
    }
    out.additionalProperties = this.schema(anything ? {} : asSchema(additional, `${where}[*]`), `${where}[*]`);
  }
}

/** int-or-string, or a union of enums of one type (a union of literals). */
function union(options: JsonSchema[], where: string): JsonSchema {
  const types = options.map((option) => option.type);
  if (options.length === 2 && types.includes('integer') && types.includes('string')) {
    return { 'x-kubernetes-int-or-string': true };
  }
  if (options.every((option) => Array.isArray(option.enum) && option.type === types[0])) {
    return { type: types[0], enum: options.flatMap((option) => option.enum as unknown[]) };
  }
  throw notStructural(where, 'a union other than int-or-string');
}

function notStructural(where: string, what: string): Error {
  return new Error(`schema of ${where} is not structural: ${what}`);
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asSchema(value: unknown, where: string): JsonSchema {
  if (!isSchema(value)) throw notStructural(where, 'boolean schema');
  return value;
}
