/**
 * Request bodies in Kubernetes' protobuf encoding, which kubectl's typed
 * clients send for built-in kinds (`kubectl create secret generic` does):
 * the four bytes `k8s\0`, then a runtime.Unknown message holding the type
 * (apiVersion, kind) and the object's own message. Only the decoding side is
 * here: a server may answer such a request in JSON, which kubectl accepts.
 *
 * Written on protobufjs's reflection API from the field numbers of
 * k8s.io/apimachinery's generated.proto files; protobufjs does the wire
 * format, this module only the Kubernetes shapes around it (the envelope,
 * ObjectMeta, Time), which no library provides.
 */
import protobuf from 'protobufjs';
import type { JsonObject } from '../../storage/interface.js';

const { Field, MapField, Type } = protobuf;

/** The magic prefix of every protobuf-encoded Kubernetes object. */
const magic = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

const typeMeta = new Type('TypeMeta').add(new Field('apiVersion', 1, 'string')).add(new Field('kind', 2, 'string'));
const unknown = new Type('Unknown')
  .add(new Field('typeMeta', 1, 'TypeMeta'))
  .add(new Field('raw', 2, 'bytes'))
  .add(new Field('contentEncoding', 3, 'string'))
  .add(new Field('contentType', 4, 'string'));

const time = new Type('Time').add(new Field('seconds', 1, 'int64')).add(new Field('nanos', 2, 'int32'));
const ownerReference = new Type('OwnerReference')
  .add(new Field('kind', 1, 'string'))
  .add(new Field('name', 3, 'string'))
  .add(new Field('uid', 4, 'string'))
  .add(new Field('apiVersion', 5, 'string'))
  .add(new Field('controller', 6, 'bool'))
  .add(new Field('blockOwnerDeletion', 7, 'bool'));
const fieldsV1 = new Type('FieldsV1').add(new Field('Raw', 1, 'bytes'));
const managedFieldsEntry = new Type('ManagedFieldsEntry')
  .add(new Field('manager', 1, 'string'))
  .add(new Field('operation', 2, 'string'))
  .add(new Field('apiVersion', 3, 'string'))
  .add(new Field('time', 4, 'Time'))
  .add(new Field('fieldsType', 6, 'string'))
  .add(new Field('fieldsV1', 7, 'FieldsV1'))
  .add(new Field('subresource', 8, 'string'));
const objectMeta = new Type('ObjectMeta')
  .add(new Field('name', 1, 'string'))
  .add(new Field('generateName', 2, 'string'))
  .add(new Field('namespace', 3, 'string'))
  .add(new Field('selfLink', 4, 'string'))
  .add(new Field('uid', 5, 'string'))
  .add(new Field('resourceVersion', 6, 'string'))
  .add(new Field('generation', 7, 'int64'))
  .add(new Field('creationTimestamp', 8, 'Time'))
  .add(new Field('deletionTimestamp', 9, 'Time'))
  .add(new Field('deletionGracePeriodSeconds', 10, 'int64'))
  .add(new MapField('labels', 11, 'string', 'string'))
  .add(new MapField('annotations', 12, 'string', 'string'))
  .add(new Field('ownerReferences', 13, 'OwnerReference', 'repeated'))
  .add(new Field('finalizers', 14, 'string', 'repeated'))
  .add(new Field('managedFields', 17, 'ManagedFieldsEntry', 'repeated'));

/** One namespace for the meta messages and every kind's, so a kind's type can name `ObjectMeta`. */
const root = new protobuf.Root();
for (const meta of [typeMeta, unknown, time, ownerReference, fieldsV1, managedFieldsEntry, objectMeta]) root.add(meta);
root.resolveAll();

/** Registers a kind's message type (named after the kind), resolving its references to the meta messages. */
export function messageType(type: protobuf.Type): protobuf.Type {
  root.add(type);
  root.resolveAll();
  return type;
}

export interface ProtobufObject {
  apiVersion: string;
  kind: string;
  /** The object's own message. */
  raw: Uint8Array;
}

/** Undefined when the body is not a Kubernetes protobuf object (no magic prefix, or a broken message). */
export function openEnvelope(body: Buffer): ProtobufObject | undefined {
  if (body.length < magic.length || !body.subarray(0, magic.length).equals(magic)) return undefined;
  try {
    const decoded = unknown.toObject(unknown.decode(body.subarray(magic.length)), { defaults: false }) as {
      typeMeta?: { apiVersion?: string; kind?: string };
      raw?: Uint8Array;
      contentEncoding?: string;
    };
    // An encoded (e.g. compressed) payload is not something kubectl sends.
    if (decoded.contentEncoding) return undefined;
    return { apiVersion: decoded.typeMeta?.apiVersion ?? '', kind: decoded.typeMeta?.kind ?? '', raw: decoded.raw ?? new Uint8Array() };
  } catch {
    return undefined;
  }
}

/** A decoded message as plain values: 64-bit integers as numbers, bytes as Buffers, absent fields absent. */
export function plainObject(type: protobuf.Type, raw: Uint8Array): Record<string, unknown> {
  return type.toObject(type.decode(raw), { longs: Number, bytes: Buffer, defaults: false }) as Record<string, unknown>;
}

/** metav1.Time on the wire: whole seconds (RFC 3339 in JSON drops the nanoseconds). */
function timeText(value: unknown): string | undefined {
  const seconds = (value as { seconds?: number } | undefined)?.seconds;
  return seconds === undefined ? undefined : new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Go writes every non-pointer field to the wire, empty or not, where its
 * JSON leaves it out (omitempty): an empty string or a zero is absent.
 */
export function omitEmpty(object: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== '' && value !== 0));
}

/** ObjectMeta as its JSON form. */
export function objectMetaJson(meta: Record<string, unknown> | undefined): JsonObject {
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(omitEmpty(meta ?? {}))) {
    if (key === 'creationTimestamp' || key === 'deletionTimestamp') {
      const text = timeText(value);
      if (text !== undefined) result[key] = text;
    } else if (key === 'managedFields') {
      result.managedFields = (value as Record<string, unknown>[]).map(({ time: at, fieldsV1: fields, ...entry }) => ({
        ...(entry as JsonObject),
        ...(timeText(at) === undefined ? {} : { time: timeText(at)! }),
        ...((fields as { Raw?: Buffer } | undefined)?.Raw ? { fieldsV1: JSON.parse((fields as { Raw: Buffer }).Raw.toString('utf8')) as JsonObject } : {}),
      }));
    } else {
      result[key] = value as JsonObject[string];
    }
  }
  return result;
}
