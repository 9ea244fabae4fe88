/**
 * The structural schema of `metadata` (meta/v1 ObjectMeta) and of the
 * meta/v1 types it is built from, with kube's strategic merge patch
 * strategies. Pruning walks the inlined tree; the OpenAPI documents publish
 * each named type once and refer to it, which is why every use of a named
 * type is recorded (see metaTypeOf).
 */
import type { StructuralSchema } from './structural-schema.js';

export type MetaTypeName = 'ObjectMeta' | 'OwnerReference' | 'ManagedFieldsEntry' | 'Time' | 'FieldsV1';

const uses = new WeakMap<StructuralSchema, MetaTypeName>();

/** The meta/v1 type a node stands for, when the node is one of the definitions below or a use of one. */
export function metaTypeOf(node: StructuralSchema): MetaTypeName | undefined {
  return uses.get(node);
}

function define(name: MetaTypeName, schema: StructuralSchema): StructuralSchema {
  uses.set(schema, name);
  return schema;
}

/** A field whose value is the named type; the field's own description replaces the type's. */
function use(definition: StructuralSchema, description?: string): StructuralSchema {
  const name = metaTypeOf(definition);
  if (!name) throw new Error('not a meta/v1 definition');
  const node = description === undefined ? { ...definition } : { ...definition, description };
  uses.set(node, name);
  return node;
}

const string = (description: string): StructuralSchema => ({ type: 'string', description });

const time = define('Time', {
  type: 'string',
  format: 'date-time',
  description: 'A point in time, written as an RFC 3339 string in UTC with second precision, e.g. 2024-01-31T12:00:00Z.',
});

const fieldsV1 = define('FieldsV1', {
  type: 'object',
  description:
    'A set of fields, encoded as a JSON trie. Each key names a member of the set: "f:<field>" for an object field, ' +
    '"k:<json of the key fields>" for an item of a map-list, "v:<json value>" for an item of a set-list, and "." for ' +
    'the node itself. Each value is the nested set, an empty object when nothing below is owned.',
  // The trie's keys are data, not fields of a schema.
  'x-kubernetes-preserve-unknown-fields': true,
});

const ownerReference = define('OwnerReference', {
  type: 'object',
  description:
    'Identifies an object this one depends on. The owner lives in the same namespace as the dependent or is ' +
    'cluster-scoped, which is why there is no namespace field.',
  properties: {
    apiVersion: string('API version of the owner.'),
    blockOwnerDeletion: {
      type: 'boolean',
      description:
        'When true and the owner carries the "foregroundDeletion" finalizer, the owner is not removed from storage ' +
        'before this reference is gone. Setting it needs delete permission on the owner. Defaults to false.',
    },
    controller: { type: 'boolean', description: 'True when the owner is the controller that manages this object.' },
    kind: string('Kind of the owner.'),
    name: string('Name of the owner.'),
    uid: string('UID of the owner.'),
  },
  required: ['apiVersion', 'kind', 'name', 'uid'],
  'x-kubernetes-map-type': 'atomic',
});

const managedFieldsEntry = define('ManagedFieldsEntry', {
  type: 'object',
  description: 'The fields one manager owns through one kind of operation, for one API version of the resource.',
  properties: {
    apiVersion: string(
      'API version of the resource the field set is expressed in. Field sets are kept per version because a ' +
        'field can mean different things in different versions.',
    ),
    fieldsType: string('Encoding of the field set; "FieldsV1" is the only one.'),
    fieldsV1: use(fieldsV1, 'The field set, encoded as described by FieldsV1.'),
    manager: string('Name of the manager (usually the client) that owns these fields.'),
    operation: string('Kind of write that produced the entry: "Apply" or "Update".'),
    subresource: string(
      'Subresource the writes went through, e.g. "status"; empty for the main resource. Entries of different ' +
        'subresources are tracked separately even for the same manager.',
    ),
    time: use(
      time,
      'When the entry last changed: a field was added, a value changed or the manager took a field over. ' + 'Removing fields does not update it.',
    ),
  },
});

const objectMeta = define('ObjectMeta', {
  type: 'object',
  description: 'Metadata every persisted object has, whether created by users or by the system.',
  properties: {
    annotations: {
      type: 'object',
      description:
        'Free-form string data attached by tools and controllers. It is not used to select objects and is kept ' + 'as written when the object changes.',
      additionalProperties: { type: 'string' },
    },
    creationTimestamp: use(time, 'When the server created the object. Set by the system and read-only for clients; empty on lists.'),
    deletionGracePeriodSeconds: {
      type: 'integer',
      format: 'int64',
      description: 'Seconds the object is given to terminate gracefully before it is removed. Only set together with ' + 'deletionTimestamp; read-only.',
    },
    deletionTimestamp: use(
      time,
      'When the object will be removed, set by the server once deletion has been requested and never by clients. ' +
        'The object stays readable until its finalizers are gone; the time may only move earlier once set.',
    ),
    finalizers: {
      type: 'array',
      description:
        'Tokens that must all be removed before the object is deleted from storage; each names a party that ' +
        'still has cleanup to do. Order carries no meaning and entries are unique.',
      items: { type: 'string' },
      'x-kubernetes-list-type': 'set',
      'x-kubernetes-patch-strategy': 'merge',
    },
    generateName: string(
      'Prefix from which the server makes up a unique name when name is left empty: it appends a random ' +
        'suffix and returns the result in name. If the generated name is already taken the create fails.',
    ),
    generation: {
      type: 'integer',
      format: 'int64',
      description: 'Sequence number of the desired state, raised by the system when spec changes. Read-only.',
    },
    labels: {
      type: 'object',
      description: 'String keys and values used to organise objects and to select them with label selectors.',
      additionalProperties: { type: 'string' },
    },
    managedFields: {
      type: 'array',
      description: 'Which manager owns which fields, as tracked by server-side apply. Maintained by the server; clients ' + 'normally leave it alone.',
      items: use(managedFieldsEntry),
      'x-kubernetes-list-type': 'atomic',
    },
    name: string(
      'Name of the object, unique per kind within a namespace. Needed on create unless generateName is given; ' + 'it cannot be changed afterwards.',
    ),
    namespace: string('Namespace the object lives in; empty for cluster-scoped kinds. It must be a DNS label and cannot be changed.'),
    ownerReferences: {
      type: 'array',
      description:
        'Objects this one depends on. When all of them are gone, the garbage collector deletes this object. At ' +
        'most one entry may have controller set to true.',
      items: use(ownerReference),
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['uid'],
      'x-kubernetes-patch-merge-key': 'uid',
      'x-kubernetes-patch-strategy': 'merge',
    },
    resourceVersion: string(
      'Opaque version of the object, changed by every write. Clients hand it back unmodified for optimistic ' +
        'concurrency and watches and must not interpret it. Read-only.',
    ),
    selfLink: string('Deprecated and no longer set by the server.'),
    uid: string('Identifier the server assigns on creation, unique across time and space and never reused. Read-only.'),
  },
});

/** The meta/v1 definitions the ObjectMeta tree is made of, by name. */
export const metaTypes: Readonly<Record<MetaTypeName, StructuralSchema>> = {
  ObjectMeta: objectMeta,
  OwnerReference: ownerReference,
  ManagedFieldsEntry: managedFieldsEntry,
  Time: time,
  FieldsV1: fieldsV1,
};

/** The `metadata` field of a kind (and of embedded resources). */
export const objectMetaSchema: StructuralSchema = use(
  objectMeta,
  'Standard object metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
);

/** The `apiVersion` and `kind` fields every object carries. */
export const typeMetaSchemas: Readonly<{ apiVersion: StructuralSchema; kind: StructuralSchema }> = {
  apiVersion: string(
    'Versioned schema of this representation of the object. Servers convert schemas they know to their ' +
      'latest internal form and may reject ones they do not. More info: ' +
      'https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
  ),
  kind: string(
    'REST resource type this object represents, in CamelCase. Servers may infer it from the endpoint the ' +
      'request was sent to; it cannot be updated. More info: ' +
      'https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
  ),
};
