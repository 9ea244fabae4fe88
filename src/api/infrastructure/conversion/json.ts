/** Small helpers over plain JSON values, as conversion sees objects. */
import type { JsonObject } from '../../../storage/interface.js';
import { isJsonObject } from '../../../storage/json.js';

/** A field's location: the keys from the object root down to it. */
export type Path = readonly string[];

/** The value at a path, or undefined when it or one of its parents is absent. */
export function getPath(root: unknown, path: Path): unknown {
  let value = root;
  for (const key of path) {
    if (!isJsonObject(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}

/** Sets a value, creating the missing parents. */
export function setPath(root: JsonObject, path: Path, value: unknown): void {
  let parent = root;
  for (const key of path.slice(0, -1)) {
    if (!isJsonObject(parent[key])) parent[key] = {};
    parent = parent[key] as JsonObject;
  }
  parent[path[path.length - 1]] = value;
}

/**
 * Moves `from[fromKey]` to `to[toKey]` (both may be the same object), mapping
 * the value on the way. Absent stays absent, so partial objects stay partial.
 */
export function move(from: JsonObject, fromKey: string, to: JsonObject, toKey: string, map: (value: unknown) => unknown = (v) => v): void {
  if (!Object.hasOwn(from, fromKey)) return;
  const value = from[fromKey];
  delete from[fromKey];
  to[toKey] = map(value);
}

export const invert = (value: unknown): boolean => !value;

/** Sorted keys at every level, so equal values always serialise to the same annotation. */
export function canonicalJson(value: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (!isJsonObject(v)) return v;
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((key) => [key, sorted(v[key])]),
    );
  };
  return JSON.stringify(sorted(value));
}
