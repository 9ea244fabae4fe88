import type { StructuralSchema } from '../../../src/apiserver/schema/structural-schema.js';
import { FieldManager, type ManagedFieldsEntry, type WriteContext } from '../../../src/apiserver/fieldmanager/index.js';
import type { JsonObject } from '../../../src/storage/interface.js';

const str: StructuralSchema = { type: 'string' };

/**
 * A CRD-like kind exercising every ownership shape: scalars, a granular map,
 * map lists (one and two keys, one key defaulted), a set, an atomic list, an
 * atomic map, preserved unknown fields, a map list of sets and a status
 * with conditions.
 */
export const schema: StructuralSchema = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        image: str,
        paused: { type: 'boolean' },
        selector: { type: 'object', additionalProperties: str },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: str, port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } },
          },
        },
        listeners: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['protocol', 'port'],
          items: { type: 'object', properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' }, name: str } },
        },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: str },
        groups: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', properties: { name: str, members: { type: 'array', 'x-kubernetes-list-type': 'set', items: str } } },
        },
        args: { type: 'array', items: str },
        resources: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { cpu: str, memory: str } },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    status: {
      type: 'object',
      properties: {
        ready: { type: 'boolean' },
        conditions: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
          items: { type: 'object', properties: { type: str, status: str, reason: str } },
        },
      },
    },
  },
};

export const GV = 'example.com/v1';

export function newManager(): FieldManager {
  return new FieldManager(schema);
}

export function ctx(manager: string, now: string, extra: Partial<WriteContext> = {}): WriteContext {
  return { manager, apiVersion: GV, now, ...extra };
}

export function applyCtx(manager: string, now: string, force = false, extra: Partial<WriteContext> = {}): WriteContext & { force: boolean } {
  return { ...ctx(manager, now, extra), force };
}

/** An object as the registry stores it: server-set metadata included. */
export function widget(spec: JsonObject, metadata: JsonObject = {}): JsonObject {
  return {
    apiVersion: GV,
    kind: 'Widget',
    metadata: { name: 'w', namespace: 'default', uid: 'uid-1', resourceVersion: '7', generation: 1, creationTimestamp: 'T', ...metadata },
    spec,
  };
}

/** An applied configuration: what a client sends. */
export function config(spec: JsonObject | undefined, metadata: JsonObject = {}): JsonObject {
  const object: JsonObject = { apiVersion: GV, kind: 'Widget', metadata: { name: 'w', namespace: 'default', ...metadata } };
  if (spec !== undefined) object.spec = spec;
  return object;
}

export function entries(object: JsonObject): ManagedFieldsEntry[] {
  return ((object.metadata as JsonObject).managedFields as ManagedFieldsEntry[] | undefined) ?? [];
}

export function entry(object: JsonObject, manager: string, operation?: 'Apply' | 'Update'): ManagedFieldsEntry | undefined {
  return entries(object).find((e) => e.manager === manager && (operation === undefined || e.operation === operation));
}

export function specOf(object: JsonObject): JsonObject {
  return object.spec as JsonObject;
}

export const T0 = '2026-01-02T03:04:00Z';
export const T1 = '2026-01-02T03:04:01Z';
export const T2 = '2026-01-02T03:04:02Z';
export const T3 = '2026-01-02T03:04:03Z';
