/**
 * JSON Patch (RFC 6902) with kube-apiserver's error mapping:
 *  - a body that is not an array of objects is a 400 carrying the Go decoder's
 *    wording, as kube returns it;
 *  - more than 10000 operations is a 413 (kube's limit and text);
 *  - `copy` operations may add at most 3 MiB in all (kube's
 *    --json-patch-max-copy-bytes): each copy doubles what it copies at most,
 *    so without a bound 25 copies of a small subtree into itself exhaust the
 *    heap. The breach is kube's 422 with the library's wording as its cause;
 *  - no operation may nest the document past the nesting limit bodies have;
 *  - an unknown op or a missing/ill-formed field is a 400 here; kube reports
 *    those only while applying, as 422, but they are defects of the patch
 *    itself rather than of its fit to the object;
 *  - an operation that cannot be applied (test mismatch, missing target,
 *    index out of range) is kube's generic 422 Invalid, whose message never
 *    carries the reason. The reason is kept on `error.cause` for logs.
 */
import { ApiError, errors } from '../errors.js';
import type { JsonObject } from '../../storage/interface.js';
import { cloneJson, isJsonObject, jsonEqual, setOwn } from '../../storage/json.js';
import { jsonSizeUpTo, maxNestingDepth, nestingDepth } from './json-value.js';

const maxOperations = 10000;
export const maxCopyBytes = 3 * 1024 * 1024;

type Operation =
  | { op: 'add' | 'replace' | 'test'; path: Pointer; value: unknown }
  | { op: 'remove'; path: Pointer }
  | { op: 'move' | 'copy'; from: Pointer; path: Pointer };

/** A parsed JSON Pointer (RFC 6901) with its original text for messages. */
interface Pointer {
  text: string;
  tokens: string[];
}

const opNames = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** Returns the patched document; neither argument is modified. */
export function applyJsonPatch(document: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw errors.badRequest(unmarshalError(patch, 'jsonpatch.Patch'));
  for (const item of patch) {
    if (!isJsonObject(item)) throw errors.badRequest(unmarshalError(item, 'jsonpatch.Operation'));
  }
  if (patch.length > maxOperations) {
    throw errors.tooLarge(`Request entity too large: The allowed maximum operations in a JSON patch is ${maxOperations}, got ${patch.length}`);
  }
  const operations = (patch as JsonObject[]).map(parseOperation);
  let result = cloneJson(document);
  const copied = { bytes: 0 };
  for (const operation of operations) result = applyOperation(result, operation, copied);
  return result;
}

function unmarshalError(value: unknown, goType: string): string {
  return `json: cannot unmarshal ${jsonTypeName(value)} into Go value of type ${goType}`;
}

/** The JSON type names Go's encoding/json uses in its errors. */
function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}

function parseOperation(raw: JsonObject): Operation {
  const op = typeof raw.op === 'string' ? raw.op : 'unknown';
  if (!opNames.has(op)) throw errors.badRequest(`Unexpected kind: ${op}`);
  const path = pointerField(raw, op, 'path');
  switch (op) {
    case 'remove':
      return { op, path };
    case 'move':
    case 'copy':
      return { op, from: pointerField(raw, op, 'from'), path };
    default:
      if (!Object.hasOwn(raw, 'value')) throw errors.badRequest(`${op} operation, missing value field`);
      return { op: op as 'add' | 'replace' | 'test', path, value: raw.value };
  }
}

function pointerField(raw: JsonObject, op: string, field: 'path' | 'from'): Pointer {
  const text = raw[field];
  if (text === undefined || text === null) throw errors.badRequest(`${op} operation, missing ${field} field`);
  if (typeof text !== 'string') throw errors.badRequest(`${op} operation, ${field} field must be a string`);
  if (text !== '' && (!text.startsWith('/') || /~([^01]|$)/.test(text))) {
    throw errors.badRequest(`${op} operation, ${field} field is not a valid JSON pointer: ${JSON.stringify(text)}`);
  }
  const tokens =
    text === ''
      ? []
      : text
          .slice(1)
          .split('/')
          .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  return { text, tokens };
}

/** `document` is a private copy, so containers inside it may be changed in place. */
function applyOperation(document: unknown, operation: Operation, copied: { bytes: number }): unknown {
  switch (operation.op) {
    case 'add':
      return add(document, operation.path, cloneJson(operation.value), 'add');
    case 'remove':
      remove(document, operation.path, 'remove');
      return document;
    case 'replace':
      return replace(document, operation.path, cloneJson(operation.value));
    case 'move': {
      const { from, path } = operation;
      if (isProperPrefix(from.tokens, path.tokens)) {
        throw failed(`move operation does not apply: from ${from.text} is a prefix of path ${path.text}`);
      }
      const value = get(document, from, 'move');
      // The root is a prefix of every other path, so moving it can only target the root itself.
      if (from.tokens.length === 0) return value;
      remove(document, from, 'move');
      return add(document, path, value, 'move');
    }
    case 'copy': {
      const value = get(document, operation.from, 'copy');
      // Measured before cloning, and only up to what is left of the budget, so a breach costs no more than the budget.
      const left = maxCopyBytes - copied.bytes;
      const size = jsonSizeUpTo(value, left);
      if (size > left) {
        throw failed(`Unable to complete the copy, the accumulated size increase of copy is ${copied.bytes + size}, exceeding the limit ${maxCopyBytes}`, {
          visible: true,
        });
      }
      copied.bytes += size;
      return add(document, operation.path, cloneJson(value), 'copy');
    }
    case 'test':
      if (!jsonEqual(get(document, operation.path, 'test'), operation.value)) {
        throw failed(`testing value ${operation.path.text} failed: test failed`);
      }
      return document;
  }
}

function add(document: unknown, path: Pointer, value: unknown, op: string): unknown {
  checkNesting(path, value, op);
  if (path.tokens.length === 0) return value;
  const { parent, key } = locateParent(document, path, op);
  if (Array.isArray(parent)) {
    const index = key === '-' ? parent.length : arrayIndex(key, parent.length + 1, path, op);
    parent.splice(index, 0, value);
  } else {
    setOwn(parent, key, value);
  }
  return document;
}

/**
 * Keeps the document within the nesting limit after every operation: otherwise repeated adds at
 * the deepest point would deepen it without bound, and the walkers after the patch recurse.
 */
function checkNesting(path: Pointer, value: unknown, op: string): void {
  const left = maxNestingDepth - path.tokens.length;
  if (nestingDepth(value, Math.max(left, 0)) > left) {
    throw failed(`${op} operation does not apply: the result would nest more than ${maxNestingDepth} levels deep at ${path.text}`, { visible: true });
  }
}

function remove(document: unknown, path: Pointer, op: string): void {
  if (path.tokens.length === 0) throw missing(op, path);
  const { parent, key } = locateParent(document, path, op);
  if (Array.isArray(parent)) {
    parent.splice(arrayIndex(key, parent.length, path, op), 1);
  } else {
    if (!Object.hasOwn(parent, key)) throw missing(op, path);
    delete parent[key];
  }
}

/** In place rather than remove-then-add, so an object keeps its key order. */
function replace(document: unknown, path: Pointer, value: unknown): unknown {
  checkNesting(path, value, 'replace');
  if (path.tokens.length === 0) return value;
  const { parent, key } = locateParent(document, path, 'replace');
  if (Array.isArray(parent)) {
    parent[arrayIndex(key, parent.length, path, 'replace')] = value;
  } else {
    if (!Object.hasOwn(parent, key)) throw missing('replace', path);
    setOwn(parent, key, value);
  }
  return document;
}

function get(document: unknown, path: Pointer, op: string): unknown {
  let current = document;
  for (const token of path.tokens) current = child(current, token, path, op);
  return current;
}

function locateParent(document: unknown, path: Pointer, op: string): { parent: unknown[] | JsonObject; key: string } {
  let parent = document;
  for (const token of path.tokens.slice(0, -1)) parent = child(parent, token, path, op);
  if (!Array.isArray(parent) && !isJsonObject(parent)) throw missing(op, path);
  return { parent, key: path.tokens[path.tokens.length - 1] };
}

function child(container: unknown, token: string, path: Pointer, op: string): unknown {
  if (Array.isArray(container)) return container[arrayIndex(token, container.length, path, op)];
  if (isJsonObject(container) && Object.hasOwn(container, token)) return container[token];
  throw missing(op, path);
}

/** RFC 6901 indices: decimal without leading zeros; `limit` is exclusive. */
function arrayIndex(token: string, limit: number, path: Pointer, op: string): number {
  const index = /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : Number.NaN;
  if (!(index < limit)) {
    throw failed(`${op} operation does not apply: invalid array index ${JSON.stringify(token)} in path ${path.text}`);
  }
  return index;
}

function isProperPrefix(prefix: string[], tokens: string[]): boolean {
  return prefix.length < tokens.length && prefix.every((token, i) => token === tokens[i]);
}

function missing(op: string, path: Pointer): ApiError {
  return failed(`${op} operation does not apply: doc is missing path: ${path.text}`);
}

/**
 * kube's generic 422. For most failures kube's own message hides the reason (kept on `cause` for
 * logs); a resource bound it reports as an UnexpectedServerResponse cause, so the client can tell.
 */
function failed(reason: string, options: { visible?: boolean } = {}): ApiError {
  const details = options.visible ? { causes: [{ reason: 'UnexpectedServerResponse' as const, message: reason }] } : {};
  const error = new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', details);
  error.cause = new Error(reason);
  return error;
}
