/**
 * Strategic merge patch, as kube-apiserver applies it to its built-in kinds:
 * a JSON merge patch whose lists merge the way the field's
 * x-kubernetes-patch-strategy says, steered by the `$` directives kubectl
 * emits (apply, edit, patch, label, annotate):
 *
 * - in a map: `$patch: replace` (the patch replaces the map), `$patch: delete`
 *   (the map becomes empty) and `$retainKeys` (keys the patch does not list
 *   are cleared);
 * - for a list of scalars with strategy "merge" (metadata.finalizers): the
 *   patch's items are added to the current ones, `$deleteFromPrimitiveList/<list>`
 *   removes items and `$setElementOrder/<list>` orders them;
 * - every other list is replaced, as in a JSON merge patch.
 *
 * Lists merged by a key (x-kubernetes-patch-merge-key, e.g. ownerReferences
 * by uid) are refused with 422 rather than merged wrongly: merging them by
 * key is not implemented. Messages never quote field values, which may be secret.
 */
import { ApiError, errors } from '../errors.js';
import type { StructuralSchema } from '../schema/structural-schema.js';
import type { JsonObject } from '../../storage/interface.js';
import { cloneJson, isJsonObject, setOwn } from '../../storage/json.js';

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';

type ListStrategy = 'replace' | 'merge' | 'mergeByKey';

/** Returns the patched document; neither argument is modified. `schema` describes the document. */
export function applyStrategicMergePatch(document: unknown, patch: unknown, schema: StructuralSchema): JsonObject {
  if (!isJsonObject(patch)) throw errors.badRequest('a strategic merge patch must be a JSON object');
  const original = isJsonObject(document) ? (cloneJson(document) as JsonObject) : {};
  return mergeMap(original, patch, schema, '');
}

/** `original` is a private copy, changed in place. */
function mergeMap(original: JsonObject, patch: JsonObject, schema: StructuralSchema | undefined, path: string): JsonObject {
  if (Object.hasOwn(patch, PATCH)) {
    const directive = patch[PATCH];
    if (directive === 'delete') return {};
    if (directive !== 'replace') throw errors.badRequest(`unknown patch type ${describe(directive)} in the map at ${where(path)}`);
    const { [PATCH]: _directive, ...replacement } = patch;
    return mergeMap({}, replacement, schema, path);
  }
  const fields = Object.keys(patch).filter((key) => !isDirective(key));
  if (Object.hasOwn(patch, RETAIN_KEYS)) retainKeys(original, patch[RETAIN_KEYS], fields, path);

  const lists = new Set<string>();
  for (const key of Object.keys(patch)) {
    if (key.startsWith(SET_ELEMENT_ORDER)) lists.add(key.slice(SET_ELEMENT_ORDER.length));
    else if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) lists.add(key.slice(DELETE_FROM_PRIMITIVE_LIST.length));
  }
  for (const key of fields) {
    const value = patch[key];
    if (Array.isArray(value)) lists.add(key);
    else if (value === null) delete original[key];
    else if (isJsonObject(value)) {
      const current = original[key];
      setOwn(original, key, mergeMap(isJsonObject(current) ? current : {}, value, childSchema(schema, key), join(path, key)));
    } else setOwn(original, key, value);
  }
  for (const key of lists) patchList(original, key, patch, childSchema(schema, key), join(path, key));
  return original;
}

function isDirective(key: string): boolean {
  return key === PATCH || key === RETAIN_KEYS || key.startsWith(SET_ELEMENT_ORDER) || key.startsWith(DELETE_FROM_PRIMITIVE_LIST);
}

/** `$retainKeys`: the map keeps only the listed keys, and the patch may only set listed keys. */
function retainKeys(original: JsonObject, retained: unknown, fields: readonly string[], path: string): void {
  if (!Array.isArray(retained) || !retained.every((key) => typeof key === 'string')) {
    throw errors.badRequest(`invalid patch: ${RETAIN_KEYS} in the map at ${where(path)} must be a list of strings`);
  }
  const unlisted = fields.find((key) => !retained.includes(key));
  if (unlisted !== undefined) {
    throw invalidPatch(join(path, unlisted), `the patch sets "${unlisted}", which its ${RETAIN_KEYS} list does not retain`);
  }
  for (const key of Object.keys(original)) if (!retained.includes(key)) delete original[key];
}

/** Applies the patch's value and directives for the list `key` of `original`. */
function patchList(original: JsonObject, key: string, patch: JsonObject, schema: StructuralSchema | undefined, path: string): void {
  const value = patch[key];
  const order = patch[SET_ELEMENT_ORDER + key];
  const deletions = patch[DELETE_FROM_PRIMITIVE_LIST + key];
  if (value === null) {
    delete original[key];
    return;
  }
  const strategy = listStrategy(schema);
  if (strategy === 'mergeByKey') {
    const mergeKey = schema!['x-kubernetes-patch-merge-key']!;
    throw invalidPatch(
      path,
      `strategic merge patch of lists merged by key ("${mergeKey}") is not supported; send a JSON merge patch (kubectl --type=merge), a JSON patch or an apply patch`,
    );
  }
  if (strategy === 'replace') {
    if (order !== undefined || deletions !== undefined) {
      throw invalidPatch(path, `${SET_ELEMENT_ORDER}${key} and ${DELETE_FROM_PRIMITIVE_LIST}${key} only apply to lists with patch strategy "merge"`);
    }
    setOwn(original, key, cloneJson(value));
    return;
  }
  // Directives alone do not create a list that is not there.
  if (value === undefined && !Array.isArray(original[key])) return;
  const current = Array.isArray(original[key]) ? (original[key] as unknown[]) : [];
  let merged = current;
  if (value !== undefined) {
    const items = scalarList(value, path, key);
    merged = ordered(unique([...current, ...items]), items, current);
  }
  if (order !== undefined) merged = ordered(merged, scalarList(order, path, SET_ELEMENT_ORDER + key), current);
  if (deletions !== undefined) {
    const removed = scalarList(deletions, path, DELETE_FROM_PRIMITIVE_LIST + key);
    merged = merged.filter((item) => !removed.includes(item));
  }
  setOwn(original, key, merged);
}

function listStrategy(schema: StructuralSchema | undefined): ListStrategy {
  const strategies = (schema?.['x-kubernetes-patch-strategy'] ?? '').split(',');
  if (!strategies.includes('merge')) return 'replace';
  return schema?.['x-kubernetes-patch-merge-key'] ? 'mergeByKey' : 'merge';
}

function scalarList(value: unknown, path: string, name: string): unknown[] {
  if (!Array.isArray(value)) throw errors.badRequest(`invalid patch: ${name} at ${where(path)} must be a list`);
  if (value.some((item) => typeof item === 'object' && item !== null)) {
    throw invalidPatch(path, `${name} must hold scalars: items of a list merged without a key cannot be maps or lists`);
  }
  return value;
}

function unique(items: readonly unknown[]): unknown[] {
  return [...new Set(items)];
}

/**
 * kube's order for a merged list: items named in `order` come in that
 * order; the others keep their place relative to the current list, each
 * placed before the first ordered item that came after it there.
 */
function ordered(items: readonly unknown[], order: readonly unknown[], current: readonly unknown[]): unknown[] {
  const position = (list: readonly unknown[], item: unknown) => list.indexOf(item);
  const named = items.filter((item) => order.includes(item)).sort((a, b) => position(order, a) - position(order, b));
  const others = items.filter((item) => !order.includes(item));
  const result: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < others.length || j < named.length) {
    const other = others[i];
    const next = named[j];
    const otherFirst =
      j >= named.length ||
      (i < others.length && position(current, next) >= 0 && position(current, other) >= 0 && position(current, other) < position(current, next));
    if (otherFirst) result.push(others[i++]);
    else result.push(named[j++]);
  }
  return result;
}

function childSchema(schema: StructuralSchema | undefined, key: string): StructuralSchema | undefined {
  const property = schema?.properties?.[key];
  if (property) return property;
  return typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined;
}

function invalidPatch(field: string, message: string): ApiError {
  return new ApiError(422, 'Invalid', `invalid strategic merge patch at ${field}: ${message}`, {
    causes: [{ reason: 'FieldValueInvalid', field, message }],
  });
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : `of type ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}`;
}

function where(path: string): string {
  return path || 'the root';
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
