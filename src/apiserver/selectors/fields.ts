/**
 * Field selectors with kube's syntax and error texts (apimachinery
 * pkg/fields, plus the field-label check: a CRD-like kind knows
 * metadata.name, metadata.namespace and its selectable fields; a built-in
 * kind answers with kube's "field label not supported").
 */
import { Buffer } from 'node:buffer';
import { errors } from '../errors.js';
import { goQuote } from '../validation/names.js';
import { maxSelectorTerms, tooManyTerms } from './limits.js';

export interface FieldSelector {
  readonly empty: boolean;
  /** `fields`: the object's value for every selectable field (ResourceStrategy.fieldsOf). */
  matches(fields: Readonly<Record<string, string>>): boolean;
  /** set when the selector pins metadata.name=X (used by authorization and by watch of a single object) */
  readonly name?: string;
  /** kube's canonical form: terms sorted, values escaped. */
  toString(): string;
}

interface Term {
  field: string;
  /** `==` is the same requirement as `=`; kube keeps only the two kinds. */
  equal: boolean;
  value: string;
}

/** Splits on commas that are not escaped; values keep their escapes. */
function splitTerms(text: string): string[] {
  if (text === '') return [];
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (escaped) escaped = false;
    else if (ch === '\\') escaped = true;
    else if (ch === ',') {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

/** Order matters for the first reported error and for `name`; kube sorts Go strings, i.e. by UTF-8 bytes. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

const OPERATORS = ['!=', '==', '='] as const;

/** The first operator from the left wins, so `a==b` is `a` `==` `b`, never `a` `=` `=b`. */
function splitTerm(term: string): { lhs: string; op: (typeof OPERATORS)[number]; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of OPERATORS) {
      if (term.startsWith(op, i)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

function unescapeValue(value: string): string {
  if (!/[\\,=]/.test(value)) return value;
  let out = '';
  let escaped = false;
  for (const ch of value) {
    if (escaped) {
      if (ch !== '\\' && ch !== ',' && ch !== '=') {
        throw errors.badRequest(`invalid field selector: invalid escape sequence: \\${ch}`);
      }
      out += ch;
      escaped = false;
    } else if (ch === '\\') {
      escaped = true;
    } else if (ch === ',' || ch === '=') {
      // kube prints the rune with %v, i.e. as its code point number.
      throw errors.badRequest(`invalid field selector: unescaped character in value: ${ch.codePointAt(0)}`);
    } else {
      out += ch;
    }
  }
  if (escaped) throw errors.badRequest('invalid field selector: invalid escape sequence: \\');
  return out;
}

function escapeValue(value: string): string {
  return value.replace(/[\\,=]/g, (ch) => `\\${ch}`);
}

/** The fields a kind is checked against, and whether it answers as a built-in kind or as a CRD. */
export interface KnownFields {
  fields: readonly string[];
  builtIn: boolean;
}

/**
 * Parses a `fieldSelector` query parameter. Throws a 400 ApiError with kube's
 * message for malformed input (checked across all terms first) and then for
 * the first field `known` does not hold; without `known`, any field label
 * passes (to find a pinned name before the kind is known). Past
 * `maxSelectorTerms` terms, a 400 names the limit.
 */
export function parseFieldSelector(text: string, known?: KnownFields): FieldSelector {
  const parts = splitTerms(text).filter((part) => part !== '');
  if (parts.length > maxSelectorTerms) throw tooManyTerms('field', parts.length);
  const parsed: { field: string; equal: boolean; value: string }[] = [];
  for (const part of parts.sort(byteOrder)) {
    const split = splitTerm(part);
    if (!split) throw errors.badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    parsed.push({ field: split.lhs, equal: split.op !== '!=', value: unescapeValue(split.rhs) });
  }
  const terms: Term[] = parsed.map(({ field, equal, value }) => {
    if (known && !known.fields.includes(field)) {
      if (known.builtIn) throw errors.badRequest(`field label not supported: ${field}`);
      throw errors.badRequest(`${goQuote(field)} is not a known field selector: only ${known.fields.map(goQuote).join(', ')}`);
    }
    return { field, equal, value };
  });

  const pinned = terms.find((t) => t.equal && t.field === 'metadata.name');
  return {
    empty: terms.length === 0,
    matches: (fields) => terms.every((t) => ((fields[t.field] ?? '') === t.value) === t.equal),
    ...(pinned ? { name: pinned.value } : {}),
    toString: () => terms.map((t) => `${t.field}${t.equal ? '=' : '!='}${escapeValue(t.value)}`).join(','),
  };
}
