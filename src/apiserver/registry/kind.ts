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
  /**
   * Computes the cell instead of evaluating jsonPath, for the columns of
   * kube's built-in printers that JSONPath cannot express (a Secret's number
   * of keys); jsonPath then names the field the value comes from.
   */
  value?: (object: JsonObject) => unknown;
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
  /**
   * Decodes the kind's own protobuf message (a request body kubectl's typed
   * clients send for built-in kinds) into the JSON object, without apiVersion
   * and kind. Kinds without it take JSON and YAML only, as CRDs do.
   */
  protobuf?: (raw: Uint8Array) => JsonObject;
}

/** What admission rules may know about the request beyond the objects. */
export interface AdmissionContext {
  /** The request will not be persisted (dryRun=All). */
  dryRun: boolean;
}

/** Kind-specific admission rules beyond the schema (CAPO's webhooks live here). */
export interface AdmissionRules {
  /**
   * Mutating admission: rewrites every incoming object (create, update,
   * patch, apply), in the version of the request, before validation and
   * managedFields. A Secret folds its write-only stringData into data here.
   */
  mutate?(object: JsonObject): JsonObject;
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

/** Stored objects of a computed kind's inputs, all read at one storage revision. */
export interface ComputedInputs {
  revision: number;
  /** One list per input kind, in the order of ComputedSource.inputs, each object in its storage version. */
  objects: JsonObject[][];
}

/**
 * How a computed kind's objects derive from stored objects. Each computed
 * object carries metadata.resourceVersion: the newest revision among the
 * inputs it was computed from.
 */
export interface ComputedSource {
  /** The stored, namespaced kinds the objects are computed from. */
  inputs: KindDefinition[];
  /** Every object the inputs yield. */
  computeAll(inputs: ComputedInputs): JsonObject[];
  /** The object of that name, or undefined when the inputs yield none. */
  computeOne(inputs: ComputedInputs, namespace: string, name: string): JsonObject | undefined;
  /** The computed objects an input object contributes to (looked up in `inputs`, which may no longer hold it). */
  affectedBy(inputs: ComputedInputs, input: JsonObject): { namespace: string; name: string }[];
}

export type Verb = 'create' | 'delete' | 'deletecollection' | 'get' | 'list' | 'patch' | 'update' | 'watch';

export interface KindDefinition {
  /** "" is the legacy core group, served under /api/{version} instead of /apis/{group}/{version}. */
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
  /**
   * Objects computed from stored objects of other kinds instead of stored:
   * served read-only (get, list, watch), namespaced, with the watch and
   * resourceVersion semantics of stored kinds.
   */
  computed?: ComputedSource;
  /**
   * Served the way kube-apiserver serves its compiled-in kinds rather than
   * as a CRD: PATCH also takes strategic merge patch (lists merge as their
   * x-kubernetes-patch-strategy says), and a body without apiVersion or kind
   * gets them from the endpoint.
   */
  builtIn?: boolean;
  /**
   * Fields beyond metadata.name and metadata.namespace that field selectors
   * may test, as dotted paths to scalars (a CRD's selectableFields; `type`
   * for Secrets). Evaluated on the storage version.
   */
  selectableFields?: string[];
}
