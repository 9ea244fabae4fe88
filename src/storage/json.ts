/**
 * What every layer does with the JSON values storage holds: ask whether one is
 * an object, whether two are the same, and copy one. One copy of each, here at
 * the bottom of the layering so everything above can use them. Values come
 * from clients, so keys such as "__proto__" are ordinary data: every write
 * defines an own property instead of going through the prototype setter.
 */
import type { JsonObject } from './interface.js';

/** An object that is neither null nor an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Structural equality: key order is not significant, array order is, and a key holding undefined counts as absent. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  if (!isJsonObject(a) || !isJsonObject(b)) return false;
  const keys = Object.keys(a).filter((key) => a[key] !== undefined);
  return keys.length === Object.keys(b).filter((key) => b[key] !== undefined).length && keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}

/** Sets `key` as an own property, "__proto__" included. */
export function setOwn(target: JsonObject, key: string, value: unknown): void {
  // Only "__proto__" has a setter on a plain object; defining every key is several times slower to copy 60,000 keys.
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** A deep copy (twice as fast as structuredClone on wide objects). */
export function cloneJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneJson);
  if (!isJsonObject(value)) return value;
  const copy: JsonObject = {};
  for (const key of Object.keys(value)) setOwn(copy, key, cloneJson(value[key]));
  return copy;
}
