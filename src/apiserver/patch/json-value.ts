/**
 * Plain-JSON helpers shared by body decoding and the patch engines. Patches
 * arrive from clients, so keys such as "__proto__" are ordinary data here:
 * every write defines an own property instead of going through the prototype
 * setter. The measuring helpers walk with an explicit stack, so no input can
 * overflow the call stack, and stop once past their limit.
 */

export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function setOwn(target: JsonObject, key: string, value: unknown): void {
  // Only "__proto__" has a setter on a plain object; defining every key is several times slower to copy 60,000 keys.
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

export function cloneJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneJson);
  if (!isJsonObject(value)) return value;
  const copy: JsonObject = {};
  for (const key of Object.keys(value)) setOwn(copy, key, cloneJson(value[key]));
  return copy;
}

/** Structural equality as JSON defines it: key order does not matter, array order does. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false;
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]))
    );
  }
  return a === b;
}

/**
 * The length of `value` serialised as compact JSON (strings counted in UTF-16 units plus quotes),
 * walking no further once `limit` is passed: the answer is then some number above `limit`.
 */
export function jsonSizeUpTo(value: unknown, limit: number): number {
  let size = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && size <= limit) {
    const item = pending.pop();
    if (Array.isArray(item)) {
      size += 1 + item.length;
      for (const element of item) pending.push(element);
    } else if (isJsonObject(item)) {
      const keys = Object.keys(item);
      size += 1 + keys.length;
      for (const key of keys) {
        size += key.length + 3;
        pending.push(item[key]);
      }
    } else if (typeof item === 'string') {
      size += item.length + 2;
    } else {
      size += String(item).length;
    }
  }
  return size;
}

/**
 * How many containers deep objects and arrays may nest in anything the API accepts. kube's decoder
 * allows 10,000, but every walker after it (pruning, defaulting, validation, managedFields,
 * conversion) recurses; CAPO's schemas nest under 20 levels, so 100 leaves room for free-form
 * fields such as a Cluster's topology variables while keeping every walker far from the stack's end.
 */
export const maxNestingDepth = 100;

/** How deep `value` nests (a scalar is 0, `{}` and `[]` are 1), counting no further than `limit + 1`. */
export function nestingDepth(value: unknown, limit = maxNestingDepth): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, here]);
  }
  return deepest;
}
