/**
 * Label selectors with kube's grammar, matching rules and error texts
 * (apimachinery pkg/labels). kubectl shows the server's parse errors to users
 * verbatim, so the lexer and parser follow kube's token by token, quirks
 * included (e.g. `k in ()` selects the empty value, `in`/`notin` are plain
 * identifiers wherever a key or value is expected).
 */
import { errors, FieldError, type ApiError } from '../errors.js';
import { goQuote, isQualifiedName, isValidLabelValue } from '../validation/names.js';
import { maxSelectorTerms, maxSetValues, tooManyTerms, tooManyValues } from './limits.js';

export interface LabelSelector {
  /** True when the selector has no requirements (matches everything). */
  readonly empty: boolean;
  matches(labels: Record<string, string> | undefined): boolean;
  /** The labels (name, value) every object it selects carries: its `=`, `==` and single-value `in` requirements. */
  readonly requiredLabels: ReadonlyArray<readonly [string, string]>;
  /** kube's canonical form: requirements sorted by key, set values sorted. */
  toString(): string;
}

/** metav1.LabelSelector. */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: readonly LabelSelectorRequirementObject[] | null;
}

export interface LabelSelectorRequirementObject {
  key: string;
  operator: string;
  values?: readonly string[] | null;
}

/** kube's selection.Operator spellings; `gt`/`lt` are written `>`/`<` in selector text. */
type Operator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

function keyErrors(key: string, path: string): FieldError[] {
  const msgs = isQualifiedName(key);
  return msgs.length > 0 ? [FieldError.invalid(path, key, msgs.join('; '))] : [];
}

/** Go's strconv.ParseInt(s, 10, 64); undefined when it would fail. */
function parseInt64(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value >= -(2n ** 63n) && value < 2n ** 63n ? value : undefined;
}

/**
 * kube's labels.NewRequirement checks that callers here can trip (the parser
 * and LabelSelectorAsSelector always pass exactly one value for =, ==, !=,
 * gt and lt). Field paths are relative to a nil root, as kube's API server
 * calls it, hence bare "key" and "values". `rawValues` is what Go would
 * marshal for the values slice (null for a nil slice).
 */
function requirementErrors(key: string, operator: Operator, values: string[], rawValues: string[] | null): FieldError[] {
  const errs = keyErrors(key, 'key');
  if ((operator === 'in' || operator === 'notin') && values.length === 0) {
    errs.push(FieldError.invalid('values', rawValues, "for 'in', 'notin' operators, values set can't be empty"));
  }
  if ((operator === 'exists' || operator === '!') && values.length > 0) {
    errs.push(FieldError.invalid('values', rawValues, 'values set must be empty for exists and does not exist'));
  }
  if (operator === 'gt' || operator === 'lt') {
    values.forEach((v, i) => {
      if (parseInt64(v) === undefined) {
        errs.push(FieldError.invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      }
    });
  }
  values.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length > 0) errs.push(FieldError.invalid(`values[${i}][${key}]`, v, msgs.join('; ')));
  });
  return errs;
}

/** Go's ErrorList.ToAggregate().Error(): duplicates dropped, several bracketed. */
function aggregate(errs: FieldError[]): string {
  const msgs = [...new Set(errs.map((e) => e.toString()))];
  return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
}

function requirementMatches(r: Requirement, labels: Record<string, string>): boolean {
  const exists = Object.hasOwn(labels, r.key);
  const value = labels[r.key];
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return exists && r.values.includes(value!);
    // A missing label satisfies a negative requirement.
    case 'notin':
    case '!=':
      return !exists || !r.values.includes(value!);
    case 'exists':
      return exists;
    case '!':
      return !exists;
    case 'gt':
    case 'lt': {
      const actual = exists ? parseInt64(value!) : undefined;
      if (actual === undefined) return false;
      // The bound was checked to be an integer when the requirement was built.
      const bound = parseInt64(r.values[0]!)!;
      return r.operator === 'gt' ? actual > bound : actual < bound;
    }
  }
}

const OPERATOR_TEXT: Record<Operator, string> = {
  '=': '=',
  '==': '==',
  '!=': '!=',
  in: ' in ',
  notin: ' notin ',
  exists: '',
  '!': '',
  gt: '>',
  lt: '<',
};

function requirementString(r: Requirement): string {
  if (r.operator === 'exists') return r.key;
  if (r.operator === '!') return `!${r.key}`;
  const values = [...r.values].sort().join(',');
  const set = r.operator === 'in' || r.operator === 'notin';
  return `${r.key}${OPERATOR_TEXT[r.operator]}${set ? `(${values})` : values}`;
}

function selectorOf(requirements: Requirement[]): LabelSelector {
  // Stable sort by key, as kube sorts requirements to make parsing deterministic.
  const sorted = [...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    empty: sorted.length === 0,
    matches: (labels) => sorted.every((r) => requirementMatches(r, labels ?? {})),
    requiredLabels: sorted
      .filter((r) => r.values.length === 1 && (r.operator === '=' || r.operator === '==' || r.operator === 'in'))
      .map((r) => [r.key, r.values[0]!] as const),
    toString: () => sorted.map(requirementString).join(','),
  };
}

const NOTHING: LabelSelector = { empty: false, matches: () => false, requiredLabels: [], toString: () => '' };

// ---- lexer ----------------------------------------------------------------

type TokenKind = 'end' | 'identifier' | 'in' | 'notin' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<';

interface Token {
  kind: TokenKind;
  literal: string;
}

const SYMBOLS = new Map<string, TokenKind>([
  ['(', '('],
  [')', ')'],
  [',', ','],
  ['!', '!'],
  ['=', '='],
  ['==', '=='],
  ['!=', '!='],
  ['>', '>'],
  ['<', '<'],
]);

function isWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
}

function isSymbol(ch: string): boolean {
  return '=!(),><'.includes(ch);
}

/**
 * kube's lexer cannot tell a NUL byte from the end of input (its read()
 * returns 0 for both): NUL where a token would start ends the selector, NUL
 * right after a token is swallowed. The same read/unread steps are kept so
 * such inputs tokenise identically.
 */
function tokenize(text: string): Token[] {
  let pos = 0;
  const read = (): string => (pos < text.length ? text[pos++]! : '\0');
  const unread = (): void => {
    pos--;
  };

  const scanIdentifier = (): Token => {
    let literal = '';
    for (;;) {
      const ch = read();
      if (ch === '\0') break;
      if (isSymbol(ch) || isWhitespace(ch)) {
        unread();
        break;
      }
      literal += ch;
    }
    if (literal === 'in' || literal === 'notin') return { kind: literal, literal };
    return { kind: 'identifier', literal };
  };

  const scanSymbol = (): Token => {
    let literal = '';
    let token: Token | undefined;
    for (;;) {
      const ch = read();
      if (ch === '\0') break;
      if (!isSymbol(ch)) {
        unread();
        break;
      }
      const kind = SYMBOLS.get(literal + ch);
      if (!kind) {
        unread();
        break;
      }
      literal += ch;
      token = { kind, literal };
    }
    // Every single symbol character is a token, so the first one always sets it.
    return token!;
  };

  const tokens: Token[] = [];
  for (;;) {
    let ch = read();
    while (isWhitespace(ch)) ch = read();
    if (ch === '\0') {
      tokens.push({ kind: 'end', literal: '' });
      return tokens;
    }
    unread();
    tokens.push(isSymbol(ch) ? scanSymbol() : scanIdentifier());
  }
}

// ---- parser ---------------------------------------------------------------

/** A failure inside one requirement; kube prefixes these with "unable to parse requirement: ". */
class RequirementFailure {
  constructor(readonly message: string) {}
}

class Parser {
  private position = 0;

  constructor(private readonly tokens: Token[]) {}

  /** Where a key or value may stand, kube reads the keywords in/notin as identifiers. */
  private static asValue(token: Token): Token {
    return token.kind === 'in' || token.kind === 'notin' ? { kind: 'identifier', literal: token.literal } : token;
  }

  private peek(): Token {
    return Parser.asValue(this.tokens[this.position]!);
  }

  private next(): Token {
    return Parser.asValue(this.tokens[this.position++]!);
  }

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    for (;;) {
      const token = this.peek();
      switch (token.kind) {
        case 'identifier':
        case '!': {
          try {
            requirements.push(this.parseRequirement());
          } catch (e) {
            if (e instanceof RequirementFailure) throw errors.badRequest(`unable to parse requirement: ${e.message}`);
            throw e;
          }
          const after = this.next();
          if (after.kind === 'end') return requirements;
          if (after.kind !== ',') throw errors.badRequest(`found '${after.literal}', expected: ',' or 'end of string'`);
          const following = this.peek();
          if (following.kind !== 'identifier' && following.kind !== '!') {
            throw errors.badRequest(`found '${following.literal}', expected: identifier after ','`);
          }
          break;
        }
        case 'end':
          return requirements;
        default:
          throw errors.badRequest(`found '${token.literal}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirement(): Requirement {
    const { key, operator: inferred } = this.parseKeyAndInferOperator();
    let operator: Operator;
    let values: string[];
    if (inferred) {
      operator = inferred;
      values = [];
    } else {
      operator = this.parseOperator();
      values = operator === 'in' || operator === 'notin' ? this.parseValues() : this.parseExactValue();
      if (values.length > maxSetValues) throw tooManyValues(key, values.length);
    }
    const errs = requirementErrors(key, operator, values, values);
    if (errs.length > 0) throw new RequirementFailure(aggregate(errs));
    return { key, operator, values };
  }

  private parseKeyAndInferOperator(): { key: string; operator?: 'exists' | '!' } {
    let token = this.next();
    let operator: 'exists' | '!' | undefined;
    if (token.kind === '!') {
      operator = '!';
      token = this.next();
    }
    if (token.kind !== 'identifier') throw new RequirementFailure(`found '${token.literal}', expected: identifier`);
    // kube validates the key here against a nil field path, which prints as "<nil>".
    const errs = keyErrors(token.literal, '<nil>');
    if (errs.length > 0) throw new RequirementFailure(aggregate(errs));
    const following = this.peek().kind;
    if (!operator && (following === 'end' || following === ',')) operator = 'exists';
    return { key: token.literal, operator };
  }

  private parseOperator(): Operator {
    const token = this.tokens[this.position++]!;
    switch (token.kind) {
      case 'in':
        return 'in';
      case 'notin':
        return 'notin';
      case '=':
        return '=';
      case '==':
        return '==';
      case '!=':
        return '!=';
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      default:
        throw new RequirementFailure(`found '${token.literal}', expected: ${BINARY_OPERATORS}`);
    }
  }

  /** The values of in/notin, deduplicated and sorted like kube's sets.String. */
  private parseValues(): string[] {
    const open = this.next();
    if (open.kind !== '(') throw new RequirementFailure(`found '${open.literal}' expected: '('`);
    const first = this.peek();
    switch (first.kind) {
      case 'identifier':
      case ',': {
        const values = this.parseIdentifiersList();
        this.next();
        return [...values].sort();
      }
      case ')':
        this.next();
        return [''];
      default:
        throw new RequirementFailure(`found '${first.literal}', expected: ',', ')' or identifier`);
    }
  }

  /** Leaves the closing ')' unconsumed. Empty slots (`(,a)`, `(a,)`, `(a,,b)`) are the empty value. */
  private parseIdentifiersList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const token = this.next();
      switch (token.kind) {
        case 'identifier': {
          values.add(token.literal);
          const following = this.peek();
          if (following.kind === ',') continue;
          if (following.kind === ')') return values;
          throw new RequirementFailure(`found '${following.literal}', expected: ',' or ')'`);
        }
        case ',': {
          if (values.size === 0) values.add('');
          const following = this.peek().kind;
          if (following === ')') {
            values.add('');
            return values;
          }
          if (following === ',') values.add('');
          continue;
        }
        default:
          throw new RequirementFailure(`found '${token.literal}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): string[] {
    const following = this.peek().kind;
    if (following === 'end' || following === ',') return [''];
    const token = this.next();
    if (token.kind === 'identifier') return [token.literal];
    throw new RequirementFailure(`found '${token.literal}', expected: identifier`);
  }
}

/**
 * Parses a `labelSelector` query parameter. Throws a 400 ApiError with kube's
 * message on malformed input, and one naming the limit past `maxSelectorTerms`
 * requirements or `maxSetValues` values in a set.
 */
export function parseLabelSelector(text: string): LabelSelector {
  const requirements = new Parser(tokenize(text)).parse();
  if (requirements.length > maxSelectorTerms) throw tooManyTerms('label', requirements.length);
  return selectorOf(requirements);
}

const OBJECT_OPERATORS = new Map<string, Operator>([
  ['In', 'in'],
  ['NotIn', 'notin'],
  ['Exists', 'exists'],
  ['DoesNotExist', '!'],
]);

/**
 * kube's metav1.LabelSelectorAsSelector: null/undefined selects nothing, an
 * empty selector selects everything. Invalid selectors throw a 400 ApiError
 * carrying kube's error text.
 */
export function labelSelectorFromObject(sel: LabelSelectorObject | null | undefined): LabelSelector {
  if (!sel) return NOTHING;
  const matchLabels = Object.entries(sel.matchLabels ?? {});
  const matchExpressions = sel.matchExpressions ?? [];
  const requirements: Requirement[] = [];
  const fail = (errs: FieldError[]): ApiError => errors.badRequest(aggregate(errs));
  for (const [key, value] of matchLabels) {
    const errs = requirementErrors(key, '=', [value], [value]);
    if (errs.length > 0) throw fail(errs);
    requirements.push({ key, operator: '=', values: [value] });
  }
  for (const expr of matchExpressions) {
    const operator = OBJECT_OPERATORS.get(expr.operator);
    if (!operator) {
      throw errors.badRequest(`${goQuote(expr.operator)} is not a valid label selector operator`);
    }
    const values = [...(expr.values ?? [])];
    // Go copies the values with append([]string(nil), ...), which stays nil (JSON null) when empty.
    const errs = requirementErrors(expr.key, operator, values, values.length > 0 ? values : null);
    if (errs.length > 0) throw fail(errs);
    requirements.push({ key: expr.key, operator, values });
  }
  return selectorOf(requirements);
}
