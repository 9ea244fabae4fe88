/**
 * Resolvers for schema.graphql. Each one reads from the request's single
 * InventoryRequest snapshot, so nested fields (machines, nodes, inventory
 * hosts) never go back to storage.
 */
import { z } from 'zod';
import {
  clusterExtensionsOf,
  openStackNodesOf,
  toAnsibleListJson,
  withoutSshKeyReference,
  type AnsibleInventory,
  type InventorySnapshot,
} from '../inventory/index.js';
import { readableKinds, type ResourceKind } from '../inventory/access.js';
import { withErrorCodes } from './errors.js';
import { clusterKey, InvalidSelectionError, type ClusterRecord, type InventoryRequest } from '../inventory/request.js';
import { jsonScalar } from './json-scalar.js';
import { pageSizes } from './limits.js';

export interface GraphqlContext {
  inventory: InventoryRequest;
}

const connectionArgs = z.object({
  namespace: z.string().nullish(),
  labelSelector: z.string().nullish(),
  first: z
    .number()
    .int()
    .min(1, `first must be between 1 and ${pageSizes.max}`)
    .max(pageSizes.max, `first must be between 1 and ${pageSizes.max}`)
    .nullish()
    .transform((v) => v ?? pageSizes.default),
  after: z.string().nullish(),
});

const selectionArgs = z.object({ namespace: z.string().nullish(), name: z.string().nullish(), labelSelector: z.string().nullish() });
const clusterArgs = z.object({ namespace: z.string(), name: z.string() });

const condition = z.looseObject({ type: z.string(), status: z.string(), reason: z.string().optional(), message: z.string().optional() });
const missingVariable = z.looseObject({ variable: z.string(), path: z.string(), reason: z.string(), message: z.string(), machine: z.string().optional() });

const clusterExtension = z.looseObject({
  spec: z.looseObject({ clusterName: z.string(), extensions: z.record(z.string(), z.unknown()) }),
  status: z.looseObject({
    extensions: z.record(z.string(), z.unknown()),
    vars: z.record(z.string(), z.unknown()),
    missing: z.array(missingVariable),
    conditions: z.array(condition),
  }),
});

const metadata = z.looseObject({
  namespace: z.string(),
  name: z.string(),
  resourceVersion: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
});

const machine = z.looseObject({
  metadata,
  spec: z.record(z.string(), z.unknown()).optional(),
  status: z
    .looseObject({
      instanceID: z.string().optional(),
      instanceState: z.string().optional(),
      addresses: z.array(z.looseObject({ type: z.string(), address: z.string() })).optional(),
    })
    .optional(),
});

const openStackNode = z.looseObject({
  metadata,
  spec: z.looseObject({ role: z.string(), groups: z.array(z.string()), profile: z.string().optional(), vars: z.record(z.string(), z.unknown()) }),
  status: z.looseObject({ phase: z.string(), ready: z.boolean(), missing: z.array(missingVariable) }),
});

type Machine = z.infer<typeof machine>;
type OpenStackNode = z.infer<typeof openStackNode>;
type ClusterExtension = z.infer<typeof clusterExtension>;

/** Computed once per cluster and request: several fields of a Cluster read the same ClusterExtension and nodes. */
const extensionsOf = memoizeOn((record: ClusterRecord): ClusterExtension => {
  const computed = clusterExtensionsOf(record.snapshot, record.metadata.namespace, record.metadata.name);
  return clusterExtension.parse(computed);
});

const nodesOf = memoizeOn((record: ClusterRecord): OpenStackNode[] =>
  openStackNodesOf(record.snapshot, record.metadata.namespace, extensionsOf(record).spec.clusterName).map((node) => openStackNode.parse(node)),
);

const machinesByKey = memoizeOn(
  (snapshot: InventorySnapshot) => new Map(snapshot.machines.map((object) => [objectKey(machine.parse(object).metadata), object])),
);

export const resolvers = {
  JSON: jsonScalar,

  Query: {
    clusters: (_: unknown, args: unknown, { inventory }: GraphqlContext) =>
      withErrorCodes(async () => {
        const { first, after, ...selection } = parseArgs(connectionArgs, args);
        const records = await inventory.clusters(selection);
        const start = after == null ? 0 : records.findIndex((record) => clusterKey(record) > decodeCursor(after));
        const from = start < 0 ? records.length : start;
        const page = records.slice(from, from + first);
        const edges = page.map((record) => ({ cursor: encodeCursor(clusterKey(record)), node: record }));
        return {
          edges,
          totalCount: records.length,
          pageInfo: {
            hasNextPage: from + first < records.length,
            hasPreviousPage: from > 0,
            startCursor: edges[0]?.cursor ?? null,
            endCursor: edges.at(-1)?.cursor ?? null,
          },
        };
      }),
    cluster: (_: unknown, args: unknown, { inventory }: GraphqlContext) =>
      withErrorCodes(() => {
        const { namespace, name } = parseArgs(clusterArgs, args);
        return inventory.cluster(namespace, name);
      }),
    inventory: (_: unknown, args: unknown, { inventory }: GraphqlContext) => withErrorCodes(() => inventory.inventory(parseArgs(selectionArgs, args))),
  },

  Cluster: {
    id: (record: ClusterRecord) => `OpenStackCluster/${clusterKey(record)}`,
    namespace: (record: ClusterRecord) => record.metadata.namespace,
    name: (record: ClusterRecord) => record.metadata.name,
    clusterName: (record: ClusterRecord) => extensionsOf(record).spec.clusterName,
    uid: (record: ClusterRecord) => record.metadata.uid ?? null,
    resourceVersion: (record: ClusterRecord) => record.metadata.resourceVersion,
    creationTimestamp: (record: ClusterRecord) => record.metadata.creationTimestamp ?? null,
    labels: (record: ClusterRecord) => record.metadata.labels ?? {},
    // The ClusterExtension, its variables and its readiness: only for callers that may list clusterextensions there.
    extensions: (record: ClusterRecord, _: unknown, { inventory }: GraphqlContext) =>
      readable(inventory, record, readableKinds.clusterExtensions, async () => {
        const { spec, status } = extensionsOf(record);
        const keyReadable = (await inventory.sshPrivateKeySecret(record)) !== undefined;
        return {
          spec: keyReadable ? spec.extensions : withoutSshKeyReference(spec.extensions),
          status: status.extensions,
          vars: status.vars,
          missing: status.missing,
          conditions: status.conditions,
        };
      }),
    vars: (record: ClusterRecord, _: unknown, { inventory }: GraphqlContext) =>
      readable(inventory, record, readableKinds.clusterExtensions, () => extensionsOf(record).status.vars),
    ready: (record: ClusterRecord, _: unknown, { inventory }: GraphqlContext) =>
      readable(inventory, record, readableKinds.clusterExtensions, () => isReady(extensionsOf(record).status.conditions)),
    sshPrivateKeySecret: async (record: ClusterRecord, _: unknown, { inventory }: GraphqlContext) => (await inventory.sshPrivateKeySecret(record)) ?? null,
    nodes: (record: ClusterRecord, _: unknown, { inventory }: GraphqlContext) => readable(inventory, record, readableKinds.nodes, () => nodesOf(record)),
    machines: (record: ClusterRecord, _: unknown, { inventory }: GraphqlContext) =>
      readable(inventory, record, readableKinds.machines, () => {
        const byKey = machinesByKey(record.snapshot);
        return nodesOf(record).flatMap((node) => {
          const stored = byKey.get(objectKey(node.metadata));
          return stored ? [machine.parse(stored)] : [];
        });
      }),
    inventory: (record: ClusterRecord, _: unknown, { inventory }: GraphqlContext) => withErrorCodes(() => inventory.inventoryOf([record])),
  },

  Machine: {
    id: (m: Machine) => `OpenStackMachine/${objectKey(m.metadata)}`,
    namespace: (m: Machine) => m.metadata.namespace,
    name: (m: Machine) => m.metadata.name,
    resourceVersion: (m: Machine) => m.metadata.resourceVersion,
    labels: (m: Machine) => m.metadata.labels ?? {},
    controlPlane: (m: Machine) => m.metadata.labels?.['cluster.x-k8s.io/control-plane'] !== undefined,
    instanceID: (m: Machine) => m.status?.instanceID ?? null,
    instanceState: (m: Machine) => m.status?.instanceState ?? null,
    addresses: (m: Machine) => m.status?.addresses ?? [],
    spec: (m: Machine) => m.spec ?? {},
    status: (m: Machine) => m.status ?? {},
  },

  OpenStackNode: {
    id: (n: OpenStackNode) => `OpenStackNode/${objectKey(n.metadata)}`,
    namespace: (n: OpenStackNode) => n.metadata.namespace,
    name: (n: OpenStackNode) => n.metadata.name,
    role: (n: OpenStackNode) => n.spec.role,
    groups: (n: OpenStackNode) => n.spec.groups,
    profile: (n: OpenStackNode) => n.spec.profile ?? null,
    phase: (n: OpenStackNode) => n.status.phase,
    ready: (n: OpenStackNode) => n.status.ready,
    vars: (n: OpenStackNode) => n.spec.vars,
    missing: (n: OpenStackNode) => n.status.missing,
    spec: (n: OpenStackNode) => n.spec,
    status: (n: OpenStackNode) => n.status,
  },

  Inventory: {
    ansibleList: (inventory: AnsibleInventory) => toAnsibleListJson(inventory),
  },
};

/**
 * A field showing objects of another kind than the cluster: its value when the caller may list that
 * kind in the cluster's namespace, else null with a FORBIDDEN error on the field's path (the rest of
 * the answer stands).
 */
function readable<T>(inventory: InventoryRequest, record: ClusterRecord, kind: ResourceKind, resolve: () => T | Promise<T>): Promise<T> {
  return withErrorCodes(async () => {
    await inventory.access.requireList([{ kind, namespace: record.metadata.namespace }]);
    return resolve();
  });
}

function parseArgs<T extends z.ZodType>(schema: T, args: unknown): z.output<T> {
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  throw new InvalidSelectionError(parsed.error.issues.map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; '));
}

/** Cursors are opaque to clients; inside they name the last cluster of a page. */
function encodeCursor(key: string): string {
  return Buffer.from(`cluster:${key}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith('cluster:') || !text.includes('/'))
    throw new InvalidSelectionError(`after: ${JSON.stringify(cursor)} is not a cursor of this connection`);
  return text.slice('cluster:'.length);
}

function objectKey(meta: { namespace: string; name: string }): string {
  return `${meta.namespace}/${meta.name}`;
}

function isReady(conditions: { type: string; status: string }[]): boolean {
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

function memoizeOn<K extends object, V>(compute: (key: K) => V): (key: K) => V {
  const cache = new WeakMap<K, V>();
  return (key) => {
    if (!cache.has(key)) cache.set(key, compute(key));
    return cache.get(key)!;
  };
}
