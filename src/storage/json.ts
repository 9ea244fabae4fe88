/**
 * The two questions every layer asks of the JSON values storage holds: is
 * this an object, and are these two values the same. One copy of each, here
 * at the bottom of the layering so everything above can use them.
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
