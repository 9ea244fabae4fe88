/**
 * The core v1 Secret, served as kube-apiserver serves it: data holds base64
 * values, stringData is write-only (folded into data on every write, never
 * stored), type defaults to Opaque and immutable freezes data and type.
 */
import protobuf from 'protobufjs';
import { z } from 'zod';
import { messageType, objectMetaJson, omitEmpty, plainObject } from '../../apiserver/protobuf/envelope.js';
import type { KindVersion, PrinterColumn } from '../../apiserver/registry/kind.js';
import type { JsonObject } from '../../storage/interface.js';
import { isJsonObject } from '../../storage/json.js';

// Keys and base64 are checked by the admission rules, whose messages leave the values out.
const base64Value = z.string().meta({ format: 'base64' });

const countOfKeys = (object: JsonObject): number => (isJsonObject(object.data) ? Object.keys(object.data).length : 0);

/** The columns of kubectl's built-in Secret printer. */
const printerColumns: PrinterColumn[] = [
  { name: 'Type', type: 'string', jsonPath: '.type', description: 'How the data is meant to be used.' },
  { name: 'Data', type: 'integer', jsonPath: '.data', value: countOfKeys, description: 'Number of keys in data.' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the Secret was created.' },
];

/** k8s.io.api.core.v1.Secret, the message `kubectl create secret` sends. */
const secretMessage = messageType(
  new protobuf.Type('Secret')
    .add(new protobuf.Field('metadata', 1, 'ObjectMeta'))
    .add(new protobuf.MapField('data', 2, 'string', 'bytes'))
    .add(new protobuf.Field('type', 3, 'string'))
    .add(new protobuf.MapField('stringData', 4, 'string', 'string'))
    .add(new protobuf.Field('immutable', 5, 'bool')),
);

function secretFromProtobuf(raw: Uint8Array): JsonObject {
  // type is a plain string in Go, written even when empty; immutable is a pointer, so false is meant.
  const { metadata, data, ...rest } = omitEmpty(plainObject(secretMessage, raw));
  const values = (data ?? {}) as Record<string, Buffer>;
  return {
    metadata: objectMetaJson(metadata as Record<string, unknown> | undefined),
    ...(data === undefined ? {} : { data: Object.fromEntries(Object.entries(values).map(([key, value]) => [key, value.toString('base64')])) }),
    ...(rest as JsonObject),
  };
}

export const secretV1: KindVersion = {
  name: 'v1',
  served: true,
  storage: true,
  schema: z
    .object({
      data: z
        .record(z.string(), base64Value)
        .optional()
        .describe(
          'The secret values, base64-encoded, by key. Keys consist of alphanumeric characters, "-", "_" and "."; ' +
            'the decoded values of all keys together may not exceed 1 MiB.',
        ),
      stringData: z
        .record(z.string(), z.string())
        .optional()
        .describe(
          'Write-only convenience: plain-text values that are encoded into data when the Secret is written, ' +
            'overriding data under the same key. Never returned.',
        ),
      type: z
        .string()
        .default('Opaque')
        .describe(
          'What the data is for, which decides the keys it must have: Opaque (anything), kubernetes.io/tls ' +
            '(tls.crt, tls.key), kubernetes.io/basic-auth, kubernetes.io/ssh-auth, kubernetes.io/dockerconfigjson, ' +
            'and others. Cannot change once set.',
        ),
      immutable: z
        .boolean()
        .optional()
        .describe('When true, data and type can no longer change and immutable cannot be unset; the Secret can only be deleted.'),
    })
    .describe('Secret holds sensitive data, such as credentials or keys, by key.'),
  printerColumns,
  protobuf: secretFromProtobuf,
};
