/**
 * The structural schema reduced to what server-side apply needs, with kube's
 * conversion rules (kube-openapi schemaconv):
 * - objects are granular unless `x-kubernetes-map-type: atomic`;
 * - lists are atomic unless `x-kubernetes-list-type` is `set` or `map`;
 * - below `x-kubernetes-preserve-unknown-fields`, and in objects that declare
 *   neither properties nor additionalProperties, unknown keys are "deduced":
 *   maps are walked key by key, lists are atomic, scalars are leaves;
 * - a schema without `type` (int-or-string, free-form) accepts any shape;
 * - `metadata` of the object and of embedded resources is always ObjectMeta.
 */
import type { StructuralSchema } from '../schema/structural-schema.js';
import { keyElement, pathToString, type Path, type PathElement } from './path.js';
import { isJsonObject } from '../../storage/json.js';

/** Which shapes a position accepts; a value picks the one matching it. */
export interface Atom {
  scalar?: true;
  list?: ListType;
  map?: MapType;
}

export interface ListType {
  relationship: 'atomic' | 'set' | 'map';
  keys: readonly string[];
  element: Atom;
}

export interface MapType {
  atomic: boolean;
  fields: ReadonlyMap<string, { type: Atom; default?: unknown }>;
  /** Type of keys that are not declared fields; undefined when the schema forbids them. */
  element?: Atom;
}

const UNTYPED: Atom = { scalar: true };
UNTYPED.list = { relationship: 'atomic', keys: [], element: UNTYPED };
UNTYPED.map = { atomic: true, fields: new Map(), element: UNTYPED };

const DEDUCED: Atom = { scalar: true, list: { relationship: 'atomic', keys: [], element: UNTYPED } };
DEDUCED.map = { atomic: false, fields: new Map(), element: DEDUCED };

const str: StructuralSchema = { type: 'string' };

const OBJECT_META: StructuralSchema = {
  type: 'object',
  properties: {
    annotations: { type: 'object', additionalProperties: str },
    creationTimestamp: { type: 'string', format: 'date-time' },
    deletionGracePeriodSeconds: { type: 'integer', format: 'int64' },
    deletionTimestamp: { type: 'string', format: 'date-time' },
    finalizers: { type: 'array', items: str, 'x-kubernetes-list-type': 'set' },
    generateName: str,
    generation: { type: 'integer', format: 'int64' },
    labels: { type: 'object', additionalProperties: str },
    managedFields: { type: 'array', items: { type: 'object' }, 'x-kubernetes-list-type': 'atomic' },
    name: str,
    namespace: str,
    ownerReferences: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['uid'],
      items: {
        type: 'object',
        properties: {
          apiVersion: str,
          blockOwnerDeletion: { type: 'boolean' },
          controller: { type: 'boolean' },
          kind: str,
          name: str,
          uid: str,
        },
      },
    },
    resourceVersion: str,
    selfLink: str,
    uid: str,
  },
};

/** The atom of a whole object (apiVersion, kind, metadata, spec, status...). */
export function compileObjectSchema(schema: StructuralSchema): Atom {
  return compile(withKubeMeta(schema), false);
}

function withKubeMeta(schema: StructuralSchema): StructuralSchema {
  return { ...schema, properties: { ...schema.properties, apiVersion: str, kind: str, metadata: OBJECT_META } };
}

function compile(schema: StructuralSchema, inPreserved: boolean): Atom {
  const preserve = inPreserved || schema['x-kubernetes-preserve-unknown-fields'] === true;
  const source = schema['x-kubernetes-embedded-resource'] ? withKubeMeta(schema) : schema;
  switch (source.type) {
    case undefined:
      return { scalar: true, list: compileList(source, preserve), map: compileMap(source, preserve) };
    case 'object':
      return { map: compileMap(source, preserve) };
    case 'array':
      return { list: compileList(source, preserve) };
    default:
      return { scalar: true };
  }
}

function compileMap(schema: StructuralSchema, preserve: boolean): MapType {
  const fields = new Map<string, { type: Atom; default?: unknown }>();
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    fields.set(name, { type: compile(property, preserve), default: property.default });
  }
  const extra = schema.additionalProperties;
  let element: Atom | undefined;
  if (extra === undefined) element = preserve || fields.size === 0 ? DEDUCED : undefined;
  else if (extra === true) element = DEDUCED;
  else if (extra !== false) element = compile(extra, preserve);
  return { atomic: schema['x-kubernetes-map-type'] === 'atomic', fields, element };
}

function compileList(schema: StructuralSchema, preserve: boolean): ListType {
  return {
    relationship: schema['x-kubernetes-list-type'] ?? 'atomic',
    keys: schema['x-kubernetes-list-map-keys'] ?? [],
    element: schema.items ? compile(schema.items, preserve) : UNTYPED,
  };
}

/** The shape a value takes at a position; undefined when it fits none (or is null/absent). */
export type Shape = 'map' | 'scalar' | 'list';

export function shapeOf(atom: Atom, value: unknown): Shape | undefined {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return atom.scalar ? 'scalar' : undefined;
  }
  if (Array.isArray(value)) return atom.list ? 'list' : undefined;
  if (isJsonObject(value)) return atom.map ? 'map' : undefined;
  return undefined;
}

/** The handler kube runs for a value: its own shape, else the atom's first of map, scalar, list. */
export function handlerFor(atom: Atom, shape: Shape | undefined): Shape {
  return shape ?? (atom.map ? 'map' : atom.scalar ? 'scalar' : 'list');
}

/**
 * Kube compares the deduced atoms of both sides: a value that fits none of the
 * shapes keeps the whole atom, so it only matches a value that does the same
 * or an atom with a single shape.
 */
export function sameAtom(atom: Atom, a: Shape | undefined, b: Shape | undefined): boolean {
  if (a === b) return true;
  const single = [atom.map, atom.scalar, atom.list].filter(Boolean).length === 1;
  return single && (a === undefined || b === undefined);
}

export function fieldType(map: MapType, name: string): Atom {
  return map.fields.get(name)?.type ?? map.element ?? DEDUCED;
}

/** A value the schema cannot type (bad list item, duplicate key in applied config). */
export class SchemaMismatch extends Error {}

/** Identifies an item of a `set` or `map` list. */
export function listItemElement(list: ListType, item: unknown, path: Path, index: number): PathElement {
  const fail = (why: string): never => {
    throw new SchemaMismatch(`${pathToString(path)}: element ${index}: ${why}`);
  };
  if (list.keys.length === 0) {
    if (isJsonObject(item)) fail("associative list without keys has an element that's a map type");
    if (Array.isArray(item)) fail('not supported: associative list with lists as elements');
    if (item === null || item === undefined) fail("associative list without keys has an element that's an explicit null");
    return { value: item };
  }
  if (item === null || item === undefined) fail('associative list with keys may not have a null element');
  if (!isJsonObject(item)) fail('associative list with keys may not have non-map elements');
  const fields: [string, unknown][] = [];
  const itemFields = list.element.map?.fields;
  for (const key of list.keys) {
    const defaulted = itemFields?.get(key)?.default;
    if ((item as Record<string, unknown>)[key] !== undefined) fields.push([key, (item as Record<string, unknown>)[key]]);
    else if (defaulted !== undefined) fields.push([key, defaulted]);
  }
  if (fields.length === 0) {
    fail(
      `associative list with keys has an element that omits all key fields [${list.keys.map((k) => JSON.stringify(k)).join(' ')}] (and doesn't have default values for any key fields)`,
    );
  }
  return keyElement(fields);
}
