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
import { clone, ensureMetadata } from './object.js';
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
   * writes, everything but status on /status writes).
   */
  prepareForUpdate(requested: JsonObject, current: JsonObject, subresource: Subresource): JsonObject;
  /** Mutating admission: rewrites an incoming object before validation (a Secret folds stringData into data). */
  canonicalize(object: JsonObject): JsonObject;
  /** Metadata, schema and the kind's admission rules; `old` is the current object on updates. */
  validate(object: JsonObject, old: JsonObject | undefined, version: KindVersion, context: AdmissionContext): Validation;
  /** The field selector labels this kind answers to, metadata.name and metadata.namespace first. */
  readonly selectableFields: readonly string[];
  /** Each selectable field's value in an object (of the storage version), "" when unset. */
  fieldsOf(object: JsonObject): Readonly<Record<string, string>>;
}

/** The strategy of a kind; `toStorage` converts an object of a served version to the storage version. */
export function strategyFor(definition: KindDefinition, toStorage: (object: JsonObject, version: KindVersion) => JsonObject): ResourceStrategy {
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
        next = clone(current);
        if (requested.status === undefined) delete next.status;
        else next.status = requested.status;
      } else {
        next = requested;
        if (statusIsSubresource) {
          if (current.status === undefined) delete next.status;
          else next.status = clone(current.status);
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

    validate(object, old, version, context) {
      const meta = ensureMetadata(object);
      const warnings: string[] = [];
      if (meta.ownerReferences) {
        const deduped = dedupOwnerReferences(meta);
        meta.ownerReferences = deduped.ownerReferences;
        warnings.push(...deduped.warnings);
      }
      const metaResult = old ? validateObjectMetaOnUpdate(meta, ensureMetadata(old), scope) : validateObjectMetaOnCreate(meta, scope);
      warnings.push(...metaResult.warnings);
      const errors = [...metaResult.errors, ...validateAgainstSchema(version, object)];
      const rules = definition.admission;
      // Admission rules see the storage version, and only objects the schema accepts.
      if (errors.length === 0 && rules) {
        const stored = toStorage(object, version);
        if (old) errors.push(...(rules.validateUpdate?.(stored, toStorage(old, version), context) ?? []));
        else errors.push(...(rules.validateCreate?.(stored, context) ?? []));
      }
      return { errors, warnings };
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
