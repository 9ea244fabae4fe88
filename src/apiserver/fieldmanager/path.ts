/**
 * Path elements of structured-merge-diff: how a field set names a struct
 * field, a map-list item (by its keys), a set item (by value) or an index.
 */
import { compareStrings, compareValues, goJson, goJsonString, valueToString } from './value.js';

export type PathElement =
  | { readonly field: string }
  /** Key fields sorted by name, as kube sorts them before encoding `k:{...}`. */
  | { readonly key: readonly (readonly [string, unknown])[] }
  | { readonly value: unknown }
  | { readonly index: number };

export type Path = readonly PathElement[];

export function keyElement(fields: [string, unknown][]): PathElement {
  return { key: [...fields].sort((a, b) => compareStrings(a[0], b[0])) };
}

/** Field < key < value < index; then by content. */
export function comparePathElements(a: PathElement, b: PathElement): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  if ('field' in a) return compareStrings(a.field, (b as { field: string }).field);
  if ('key' in a) return compareKeys(a.key, (b as { key: readonly (readonly [string, unknown])[] }).key);
  if ('value' in a) return compareValues(a.value, (b as { value: unknown }).value);
  const bi = (b as { index: number }).index;
  return a.index === bi ? 0 : a.index < bi ? -1 : 1;
}

function rank(pe: PathElement): number {
  if ('field' in pe) return 0;
  if ('key' in pe) return 1;
  return 'value' in pe ? 2 : 3;
}

function compareKeys(a: readonly (readonly [string, unknown])[], b: readonly (readonly [string, unknown])[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const byName = compareStrings(a[i]![0], b[i]![0]);
    if (byName !== 0) return byName;
    const byValue = compareValues(a[i]![1], b[i]![1]);
    if (byValue !== 0) return byValue;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** The FieldsV1 key of an element; canonical, so it doubles as the element's identity. */
export function serializePathElement(pe: PathElement): string {
  if ('field' in pe) return `f:${pe.field}`;
  if ('key' in pe) return `k:{${pe.key.map(([name, v]) => `${goJsonString(name, false)}:${goJson(v)}`).join(',')}}`;
  if ('value' in pe) return `v:${goJson(pe.value)}`;
  return `i:${pe.index}`;
}

export class PathElementSyntaxError extends Error {}

/** Parses a FieldsV1 key; undefined for element types this server does not know (kube drops those too). */
export function parsePathElement(text: string): PathElement | undefined {
  if (text.length < 2 || text[1] !== ':') throw new PathElementSyntaxError(`invalid path element ${JSON.stringify(text)}`);
  const body = text.slice(2);
  switch (text[0]) {
    case 'f':
      return { field: body };
    case 'v':
      return { value: parseJson(body) };
    case 'k': {
      const fields = parseJson(body);
      if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
        throw new PathElementSyntaxError(`invalid key ${JSON.stringify(body)}`);
      }
      return keyElement(Object.entries(fields));
    }
    case 'i':
      if (!/^[+-]?\d+$/.test(body)) throw new PathElementSyntaxError(`invalid index ${JSON.stringify(body)}`);
      return { index: Number(body) };
    default:
      return undefined;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new PathElementSyntaxError(`invalid JSON in path element: ${text}`);
  }
}

/** Kube's rendering of a path in conflicts: `.spec.ports[name="http",protocol="TCP"].port`. */
export function pathToString(path: Path): string {
  return path
    .map((pe) => {
      if ('field' in pe) return `.${pe.field}`;
      if ('key' in pe) return `[${pe.key.map(([name, v]) => `${name}=${valueToString(v)}`).join(',')}]`;
      if ('value' in pe) return `[=${valueToString(pe.value)}]`;
      return `[${pe.index}]`;
    })
    .join('');
}
