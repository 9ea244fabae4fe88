/**
 * JSON Merge Patch (RFC 7386), the patch kubectl apply/edit/label and most
 * controllers send. Arrays are replaced wholesale: without a schema there is
 * no way to merge list items, which is why CRD-style kinds behave this way.
 */
import { cloneJson, isJsonObject, setOwn } from '../../storage/json.js';

/** Returns the patched document; neither argument is modified. */
export function applyMergePatch(document: unknown, patch: unknown): unknown {
  return mergeInto(cloneJson(document), patch);
}

/** `target` is already a private copy, so it may be changed in place. */
function mergeInto(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return cloneJson(patch);
  const result = isJsonObject(target) ? target : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) {
      delete result[key];
    } else {
      setOwn(result, key, mergeInto(Object.hasOwn(result, key) ? result[key] : undefined, value));
    }
  }
  return result;
}
