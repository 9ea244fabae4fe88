/**
 * What the generic store asks of a kind at each step of a write, after kube's
 * REST strategies: PrepareForCreate, PrepareForUpdate, Canonicalize,
 * Validate/ValidateUpdate, and GetAttrs (the fields a field selector tests).
 *
 * Every kind's strategy is read from its definition (status subresource,
 * admission rules, schema, selectable fields), the way kube derives a CRD's
 * strategy from the CRD: a kind changes how it is written by declaring data,
 * never by a branch in the store.
 */
import type { AdmissionContext, KindDefinition, KindVersion } from '../registry/kind.js';
import type { FieldError } from '../errors.js';
import { validateAgainstSchema } from '../schema/validate.js';
import { dedupOwnerReferences, validateObjectMetaOnCreate, validateObjectMetaOnUpdate } from '../validation/objectmeta.js';
import type { JsonObject } from '../../storage/interface.js';
import { ensureMetadata } from './object.js';
import { isJsonObject } from '../../storage/json.js';

/** The subresource a write goes to: the main resource, or status. */
export type Subresource = 'status' | undefined;

export interface Validation {
  errors: FieldError[];
  warnings: string[];
}

export interface ResourceStrategy {
  /** Clears what a create may not set: status, when status is a subresource. */
  prepareForCreate(object: JsonObject): void;
  /**
   * The object an update writes: what the request may change, carried onto
   * what it may not (server-managed metadata always; status on main-resource
   * writes, everything but status on /status writes). `requested` is the
   * write's own and may become the result; `current` may be shared and frozen
   * (the watch cache's), so it is only read.
   */
  prepareForUpdate(requested: JsonObject, current: JsonObject, subresource: Subresource): JsonObject;
  /** Mutating admission: rewrites an incoming object before validation (a Secret folds stringData into data). */
  canonicalize(object: JsonObject): JsonObject;
  /** Metadata and schema, in the request's version; `old` is the current object on updates. */
  validate(object: JsonObject, old: JsonObject | undefined, version: KindVersion): Validation;
  /**
   * The kind's admission rules, on the object converted to the storage version (the one conversion
   * of a write) and the stored object it replaces on updates; asked only of objects `validate` passed.
   */
  admit(stored: JsonObject, oldStored: JsonObject | undefined, context: AdmissionContext): FieldError[];
  /** The field selector labels this kind answers to, metadata.name and metadata.namespace first. */
  readonly selectableFields: readonly string[];
  /** Each selectable field's value in an object (of the storage version), "" when unset. */
  fieldsOf(object: JsonObject): Readonly<Record<string, string>>;
}

/** The strategy of a kind. */
export function strategyFor(definition: KindDefinition): ResourceStrategy {
  const scope = { namespaced: definition.namespaced };
  const statusIsSubresource = definition.subresources.status;
  const selectableFields = ['metadata.name', 'metadata.namespace', ...(definition.selectableFields ?? [])];
  return {
    prepareForCreate(object) {
      if (statusIsSubresource) delete object.status;
    },

    prepareForUpdate(requested, current, subresource) {
      const currentMeta = ensureMetadata(current);
      let next: JsonObject;
      if (subresource === 'status') {
        // All but status as stored, shared with current (frozen, maybe the watch cache's) but for the metadata the server sets below.
        next = { ...current, metadata: { ...currentMeta } };
        if (requested.status === undefined) delete next.status;
        else next.status = requested.status;
      } else {
        next = requested;
        if (statusIsSubresource) {
          if (current.status === undefined) delete next.status;
          else next.status = current.status;
        }
      }
      const meta = ensureMetadata(next);
      meta.uid = currentMeta.uid;
      meta.creationTimestamp = currentMeta.creationTimestamp;
      meta.generation = currentMeta.generation;
      meta.name = currentMeta.name;
      if (definition.namespaced) meta.namespace = currentMeta.namespace;
      if (currentMeta.deletionTimestamp === undefined) delete meta.deletionTimestamp;
      else meta.deletionTimestamp = currentMeta.deletionTimestamp;
      if (currentMeta.deletionGracePeriodSeconds === undefined) delete meta.deletionGracePeriodSeconds;
      else meta.deletionGracePeriodSeconds = currentMeta.deletionGracePeriodSeconds;
      return next;
    },

    canonicalize(object) {
      return definition.admission?.mutate?.(object) ?? object;
    },

    validate(object, old, version) {
      const meta = ensureMetadata(object);
      const warnings: string[] = [];
      if (meta.ownerReferences) {
        const deduped = dedupOwnerReferences(meta);
        meta.ownerReferences = deduped.ownerReferences;
        warnings.push(...deduped.warnings);
      }
      const metaResult = old ? validateObjectMetaOnUpdate(meta, ensureMetadata(old), scope) : validateObjectMetaOnCreate(meta, scope);
      warnings.push(...metaResult.warnings);
      return { errors: [...metaResult.errors, ...validateAgainstSchema(version, object)], warnings };
    },

    admit(stored, oldStored, context) {
      const rules = definition.admission;
      if (oldStored) return rules?.validateUpdate?.(stored, oldStored, context) ?? [];
      return rules?.validateCreate?.(stored, context) ?? [];
    },

    selectableFields,

    fieldsOf(object) {
      const fields: Record<string, string> = {};
      for (const field of selectableFields) fields[field] = fieldValue(object, field);
      return fields;
    },
  };
}

/** A scalar at a dotted path as a field selector compares it; anything else is "". */
function fieldValue(object: JsonObject, field: string): string {
  let current: unknown = object;
  for (const segment of field.split('.')) {
    if (!isJsonObject(current)) return '';
    current = current[segment];
  }
  return typeof current === 'string' || typeof current === 'number' || typeof current === 'boolean' ? String(current) : '';
}
