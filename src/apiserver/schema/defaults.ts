/**
 * Structural defaulting as kube-apiserver applies it to custom resources: a
 * field's default fills it in when it is absent, or null without being
 * nullable, inside every object that exists (list items and map values
 * included). Defaults are copied, and defaulted values are defaulted in turn.
 */
import type { JsonObject } from '../../storage/interface.js';
import type { StructuralSchema } from './structural-schema.js';

/** A defaulted copy of the object; the input is left alone. */
export function applyDefaults(object: JsonObject, schema: StructuralSchema): JsonObject {
  return applyDefaultsInPlace(structuredClone(object), schema);
}

/** Defaults the object itself: for a copy the caller made and owns (a decoded body), saving a second copy. */
export function applyDefaultsInPlace(object: JsonObject, schema: StructuralSchema): JsonObject {
  fill(object, schema);
  return object;
}

function fill(value: unknown, schema: StructuralSchema | undefined): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (isNonNullableNull(item, schema.items)) value[i] = copyOfDefault(schema.items);
      fill(value[i], schema.items);
    });
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const object = value as JsonObject;
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    if (property.default === undefined) continue;
    if (!(key in object) || isNonNullableNull(object[key], property)) object[key] = structuredClone(property.default);
  }
  const additional = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  for (const key of Object.keys(object)) {
    const property = schema.properties?.[key];
    if (property) {
      fill(object[key], property);
    } else if (additional) {
      if (isNonNullableNull(object[key], additional)) object[key] = copyOfDefault(additional);
      fill(object[key], additional);
    }
  }
}

function isNonNullableNull(value: unknown, schema: StructuralSchema | undefined): boolean {
  return value === null && schema !== undefined && !schema.nullable;
}

/** A null without a default stays null, as in kube. */
function copyOfDefault(schema: StructuralSchema | undefined): unknown {
  return schema?.default === undefined ? null : structuredClone(schema.default);
}
