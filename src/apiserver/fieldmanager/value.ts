/**
 * JSON value helpers with Go semantics: managedFields keys and conflict
 * messages are byte-compared against what kube-apiserver produces, so value
 * ordering, string ordering and JSON/quote escaping follow Go, not JavaScript.
 */
import { isJsonObject } from '../../storage/json.js';

export type JsonObject = { [key: string]: unknown };

export function isEmptyMap(value: unknown): boolean {
  return isJsonObject(value) && Object.keys(value).length === 0;
}

export function clone<T>(value: T): T {
  return value === undefined ? value : (structuredClone(value) as T);
}

/** Go compares strings bytewise (UTF-8), i.e. by code point; UTF-16 order differs above U+E000. */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) return codePointRank(ca) < codePointRank(cb) ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}

/** structured-merge-diff's total order: numbers < strings < booleans < lists < maps < null. */
export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return (a as number) === (b as number) ? 0 : (a as number) < (b as number) ? -1 : 1;
    case 1:
      return compareStrings(a as string, b as string);
    case 2:
      return a === b ? 0 : a ? 1 : -1;
    case 3:
      return compareLists(a as unknown[], b as unknown[]);
    case 4:
      return compareMaps(a as JsonObject, b as JsonObject);
    default:
      return 0;
  }
}

function typeRank(value: unknown): number {
  if (typeof value === 'number') return 0;
  if (typeof value === 'string') return 1;
  if (typeof value === 'boolean') return 2;
  if (Array.isArray(value)) return 3;
  if (isJsonObject(value)) return 4;
  return 5;
}

function compareLists(a: unknown[], b: unknown[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return c;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

function compareMaps(a: JsonObject, b: JsonObject): number {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(compareStrings);
  const aLen = Object.keys(a).length;
  const bLen = Object.keys(b).length;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    let c: number;
    if (i === aLen) c = -1;
    else if (i === bLen) c = 1;
    else if (!(k in a)) c = 1;
    else if (!(k in b)) c = -1;
    else c = compareValues(a[k], b[k]);
    if (c !== 0) return c;
  }
  return 0;
}

/**
 * JSON as Go's encoding/json writes it: map keys sorted, and `<`, `>`, `&`,
 * U+2028/U+2029 and control characters escaped as \u00XX.
 */
export function goJson(value: unknown): string {
  if (typeof value === 'string') return goJsonString(value, true);
  if (Array.isArray(value)) return `[${value.map((v) => goJson(v)).join(',')}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort(compareStrings);
    return `{${keys.map((k) => `${goJsonString(k, true)}:${goJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** escapeHtml=false matches jsoniter's object-field writer used for key field names. */
export function goJsonString(text: string, escapeHtml: boolean): string {
  // Most strings (names, tags, keys) need no escaping: a set of 7,700 tags is serialized on every write.
  if (writtenAsIs(text, escapeHtml)) return `"${text}"`;
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (isLoneSurrogate(code)) out += '\ufffd';
    else if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || (escapeHtml && (ch === '<' || ch === '>' || ch === '&'))) out += unicodeEscape(code);
    else if (escapeHtml && (code === 0x2028 || code === 0x2029)) out += unicodeEscape(code);
    else out += ch;
  }
  return `${out}"`;
}

/** Whether goJsonString writes `text` unchanged between its quotes (any surrogate may be a lone one: no). */
function writtenAsIs(text: string, escapeHtml: boolean): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x22 || code === 0x5c || isLoneSurrogate(code)) return false;
    if (escapeHtml && (code === 0x3c || code === 0x3e || code === 0x26 || code === 0x2028 || code === 0x2029)) return false;
  }
  return true;
}

/** Go strings are UTF-8, so a lone UTF-16 surrogate arrives there as U+FFFD. */
function isLoneSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdfff;
}

function unicodeEscape(code: number): string {
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Go's %q (strconv.Quote), used in conflict messages and field paths. */
export function goQuote(text: string): string {
  const named: Record<string, string> = { '\x07': 'a', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't', '\v': 'v' };
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (isLoneSurrogate(code)) out += '\ufffd';
    else if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (named[ch]) out += `\\${named[ch]}`;
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code === 0x2028 || code === 0x2029) out += `\\u${code.toString(16)}`;
    else out += ch;
  }
  return `${out}"`;
}

/** structured-merge-diff's human-readable rendering of a value (value.ToString). */
export function valueToString(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(valueToString).join(',')}]`;
  const map = value as JsonObject;
  return Object.keys(map)
    .sort(compareStrings)
    .map((k) => `${k}=${valueToString(map[k])}`)
    .join('');
}
