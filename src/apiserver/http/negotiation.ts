/**
 * Accept negotiation the way kube-apiserver does it (apiserver's
 * handlers/negotiation over munnerz/goautoneg), for the one media type we
 * serve: JSON. Protobuf, CBOR and YAML clauses are skipped like any other
 * media type we cannot produce, so clients fall through to their JSON clause.
 * The OpenAPI documents negotiate as kube-openapi does (`negotiateMediaType`),
 * /openapi/v2 between JSON and its protobuf form.
 */
import { errors } from '../errors.js';

/** Whether a request addresses one object or a collection. */
export type Target = 'object' | 'list';

export type Representation =
  | { kind: 'plain' }
  | { kind: 'Table'; version: 'v1' | 'v1beta1' }
  | { kind: 'PartialObjectMetadata'; version: 'v1' | 'v1beta1' }
  | { kind: 'PartialObjectMetadataList'; version: 'v1' | 'v1beta1' }
  | { kind: 'APIGroupDiscoveryList'; version: 'v2' | 'v2beta1' };

export interface Negotiated {
  representation: Representation;
  /** The response Content-Type. */
  contentType: string;
}

const NOT_ACCEPTABLE = 'only the following media types are accepted: application/json';

/** A MIME token as Go's mime package reads it: printable ASCII except space and ()<>@,;:\"/[]?= */
const TOKEN = "[!#$%&'*+\\-.^_`|~{}0-9a-z]+";

interface Clause {
  type: string;
  subtype: string;
  q: number;
  params: Map<string, string>;
}

/**
 * Picks the representation of the first Accept clause (by q-value, then
 * specificity, else header order) that is JSON and whose `as`/`g`/`v`
 * transform `allowed` lists. Empty Accept, `*` + `/*` and `application/*` mean
 * plain JSON. Throws 406 when no clause can be served.
 *
 * Like kube, an endpoint that serves either PartialObjectMetadata flavour
 * accepts both during negotiation and then refuses the one that does not fit
 * the target with 406, even when a later clause would have been servable.
 *
 * When `allowed` includes APIGroupDiscoveryList (GET /apis), an aggregated
 * discovery clause anywhere in the header wins over plain JSON, because
 * kube-apiserver looks for one before falling back to the legacy document.
 *
 * Transforms are answered with Content-Type `application/json` like kube does
 * for Table and PartialObjectMetadata(List); only aggregated discovery echoes
 * its parameters (`application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`),
 * which client-go checks.
 */
export function negotiate(accept: string | undefined, allowed: Representation['kind'][]): Negotiated {
  const header = (accept ?? '').trim();
  if (header === '') {
    if (allowed.includes('plain')) return { representation: { kind: 'plain' }, contentType: 'application/json' };
    throw errors.notAcceptable(NOT_ACCEPTABLE);
  }
  const clauses = parseAccept(header);
  const passes = allowed.includes('APIGroupDiscoveryList')
    ? [['APIGroupDiscoveryList'], allowed.filter((kind) => kind !== 'APIGroupDiscoveryList')]
    : [allowed];
  for (const pass of passes) {
    for (const clause of clauses) {
      const representation = representationOf(clause);
      if (!representation) continue;
      if (pass.includes(representation.kind)) return { representation, contentType: contentTypeOf(representation) };
      const pairingError = wrongPairing(representation.kind, allowed);
      if (pairingError) throw pairingError;
    }
  }
  throw errors.notAcceptable(NOT_ACCEPTABLE);
}

/**
 * The media type kube-openapi's handlers pick from `offered` (type/subtype pairs): the first one
 * the best Accept clause (ordered as goautoneg orders them) matches, wildcards included; an empty
 * Accept means any. Undefined when nothing matches: a 406.
 */
export function negotiateMediaType(accept: string | undefined, offered: readonly string[]): string | undefined {
  const header = (accept ?? '').trim() || '*/*';
  for (const clause of parseAccept(header)) {
    const match = offered.find((mediaType) => {
      const [type, subtype] = mediaType.split('/');
      return (clause.type === '*' || clause.type === type) && (clause.subtype === '*' || clause.subtype === subtype);
    });
    if (match) return match;
  }
  return undefined;
}

/**
 * The Content-Type of a request body, parsed like Go's mime.ParseMediaType
 * (type and parameter names lowercased, quoted values unquoted). A missing
 * header means JSON, as kube assumes for bodies; a malformed one yields an
 * empty media type, which no handler accepts (kube answers 415).
 */
export function parseContentType(header: string | undefined): { mediaType: string; params: Record<string, string> } {
  if (header === undefined || header.trim() === '') return { mediaType: 'application/json', params: {} };
  const malformed = { mediaType: '', params: {} };
  const separator = header.indexOf(';');
  const mediaType = (separator === -1 ? header : header.slice(0, separator)).trim().toLowerCase();
  if (!new RegExp(`^${TOKEN}(/${TOKEN})?$`, 'i').test(mediaType)) return malformed;
  const params: Record<string, string> = {};
  let rest = separator === -1 ? '' : header.slice(separator);
  const parameter = new RegExp(`^\\s*;\\s*(${TOKEN})\\s*=\\s*(?:(${TOKEN})|"((?:[^"\\\\]|\\\\.)*)")`, 'i');
  while (rest.trim() !== '') {
    const match = parameter.exec(rest);
    if (!match) {
      // A lone trailing semicolon is tolerated, as Go does.
      if (rest.trim() === ';') break;
      return malformed;
    }
    const name = match[1].toLowerCase();
    if (Object.hasOwn(params, name)) return malformed;
    params[name] = match[2] ?? match[3].replace(/\\(.)/g, '$1');
    rest = rest.slice(match[0].length);
  }
  return { mediaType, params };
}

/**
 * goautoneg's parser: clauses split on ',', spaces trimmed, a bare `*` read as
 * `*` + `/*`, other clauses without exactly one '/' dropped; parameters are
 * case-sensitive, the last duplicate wins, and a malformed q counts as 0.
 */
function parseAccept(header: string): Clause[] {
  const clauses: Clause[] = [];
  for (const rawPart of header.split(',')) {
    const part = trimSpaces(rawPart);
    const [range, ...rawParams] = part.split(';');
    const slash = range.split('/');
    const type = trimSpaces(slash[0]);
    let subtype: string;
    if (slash.length === 1) {
      if (type !== '*') continue;
      subtype = '*';
    } else if (slash.length === 2) {
      subtype = trimSpaces(slash[1]);
    } else {
      continue;
    }
    const clause: Clause = { type, subtype, q: 1, params: new Map() };
    for (const rawParam of rawParams) {
      const pieces = rawParam.split('=');
      if (pieces.length !== 2) continue;
      const name = trimSpaces(pieces[0]);
      if (name === 'q') clause.q = parseQ(pieces[1]);
      else clause.params.set(name, trimSpaces(pieces[1]));
    }
    clauses.push(clause);
  }
  // goautoneg sorts with sort.Sort, which for headers of up to 12 clauses is
  // this insertion sort; its order is not a strict weak ordering, so only the
  // same algorithm gives the same winner.
  for (let i = 1; i < clauses.length; i++) {
    for (let j = i; j > 0 && sortsBefore(clauses[j], clauses[j - 1]); j--) {
      [clauses[j], clauses[j - 1]] = [clauses[j - 1], clauses[j]];
    }
  }
  return clauses;
}

function sortsBefore(a: Clause, b: Clause): boolean {
  if (a.q > b.q) return true;
  if (a.type !== '*' && b.type === '*') return true;
  return a.subtype !== '*' && b.subtype === '*';
}

/** strconv.ParseFloat(s, 32), with goautoneg's 0 on a syntax error; the value is not trimmed. */
function parseQ(text: string): number {
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return Math.fround(Number(text));
  if (/^[+-]?(inf|infinity)$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(text)) return NaN;
  return 0;
}

function trimSpaces(text: string): string {
  return text.replace(/^ +| +$/g, '');
}

/** The representation a clause asks for, or undefined when we cannot produce it. */
function representationOf(clause: Clause): Representation | undefined {
  const json = (clause.type === 'application' && (clause.subtype === 'json' || clause.subtype === '*')) || (clause.type === '*' && clause.subtype === '*');
  if (!json) return undefined;
  const stream = clause.params.get('stream');
  if (stream && stream !== 'watch') return undefined;
  const as = clause.params.get('as');
  const group = clause.params.get('g');
  const version = clause.params.get('v');
  if (as === undefined && group === undefined && version === undefined) return { kind: 'plain' };
  if (group === 'meta.k8s.io' && (version === 'v1' || version === 'v1beta1')) {
    if (as === 'Table' || as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') return { kind: as, version };
  }
  if (group === 'apidiscovery.k8s.io' && (version === 'v2' || version === 'v2beta1') && as === 'APIGroupDiscoveryList') {
    return { kind: as, version };
  }
  return undefined;
}

function contentTypeOf(representation: Representation): string {
  if (representation.kind === 'APIGroupDiscoveryList') {
    return `application/json;g=apidiscovery.k8s.io;v=${representation.version};as=APIGroupDiscoveryList`;
  }
  return 'application/json';
}

/** kube's 406 for PartialObjectMetadata asked of a list, or PartialObjectMetadataList of one object. */
function wrongPairing(kind: Representation['kind'], allowed: Representation['kind'][]): Error | undefined {
  const targets: Partial<Record<Representation['kind'], Target>> = { PartialObjectMetadata: 'object', PartialObjectMetadataList: 'list' };
  const requested = targets[kind];
  const served = allowed.map((candidate) => targets[candidate]).find((target) => target !== undefined && target !== requested);
  if (requested === undefined || served === undefined) return undefined;
  return errors.notAcceptable(
    served === 'list'
      ? `you requested ${kind}, but the requested object is a list (*unstructured.UnstructuredList)`
      : `you requested ${kind}, but the requested object is not a list (*unstructured.Unstructured)`,
  );
}
