/**
 * What kube-apiserver does to a Secret beyond its schema: stringData folded
 * into data, data keys and base64 checked, the size limit, the keys each
 * well-known type requires, and immutability. Values never appear in
 * messages: where kube would show one it shows a placeholder, as kube does.
 */
import { Buffer } from 'node:buffer';
import { FieldError } from '../../apiserver/errors.js';
import type { AdmissionRules } from '../../apiserver/registry/kind.js';
import { ensureMetadata } from '../../apiserver/store/object.js';
import { isConfigMapKey } from '../../apiserver/validation/names.js';
import type { JsonObject } from '../../storage/interface.js';
import { isJsonObject, jsonEqual } from '../../storage/json.js';

/** kube's MaxSecretSize, over the decoded values of all keys. */
const maxSecretBytes = 1024 * 1024;
/** kube's stand-in for a Secret value in a field error. */
const redacted = '<secret contents redacted>';
const immutableDetail = 'field is immutable when `immutable` is set';

export const secretAdmission: AdmissionRules = {
  mutate: foldStringData,
  validateCreate: (secret) => validateSecret(secret),
  validateUpdate: (secret, old) => [...validateImmutability(secret, old), ...validateSecret(secret)],
};

/**
 * stringData is write-only: each value is base64-encoded into data under its
 * key (winning over data) and stringData is dropped. Malformed maps are left
 * as sent for schema validation to report.
 */
function foldStringData(secret: JsonObject): JsonObject {
  const { stringData, ...rest } = secret;
  if (stringData === undefined || !isStringMap(stringData) || (rest.data !== undefined && !isStringMap(rest.data))) return secret;
  const encoded = Object.entries(stringData).map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')]);
  return { ...rest, data: Object.fromEntries([...Object.entries(rest.data ?? {}), ...encoded]) };
}

function isStringMap(value: unknown): value is Record<string, string> {
  if (!isJsonObject(value)) return false;
  // Without the array of values Object.values would make: a Secret may hold tens of thousands of keys.
  for (const key in value) if (typeof value[key] !== 'string') return false;
  return true;
}

function validateSecret(secret: JsonObject): FieldError[] {
  const data = isStringMap(secret.data) ? secret.data : {};
  const errors: FieldError[] = [];
  let size = 0;
  for (const [key, value] of Object.entries(data)) {
    const field = `data[${key}]`;
    for (const message of isConfigMapKey(key)) errors.push(FieldError.invalid(field, key, message));
    const offset = illegalBase64Offset(value);
    if (offset === undefined) size += Buffer.byteLength(value, 'base64');
    else errors.push(FieldError.invalid(field, redacted, `illegal base64 data at input byte ${offset}`));
  }
  if (size > maxSecretBytes) errors.push(FieldError.tooLong('data', '', maxSecretBytes));
  return [...errors, ...typeRequirements(secret, data)];
}

/**
 * Where Go's base64.StdEncoding, which decodes kube's []byte fields, gives
 * up: the first character outside the alphabet, a misplaced "=", or the
 * incomplete group at the end. Line breaks are skipped, as Go skips them.
 */
function illegalBase64Offset(text: string): number | undefined {
  const symbols = text.replace(/[\r\n]/g, '');
  const unpadded = symbols.replace(/={1,2}$/, '');
  const illegal = unpadded.search(/[^A-Za-z0-9+/]/);
  if (illegal >= 0) return illegal;
  const padding = symbols.length - unpadded.length;
  const complete = symbols.length % 4 === 0 && (padding === 0 || unpadded.length % 4 === 4 - padding);
  return complete ? undefined : unpadded.length - (unpadded.length % 4);
}

/** The keys kube requires for its well-known Secret types. */
function typeRequirements(secret: JsonObject, data: Record<string, string>): FieldError[] {
  const has = (key: string) => Object.hasOwn(data, key);
  const required = (key: string) => FieldError.required(`data[${key}]`);
  switch (secret.type) {
    case 'kubernetes.io/service-account-token': {
      const annotation = 'kubernetes.io/service-account.name';
      return ensureMetadata(secret).annotations?.[annotation] ? [] : [FieldError.required(`metadata.annotations[${annotation}]`)];
    }
    case 'kubernetes.io/dockercfg':
      return jsonObjectAt(data, '.dockercfg');
    case 'kubernetes.io/dockerconfigjson':
      return jsonObjectAt(data, '.dockerconfigjson');
    case 'kubernetes.io/basic-auth':
      // Either may be empty, but one of them must be there.
      return has('username') || has('password') ? [] : [required('username'), required('password')];
    case 'kubernetes.io/ssh-auth':
      return has('ssh-privatekey') && Buffer.byteLength(data['ssh-privatekey'], 'base64') > 0 ? [] : [required('ssh-privatekey')];
    case 'kubernetes.io/tls':
      return ['tls.crt', 'tls.key'].filter((key) => !has(key)).map(required);
    default:
      return [];
  }
}

function jsonObjectAt(data: Record<string, string>, key: string): FieldError[] {
  if (!Object.hasOwn(data, key)) return [FieldError.required(`data[${key}]`)];
  if (illegalBase64Offset(data[key]) !== undefined) return [];
  try {
    if (isJsonObject(JSON.parse(Buffer.from(data[key], 'base64').toString('utf8')))) return [];
  } catch {
    // reported below
  }
  return [FieldError.invalid(`data[${key}]`, redacted, 'must be a JSON object')];
}

function validateImmutability(secret: JsonObject, old: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  if (secret.type !== old.type) errors.push(FieldError.invalid('type', secret.type, 'field is immutable'));
  if (old.immutable === true) {
    if (secret.immutable !== true) errors.push(FieldError.forbidden('immutable', immutableDetail));
    if (!jsonEqual(secret.data ?? {}, old.data ?? {})) errors.push(FieldError.forbidden('data', immutableDetail));
  }
  return errors;
}
