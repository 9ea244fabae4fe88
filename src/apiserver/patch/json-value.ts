/**
 * How big and how deep a client's JSON value is, asked by body decoding and the
 * patch engines before anything walks it recursively. Both walk with an explicit
 * stack, so no input can overflow the call stack, and stop once past their limit.
 * (Copying and comparing values: storage/json.ts.)
 */
import { isJsonObject } from '../../storage/json.js';

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
