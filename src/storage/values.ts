/**
 * How every backend turns the objects it is given into stored bytes and back: storage owns
 * metadata.resourceVersion (stripped on write, set from the revision on read) and refuses values
 * over maxValueBytes; watch event values are deep-frozen so one parse can be shared.
 *
 * Values held in memory (the watch cache, its event window, the inventory) also share their
 * managedFields field sets. A field set mirrors the object's shape, so it is about two thirds of a
 * parsed object's heap (3.3 of 4.8 KB for an OpenStackCluster), and objects written by one manager
 * through one code path record the same one: 10,000 clusters hold a handful of distinct sets. This is
 * the one place storage looks past resourceVersion into a value, because nothing else in an object
 * repeats at that size.
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

/** A stored value read back, with resourceVersion = `revision`. */
export function parseWithResourceVersion(json: string, revision: number): JsonObject {
  const value = JSON.parse(json) as JsonObject;
  const resourceVersion = String(revision);
  if (isJsonObject(value.metadata)) value.metadata.resourceVersion = resourceVersion;
  else value.metadata = { resourceVersion };
  return value;
}

/** Field sets by their JSON, so an identical set read again is the same frozen object. */
const sharedFieldSets = new Map<string, JsonObject>();
/**
 * What the table may hold, counted in JSON characters: past it the oldest sets are forgotten (objects
 * holding them keep them). A set larger than a typical object's is not shared at all, so no writer of
 * large, distinct field sets can make the table itself a burden.
 */
const maxSharedFieldSetsLength = 8 * 1024 * 1024;
const maxSharedFieldSetLength = 16 * 1024;
let sharedFieldSetsLength = 0;

/** Deep-freezes an entry or event read from storage, with its values' field sets shared. */
export function freezeShared<T extends { value: JsonObject; prevValue?: JsonObject }>(record: T): T {
  shareFieldSets(record.value);
  if (record.prevValue) shareFieldSets(record.prevValue);
  return deepFreeze(record);
}

function shareFieldSets(value: JsonObject): void {
  const managedFields = isJsonObject(value.metadata) ? value.metadata.managedFields : undefined;
  if (!Array.isArray(managedFields)) return;
  for (const entry of managedFields) {
    if (!isJsonObject(entry) || !isJsonObject(entry.fieldsV1)) continue;
    const json = JSON.stringify(entry.fieldsV1);
    if (json.length > maxSharedFieldSetLength) continue;
    let shared = sharedFieldSets.get(json);
    if (!shared) {
      for (const [oldest] of sharedFieldSets) {
        if (sharedFieldSetsLength + json.length <= maxSharedFieldSetsLength) break;
        sharedFieldSets.delete(oldest);
        sharedFieldSetsLength -= oldest.length;
      }
      shared = deepFreeze(entry.fieldsV1);
      sharedFieldSets.set(json, shared);
      sharedFieldSetsLength += json.length;
    }
    entry.fieldsV1 = shared;
  }
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
