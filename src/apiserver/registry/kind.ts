/**
 * What the API machinery needs to know about a kind to serve it. Kinds are
 * data: the generic handlers (discovery, OpenAPI, CRUD, watch, Table) read
 * these definitions; nothing in the handlers is kind-specific.
 */
import type { z } from 'zod';
import type { FieldError } from '../errors.js';
import type { JsonObject } from '../../storage/interface.js';

/** A column of `kubectl get`, as a CRD's additionalPrinterColumns declares it. */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description?: string;
  /** 0: always shown; > 0: only with -o wide. */
  priority?: number;
  /** A kubectl-style JSONPath, e.g. `.status.ready` or `.metadata.ownerReferences[?(@.kind=="Machine")].name`. */
  jsonPath: string;
}

/**
 * An OpenAPI v3 schema restricted to what Kubernetes calls a structural schema,
 * plus the x-kubernetes-* extensions that drive pruning and server-side apply.
 */
export interface StructuralSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  description?: string;
  properties?: Record<string, StructuralSchema>;
  /** A schema for map values; `true` keeps any value. */
  additionalProperties?: StructuralSchema | boolean;
  items?: StructuralSchema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-validations'?: { rule: string; message?: string; messageExpression?: string; fieldPath?: string; reason?: string }[];
}

export interface KindVersion {
  /** e.g. "v1beta2". */
  name: string;
  served: boolean;
  /** Exactly one version of a kind is the storage version. */
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  /**
   * The schema of the object's top-level fields other than apiVersion, kind and
   * metadata (usually `spec` and `status`). It validates, and it is the source
   * of the structural schema (pruning, defaults, SSA) and of the OpenAPI docs.
   */
  schema: z.ZodObject;
  printerColumns: PrinterColumn[];
}

/** What admission rules may know about the request beyond the objects. */
export interface AdmissionContext {
  /** The request will not be persisted (dryRun=All). */
  dryRun: boolean;
}

/** Kind-specific admission rules beyond the schema (CAPO's webhooks live here). */
export interface AdmissionRules {
  validateCreate?(object: JsonObject, context: AdmissionContext): FieldError[];
  validateUpdate?(object: JsonObject, old: JsonObject, context: AdmissionContext): FieldError[];
}

/** Conversion between served versions through the storage version (the hub). */
export interface Converter {
  /** Convert an object of any served version to the storage version. */
  toStorage(object: JsonObject): JsonObject;
  /** Convert a stored object to the given served version. */
  fromStorage(object: JsonObject, version: string): JsonObject;
}

export type Verb = 'create' | 'delete' | 'deletecollection' | 'get' | 'list' | 'patch' | 'update' | 'watch';

export interface KindDefinition {
  group: string;
  kind: string;
  /** Defaults to `${kind}List`. */
  listKind?: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  categories?: string[];
  namespaced: boolean;
  /** Ordered by preference: the first served version is the preferred one. */
  versions: KindVersion[];
  subresources: { status: boolean };
  /** Verbs served on the main resource; all eight when omitted. */
  verbs?: Verb[];
  admission?: AdmissionRules;
  /** Required when more than one version is served. */
  converter?: Converter;
}
