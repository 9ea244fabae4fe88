/**
 * Validation of an object against its kind version, worded the way
 * kube-apiserver words the same failures for a custom resource:
 *
 * 1. the OpenAPI checks (type, enum, required, lengths, patterns, bounds,
 *    items, properties) run on the structural schema with kube-openapi's
 *    semantics and messages;
 * 2. the kind's zod schema runs next: its string formats, its refinements
 *    (ports of CEL x-kubernetes-validations) and whatever the structural
 *    schema cannot express, reported only where step 1 found nothing;
 * 3. list-type set and map lists must not repeat items or keys.
 *
 * As in kube, refinement failures are not reported when a blocking error
 * (wrong type, unsupported value, missing, too long, too many) was found;
 * a notice that rules were skipped takes their place.
 *
 * Expects an object that has been pruned and defaulted (prune.ts, defaults.ts).
 * Metadata, apiVersion and kind are left to the ObjectMeta validation.
 */
import type { z } from 'zod';
import type { JsonObject } from '../../storage/interface.js';
import { FieldError } from '../errors.js';
import type { StructuralSchema, VersionedSchema } from './structural-schema.js';
import { goQuote } from '../validation/names.js';
import { kubeFormats, structuralSchemaOf } from './structural.js';
import { isJsonObject, jsonEqual } from '../../storage/json.js';

export function validateAgainstSchema(version: VersionedSchema, object: JsonObject): FieldError[] {
  const schema = fieldsSchema(structuralSchemaOf(version));
  const fields = Object.fromEntries(Object.entries(object).filter(([key]) => !OBJECT_META_FIELDS.has(key)));

  const checks = new SchemaChecks();
  checks.node(fields, schema, '');

  const rules: FieldError[] = [];
  const parsed = version.schema.safeParse(fields, { reportInput: true });
  for (const issue of parsed.success ? [] : parsed.error.issues) {
    const path = spell(issue.path, schema);
    if (issue.code === 'custom') rules.push(FieldError.ruleFailure(path.rule || '<nil>', issue.input, issue.message));
    else checks.fromZod(issue, path, valueAt(fields, issue.path));
  }

  const errors = checks.findings.map((finding) => finding.error);
  errors.push(...duplicates(fields, schema, ''));
  if (!checks.findings.some((finding) => finding.blocking)) {
    errors.push(...rules);
  } else if (rules.length > 0 || hasRules(schema)) {
    errors.push(
      FieldError.invalid(
        '<nil>',
        null,
        'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      ),
    );
  }
  return errors;
}

const OBJECT_META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

const fieldsSchemas = new WeakMap<StructuralSchema, StructuralSchema>();

/** The object's schema without apiVersion, kind and metadata. */
function fieldsSchema(schema: StructuralSchema): StructuralSchema {
  let fields = fieldsSchemas.get(schema);
  if (!fields) {
    const properties = Object.entries(schema.properties ?? {}).filter(([key]) => !OBJECT_META_FIELDS.has(key));
    fields = { ...schema, properties: Object.fromEntries(properties) };
    fieldsSchemas.set(schema, fields);
  }
  return fields;
}

interface Finding {
  error: FieldError;
  /** Errors kube lets stop CEL rules from running. */
  blocking: boolean;
}

/** kube's two spellings of a path: OpenAPI errors write map keys as `.key`, CEL and list errors as `[key]`. */
interface Spelling {
  schema: string;
  rule: string;
  node?: StructuralSchema;
}

class SchemaChecks {
  readonly findings: Finding[] = [];
  /** Paths the OpenAPI checks reported on, so zod does not report them again. */
  private readonly reported = new Set<string>();

  node(value: unknown, schema: StructuralSchema, path: string): void {
    const expected = expectedType(schema);
    if (value === null) {
      if (expected && !schema.nullable) this.add(path, typeInvalid(path, expected, 'null'), true);
      return;
    }
    const actual = jsonType(value);
    if (expected && !typeMatches(expected, actual)) this.add(path, typeInvalid(path, expected, actual), true);
    if (typeof value === 'string') this.string(value, schema, path);
    else if (typeof value === 'number') this.number(value, schema, path);
    else if (Array.isArray(value)) this.array(value, schema, path);
    if (schema.enum && !schema.enum.some((allowed) => jsonEqual(allowed, value))) {
      this.add(path, notSupported(path, value, schema.enum), true);
    }
    if (isJsonObject(value)) this.object(value, schema, path);
  }

  /** Adds what zod found, unless the OpenAPI checks already spoke about that field. */
  fromZod(issue: z.core.$ZodIssue, path: Spelling, found: Found): void {
    const at = path.schema;
    const value = found.value;
    if (issue.code === 'invalid_format') {
      const format = kubeFormats[issue.format];
      if (format) this.add(at, formatInvalid(at, format, value), true);
      else if (!this.reported.has(at)) this.add(at, patternMismatch(at, value, patternOf(issue, path.node)), false);
      return;
    }
    if (this.reported.has(at)) return;
    switch (issue.code) {
      case 'invalid_type':
        if (!found.present) this.add(at, FieldError.required(at), true);
        else this.add(at, typeInvalid(at, ZOD_TYPES[issue.expected] ?? issue.expected, jsonType(value)), true);
        return;
      case 'invalid_value':
        this.add(at, notSupported(at, value, issue.values), true);
        return;
      case 'too_big':
        if (issue.origin === 'string') this.add(at, tooLong(at, Number(issue.maximum)), true);
        else if (Array.isArray(value)) this.add(at, tooMany(at, value.length, Number(issue.maximum)), true);
        else if (typeof value === 'number') {
          this.add(at, maximum(at, value, Number(issue.maximum), issue.inclusive === false), false);
        } else this.add(at, FieldError.invalid(at, value, issue.message), false);
        return;
      case 'too_small':
        if (typeof value === 'string') this.add(at, tooShort(at, value, Number(issue.minimum)), false);
        else if (Array.isArray(value)) this.add(at, tooFew(at, value.length, Number(issue.minimum)), false);
        else if (typeof value === 'number') {
          this.add(at, minimum(at, value, Number(issue.minimum), issue.inclusive === false), false);
        } else this.add(at, FieldError.invalid(at, value, issue.message), false);
        return;
      case 'not_multiple_of':
        this.add(at, notMultipleOf(at, value, issue.divisor), false);
        return;
      default:
        this.add(at, FieldError.invalid(at, value, issue.message), false);
    }
  }

  private add(path: string, error: FieldError, blocking: boolean): void {
    this.findings.push({ error, blocking });
    this.reported.add(path);
  }

  /** kube-openapi stops at the first of maxLength, minLength and pattern that fails. */
  private string(value: string, schema: StructuralSchema, path: string): void {
    const length = [...value].length;
    if (schema.maxLength !== undefined && length > schema.maxLength) {
      this.add(path, tooLong(path, schema.maxLength), true);
    } else if (schema.minLength !== undefined && length < schema.minLength) {
      this.add(path, tooShort(path, value, schema.minLength), false);
    } else if (schema.pattern !== undefined && !compiled(schema.pattern).test(value)) {
      this.add(path, patternMismatch(path, value, schema.pattern), false);
    }
  }

  private number(value: number, schema: StructuralSchema, path: string): void {
    if (schema.format === 'int32' && Number.isInteger(value) && (value < INT32_MIN || value > INT32_MAX)) {
      // kube-openapi reports this as a plain error, which kube attaches to no field.
      const detail = `Checked value must be of type integer with format int32 in ${path}`;
      this.add(path, FieldError.invalid('<nil>', '', detail), false);
    }
    if (schema.multipleOf !== undefined && !isMultiple(value, schema.multipleOf)) {
      this.add(path, notMultipleOf(path, value, schema.multipleOf), false);
    }
    if (schema.minimum !== undefined) {
      const bound = comparable(value, schema.minimum);
      if (schema.exclusiveMinimum ? value <= bound : value < bound) {
        this.add(path, minimum(path, value, schema.minimum, schema.exclusiveMinimum === true), false);
      }
    }
    if (schema.maximum !== undefined) {
      const bound = comparable(value, schema.maximum);
      if (schema.exclusiveMaximum ? value >= bound : value > bound) {
        this.add(path, maximum(path, value, schema.maximum, schema.exclusiveMaximum === true), false);
      }
    }
  }

  private array(value: unknown[], schema: StructuralSchema, path: string): void {
    const items = schema.items;
    if (items)
      value.forEach((item, i) => {
        this.node(item, items, `${path}[${i}]`);
      });
    if (schema.minItems !== undefined && value.length < schema.minItems) {
      this.add(path, tooFew(path, value.length, schema.minItems), false);
    }
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      this.add(path, tooMany(path, value.length, schema.maxItems), true);
    }
  }

  private object(value: JsonObject, schema: StructuralSchema, path: string): void {
    const count = Object.keys(value).length;
    if (schema.minProperties !== undefined && count < schema.minProperties) {
      const detail = `${path} in body should have at least ${schema.minProperties} properties`;
      this.add(path, FieldError.invalid(path, count, detail), false);
    }
    if (schema.maxProperties !== undefined && count > schema.maxProperties) {
      this.add(path, tooMany(path, count, schema.maxProperties), true);
    }
    const properties = schema.properties ?? {};
    const additional = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
    if (additional) {
      for (const [key, child] of Object.entries(value)) {
        if (!(key in properties)) this.node(child, additional, join(path, key));
      }
    }
    for (const [key, property] of Object.entries(properties)) {
      if (key in value) this.node(value[key], property, join(path, key));
    }
    for (const key of schema.required ?? []) {
      if (!(key in value)) this.add(join(path, key), FieldError.required(join(path, key)), true);
    }
  }
}

// kube-openapi's wordings; `path` doubles as the field and as the name in the text.

function typeInvalid(path: string, expected: string, actual: string): FieldError {
  return new FieldError('FieldValueTypeInvalid', path, `${path} in body must be of type ${expected}: ${goQuote(actual)}`, actual);
}

function formatInvalid(path: string, format: string, value: unknown): FieldError {
  const shown = typeof value === 'string' ? `: ${goQuote(value)}` : '';
  return new FieldError('FieldValueTypeInvalid', path, `${path} in body must be of type ${format}${shown}`, value);
}

function notSupported(path: string, value: unknown, allowed: readonly unknown[]): FieldError {
  const supported = allowed.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  return FieldError.notSupported(path, value, supported);
}

function tooLong(path: string, max: number): FieldError {
  return new FieldError('FieldValueTooLong', path, `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}`);
}

function tooShort(path: string, value: string, min: number): FieldError {
  return FieldError.invalid(path, value, `${path} in body should be at least ${min} chars long`);
}

function patternMismatch(path: string, value: unknown, pattern: string): FieldError {
  return FieldError.invalid(path, value, `${path} in body should match '${pattern}'`);
}

function tooMany(path: string, actual: number, max: number): FieldError {
  return new FieldError('FieldValueTooMany', path, `must have at most ${max} ${max === 1 ? 'item' : 'items'}`, actual);
}

function tooFew(path: string, actual: number, min: number): FieldError {
  return FieldError.invalid(path, actual, `${path} in body should have at least ${min} items`);
}

function minimum(path: string, value: number, bound: number, exclusive: boolean): FieldError {
  const relation = exclusive ? 'greater than' : 'greater than or equal to';
  return FieldError.invalid(path, value, `${path} in body should be ${relation} ${formatBound(value, bound)}`);
}

function maximum(path: string, value: number, bound: number, exclusive: boolean): FieldError {
  const relation = exclusive ? 'less than' : 'less than or equal to';
  return FieldError.invalid(path, value, `${path} in body should be ${relation} ${formatBound(value, bound)}`);
}

function notMultipleOf(path: string, value: unknown, factor: number): FieldError {
  const shown = typeof value === 'number' ? formatBound(value, factor) : goFloat(factor);
  return FieldError.invalid(path, value, `${path} in body should be a multiple of ${shown}`);
}

/**
 * A failed refinement, reported like a failed CEL rule. Since Kubernetes 1.35
 * the value is left out when the rule sits on an object or a list.
 */

/** x-kubernetes-list-type set and map lists: each repeat is reported once, at its second occurrence. */
function duplicates(value: unknown, schema: StructuralSchema | undefined, path: string): FieldError[] {
  if (!schema) return [];
  const errors: FieldError[] = [];
  if (Array.isArray(value)) {
    const listType = schema['x-kubernetes-list-type'];
    if (listType === 'set') {
      for (const i of repeats(value)) errors.push(FieldError.duplicate(`${path}[${i}]`, value[i]));
    } else if (listType === 'map') {
      errors.push(...mapListDuplicates(value, schema['x-kubernetes-list-map-keys'] ?? [], path));
    }
    value.forEach((item, i) => {
      errors.push(...duplicates(item, schema.items, `${path}[${i}]`));
    });
  } else if (isJsonObject(value)) {
    const additional = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
    for (const [key, child] of Object.entries(value)) {
      // Only lists repeat items: a scalar has none to report, and a map of 60,000 keys needs no path for each.
      if (typeof child !== 'object' || child === null) continue;
      const property = schema.properties?.[key];
      if (property) errors.push(...duplicates(child, property, join(path, key)));
      else if (additional) errors.push(...duplicates(child, additional, `${path}[${key}]`));
    }
  }
  return errors;
}

function mapListDuplicates(items: unknown[], keys: readonly string[], path: string): FieldError[] {
  const notObject = items.findIndex((item) => item !== null && !isJsonObject(item));
  if (notObject >= 0) {
    const detail = 'must be an object for an array of list-type map';
    return [FieldError.invalid(`${path}[${notObject}]`, items[notObject], detail)];
  }
  // Go marshals maps with sorted keys; the key object is shown that way.
  const keyOf = (item: unknown): JsonObject =>
    Object.fromEntries([...keys].sort().flatMap((key) => (isJsonObject(item) && key in item ? [[key, item[key]]] : [])));
  const keyObjects = items.map(keyOf);
  return repeats(keyObjects).map((i) => FieldError.duplicate(`${path}[${i}]`, keyObjects[i]));
}

/** Indices of second occurrences. */
function repeats(values: readonly unknown[]): number[] {
  const seen = new Map<string, number>();
  const indices: number[] = [];
  values.forEach((value, i) => {
    const key = canonical(value);
    const times = seen.get(key) ?? 0;
    if (times === 1) indices.push(i);
    seen.set(key, times + 1);
  });
  return indices;
}

const schemasWithRules = new WeakMap<StructuralSchema, boolean>();

function hasRules(schema: StructuralSchema): boolean {
  let found = schemasWithRules.get(schema);
  if (found === undefined) {
    const children = [
      ...Object.values(schema.properties ?? {}),
      ...(schema.items ? [schema.items] : []),
      ...(typeof schema.additionalProperties === 'object' ? [schema.additionalProperties] : []),
    ];
    found = (schema['x-kubernetes-validations']?.length ?? 0) > 0 || children.some(hasRules);
    schemasWithRules.set(schema, found);
  }
  return found;
}

function spell(path: readonly PropertyKey[], schema: StructuralSchema): Spelling {
  let node: StructuralSchema | undefined = schema;
  let asSchema = '';
  let asRule = '';
  for (const segment of path) {
    if (typeof segment === 'number') {
      asSchema += `[${segment}]`;
      asRule += `[${segment}]`;
      node = node?.items;
      continue;
    }
    const key = String(segment);
    const property: StructuralSchema | undefined = node?.properties?.[key];
    const additional = typeof node?.additionalProperties === 'object' ? node.additionalProperties : undefined;
    asSchema = join(asSchema, key);
    asRule = !property && additional ? `${asRule}[${key}]` : join(asRule, key);
    node = property ?? additional;
  }
  return { schema: asSchema, rule: asRule, node };
}

interface Found {
  present: boolean;
  value: unknown;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): Found {
  let value = root;
  for (const segment of path) {
    if (Array.isArray(value) && typeof segment === 'number' && segment < value.length) value = value[segment];
    else if (isJsonObject(value) && typeof segment === 'string' && segment in value) value = value[segment];
    else return { present: false, value: undefined };
  }
  return { present: true, value };
}

const ZOD_TYPES: Record<string, string> = { int: 'integer', record: 'object', tuple: 'array' };

function patternOf(issue: z.core.$ZodIssueInvalidStringFormat, node: StructuralSchema | undefined): string {
  // zod shows a regex as /source/flags; a second regex on the field is not in the structural schema.
  if (issue.format === 'regex' && issue.pattern) return issue.pattern.replace(/^\/(.*)\/[a-z]*$/s, '$1');
  return node?.pattern ?? issue.pattern ?? issue.format;
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

type JsonType = 'null' | 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';

function jsonType(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  return 'object';
}

function expectedType(schema: StructuralSchema): string | undefined {
  return schema['x-kubernetes-int-or-string'] ? 'integer,string' : schema.type;
}

function typeMatches(expected: string, actual: JsonType): boolean {
  const types = expected.split(',');
  return types.includes(actual) || (actual === 'integer' && types.includes('number'));
}

/** Integer data is compared with the bound truncated to an integer, as kube-openapi does. */
function comparable(value: number, bound: number): number {
  return Number.isInteger(value) ? Math.trunc(bound) : bound;
}

function formatBound(value: number, bound: number): string {
  return Number.isInteger(value) ? String(Math.trunc(bound)) : goFloat(bound);
}

function isMultiple(value: number, factor: number): boolean {
  if (Number.isInteger(value) && Number.isInteger(factor)) return value % factor === 0;
  return Number.isInteger(value / factor);
}

/** Go's %v for a float64: shortest digits, in exponent form below 1e-4 and from 1e6 on. */
function goFloat(value: number): string {
  const [mantissa, exponent] = value.toExponential().split('e');
  const power = Number(exponent);
  if (power < -4 || power >= 6) {
    const digits = String(Math.abs(power)).padStart(2, '0');
    return `${mantissa}e${power < 0 ? '-' : '+'}${digits}`;
  }
  return String(value);
}

const patterns = new Map<string, RegExp>();

/** OpenAPI patterns are unanchored searches; kube evaluates them with Go's RE2, close to JS's unicode mode. */
function compiled(pattern: string): RegExp {
  let regex = patterns.get(pattern);
  if (!regex) {
    try {
      regex = new RegExp(pattern, 'u');
    } catch {
      regex = new RegExp(pattern);
    }
    patterns.set(pattern, regex);
  }
  return regex;
}

/** JSON with object keys sorted, so equal values have equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isJsonObject(value)) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
