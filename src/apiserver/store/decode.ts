/**
 * A request body as an object of the kind and version it was sent to, the
 * decoding kube's handlers do before admission: type meta checked against
 * the endpoint (a built-in kind's body may leave it out), unknown fields
 * dropped and reported as fieldValidation says, schema defaults applied. It
 * is the first step of the store's write path (resource-store.ts), so every
 * writer, the API handlers and the reconciler's KindClient alike, is decoded
 * once and the same way; the handlers only parse the HTTP body.
 */
import type { JsonObject } from '../../storage/interface.js';
import { errors } from '../errors.js';
import type { KindDefinition, KindVersion } from '../registry/kind.js';
import { groupVersionOf } from '../registry/registry.js';
import { applyDefaultsInPlace } from '../schema/defaults.js';
import { pruneUnknownFields } from '../schema/prune.js';
import { structuralSchemaOf } from '../schema/structural.js';
import { isJsonObject } from '../../storage/json.js';

/** What to do with fields the schema does not know: refuse the request, warn, or drop them silently. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface DecodedKindObject {
  object: JsonObject;
  /** Unknown fields, under fieldValidation=Warn. */
  warnings: string[];
}

/**
 * Decodes `input` for `version` of `definition`. Apply bodies pass
 * `defaults: false`: server-side apply defaults the merged object, so a
 * manager does not come to own defaults it never sent.
 */
export function decodeObject(
  input: unknown,
  definition: KindDefinition,
  version: KindVersion,
  fieldValidation: FieldValidation,
  { defaults = true }: { defaults?: boolean } = {},
): DecodedKindObject {
  if (!isJsonObject(input)) throw errors.badRequest('the body of the request is not a JSON object');
  const expectedApiVersion = groupVersionOf(definition.group, version.name);
  // kube decodes a built-in kind's body with the endpoint's apiVersion and kind as defaults.
  const body = definition.builtIn ? { ...input, apiVersion: input.apiVersion || expectedApiVersion, kind: input.kind || definition.kind } : input;
  if (body.kind === undefined || body.kind === '') {
    throw errors.badRequest(`Object 'Kind' is missing in '${truncate(JSON.stringify(body))}'`);
  }
  if (body.apiVersion !== expectedApiVersion) {
    throw errors.badRequest(`the API version in the data (${String(body.apiVersion ?? '')}) does not match the expected API version (${expectedApiVersion})`);
  }
  if (body.kind !== definition.kind) {
    throw errors.badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${definition.kind})`);
  }
  if (body.metadata !== undefined && !isJsonObject(body.metadata)) {
    throw errors.badRequest('metadata must be an object');
  }
  const schema = structuralSchemaOf(version);
  const { object, unknownFields } = pruneUnknownFields(body, schema);
  const warnings: string[] = [];
  if (unknownFields.length > 0) {
    if (fieldValidation === 'Strict') {
      throw errors.badRequest(`strict decoding error: ${unknownFields.map((f) => `unknown field "${f}"`).join(', ')}`);
    }
    if (fieldValidation === 'Warn') warnings.push(...unknownFields.map((f) => `unknown field "${f}"`));
  }
  // The pruned object is pruneUnknownFields' own copy: defaulted where it is, not copied again.
  return { object: defaults ? applyDefaultsInPlace(object, schema) : object, warnings };
}

/** kube quotes at most this much of a body in its "Kind is missing" message. */
function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}
