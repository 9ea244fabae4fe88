/**
 * Reading and comparing stored objects the way CAPO's webhooks see them.
 * CAPO decodes requests into Go structs, so a JSON null and a missing field
 * are the same nil pointer, slice or map there; these helpers keep that.
 */
import type { JsonObject } from '../../../storage/interface.js';
import { isJsonObject } from '../../../storage/json.js';

/** Whether the field is non-nil once decoded. */
export function isSet(parent: unknown, key: string): boolean {
  return isJsonObject(parent) && parent[key] !== undefined && parent[key] !== null;
}

export function objectAt(parent: unknown, key: string): JsonObject | undefined {
  const value = isJsonObject(parent) ? parent[key] : undefined;
  return isJsonObject(value) ? value : undefined;
}

export function listAt(parent: unknown, key: string): unknown[] | undefined {
  const value = isJsonObject(parent) ? parent[key] : undefined;
  return Array.isArray(value) ? value : undefined;
}

/** A string field as Go reads it, where unset is "". */
export function stringAt(parent: unknown, key: string): string {
  const value = isJsonObject(parent) ? parent[key] : undefined;
  return typeof value === 'string' ? value : '';
}

/** The value at a dotted path of object fields. */
export function valueAt(root: unknown, path: string): unknown {
  let value = root;
  for (const key of path.split('.')) value = isJsonObject(value) ? value[key] : undefined;
  return value;
}

/**
 * A copy of the object at `path` that the caller may strip of the fields
 * CAPO lets change before comparing; {} when there is none.
 */
export function copyAt(root: JsonObject, path: string): JsonObject {
  const value = valueAt(root, path);
  return isJsonObject(value) ? structuredClone(value) : {};
}

export function deleteFields(objects: readonly (JsonObject | undefined)[], ...keys: string[]): void {
  for (const object of objects) {
    if (object) for (const key of keys) delete object[key];
  }
}

export interface Equality {
  /**
   * Also count an empty list as unset: true where CAPO compares the spec
   * after round-tripping it through its `omitempty` JSON encoding.
   */
  emptyListIsUnset?: boolean;
}

/** Go's reflect.DeepEqual of the decoded values. */
export function decodedEqual(a: unknown, b: unknown, equality: Equality = {}): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => decodedEqual(item, b[i], equality));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((key) => {
      const unsetA = isUnset(a[key], equality);
      const unsetB = isUnset(b[key], equality);
      return unsetA || unsetB ? unsetA && unsetB : decodedEqual(a[key], b[key], equality);
    });
  }
  return a === b;
}

function isUnset(value: unknown, equality: Equality): boolean {
  return value === undefined || value === null || (equality.emptyListIsUnset === true && Array.isArray(value) && value.length === 0);
}
