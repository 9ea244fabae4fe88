/**
 * Field ownership (metadata.managedFields) and server-side apply, with
 * kube-apiserver's semantics (k8s.io/apimachinery managedfields over
 * sigs.k8s.io/structured-merge-diff), for one kind version.
 *
 * Kube behaviours kept on purpose, because clients observe them:
 * - An update on an object without managedFields records nothing; tracking
 *   starts on create and again at the first apply ("before-first-apply").
 *   Sending `[]` or `[{}]` therefore stops tracking until the next apply.
 * - An Update entry's time moves when its manager changes a value; an Apply
 *   entry's time moves when the apply changes the object. A new applier whose
 *   apply changes nothing gets an entry without time.
 * - Resets: on the main resource `status`, on /status `spec` are never owned
 *   and never conflict (the registry strategy discards them anyway).
 * - kubectl's client-side-apply annotation: when the manager is "kubectl",
 *   conflicts on fields that still hold their last-applied value are forced,
 *   and an existing last-applied annotation is rewritten to the applied config.
 *
 * Known departures: field sets are not converted between API versions (all
 * versions of a kind are assumed to share field paths) nor reconciled after a
 * schema change; a container that pruning empties is dropped where kube would
 * leave `null`; and only list-item identity is checked when typing objects
 * (scalar/object type mismatches are left to validation).
 */
import { ApiError, type StatusCause } from '../errors.js';
import type { StructuralSchema } from '../schema/structural-schema.js';
import type { JsonObject } from '../../storage/interface.js';
import { FieldSet } from './fieldset.js';
import {
  capUpdateManagers,
  cloneManaged,
  decodeManagedFields,
  emptyManaged,
  encodeManagedFields,
  identityKey,
  InvalidManagedFields,
  isReset,
  parseIdentityKey,
  type Managed,
  type VersionedSet,
} from './managed.js';
import { pathToString, type Path } from './path.js';
import { compileObjectSchema, SchemaMismatch, type Atom } from './schema.js';
import { compare, ensureNamedFieldsAreMembers, merge, removeItems, toFieldSet, validate, type Comparison } from './typed.js';
import { clone, compareStrings, goJson, goQuote } from './value.js';
import { isJsonObject, jsonEqual } from '../../storage/json.js';

export type { ManagedFieldsEntry } from './managed.js';

/** A field another manager owns with a different value than the applied one. */
export interface Conflict {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
  /** Kube's path rendering, e.g. `.spec.ports[name="http"].port`. */
  field: string;
}

/** The 409 kube answers a conflicting apply with: reason Conflict, one FieldManagerConflict cause per field. */
export class ApplyConflictError extends ApiError {
  constructor(readonly conflicts: Conflict[]) {
    const causes: StatusCause[] = conflicts.map((c) => ({
      reason: 'FieldManagerConflict',
      message: `conflict with ${describeManager(c)}`,
      field: c.field,
    }));
    super(409, 'Conflict', formatConflictMessage(conflicts), { causes });
  }
}

export interface WriteContext {
  manager: string;
  /** group/version of the request, e.g. "infrastructure.cluster.x-k8s.io/v1beta1". */
  apiVersion: string;
  subresource?: 'status';
  /** RFC 3339, second precision. */
  now: string;
}

export interface FieldManagerOptions {
  /** Whether the kind serves /status; defaults to whether the schema has a `status` property. */
  statusSubresource?: boolean;
}

const CURRENT_OPERATION = 'current-operation';
const BEFORE_FIRST_APPLY = 'before-first-apply';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** Never owned by anyone: identity and server-managed metadata. */
const STRIPPED = FieldSet.of(
  [{ field: 'apiVersion' }],
  [{ field: 'kind' }],
  [{ field: 'metadata' }],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map(
    (name): Path => [{ field: 'metadata' }, { field: name }],
  ),
);

export class FieldManager {
  private readonly atom: Atom;
  private readonly resetOnMainResource: FieldSet | undefined;
  private readonly resetOnStatus = FieldSet.of([{ field: 'spec' }]);

  /** schema: structural schema of the WHOLE object (apiVersion, kind, metadata, spec, status...). */
  constructor(schema: StructuralSchema, options: FieldManagerOptions = {}) {
    this.atom = compileObjectSchema(schema);
    const statusSubresource = options.statusSubresource ?? schema.properties?.status !== undefined;
    this.resetOnMainResource = statusSubresource ? FieldSet.of([{ field: 'status' }]) : undefined;
  }

  /** A non-apply write (create, update, merge/json patch). live is undefined on create. Returns `updated` with metadata.managedFields recomputed. */
  update(live: JsonObject | undefined, updated: JsonObject, ctx: WriteContext): JsonObject {
    const next = withManagedFields(updated, undefined);
    const managed = ctx.subresource ? decodeOrEmpty(managedFieldsOf(live)) : requestedOrLive(live, updated);
    if (live !== undefined && managed.fields.size === 0) return next;
    try {
      const base = live === undefined ? typeMetaOf(updated) : withManagedFields(live, undefined);
      const tracked = this.recordUpdate(base, next, managed, ctx, ctx.manager);
      return withManagedFields(next, tracked);
    } catch (error) {
      if (!(error instanceof SchemaMismatch)) throw error;
      // Like kube, a write the schema cannot track keeps the previous ownership.
      return withEntries(next, managedFieldsOf(live));
    }
  }

  /** Server-side apply of `applied` (a partial object) onto `live` (undefined = create). Returns the merged object with metadata.managedFields. Throws ApplyConflictError unless force. */
  apply(live: JsonObject | undefined, applied: JsonObject, ctx: WriteContext & { force: boolean }): JsonObject {
    if (Array.isArray(metadataOf(applied)?.managedFields)) {
      throw new ApiError(400, 'BadRequest', 'metadata.managedFields must be nil');
    }
    let managed: Managed;
    try {
      managed = decodeManagedFields(managedFieldsOf(live));
    } catch (error) {
      if (error instanceof InvalidManagedFields) throw internalError(`failed to decode managed fields: ${error.message}`);
      throw error;
    }
    const base = live === undefined ? typeMetaOf(applied) : withManagedFields(live, undefined);
    this.assertTypable(applied, 'patch object', false);
    this.assertTypable(base, 'live object', true);
    const attempt = (force: boolean): { object: JsonObject; managed: Managed } => {
      let current = managed;
      if (current.fields.size === 0) {
        // Whatever exists before the first apply must not be pruned by it, nor taken silently.
        current = this.recordUpdate(typeMetaOf(applied), base, current, ctx, BEFORE_FIRST_APPLY);
      }
      return this.recordApply(base, applied, current, ctx, force);
    };

    let result: { object: JsonObject; managed: Managed };
    try {
      result = attempt(ctx.force);
    } catch (error) {
      if (!(error instanceof Conflicts)) throw error;
      const allowed = ctx.manager === 'kubectl' ? this.unchangedSinceLastApplied(base, ctx) : undefined;
      const remaining = allowed ? error.without(allowed) : error;
      if (!remaining.isEmpty()) throw new ApplyConflictError(remaining.toConflicts());
      result = attempt(true);
    }

    const object = withManagedFields(clone(result.object), result.managed);
    if (ctx.manager === 'kubectl') syncLastApplied(object, applied);
    return object;
  }

  /** Kube answers objects it cannot type with a 500 naming the object. */
  private assertTypable(object: JsonObject, what: string, allowDuplicates: boolean): void {
    try {
      validate(object, this.atom, allowDuplicates);
    } catch (error) {
      if (error instanceof SchemaMismatch) throw internalError(`failed to create typed ${what} (${objectRef(object)}): ${error.message}`);
      throw error;
    }
  }

  /** Kube's Update: changed fields move to the writer, removed fields leave every set. */
  private recordUpdate(live: JsonObject, next: JsonObject, managed: Managed, ctx: WriteContext, manager: string): Managed {
    const id = identityKey({ manager: manager || 'unknown', operation: 'Update', apiVersion: ctx.apiVersion, subresource: ctx.subresource });
    const out = cloneManaged(managed);
    const changes = this.compare(live, next, ctx);
    release(out.fields, changes, CURRENT_OPERATION, true);
    const taken = changes.modified.union(changes.added).difference(STRIPPED);
    if (!taken.isEmpty()) {
      const previous = out.fields.get(id);
      out.fields.set(id, { set: previous ? taken.union(previous.set) : taken, apiVersion: ctx.apiVersion, applied: false });
      out.times.set(id, ctx.now);
    }
    capUpdateManagers(out);
    return out;
  }

  private recordApply(live: JsonObject, applied: JsonObject, managed: Managed, ctx: WriteContext, force: boolean): { object: JsonObject; managed: Managed } {
    const id = identityKey({ manager: ctx.manager || 'unknown', operation: 'Apply', subresource: ctx.subresource });
    const out = cloneManaged(managed);
    const merged = merge(live, applied, this.atom) as JsonObject;
    const last = out.fields.get(id)?.set;
    out.fields.set(id, { set: this.withoutResetFields(toFieldSet(applied, this.atom), ctx), apiVersion: ctx.apiVersion, applied: true });
    const next = last && !last.isEmpty() ? this.prune(merged, out.fields, last) : merged;

    const conflicts = release(out.fields, this.compare(live, next, ctx), id, force);
    if (conflicts.size > 0) throw new Conflicts(conflicts, out.fields);

    const changed = !jsonEqual(live, next);
    if (changed) out.times.set(id, ctx.now);
    const own = out.fields.get(id);
    if (own) {
      const set = own.set.difference(STRIPPED);
      if (set.isEmpty()) out.fields.delete(id);
      else out.fields.set(id, { ...own, set });
    }
    return { object: changed ? next : live, managed: out };
  }

  /**
   * Removes what the applier owned at its previous apply and dropped from this
   * one, unless some manager (the applier included) still owns it; fields
   * nobody owned are only removed along with a removed parent.
   */
  private prune(merged: JsonObject, fields: Map<string, VersionedSet>, lastSet: FieldSet): JsonObject {
    const named = (set: FieldSet): FieldSet => ensureNamedFieldsAreMembers(set, this.atom);
    const setOf = (object: unknown): FieldSet => named(toFieldSet(object, this.atom));
    const remove = (set: FieldSet): unknown => removeItems(merged, set, this.atom) ?? {};

    const last = named(lastSet);
    let owned = new FieldSet();
    for (const versioned of fields.values()) owned = owned.union(versioned.set);
    const mergedSet = setOf(merged);
    const withoutLast = remove(last);
    const withOwnedBack = remove(mergedSet.difference(setOf(withoutLast).union(named(owned))));
    return remove(mergedSet.difference(setOf(withOwnedBack)).intersection(last)) as JsonObject;
  }

  private compare(before: JsonObject, after: JsonObject, ctx: WriteContext): Comparison {
    const changes = compare(before, after, this.atom);
    return {
      added: this.withoutResetFields(changes.added, ctx),
      modified: this.withoutResetFields(changes.modified, ctx),
      removed: this.withoutResetFields(changes.removed, ctx),
    };
  }

  private withoutResetFields(set: FieldSet, ctx: WriteContext): FieldSet {
    const reset = ctx.subresource === 'status' ? this.resetOnStatus : this.resetOnMainResource;
    return reset ? set.recursiveDifference(reset) : set;
  }

  /** Fields whose live value is still the one in kubectl's last-applied annotation. */
  private unchangedSinceLastApplied(live: JsonObject, ctx: WriteContext): FieldSet | undefined {
    const annotation = annotationsOf(live)?.[LAST_APPLIED];
    if (typeof annotation !== 'string' || annotation === '') return undefined;
    try {
      const lastApplied: unknown = JSON.parse(annotation);
      if (!isJsonObject(lastApplied) || lastApplied.apiVersion !== ctx.apiVersion) return undefined;
      validate(lastApplied, this.atom, false);
      validate(live, this.atom, false);
      const changes = compare(lastApplied, live, this.atom);
      return toFieldSet(lastApplied, this.atom).difference(changes.modified).difference(changes.added).difference(changes.removed);
    } catch (error) {
      if (error instanceof SyntaxError || error instanceof SchemaMismatch) return undefined;
      throw error;
    }
  }
}

/** Fields of other managers that an operation changed, by manager identity. */
class Conflicts extends Error {
  constructor(
    private readonly byManager: Map<string, FieldSet>,
    private readonly owners: Map<string, VersionedSet>,
  ) {
    super('apply conflicts');
  }

  isEmpty(): boolean {
    return this.byManager.size === 0;
  }

  without(allowed: FieldSet): Conflicts {
    const rest = new Map<string, FieldSet>();
    for (const [id, set] of this.byManager) {
      const kept = FieldSet.of(...set.paths().filter((path) => !allowed.has(path)));
      if (!kept.isEmpty()) rest.set(id, kept);
    }
    return new Conflicts(rest, this.owners);
  }

  toConflicts(): Conflict[] {
    return [...this.byManager.keys()].sort(compareStrings).flatMap((id) => {
      const { manager, operation, subresource } = parseIdentityKey(id);
      const apiVersion = this.owners.get(id)!.apiVersion;
      return this.byManager
        .get(id)!
        .paths()
        .map((path) => ({ manager, operation, apiVersion, ...(subresource ? { subresource } : {}), field: pathToString(path) }));
    });
  }
}

/**
 * Takes changed fields away from every manager but `owner` and drops managers
 * left with nothing. Without force, a modified or added field that another
 * manager owns is a conflict: those are returned and nothing changes.
 */
function release(fields: Map<string, VersionedSet>, changes: Comparison, owner: string, force: boolean): Map<string, FieldSet> {
  const changed = changes.modified.union(changes.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [id, versioned] of fields) {
    if (id === owner) continue;
    const taken = versioned.set.intersection(changed);
    if (!taken.isEmpty()) conflicts.set(id, taken);
  }
  if (!force && conflicts.size > 0) return conflicts;
  for (const [id, versioned] of fields) {
    if (id === owner) continue;
    const taken = conflicts.get(id);
    const set = (taken ? versioned.set.difference(taken) : versioned.set).difference(changes.removed);
    fields.set(id, { ...versioned, set });
  }
  for (const [id, versioned] of fields) if (versioned.set.isEmpty()) fields.delete(id);
  return new Map();
}

/** "Apply failed with N conflict(s): ..." exactly as kube-apiserver words it. */
export function formatConflictMessage(conflicts: Conflict[]): string {
  if (conflicts.length === 1) {
    const [only] = conflicts as [Conflict];
    return `Apply failed with 1 conflict: conflict with ${describeManager(only)}: ${only.field}`;
  }
  const byManager = new Map<string, Conflict[]>();
  for (const c of conflicts) {
    const id = identityKey(c);
    byManager.set(id, [...(byManager.get(id) ?? []), c]);
  }
  const lines = [...byManager.keys()].sort(compareStrings).flatMap((id) => {
    const group = byManager.get(id)!;
    return [`conflicts with ${describeManager(group[0]!)}:`, ...group.map((c) => `- ${c.field}`)];
  });
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

function describeManager(c: Conflict): string {
  let text = goQuote(c.manager);
  if (c.subresource) text += ` with subresource ${goQuote(c.subresource)}`;
  return c.operation === 'Update' ? `${text} using ${c.apiVersion}` : text;
}

function internalError(message: string): ApiError {
  return new ApiError(500, 'InternalError', message);
}

function requestedOrLive(live: JsonObject | undefined, updated: JsonObject): Managed {
  const requested = managedFieldsOf(updated);
  if (isReset(requested)) return emptyManaged();
  try {
    const managed = decodeManagedFields(requested);
    // Clients that drop managedFields (or send garbage) keep the stored ones.
    if (managed.fields.size > 0) return managed;
  } catch (error) {
    if (!(error instanceof InvalidManagedFields)) throw error;
  }
  return decodeOrEmpty(managedFieldsOf(live));
}

function decodeOrEmpty(entries: unknown): Managed {
  try {
    return decodeManagedFields(entries);
  } catch (error) {
    if (error instanceof InvalidManagedFields) return emptyManaged();
    throw error;
  }
}

function metadataOf(object: JsonObject | undefined): Record<string, unknown> | undefined {
  const metadata = object?.metadata;
  return isJsonObject(metadata) ? metadata : undefined;
}

function managedFieldsOf(object: JsonObject | undefined): unknown {
  return metadataOf(object)?.managedFields;
}

function annotationsOf(object: JsonObject): Record<string, unknown> | undefined {
  const annotations = metadataOf(object)?.annotations;
  return isJsonObject(annotations) ? annotations : undefined;
}

function typeMetaOf(object: JsonObject): JsonObject {
  const meta: JsonObject = {};
  if (object.apiVersion !== undefined) meta.apiVersion = object.apiVersion;
  if (object.kind !== undefined) meta.kind = object.kind;
  return meta;
}

/** A shallow copy with metadata.managedFields encoded from `managed` (or removed). */
function withManagedFields(object: JsonObject, managed: Managed | undefined): JsonObject {
  const entries = managed ? encodeManagedFields(managed) : [];
  return withEntries(object, entries.length > 0 ? entries : undefined);
}

function withEntries(object: JsonObject, entries: unknown): JsonObject {
  const { managedFields: _replaced, ...metadata } = metadataOf(object) ?? {};
  if (entries !== undefined) metadata.managedFields = entries;
  if (Object.keys(metadata).length === 0 && metadataOf(object) === undefined) return { ...object };
  return { ...object, metadata };
}

/** Kube keeps an existing client-side-apply annotation in step with `kubectl apply --server-side`. */
function syncLastApplied(object: JsonObject, applied: JsonObject): void {
  const annotations = annotationsOf(object);
  const current = annotations?.[LAST_APPLIED];
  if (typeof current !== 'string' || current === '') return;
  const config = clone(applied);
  const metadata = metadataOf(config);
  if (metadata && 'annotations' in metadata) {
    const own = metadata.annotations;
    if (isJsonObject(own) && Object.values(own).every((v) => typeof v === 'string')) delete own[LAST_APPLIED];
    else delete metadata.annotations;
  }
  annotations![LAST_APPLIED] = `${goJson(config)}\n`;
}

/** "namespace/name; group/version, Kind=Kind", as kube names objects in these errors. */
function objectRef(object: JsonObject): string {
  const metadata = metadataOf(object);
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
  const groupVersion = apiVersion.includes('/') ? apiVersion : `/${apiVersion}`;
  return `${String(metadata?.namespace ?? '')}/${String(metadata?.name ?? '')}; ${groupVersion}, Kind=${String(object.kind ?? '')}`;
}
