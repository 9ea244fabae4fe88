/**
 * metadata.managedFields in memory: one field set per manager identity, with
 * kube's identity rules, decoding leniency, entry order and Update-entry cap.
 */
import { FieldSet } from './fieldset.js';
import { PathElementSyntaxError } from './path.js';
import { compareStrings, goJsonString } from './value.js';
import { isJsonObject } from '../../storage/json.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

/** Who owns a set: kube's identity of a managedFields entry. */
export interface ManagerIdentity {
  manager: string;
  operation: 'Apply' | 'Update';
  /** Part of an Update entry's identity only: an applier keeps one entry across versions. */
  apiVersion?: string;
  subresource?: string;
}

export interface VersionedSet {
  set: FieldSet;
  apiVersion: string;
  applied: boolean;
}

/** Sets and times by identity key (see identityKey). */
export interface Managed {
  fields: Map<string, VersionedSet>;
  times: Map<string, string>;
}

export function emptyManaged(): Managed {
  return { fields: new Map(), times: new Map() };
}

export function cloneManaged(managed: Managed): Managed {
  return { fields: new Map(managed.fields), times: new Map(managed.times) };
}

/** The JSON kube builds the identity from; it also orders managers in conflict messages. */
export function identityKey(id: ManagerIdentity): string {
  const parts: [string, string | undefined][] = [
    ['manager', id.manager],
    ['operation', id.operation],
    ['apiVersion', id.operation === 'Update' ? id.apiVersion : undefined],
    ['subresource', id.subresource],
  ];
  const present = parts.filter(([, value]) => value);
  return `{${present.map(([name, value]) => `"${name}":${goJsonString(value!, true)}`).join(',')}}`;
}

export function parseIdentityKey(key: string): ManagerIdentity {
  const parsed = JSON.parse(key) as Partial<ManagerIdentity> & Pick<ManagerIdentity, 'operation'>;
  return { ...parsed, manager: parsed.manager ?? '' };
}

export class InvalidManagedFields extends Error {}

/** Throws InvalidManagedFields where kube's decoding fails. */
export function decodeManagedFields(entries: unknown): Managed {
  const managed = emptyManaged();
  if (entries === undefined || entries === null) return managed;
  if (!Array.isArray(entries)) throw new InvalidManagedFields('managedFields must be a list');
  entries.forEach((entry, i) => {
    if (!isJsonObject(entry)) throw new InvalidManagedFields(`managed fields entry ${i} is not an object`);
    const { manager = '', operation, apiVersion, time, fieldsType, fieldsV1, subresource = '' } = entry;
    if (operation !== 'Apply' && operation !== 'Update') throw new InvalidManagedFields('operation must be `Apply` or `Update`');
    if (typeof apiVersion !== 'string' || apiVersion === '') throw new InvalidManagedFields('apiVersion must not be empty');
    if (fieldsType === undefined || fieldsType === '') throw new InvalidManagedFields(`missing fieldsType in managed fields entry ${i}`);
    if (fieldsType !== 'FieldsV1') throw new InvalidManagedFields(`invalid fieldsType ${JSON.stringify(fieldsType)} in managed fields entry ${i}`);
    if (typeof manager !== 'string' || typeof subresource !== 'string') throw new InvalidManagedFields(`malformed managed fields entry ${i}`);
    let set: FieldSet;
    try {
      set = fieldsV1 === undefined || fieldsV1 === null ? new FieldSet() : decodeFieldsV1(fieldsV1);
    } catch (error) {
      if (error instanceof PathElementSyntaxError) throw new InvalidManagedFields(`error decoding set: ${error.message}`);
      throw error;
    }
    const key = identityKey({ manager, operation, apiVersion, subresource });
    managed.fields.set(key, { set, apiVersion, applied: operation === 'Apply' });
    const normalized = normalizeTime(time, i);
    if (normalized === undefined) managed.times.delete(key);
    else managed.times.set(key, normalized);
  });
  return managed;
}

/**
 * Sets decoded lately from large FieldsV1 documents, by their JSON. Every write decodes the stored
 * managedFields again, and parsing 60,000 keys was a third of a one-label patch to a Secret of as
 * many. Sets are not changed once built, so one serves every write that reads the same document,
 * and the sets made from it share its subtrees and their encodings (fieldset.ts). A set unused for
 * a minute is let go: a decoded set of 60,000 keys holds about 20 MB.
 */
const decodedRecently = new Map<string, { set: FieldSet; lastUsed: number }>();
const decodedRecentlyMax = 4;
const decodedRecentlyKeptMs = 60_000;
/** How often unused sets are looked for: a set goes between one and a quarter minutes after its last use. */
const forgetEveryMs = decodedRecentlyKeptMs / 4;
/** Smaller documents parse in about the time their JSON takes to write: not worth keeping. */
const decodedRecentlyMinChars = 64 * 1024;
let forgetting: NodeJS.Timeout | undefined;

function decodeFieldsV1(fieldsV1: unknown): FieldSet {
  const json = JSON.stringify(fieldsV1);
  if (json.length < decodedRecentlyMinChars) return FieldSet.fromFieldsV1(fieldsV1);
  const known = decodedRecently.get(json);
  if (known) decodedRecently.delete(json);
  const set = known?.set ?? FieldSet.fromFieldsV1(fieldsV1);
  decodedRecently.set(json, { set, lastUsed: performance.now() });
  if (decodedRecently.size > decodedRecentlyMax) decodedRecently.delete(decodedRecently.keys().next().value!);
  forgetting ??= setInterval(forgetUnused, forgetEveryMs).unref();
  return set;
}

/** Drops the sets no write used for a minute; stops calling itself once none is left. */
function forgetUnused(): void {
  const now = performance.now();
  for (const [json, entry] of decodedRecently) if (now - entry.lastUsed >= decodedRecentlyKeptMs) decodedRecently.delete(json);
  if (decodedRecently.size === 0) {
    clearInterval(forgetting);
    forgetting = undefined;
  }
}

/** metav1.Time re-encodes in UTC at second precision. */
function normalizeTime(time: unknown, i: number): string | undefined {
  if (time === undefined || time === null) return undefined;
  const millis = typeof time === 'string' ? Date.parse(time) : NaN;
  if (Number.isNaN(millis)) throw new InvalidManagedFields(`invalid time in managed fields entry ${i}`);
  return new Date(Math.floor(millis / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** `[]` or `[{}]` in a write means "forget all ownership" (kube's isResetManagedFields). */
export function isReset(entries: unknown): boolean {
  if (!Array.isArray(entries)) return false;
  if (entries.length === 0) return true;
  return entries.length === 1 && isJsonObject(entries[0]) && Object.values(entries[0]).every(isZero);
}

function isZero(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] {
  const entries = [...managed.fields].map(([key, versioned]): ManagedFieldsEntry => {
    const id = parseIdentityKey(key);
    const time = managed.times.get(key);
    // Keys in the order kube serializes them.
    return {
      manager: id.manager,
      operation: versioned.applied ? 'Apply' : id.operation,
      apiVersion: versioned.apiVersion,
      ...(time !== undefined ? { time } : {}),
      fieldsType: 'FieldsV1',
      fieldsV1: versioned.set.toFieldsV1(),
      ...(id.subresource ? { subresource: id.subresource } : {}),
    };
  });
  return entries.sort(compareEntries);
}

/** Apply entries first, then oldest first, then by manager, apiVersion, subresource. */
function compareEntries(a: ManagedFieldsEntry, b: ManagedFieldsEntry): number {
  return (
    compareStrings(a.operation, b.operation) ||
    seconds(a.time) - seconds(b.time) ||
    compareStrings(a.manager, b.manager) ||
    compareStrings(a.apiVersion, b.apiVersion) ||
    compareStrings(a.subresource ?? '', b.subresource ?? '')
  );
}

function seconds(time: string | undefined): number {
  return time === undefined ? 0 : Math.floor(Date.parse(time) / 1000);
}

const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES = 'ancient-changes';

/**
 * Keeps at most ten Update entries by folding the oldest ones, per API
 * version, into an "ancient-changes" entry, as kube does after every update.
 */
export function capUpdateManagers(managed: Managed): void {
  const updaters = [...managed.fields].filter(([, v]) => !v.applied).map(([key]) => key);
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  updaters.sort((a, b) => seconds(managed.times.get(a)) - seconds(managed.times.get(b)) || compareStrings(a, b));

  const firstOfVersion = new Map<string, string>();
  let remaining = updaters.length;
  for (const key of updaters) {
    if (remaining <= MAX_UPDATE_MANAGERS) break;
    const versioned = managed.fields.get(key)!;
    const bucket = identityKey({ manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: versioned.apiVersion });
    const first = firstOfVersion.get(versioned.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(versioned.apiVersion, key);
      continue;
    }
    if (!managed.fields.has(bucket)) {
      managed.fields.set(bucket, managed.fields.get(first)!);
      managed.fields.delete(first);
    }
    managed.fields.set(bucket, { set: versioned.set.union(managed.fields.get(bucket)!.set), apiVersion: versioned.apiVersion, applied: false });
    managed.fields.delete(key);
    remaining--;
    const time = managed.times.get(key);
    if (time === undefined) managed.times.delete(bucket);
    else managed.times.set(bucket, time);
  }
}
