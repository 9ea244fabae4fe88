/**
 * How every backend turns the objects it is given into stored bytes and back: storage owns
 * metadata.resourceVersion (stripped on write, set from the revision on read) and refuses values
 * over maxValueBytes; watch event values are deep-frozen so one parse can be shared.
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

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
