/**
 * The reference CAPO CRDs as test oracles for conversion: a structural
 * checker (does an object fit a version's schema?) and a seeded random
 * generator of objects that fit it.
 */
import type { JsonObject } from '../../../../src/storage/interface.js';
import { seededRandom } from '../../../../src/simulator/seeded-random.js';
import { capoCrdVersion } from '../../../reference/capo.js';

export { capoGroup as GROUP } from '../../../reference/capo.js';

/** The openAPIV3Schema keywords the checker and the generator read. */
export interface Schema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'boolean';
  format?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

interface KindUnderTest {
  kind: string;
  plural: string;
}

export const kindsUnderTest: KindUnderTest[] = [
  { kind: 'OpenStackCluster', plural: 'openstackclusters' },
  { kind: 'OpenStackClusterTemplate', plural: 'openstackclustertemplates' },
  { kind: 'OpenStackMachine', plural: 'openstackmachines' },
  { kind: 'OpenStackMachineTemplate', plural: 'openstackmachinetemplates' },
];

/** The openAPIV3Schema of a version of CAPO's CRD. */
export function crdSchema(plural: string, version: string): Schema {
  return capoCrdVersion(plural, version).openAPIV3Schema as Schema;
}

// ---- checker -----------------------------------------------------------------

/**
 * Where `value` breaks `schema`: unknown properties, wrong types, values
 * outside an enum, missing required properties. A required property with a
 * default is not missing: Kubernetes defaults before it validates. Below an
 * object's `metadata` (a bare `object` in CRDs) anything goes.
 */
export function schemaViolations(value: unknown, schema: Schema, path = ''): string[] {
  if (schema['x-kubernetes-int-or-string']) {
    return Number.isInteger(value) || typeof value === 'string' ? [] : [`${path}: not an int-or-string`];
  }
  switch (schema.type) {
    case 'object':
      return objectViolations(value, schema, path);
    case 'array':
      if (!Array.isArray(value)) return [`${path}: not an array`];
      return value.flatMap((item, i) => (schema.items ? schemaViolations(item, schema.items, `${path}[${i}]`) : []));
    case 'string':
      if (typeof value !== 'string') return [`${path}: not a string`];
      break;
    case 'integer':
      if (!Number.isInteger(value)) return [`${path}: not an integer`];
      break;
    case 'boolean':
      if (typeof value !== 'boolean') return [`${path}: not a boolean`];
      break;
  }
  if (schema.enum && !schema.enum.includes(value)) return [`${path}: ${JSON.stringify(value)} not in ${JSON.stringify(schema.enum)}`];
  return [];
}

function objectViolations(value: unknown, schema: Schema, path: string): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: not an object`];
  const object = value as JsonObject;
  const problems: string[] = [];
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(object, name) && schema.properties?.[name]?.default === undefined) problems.push(`${path}.${name}: required`);
  }
  for (const [name, child] of Object.entries(object)) {
    const childPath = `${path}.${name}`;
    const childSchema = schema.properties?.[name];
    if (childSchema) {
      if (childPath !== '.metadata') problems.push(...schemaViolations(child, childSchema, childPath));
    } else if (typeof schema.additionalProperties === 'object') {
      problems.push(...schemaViolations(child, schema.additionalProperties, `${path}[${name}]`));
    } else if (!schema.additionalProperties && !schema['x-kubernetes-preserve-unknown-fields']) {
      problems.push(`${childPath}: unknown field`);
    }
  }
  return problems;
}

// ---- generator ---------------------------------------------------------------

/**
 * Domains that CAPO's Go types (or CEL rules) impose where the v1beta1
 * structural schema says only `string`; v1beta2 spells some of them as
 * enums. A v1beta1 object outside them is not one CAPO could convert either.
 */
const semanticEnums: [RegExp, string[]][] = [
  [/\.conditions\[\]\.status$/, ['True', 'False', 'Unknown']],
  [/\.conditions\[\]\.severity$/, ['', 'Error', 'Warning', 'Info']],
  [/\.storage\.type$/, ['Local', 'Volume']],
];

/** CEL `has(self.flavor) || has(self.flavorID)` on v1beta1 machine specs. */
const oneOfGroups = [['flavor', 'flavorID']];

const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];

/**
 * Random objects that fit a CRD version's schema. `density` (0..1) is how
 * likely an optional field or a list item is; drawing it per object mixes
 * sparse objects (apply configurations, fresh objects without status) with
 * dense ones that reach the deepest fields.
 */
export class ObjectGenerator {
  readonly visited = new Set<string>();
  private readonly random: () => number;
  private readonly density: number;

  constructor(seed: number) {
    this.random = seededRandom(seed);
    this.density = 0.3 + 0.65 * this.random();
  }

  object(kind: string, apiVersion: string, schema: Schema): JsonObject {
    const body = this.value(schema, '', 0) as JsonObject;
    const metadata: JsonObject = { name: `${this.word()}-${this.int(0, 99)}`, namespace: 'default' };
    if (this.chance()) metadata.generation = this.int(1, 20);
    if (this.chance(0.3)) metadata.labels = { 'cluster.x-k8s.io/cluster-name': this.word() };
    if (this.chance(0.3)) metadata.annotations = { 'example.com/note': this.word() };
    return { ...body, apiVersion, kind, metadata };
  }

  private value(schema: Schema, path: string, depth: number): unknown {
    this.visited.add(path);
    if (schema['x-kubernetes-int-or-string']) return this.chance(0.5) ? this.int(1, 64) : `${this.int(1, 64)}Gi`;
    const domain = semanticEnums.find(([pattern]) => pattern.test(path))?.[1] ?? schema.enum;
    if (domain) return this.pick(domain);
    switch (schema.type) {
      case 'object':
        return this.objectValue(schema, path, depth);
      case 'array':
        return this.arrayValue(schema, path, depth);
      case 'integer':
        return this.int(schema.minimum ?? 0, Math.min(schema.maximum ?? 65535, 65535));
      case 'boolean':
        return this.chance(0.5);
      default:
        return this.stringValue(schema);
    }
  }

  private objectValue(schema: Schema, path: string, depth: number): JsonObject {
    const out: JsonObject = {};
    if (schema.properties) {
      const names = Object.keys(schema.properties).filter((name) => !(path === '' && ['apiVersion', 'kind', 'metadata'].includes(name)));
      const required = new Set(schema.required ?? []);
      let chosen = names.filter((name) => required.has(name) || this.chance(this.density * 0.9 ** Math.max(0, depth - 6)));
      for (const group of oneOfGroups) {
        if (group.every((name) => names.includes(name)) && !group.some((name) => chosen.includes(name))) chosen.push(this.pick(group));
      }
      const optional = this.shuffle(names.filter((name) => !required.has(name)));
      while (chosen.length < (schema.minProperties ?? 0) && optional.some((name) => !chosen.includes(name))) {
        chosen.push(optional.find((name) => !chosen.includes(name))!);
      }
      if (schema.maxProperties !== undefined && chosen.length > schema.maxProperties) {
        chosen = [...chosen.filter((name) => required.has(name)), ...this.shuffle(chosen.filter((name) => !required.has(name)))].slice(0, schema.maxProperties);
      }
      for (const name of names.filter((n) => chosen.includes(n))) {
        out[name] = this.value(schema.properties[name], `${path}.${name}`, depth + 1);
      }
    } else if (typeof schema.additionalProperties === 'object') {
      const count = this.int(schema.minProperties ?? 0, Math.max(schema.minProperties ?? 0, this.chance() ? 3 : 0));
      for (let i = 0; i < count; i++) out[`${this.word()}-${i}`] = this.value(schema.additionalProperties, `${path}{}`, depth + 1);
    }
    return out;
  }

  private arrayValue(schema: Schema, path: string, depth: number): unknown[] {
    const items = schema.items ?? {};
    const min = schema.minItems ?? 0;
    const max = Math.max(min, Math.min(schema.maxItems ?? 3, depth > 6 ? 2 : 3));
    const wanted = this.chance() ? this.int(Math.max(min, 1), max) : min;
    const keys = schema['x-kubernetes-list-map-keys'];
    const unique = schema['x-kubernetes-list-type'] === 'set' || keys !== undefined;
    const out: unknown[] = [];
    const seen = new Set<string>();
    for (let attempt = 0; out.length < wanted && attempt < wanted * 5; attempt++) {
      const item = this.value(items, `${path}[]`, depth + 1);
      const identity = JSON.stringify(keys ? keys.map((key) => (item as JsonObject)[key]) : item);
      if (unique && seen.has(identity)) continue;
      seen.add(identity);
      out.push(item);
    }
    return out;
  }

  /** Patterns are honoured loosely: a few shapes cover every pattern in the CAPO CRDs. */
  private stringValue(schema: Schema): string {
    const candidates = (() => {
      switch (schema.format) {
        case 'uuid':
          return [this.uuid()];
        case 'date-time':
          return [
            new Date(Date.UTC(2024, this.int(0, 11), this.int(1, 28), this.int(0, 23), this.int(0, 59), this.int(0, 59))).toISOString().replace('.000', ''),
          ];
        case 'ipv4':
          return [`10.${this.int(0, 255)}.${this.int(0, 255)}.${this.int(1, 254)}`];
        default:
          return [`${this.word()}${this.chance(0.3) ? `-${this.int(0, 999)}` : ''}`, `${this.int(1, 512)}Gi`, ''];
      }
    })();
    const fits = (s: string) =>
      s.length >= (schema.minLength ?? 0) && s.length <= (schema.maxLength ?? Infinity) && (!schema.pattern || new RegExp(schema.pattern).test(s));
    // The empty string is rare but legal wherever the schema allows it, and conversion must keep it.
    if (candidates.length > 1 && this.chance(0.05) && fits('')) return '';
    return candidates.find(fits) ?? candidates[0];
  }

  private uuid(): string {
    const hex = (n: number) => Array.from({ length: n }, () => this.int(0, 15).toString(16)).join('');
    return `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
  }

  private word(): string {
    return this.pick(words);
  }

  private chance(p = this.density): boolean {
    return this.random() < p;
  }

  private int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  private pick<T>(choices: readonly T[]): T {
    return choices[Math.floor(this.random() * choices.length)];
  }

  private shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }
}

/** Every path of a schema, spelled as the generator records them (`[]` for items, `{}` for map values). */
export function schemaPaths(schema: Schema, path = ''): string[] {
  const out = [path];
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    if (path === '' && ['apiVersion', 'kind', 'metadata'].includes(name)) continue;
    out.push(...schemaPaths(child, `${path}.${name}`));
  }
  if (schema.items) out.push(...schemaPaths(schema.items, `${path}[]`));
  if (typeof schema.additionalProperties === 'object') out.push(...schemaPaths(schema.additionalProperties, `${path}{}`));
  return out;
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
