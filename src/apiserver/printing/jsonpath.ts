/**
 * The JSONPath dialect of kubectl and of CRD additionalPrinterColumns
 * (k8s.io/client-go/util/jsonpath), evaluated with missing keys allowed, as
 * the CRD table convertor does. Expressions are compiled once; the result runs
 * once per table row.
 *
 * Semantics follow client-go, quirks included, because a column must print
 * what kube-apiserver prints for the same object:
 * - `['a.b']` is parsed as the path `.a.b` (escape dots: `['a\.b']`);
 * - `[*]` is the slice `[:]` and fails on maps (use `.*` for map values);
 * - an out-of-range index, an index or filter on a non-array, or comparing
 *   values of different types fails the whole evaluation, which yields no
 *   result (an empty cell), never an exception;
 * - `..` yields every non-empty map, array and string, pre-order.
 *
 * Constructs client-go accepts but can only fail on at evaluation time
 * (`range`/`end` identifiers, bare literals outside filters, unknown filter
 * operators) are rejected when compiling, so a bad kind definition is caught
 * at startup instead of printing empty columns forever.
 */
import { isJsonObject } from '../../storage/json.js';

export type CompiledJsonPath = (value: unknown) => unknown[];

export function compileJsonPath(expression: string): CompiledJsonPath {
  const steps = pathSteps(parse(expression, expression), expression);
  return (value) => {
    const outcome = run(steps, [value]);
    return outcome.failed ? [] : outcome.values;
  };
}

// ---- evaluation --------------------------------------------------------------

/**
 * client-go returns a value alongside every error, and an existence filter
 * (`[?(@.a[0])]`) looks at that value even when evaluation failed, so a step
 * reports failure next to what it would have returned instead of throwing.
 */
interface Outcome {
  values: unknown[];
  failed?: true;
}

type Step = (input: unknown[]) => Outcome;

function run(steps: readonly Step[], input: unknown[]): Outcome {
  let current = input;
  for (const step of steps) {
    const outcome = step(current);
    if (outcome.failed) return outcome;
    current = outcome.values;
  }
  return { values: current };
}

/** Go iterates a string by bytes, so `.*` and `..` see UTF-8 bytes. */
function children(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (isJsonObject(value)) return Object.values(value);
  if (typeof value === 'string') return [...Buffer.from(value, 'utf8')];
  return [];
}

function fieldStep(name: string): Step {
  return (input) => {
    const values: unknown[] = [];
    for (const value of input) {
      if (isJsonObject(value) && Object.hasOwn(value, name)) values.push(value[name]);
    }
    return { values };
  };
}

const wildcardStep: Step = (input) => {
  const values: unknown[] = [];
  for (const value of input) values.push(...children(value));
  return { values };
};

const recursiveStep: Step = (input) => {
  const values: unknown[] = [];
  const visit = (value: unknown): void => {
    const inner = children(value);
    if (inner.length === 0) return;
    values.push(value);
    for (const child of inner) visit(child);
  };
  for (const value of input) visit(value);
  return { values };
};

interface SliceParam {
  known: boolean;
  value: number;
  /** The end of `[n]`, computed as n+1 at parse time. */
  derived?: boolean;
}

function sliceStep(start: SliceParam, end: SliceParam, step: SliceParam): Step {
  return (input) => {
    const values: unknown[] = [];
    for (const value of input) {
      if (value === null || value === undefined) continue;
      if (!Array.isArray(value)) return { values: input, failed: true };
      const length = value.length;
      let from = start.known ? start.value : 0;
      if (from < 0) from += length;
      let to = end.known ? end.value : length;
      if (to < 0 || (to === 0 && end.derived)) to += length;
      // client-go stops at the first input whose range is empty, dropping the rest.
      if (to === from) return { values };
      if (from >= length || from < 0) return { values: input, failed: true };
      if (to > length || to < 0) return { values: input, failed: true };
      if (from > to) return { values: input, failed: true };
      let stride = 1;
      if (step.known) {
        if (step.value <= 0) return { values: input, failed: true };
        stride = step.value;
      }
      for (let i = from; i < to; i += stride) values.push(value[i]);
    }
    return { values };
  };
}

function unionStep(branches: readonly Step[][]): Step {
  return (input) => {
    const values: unknown[] = [];
    for (const branch of branches) {
      const outcome = run(branch, input);
      if (outcome.failed) return { values: input, failed: true };
      values.push(...outcome.values);
    }
    return { values };
  };
}

type Operator = '==' | '!=' | '<' | '>' | '<=' | '>=';

/** A literal of a filter; Go distinguishes `1` (int) from `1.0` (float) when comparing. */
class Literal {
  constructor(
    readonly value: string | number | boolean,
    readonly numberKind: 'int' | 'float' = 'int',
  ) {}
}

type Operand = { literal: Literal } | { steps: Step[] };

function evaluateOperand(operand: Operand, element: unknown): Outcome {
  return 'literal' in operand ? { values: [operand.literal] } : run(operand.steps, [element]);
}

function existsFilterStep(operand: Operand): Step {
  return (input) => {
    const values: unknown[] = [];
    for (const value of input) {
      if (!Array.isArray(value)) return { values: input, failed: true };
      for (const element of value) {
        // Failures are ignored here: client-go checks only whether anything came back.
        if (evaluateOperand(operand, element).values.length > 0) values.push(element);
      }
    }
    return { values };
  };
}

function comparisonFilterStep(left: Operand, operator: Operator, right: Operand): Step {
  // client-go compares exactly one value per side: none skips the element, several fail.
  const single = (operand: Operand, element: unknown): { value?: unknown; failed?: true } => {
    const outcome = evaluateOperand(operand, element);
    if (outcome.failed || outcome.values.length > 1) return { failed: true };
    return outcome.values.length === 1 ? { value: outcome.values[0] } : {};
  };
  return (input) => {
    const values: unknown[] = [];
    for (const value of input) {
      if (!Array.isArray(value)) return { values: input, failed: true };
      for (const element of value) {
        const lhs = single(left, element);
        if (lhs.failed) return { values: input, failed: true };
        if (!('value' in lhs)) continue;
        const rhs = single(right, element);
        if (rhs.failed) return { values: input, failed: true };
        if (!('value' in rhs)) continue;
        const verdict = compare(operator, lhs.value, rhs.value);
        if (verdict === undefined) return { values, failed: true };
        if (verdict) values.push(element);
      }
    }
    return { values };
  };
}

type Comparable = { kind: 'bool'; value: boolean } | { kind: 'int' | 'float'; value: number } | { kind: 'string'; value: string };

/** Decoded JSON holds integers as int64 and other numbers as float64 in Go. */
function comparable(value: unknown): Comparable | undefined {
  if (value instanceof Literal) {
    if (typeof value.value === 'number') return { kind: value.numberKind, value: value.value };
    return comparable(value.value);
  }
  if (typeof value === 'boolean') return { kind: 'bool', value };
  if (typeof value === 'string') return { kind: 'string', value };
  if (typeof value === 'number') return { kind: isInt64(value) ? 'int' : 'float', value };
  return undefined;
}

/** text/template's eq/lt family; undefined where Go reports an error (mixed or unordered types). */
function compare(operator: Operator, left: unknown, right: unknown): boolean | undefined {
  const a = comparable(left);
  const b = comparable(right);
  if (!a || !b || a.kind !== b.kind) return undefined;
  const equal = a.value === b.value;
  if (operator === '==') return equal;
  if (operator === '!=') return !equal;
  if (a.kind === 'bool') return undefined;
  const less = a.kind === 'string' ? compareCodePoints(a.value, b.value as string) < 0 : a.value < (b.value as number);
  switch (operator) {
    case '<':
      return less;
    case '<=':
      return less || equal;
    case '>':
      return !(less || equal);
    case '>=':
      return !less;
  }
}

/** Go compares strings bytewise, which for UTF-8 is code point order (JS compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

const INT64_LIMIT = 2 ** 63;

export function isInt64(value: number): boolean {
  return Number.isInteger(value) && value >= -INT64_LIMIT && value < INT64_LIMIT;
}

// ---- parsing -----------------------------------------------------------------

class JsonPathError extends Error {
  constructor(expression: string, reason: string) {
    super(`invalid JSONPath ${JSON.stringify(expression)}: ${reason}`);
  }
}

type Part = { step: Step; recursive?: boolean } | { literal: Literal };

const OPERATORS: readonly string[] = ['==', '!=', '<', '>', '<=', '>='];

function isTerminator(char: string): boolean {
  return char === '' || ' \t\r\n.,[]$@{}'.includes(char);
}

function isAlphaNumeric(char: string): boolean {
  return /^[\p{L}\p{Nd}_]$/u.test(char);
}

/**
 * Parses one action (the text client-go would see between `{` and `}`).
 * Sub-expressions (filter operands, bracketed keys, union members) are parsed
 * as separate actions, as client-go does.
 */
function parse(text: string, expression: string): Part[] {
  const parts: Part[] = [];
  let pos = 0;
  const fail = (reason: string): never => {
    throw new JsonPathError(expression, reason);
  };
  const charAt = (at: number): string => {
    const code = text.codePointAt(at);
    return code === undefined ? '' : String.fromCodePoint(code);
  };

  while (pos < text.length) {
    if (text.startsWith('[?(', pos)) {
      pos = parseFilter(pos + 3);
      continue;
    }
    if (text.startsWith('..', pos)) {
      const last = parts[parts.length - 1];
      if (last && 'step' in last && last.recursive) fail('invalid multiple recursive descent');
      parts.push({ step: recursiveStep, recursive: true });
      pos += 2;
      if (isAlphaNumeric(charAt(pos))) pos = parseField(pos);
      continue;
    }
    const char = charAt(pos);
    if (char === ' ' || char === '@' || char === '$') {
      pos += 1;
    } else if (char === '[') {
      pos = parseBracket(pos + 1);
    } else if (char === '.') {
      pos = parseField(pos + 1);
    } else if (char === '"' || char === "'") {
      pos = parseQuoted(pos);
    } else if (char === '+' || char === '-' || /^\p{Nd}$/u.test(char)) {
      pos = parseNumber(pos);
    } else if (isAlphaNumeric(char)) {
      pos = parseIdentifier(pos);
    } else if (char === '\r' || char === '\n') {
      fail('line breaks are not allowed');
    } else {
      const code = char.codePointAt(0)!;
      fail(`unrecognized character ${JSON.stringify(char)} (U+${code.toString(16).toUpperCase().padStart(4, '0')}) at offset ${pos}`);
    }
  }
  return parts;

  function parseField(from: number): number {
    let end = from;
    for (;;) {
      const char = charAt(end);
      if (char === '\\') {
        end += 1 + charAt(end + 1).length;
      } else if (isTerminator(char)) {
        break;
      } else {
        end += char.length;
      }
    }
    const raw = text.slice(from, end);
    parts.push({ step: raw === '*' ? wildcardStep : fieldStep(raw.replaceAll('\\', '')) });
    return end;
  }

  function parseBracket(from: number): number {
    let end = from;
    while (text[end] !== ']') {
      if (end >= text.length || text[end] === '\n') fail('unterminated array');
      end += 1;
    }
    let inner = text.slice(from, end);
    if (inner === '*') inner = ':';
    const members = inner.split(',');
    if (members.length > 1) {
      parts.push({ step: unionStep(members.map((member) => pathSteps(parse(`[${trimSpaces(member)}]`, expression), expression))) });
      return end + 1;
    }
    const key = /^'([^']*)'$/.exec(inner);
    if (key) {
      parts.push(...parse(`.${key[1]}`, expression));
      return end + 1;
    }
    const slice = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/.exec(inner);
    if (!slice) fail(`invalid array index ${inner}`);
    const params: SliceParam[] = [];
    for (let i = 0; i < 3; i++) {
      let group = slice![i + 1] ?? '';
      if (group === '') {
        params.push(i === 1 ? { known: true, value: params[0].value + 1, derived: true } : { known: false, value: 0 });
        continue;
      }
      if (i > 0) group = group.slice(1);
      if (group === '') {
        params.push({ known: false, value: 0 });
        continue;
      }
      const value = Number(group);
      if (!/^-?\d+$/.test(group) || !isInt64(value)) fail(`array index ${group} is not a number`);
      params.push({ known: true, value });
    }
    parts.push({ step: sliceStep(params[0], params[1], params[2]) });
    return end + 1;
  }

  function parseFilter(from: number): number {
    let end = from;
    let quoteOpen = false;
    let quoteClosed = false;
    let quote = '';
    for (;;) {
      const char = text[end];
      end += 1;
      if (char === undefined || char === '\n') fail('unterminated filter');
      if (char === '"' || char === "'") {
        if (!quoteOpen) {
          quoteOpen = true;
          quote = char;
        } else if (text[end - 2] !== '\\' && char === quote) {
          quoteClosed = true;
        }
      } else if (char === ')' && quoteOpen === quoteClosed) {
        break;
      }
    }
    if (text[end] !== ']') fail('unclosed filter, expected ]');
    const body = text.slice(from, end - 1);
    const comparison = /^([^!<>=]+)([!<>=]+)(.+?)$/.exec(body);
    if (!comparison) {
      parts.push({ step: existsFilterStep(operand(body)) });
    } else {
      const operator = comparison[2];
      if (!OPERATORS.includes(operator)) fail(`unrecognized filter operator ${operator}`);
      parts.push({ step: comparisonFilterStep(operand(comparison[1]), operator as Operator, operand(comparison[3])) });
    }
    return end + 1;
  }

  function operand(source: string): Operand {
    const operandParts = parse(source, expression);
    if (operandParts.length === 1 && 'literal' in operandParts[0]) return { literal: operandParts[0].literal };
    return { steps: pathSteps(operandParts, expression) };
  }

  function parseQuoted(from: number): number {
    const quote = text[from];
    let end = from + 1;
    for (;;) {
      const char = text[end];
      end += 1;
      if (char === undefined || char === '\n') fail('unterminated quoted string');
      if (char === quote && text[end - 2] !== '\\') break;
    }
    parts.push({ literal: new Literal(unquote(text.slice(from + 1, end - 1), quote, (reason) => fail(reason))) });
    return end;
  }

  function parseNumber(from: number): number {
    let end = from;
    if (text[end] === '+' || text[end] === '-') end += 1;
    while (end < text.length && (text[end] === '.' || /^\p{Nd}$/u.test(charAt(end)))) end += charAt(end).length;
    const literal = text.slice(from, end);
    if (/^[+-]?\d+$/.test(literal) && isInt64(Number(literal))) {
      parts.push({ literal: new Literal(Number(literal), 'int') });
    } else if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(literal)) {
      parts.push({ literal: new Literal(Number(literal), 'float') });
    } else {
      fail(`cannot parse number ${literal}`);
    }
    return end;
  }

  function parseIdentifier(from: number): number {
    let end = from;
    while (!isTerminator(charAt(end))) end += charAt(end).length;
    const identifier = text.slice(from, end);
    if (identifier !== 'true' && identifier !== 'false') fail(`unsupported identifier ${identifier}`);
    parts.push({ literal: new Literal(identifier === 'true') });
    return end;
  }
}

function pathSteps(parts: Part[], expression: string): Step[] {
  return parts.map((part) => {
    if ('literal' in part) throw new JsonPathError(expression, 'literals are only allowed as filter operands');
    return part.step;
  });
}

/** strings.Trim(s, " "): client-go trims only spaces around union members. */
function trimSpaces(text: string): string {
  return text.replace(/^ +| +$/g, '');
}

const SIMPLE_ESCAPES: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92 };

/** Go's strconv.UnquoteChar rules, for either quote character. */
function unquote(body: string, quote: string, fail: (reason: string) => never): string {
  const bytes: number[] = [];
  const pushCodePoint = (code: number) => bytes.push(...Buffer.from(String.fromCodePoint(code), 'utf8'));
  let i = 0;
  while (i < body.length) {
    const char = body[i];
    if (char !== '\\') {
      const code = body.codePointAt(i)!;
      pushCodePoint(code);
      i += code > 0xffff ? 2 : 1;
      continue;
    }
    const escaped = body[i + 1];
    i += 2;
    if (escaped === undefined) fail('invalid escape at end of quoted string');
    if (escaped in SIMPLE_ESCAPES) {
      bytes.push(SIMPLE_ESCAPES[escaped]);
    } else if (escaped === "'" || escaped === '"') {
      if (escaped !== quote) fail(`invalid escape \\${escaped} in quoted string`);
      bytes.push(escaped.charCodeAt(0));
    } else if (escaped === 'x' || escaped === 'u' || escaped === 'U') {
      const width = escaped === 'x' ? 2 : escaped === 'u' ? 4 : 8;
      const hex = body.slice(i, i + width);
      if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) fail(`invalid \\${escaped} escape in quoted string`);
      const code = parseInt(hex, 16);
      i += width;
      if (escaped === 'x') {
        bytes.push(code);
      } else {
        if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) fail(`invalid \\${escaped} escape in quoted string`);
        pushCodePoint(code);
      }
    } else if (escaped >= '0' && escaped <= '7') {
      const octal = body.slice(i - 1, i + 2);
      if (!/^[0-7]{3}$/.test(octal) || parseInt(octal, 8) > 255) fail('invalid octal escape in quoted string');
      bytes.push(parseInt(octal, 8));
      i += 2;
    } else {
      fail(`invalid escape \\${escaped} in quoted string`);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
