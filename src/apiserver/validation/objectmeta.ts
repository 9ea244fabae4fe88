/**
 * ObjectMeta validation as kube-apiserver runs it for custom resources:
 * apimachinery's ValidateObjectMeta / ValidateObjectMetaUpdate with
 * NameIsDNSSubdomain, the finalizer warnings of the CRD strategy, and the
 * owner-reference dedup of the write handlers.
 *
 * `meta` is expected to have been decoded like kube decodes it: metadata
 * fields of the wrong JSON type dropped. Anything still mistyped here is read
 * as absent rather than rejected, since kube would never have kept it.
 */
import { Buffer } from 'node:buffer';
import { FieldError } from '../errors.js';
import { goQuote, isDns1123Label, isQualifiedName, isValidLabelValue, nameIsDnsSubdomain } from './names.js';

export interface MetaValidation {
  errors: FieldError[];
  /**
   * Texts for `Warning: 299` headers. Empty whenever `errors` is not: kube
   * only computes them once validation has passed.
   */
  warnings: string[];
}

export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

const FIELD_IMMUTABLE = 'field is immutable';
const FINALIZER_ORPHAN = 'orphan';
const FINALIZER_FOREGROUND = 'foregroundDeletion';
/** Finalizers kube itself defines; they are exempt from the domain-qualified advice. */
const STANDARD_FINALIZERS = new Set([FINALIZER_ORPHAN, FINALIZER_FOREGROUND, 'kubernetes']);

type Meta = Record<string, unknown>;

/** metav1.OwnerReference as Go decodes it; absent pointers stay undefined. */
interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

function asRecord(value: unknown): Meta {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Meta) : {};
}

function asString(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Go decodes a JSON null map value into "" for map[string]string. */
function stringEntries(value: unknown): [string, string][] {
  return Object.entries(asRecord(value)).flatMap(([k, v]): [string, string][] => (typeof v === 'string' ? [[k, v]] : v === null ? [[k, '']] : []));
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function toOwnerReference(value: unknown): OwnerReference {
  const raw = asRecord(value);
  // Key order is Go's struct order, so the JSON shown in messages matches kube's.
  const ref: OwnerReference = {
    apiVersion: asString(raw.apiVersion),
    kind: asString(raw.kind),
    name: asString(raw.name),
    uid: asString(raw.uid),
  };
  if (typeof raw.controller === 'boolean') ref.controller = raw.controller;
  if (typeof raw.blockOwnerDeletion === 'boolean') ref.blockOwnerDeletion = raw.blockOwnerDeletion;
  return ref;
}

function ownerReferences(value: unknown): OwnerReference[] {
  return Array.isArray(value) ? value.map(toOwnerReference) : [];
}

function validateLabels(value: unknown): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, labelValue] of stringEntries(value)) {
    for (const msg of isQualifiedName(key)) errors.push(FieldError.invalid('metadata.labels', key, msg));
    for (const msg of isValidLabelValue(labelValue)) errors.push(FieldError.invalid('metadata.labels', labelValue, msg));
  }
  return errors;
}

function validateAnnotations(value: unknown): FieldError[] {
  const errors: FieldError[] = [];
  let totalBytes = 0;
  for (const [key, annotation] of stringEntries(value)) {
    // Annotation keys follow label-key rules except that case does not matter.
    for (const msg of isQualifiedName(key.toLowerCase())) errors.push(FieldError.invalid('metadata.annotations', key, msg));
    totalBytes += Buffer.byteLength(key, 'utf8') + Buffer.byteLength(annotation, 'utf8');
  }
  if (totalBytes > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) {
    errors.push(FieldError.tooLong('metadata.annotations', '', TOTAL_ANNOTATION_SIZE_LIMIT_BYTES));
  }
  return errors;
}

/** schema.ParseGroupVersion, reduced to what validation needs. */
function parseGroupVersion(apiVersion: string): { group: string; version: string } | undefined {
  if (apiVersion === '/') return { group: '', version: '' };
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: apiVersion };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return undefined;
}

function validateOwnerReference(ref: OwnerReference, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const gv = parseGroupVersion(ref.apiVersion);
  if (ref.apiVersion === '') {
    errors.push(FieldError.required(`${path}.apiVersion`, 'must not be empty'));
  } else if (!gv || gv.version === '') {
    errors.push(FieldError.invalid(`${path}.apiVersion`, ref.apiVersion, 'must be <group>/<version> or <version>'));
  }
  if (ref.kind === '') errors.push(FieldError.required(`${path}.kind`, 'must not be empty'));
  if (ref.name === '') errors.push(FieldError.required(`${path}.name`, 'must not be empty'));
  if (ref.uid === '') errors.push(FieldError.required(`${path}.uid`, 'must not be empty'));
  // Events are garbage collected by TTL; kube refuses them as owners.
  if (gv && gv.group === '' && gv.version === 'v1' && ref.kind === 'Event') {
    errors.push(FieldError.invalid(path, ref, '/v1, Kind=Event is disallowed from being an owner'));
  }
  return errors;
}

function validateOwnerReferences(value: unknown): FieldError[] {
  const refs = ownerReferences(value);
  const errors: FieldError[] = [];
  let firstController = '';
  refs.forEach((ref, i) => {
    errors.push(...validateOwnerReference(ref, `metadata.ownerReferences[${i}]`));
    if (ref.controller !== true) return;
    const controller = `${ref.kind}/${ref.name}`;
    if (firstController === '') {
      firstController = controller;
      return;
    }
    errors.push(
      FieldError.invalid(
        'metadata.ownerReferences',
        refs,
        `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${controller}`,
      ),
    );
  });
  return errors;
}

function validateFinalizers(value: unknown): FieldError[] {
  const finalizers = stringList(value);
  const errors: FieldError[] = [];
  for (const finalizer of finalizers) {
    for (const msg of isQualifiedName(finalizer)) errors.push(FieldError.invalid('metadata.finalizers', finalizer, msg));
  }
  if (finalizers.includes(FINALIZER_ORPHAN) && finalizers.includes(FINALIZER_FOREGROUND)) {
    errors.push(FieldError.invalid('metadata.finalizers', finalizers, `finalizer ${FINALIZER_ORPHAN} and ${FINALIZER_FOREGROUND} cannot be both set`));
  }
  return errors;
}

/** Sorted, deduplicated entries of `list` that `old` lacks (kube's sets.String Difference + List). */
function addedValues(list: string[], old: string[]): string[] {
  const before = new Set(old);
  return [...new Set(list)].filter((v) => !before.has(v)).sort();
}

/** The CRD strategy's advice on newly added finalizers. */
function finalizerWarnings(finalizers: string[], oldFinalizers: string[]): string[] {
  const warnings: string[] = [];
  for (const finalizer of addedValues(finalizers, oldFinalizers)) {
    const subject = `metadata.finalizers: ${goQuote(finalizer)}`;
    for (const msg of isQualifiedName(finalizer)) warnings.push(`${subject}: ${msg}`);
    if (finalizer.includes('/') || STANDARD_FINALIZERS.has(finalizer)) continue;
    warnings.push(
      finalizer.includes('.')
        ? `${subject}: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`
        : `${subject}: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers`,
    );
  }
  return warnings;
}

/**
 * Validates metadata of an object about to be created. Like kube, it expects
 * generateName to have been expanded into name already; if name is still
 * empty, only generateName is checked.
 */
export function validateObjectMetaOnCreate(meta: unknown, opts: { namespaced: boolean }): MetaValidation {
  const m = asRecord(meta);
  const errors: FieldError[] = [];
  const name = asString(m.name);
  const generateName = asString(m.generateName);
  const namespace = asString(m.namespace);

  if (generateName !== '') {
    for (const msg of nameIsDnsSubdomain(generateName, true)) {
      errors.push(FieldError.invalid('metadata.generateName', generateName, msg));
    }
  }
  if (name !== '') {
    for (const msg of nameIsDnsSubdomain(name, false)) errors.push(FieldError.invalid('metadata.name', name, msg));
  } else if (generateName === '') {
    errors.push(FieldError.required('metadata.name', 'name or generateName is required'));
  }

  if (opts.namespaced) {
    if (namespace === '') errors.push(FieldError.required('metadata.namespace'));
    else for (const msg of isDns1123Label(namespace)) errors.push(FieldError.invalid('metadata.namespace', namespace, msg));
  } else if (namespace !== '') {
    errors.push(FieldError.forbidden('metadata.namespace', 'not allowed on this type'));
  }

  errors.push(
    ...validateLabels(m.labels),
    ...validateAnnotations(m.annotations),
    ...validateOwnerReferences(m.ownerReferences),
    ...validateFinalizers(m.finalizers),
  );
  return { errors, warnings: errors.length > 0 ? [] : finalizerWarnings(stringList(m.finalizers), []) };
}

/** A metav1.Time as kube compares and prints it: instant equality, RFC 3339 UTC seconds on output. */
interface Timestamp {
  key: string;
  shown: string | null;
}

function timestamp(value: unknown): Timestamp {
  if (typeof value !== 'string' || value === '') return { key: '', shown: null };
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return { key: value, shown: value };
  return { key: String(ms), shown: new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z') };
}

function gracePeriod(value: unknown): number | null {
  return typeof value === 'number' ? value : null;
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/**
 * Validates metadata of an update (PUT, or the result of a PATCH). As in kube,
 * finalizer names and the orphan/foregroundDeletion conflict are not
 * re-validated here: kube only warns about newly added finalizers on update.
 */
export function validateObjectMetaOnUpdate(
  meta: unknown,
  oldMeta: Record<string, unknown>,
  // Scope does not change what kube checks on update; kept for symmetry with create.
  _opts: { namespaced: boolean },
): MetaValidation {
  const m = asRecord(meta);
  const errors: FieldError[] = [];
  const finalizers = stringList(m.finalizers);
  const oldFinalizers = stringList(oldMeta.finalizers);

  if (isSet(oldMeta.deletionTimestamp)) {
    const added = addedValues(finalizers, oldFinalizers);
    if (added.length > 0) {
      errors.push(
        FieldError.forbidden(
          'metadata.finalizers',
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map(goQuote).join(', ')}}`,
        ),
      );
    }
  }

  for (const key of ['name', 'namespace', 'uid'] as const) {
    const value = asString(m[key]);
    if (value !== asString(oldMeta[key])) errors.push(FieldError.invalid(`metadata.${key}`, value, FIELD_IMMUTABLE));
  }
  for (const key of ['creationTimestamp', 'deletionTimestamp'] as const) {
    const value = timestamp(m[key]);
    if (value.key !== timestamp(oldMeta[key]).key) errors.push(FieldError.invalid(`metadata.${key}`, value.shown, FIELD_IMMUTABLE));
  }
  const grace = gracePeriod(m.deletionGracePeriodSeconds);
  if (grace !== gracePeriod(oldMeta.deletionGracePeriodSeconds)) {
    errors.push(FieldError.invalid('metadata.deletionGracePeriodSeconds', grace, FIELD_IMMUTABLE));
  }

  errors.push(...validateLabels(m.labels), ...validateAnnotations(m.annotations), ...validateOwnerReferences(m.ownerReferences));
  return { errors, warnings: errors.length > 0 ? [] : finalizerWarnings(finalizers, oldFinalizers) };
}

function sameOwnerReference(a: OwnerReference, b: OwnerReference): boolean {
  return (
    a.uid === b.uid &&
    a.apiVersion === b.apiVersion &&
    a.kind === b.kind &&
    a.name === b.name &&
    a.controller === b.controller &&
    a.blockOwnerDeletion === b.blockOwnerDeletion
  );
}

/**
 * kube's write handlers drop owner references that exactly repeat an earlier
 * one (same UID but different fields are kept) and warn. kube does this
 * before validation; when `warnings` is non-empty, store `ownerReferences`
 * back into the object.
 */
export function dedupOwnerReferences<T>(meta: { ownerReferences?: T[] }): {
  ownerReferences: T[] | undefined;
  warnings: string[];
} {
  const list = meta.ownerReferences;
  if (!Array.isArray(list)) return { ownerReferences: list, warnings: [] };
  const kept: T[] = [];
  const keptRefs: OwnerReference[] = [];
  const duplicates: string[] = [];
  for (const item of list) {
    const ref = toOwnerReference(item);
    if (keptRefs.some((k) => sameOwnerReference(k, ref))) {
      duplicates.push(ref.uid);
    } else {
      kept.push(item);
      keptRefs.push(ref);
    }
  }
  if (duplicates.length === 0) return { ownerReferences: list, warnings: [] };
  return {
    ownerReferences: kept,
    warnings: [
      '.metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, ' +
        'and may reject such requests as early as 1.24; please fix your requests; ' +
        `duplicate UID(s) observed: ${duplicates.join(', ')}`,
    ],
  };
}
