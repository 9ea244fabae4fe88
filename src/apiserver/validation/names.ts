/**
 * Name and key validators with kube-apiserver's exact messages (apimachinery
 * pkg/util/validation and pkg/api/validate/content). Each returns the list of
 * problems; an empty list means valid. Clients and tests match these texts, so
 * they are reproduced character for character, including kube's quirks.
 */
import { Buffer } from 'node:buffer';

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
export const LABEL_VALUE_MAX_LENGTH = 63;
const QUALIFIED_NAME_MAX_LENGTH = 63;

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;

const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const QUALIFIED_NAME_RE = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);

const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/**
 * kube has two copies of its max-length text: the older util/validation one
 * says "characters" (DNS names), the newer validate/content one says "bytes"
 * (label keys and values, including a key's prefix part).
 */
type LengthUnit = 'characters' | 'bytes';

function maxLenError(length: number, unit: LengthUnit): string {
  return `must be no more than ${length} ${unit}`;
}

/** kube's RegexError; the doubled space in "',  or '" is kube's own. */
function regexError(message: string, format: string, ...examples: string[]): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${format}')`;
  const shown = examples.map((example, i) => `${i > 0 ? ' or ' : ''}'${example}', `).join('');
  return `${message} (e.g. ${shown}regex used for validation is '${format}')`;
}

/** Go's len(): limits are in UTF-8 bytes, not UTF-16 code units. */
function byteLength(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

function subdomainErrors(value: string, unit: LengthUnit): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH, unit));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

export function isDns1123Subdomain(value: string): string[] {
  return subdomainErrors(value, 'characters');
}

export function isDns1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH, 'characters'));
  if (!DNS1123_LABEL_RE.test(value)) {
    // Length was reported already, so a valid subdomain can only fail here on its dots.
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

/** Label and annotation keys, finalizers: `[prefix/]name` (kube's IsQualifiedName / IsLabelKey). */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  switch (parts.length) {
    case 1:
      name = parts[0]!;
      break;
    case 2: {
      const prefix = parts[0]!;
      name = parts[1]!;
      if (prefix.length === 0) errs.push('prefix part must be non-empty');
      else errs.push(...subdomainErrors(prefix, 'bytes').map((msg) => `prefix part ${msg}`));
      break;
    }
    default:
      return [
        `a valid label key ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}` +
          " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ];
  }
  // kube reports an empty name both as empty and as not matching the pattern.
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLength(name) > QUALIFIED_NAME_MAX_LENGTH) errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH, 'bytes')}`);
  if (!QUALIFIED_NAME_RE.test(name)) {
    errs.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  }
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH, 'bytes'));
  if (!LABEL_VALUE_RE.test(value)) errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

const CONFIG_MAP_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_MAP_KEY_RE = new RegExp(`^${CONFIG_MAP_KEY_FMT}$`);
const CONFIG_MAP_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";

/** Keys of a Secret's or ConfigMap's data (kube's IsConfigMapKey); they become file names when mounted. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH, 'characters'));
  if (!CONFIG_MAP_KEY_RE.test(value)) errs.push(regexError(CONFIG_MAP_KEY_MSG, CONFIG_MAP_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/**
 * Whether a name can be one segment of a URL path or storage key. With
 * `prefix` (a generateName that gets a suffix appended) "." and ".." are
 * fine, since the suffix makes them ordinary names.
 */
export function validatePathSegmentName(name: string, prefix = false): string[] {
  if (!prefix && (name === '.' || name === '..')) return [`may not be '${name}'`];
  const errs: string[] = [];
  for (const illegal of ['/', '%']) {
    if (name.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  }
  return errs;
}

/**
 * A generateName gets random characters appended, so a trailing '-' is fine
 * there. kube checks such a prefix with its last two characters replaced by
 * one letter (dropping the character before the dash too); reproduced as is.
 */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

/** kube's NameIsDNSSubdomain: object names, and generateName with `prefix`. */
export function nameIsDnsSubdomain(name: string, prefix: boolean): string[] {
  return isDns1123Subdomain(prefix ? maskTrailingDash(name) : name);
}

const GO_SHORT_ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
  '"': '\\"',
};

/**
 * Go's %q for strings that appear inside kube messages (not field errors,
 * which FieldError formats). Covers the escapes kube users can actually hit:
 * quotes, backslashes and control characters.
 */
export function goQuote(value: string): string {
  let out = '"';
  for (const ch of value) {
    const short = GO_SHORT_ESCAPES[ch];
    const code = ch.codePointAt(0)!;
    if (short) out += short;
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code >= 0x80 && code < 0xa0) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
