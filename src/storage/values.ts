/**
 * How every backend turns the objects it is given into stored bytes and back: storage owns
 * metadata.resourceVersion (stripped on write, set from the revision on read) and refuses values
 * over maxValueBytes; watch event values are deep-frozen so one parse can be shared.
 *
 * Values held in memory (the watch cache, its event window, the inventory) also share what they
 * repeat: a subtree equal to one seen before (a template's security group rules, an image filter, a
 * field set, which mirrors the object's shape) becomes that one frozen copy, and so does a short
 * string (a kind, a namespace, a flavor name), where JSON.parse makes a new one each time. Objects
 * made from one template differ in a few leaves. In 10,000 OpenStackClusters, most of the strings,
 * objects and arrays were such repeats. Every one of them is marked by each full collection, so
 * sharing them cuts that collection's work and the heap. This is the one place storage looks past
 * resourceVersion into a value: what it shares is frozen, so no holder can tell.
 */
import { ValueTooLargeError, maxValueBytes, type JsonObject } from './interface.js';
import { isJsonObject } from './json.js';

/** The JSON stored for `value`, without its resourceVersion; ValueTooLargeError past the limit. */
export function serializeWithoutResourceVersion(key: string, value: JsonObject): string {
  const json = JSON.stringify(withoutResourceVersion(value));
  // Length counts UTF-16 units, at most the byte count; only a value near the limit pays for the exact count.
  if (json.length * 3 > maxValueBytes) {
    const bytes = Buffer.byteLength(json);
    if (bytes > maxValueBytes) throw new ValueTooLargeError(key, bytes);
  }
  return json;
}

function withoutResourceVersion(value: JsonObject): JsonObject {
  const metadata = value.metadata;
  if (!isJsonObject(metadata) || !('resourceVersion' in metadata)) return value;
  const metadataCopy = { ...metadata };
  delete metadataCopy.resourceVersion;
  return { ...value, metadata: metadataCopy };
}

/**
 * The value a write was given, as written at `revision`: what a backend answers instead of parsing
 * back the bytes it just stored. It shares the given value's members, which the writer handed over
 * (Storage.create, Storage.update).
 */
export function withResourceVersion(value: JsonObject, revision: number): JsonObject {
  const metadata = isJsonObject(value.metadata) ? value.metadata : {};
  return { ...value, metadata: { ...metadata, resourceVersion: String(revision) } };
}

/** A stored value read back, with resourceVersion = `revision`. */
export function parseWithResourceVersion(json: string, revision: number): JsonObject {
  const value = JSON.parse(json) as JsonObject;
  const resourceVersion = String(revision);
  if (isJsonObject(value.metadata)) value.metadata.resourceVersion = resourceVersion;
  else value.metadata = { resourceVersion };
  return value;
}

/**
 * At most `max` entries: two generations of half that, the older dropped whole when the newer
 * fills, and an entry found in the older carried over. That keeps what is in use at O(1) a lookup;
 * deleting single entries from a Map leaves holes that its iteration, and so an eviction of the
 * oldest, walks over.
 */
class RecentTable<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();

  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    const found = this.current.get(key);
    if (found !== undefined) return found;
    const carried = this.previous.get(key);
    if (carried !== undefined) this.set(key, carried);
    return carried;
  }

  set(key: K, value: V): void {
    if (this.current.size >= this.max / 2) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
  }
}

/** Longer strings are not shared on their own (a certificate, user data): they are rarely repeated. */
const maxSharedStringLength = 256;
/**
 * Wider objects and arrays are frozen but not looked into: a Secret of 50,000 keys is not a repeat,
 * hashing it cost a write to it a third of its time, and its members would push everything useful
 * out of the tables. (Field sets of a few thousand entries do repeat, and stay shared.)
 */
const maxSharedMembers = 10_000;
/**
 * Subtrees by their hash, which is made of their members' hashes: a member subtree counts by its
 * own, so hashing is one level of work however deep the value. A copy is shared only when its
 * members are the same, name for name and value for value (a shared member is the same object), so
 * a collision costs a share, never a wrong value. A copy stays in the table after the last value
 * holding it is gone, until newer entries push it out, so the bound is also the most dead copies it
 * keeps alive. Repeats are found on every object, so they stay; with 100,000 entries the tables
 * kept 22 MB of copies after 30,000 OpenStackClusters were dropped, and with 20,000 they keep
 * 4 MB and share as much.
 */
const sharedSubtrees = new RecentTable<number, object>(20_000);
const sharedStrings = new RecentTable<string, string>(20_000);

/** Deep-freezes an entry or event read from storage, with what its values repeat of others shared. */
export function freezeShared<T extends { value: JsonObject; prevValue?: JsonObject }>(record: T): T {
  shareWithin(record.value);
  if (record.prevValue) shareWithin(record.prevValue);
  return deepFreeze(record);
}

/**
 * An object and its metadata differ in every value (name, uid, resourceVersion), so they are not
 * looked up themselves; what they contain is.
 */
function shareWithin(value: JsonObject): void {
  if (Object.isFrozen(value)) return;
  shareMembers(value);
  if (isJsonObject(value.metadata) && !Object.isFrozen(value.metadata)) shareMembers(value.metadata);
}

function shareMembers(object: JsonObject): void {
  for (const name of Object.keys(object)) {
    if (name === 'metadata' || name === '__proto__') continue;
    object[name] = shared(object[name])[0] as JsonObject[string];
  }
}

/**
 * `node` with every subtree and string seen before replaced by the shared copy, and the hash of its
 * content (undefined when it cannot be shared). Mutates `node`, which comes fresh from a parse; a
 * frozen node is somebody's already and is left whole.
 */
function shared(node: unknown): [unknown, number | undefined] {
  switch (typeof node) {
    case 'string': {
      const hash = hashString(node);
      if (node.length > maxSharedStringLength) return [node, hash];
      const known = sharedStrings.get(node);
      if (known !== undefined) return [known, hash];
      sharedStrings.set(node, node);
      return [node, hash];
    }
    case 'number':
      return [node, mix(1, hashString(String(node)))];
    case 'boolean':
      return [node, node ? 2 : 3];
  }
  if (typeof node !== 'object' || node === null || Object.isFrozen(node)) return [node, node === null ? 4 : undefined];
  const array = Array.isArray(node);
  const members = node as Record<string, unknown>;
  if ((array ? (node as unknown[]).length : Object.keys(members).length) > maxSharedMembers) return [deepFreeze(node), undefined];
  let hash: number | undefined = array ? 5 : 6;
  for (const name of Object.keys(members)) {
    // Assigning `__proto__` would set the prototype, not the member JSON.parse made.
    const [member, memberHash] = name === '__proto__' ? [members[name], undefined] : shared(members[name]);
    if (member !== members[name]) members[name] = member;
    if (hash !== undefined) hash = memberHash === undefined ? undefined : mix(array ? hash : mix(hash, hashString(name)), memberHash);
  }
  Object.freeze(node);
  if (hash === undefined) return [node, undefined];
  const known = sharedSubtrees.get(hash);
  if (known !== undefined && sameMembers(known, node)) return [known, hash];
  sharedSubtrees.set(hash, node);
  return [node, hash];
}

function sameMembers(a: object, b: object): boolean {
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const names = Object.keys(a);
  const others = Object.keys(b);
  if (names.length !== others.length) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  return names.every((name, index) => others[index] === name && left[name] === right[name]);
}

/** FNV-1a over UTF-16 units. */
function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
  return hash >>> 0;
}

function mix(hash: number, value: number): number {
  const mixed = Math.imul(hash ^ value, 0x9e3779b1);
  return (mixed ^ (mixed >>> 15)) >>> 0;
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
