/**
 * The shape of a structural schema, and of the one thing the schema code needs
 * from a served version: its name and zod schema. Kept apart from the kind
 * registry so schema code sits below it (the registry checks every version's
 * schema at startup; schema code never reads the registry).
 */
import type { z } from 'zod';

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
  /** How strategic merge patch merges this field: "merge" (lists), "retainKeys" (maps), or both comma-separated. */
  'x-kubernetes-patch-strategy'?: string;
  /** The item field that identifies list items for strategic merge patch, e.g. "uid". */
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-validations'?: { rule: string; message?: string; messageExpression?: string; fieldPath?: string; reason?: string }[];
}

/** The size and count bounds: numbers carried as they are from a JSON schema to the published one. */
export const countBoundKeys = [
  'multipleOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
] as const satisfies readonly (keyof StructuralSchema)[];

/** The x-kubernetes-* extensions carried as they are (int-or-string, which stands for a type, aside). */
export const extensionKeys = [
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-patch-strategy',
  'x-kubernetes-patch-merge-key',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-validations',
] as const satisfies readonly (keyof StructuralSchema)[];

/** A served version as the schema code sees it; the registry's KindVersion is one. */
export interface VersionedSchema {
  /** e.g. "v1beta2". */
  name: string;
  schema: z.ZodObject;
}
