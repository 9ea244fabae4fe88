/**
 * One request's view of the inventory: a single storage snapshot, the
 * clusters the caller may see in it, and inventories with the SSH key
 * reference kept only where the caller may read that Secret. GraphQL and the
 * admin API both read through it, so they select and authorize alike.
 */
import { z } from 'zod';
import { ApiError } from '../apiserver/errors.js';
import { parseLabelSelector, type LabelSelector } from '../apiserver/selectors/labels.js';
import type { JsonObject, Storage } from '../storage/interface.js';
import {
  ansibleInventory,
  InventoryNameConflictError,
  readInventorySnapshot,
  sshPrivateKeySecretVar,
  type AnsibleInventory,
  type InventorySnapshot,
} from './index.js';
import { readableKinds, type InventoryAccess } from './access.js';

/** A namespace, label selector, cursor or page size the server cannot use, or a selection whose hosts collide. */
export class InvalidSelectionError extends Error {}

/** No cluster matches the requested name. */
export class ClusterNotFoundError extends Error {}

const namespaceName = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a lowercase RFC 1123 label');

const objectName = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a lowercase RFC 1123 subdomain');

export const clusterSelection = z.object({
  namespace: namespaceName.nullish().transform((v) => v ?? undefined),
  name: objectName.nullish().transform((v) => v ?? undefined),
  labelSelector: z
    .string()
    .nullish()
    .transform((v) => v ?? undefined),
});

export type ClusterSelection = z.input<typeof clusterSelection>;

const clusterMetadata = z.looseObject({
  namespace: z.string(),
  name: z.string(),
  uid: z.string().optional(),
  resourceVersion: z.string(),
  creationTimestamp: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
});

/** A stored OpenStackCluster with the metadata the API shows, read once. */
export interface ClusterRecord {
  object: JsonObject;
  metadata: z.infer<typeof clusterMetadata>;
  snapshot: InventorySnapshot;
}

export class InventoryRequest {
  private snapshotRead?: Promise<InventorySnapshot>;
  private readonly records = new WeakMap<InventorySnapshot, ClusterRecord[]>();

  constructor(
    private readonly storage: Storage,
    readonly access: InventoryAccess,
  ) {}

  /**
   * Every namespace at once, read on first use: one snapshot serves every
   * field of the request, so the reads stay the same whatever is asked.
   */
  snapshot(): Promise<InventorySnapshot> {
    this.snapshotRead ??= readInventorySnapshot(this.storage, {});
    return this.snapshotRead;
  }

  /** The clusters selected and visible to the caller, ordered by namespace then name. */
  async clusters(input: ClusterSelection): Promise<ClusterRecord[]> {
    const selection = parseSelection(input);
    const selector = selection.labelSelector === undefined ? undefined : parseSelector(selection.labelSelector);
    if (selection.namespace) await this.access.requireListClusters(selection.namespace);
    const all = this.recordsOf(await this.snapshot());
    const visible = await this.visibleNamespaces(all, selection.namespace);
    const named = all.filter(({ metadata }) => visible.has(metadata.namespace) && (selection.name === undefined || metadata.name === selection.name));
    if (selection.name !== undefined && named.length === 0) {
      const where = selection.namespace ? `in namespace ${selection.namespace}` : 'in any namespace you may read';
      throw new ClusterNotFoundError(`OpenStackCluster ${selection.name} not found ${where}`);
    }
    return selector ? named.filter(({ metadata }) => selector.matches(metadata.labels)) : named;
  }

  async cluster(namespace: string, name: string): Promise<ClusterRecord> {
    const [record] = await this.clusters({ namespace, name });
    return record!;
  }

  /**
   * The Ansible inventory of the selected clusters. Its hosts are OpenStackNodes and its group
   * variables a ClusterExtension's, so it is read only where the caller may list both: a selection
   * by namespace or name is refused otherwise; one by labels alone (or none) keeps the namespaces
   * where it may, as a selection without namespace keeps those where it may list clusters.
   */
  async inventory(input: ClusterSelection): Promise<AnsibleInventory> {
    const records = await this.clusters(input);
    const named = input.namespace != null || input.name != null;
    return this.inventoryOf(named ? records : await this.withReadableInventory(records));
  }

  /** The Ansible inventory of these clusters; ForbiddenError unless the caller may list its kinds in each of their namespaces. */
  async inventoryOf(records: ClusterRecord[]): Promise<AnsibleInventory> {
    await this.access.requireList(namespacesOf(records).flatMap((namespace) => inventoryKinds.map((kind) => ({ kind, namespace }))));
    const inventory = sharedInventory(await this.snapshot(), records);
    const hosts = await Promise.all(inventory.hosts.map(async (host) => ({ name: host.name, vars: await this.withReadableSecret(host.vars) })));
    return { ...inventory, hosts };
  }

  /** The Secret reference of a cluster's SSH key, when the caller may read that Secret. */
  async sshPrivateKeySecret(record: ClusterRecord): Promise<{ namespace: string; name: string; key: string } | undefined> {
    const reference = sshKeyReference.safeParse(record.object).data?.spec.extensions.ssh.privateKeySecretRef;
    if (!reference) return undefined;
    const secret = { namespace: record.metadata.namespace, name: reference.name, key: reference.key };
    return (await this.access.mayGetSecret(secret.namespace, secret.name)) ? secret : undefined;
  }

  /** Host variables without the SSH key reference unless the caller may get that Secret. */
  private async withReadableSecret(vars: Record<string, unknown>): Promise<Record<string, unknown>> {
    const reference = secretReference.safeParse(vars[sshPrivateKeySecretVar]);
    if (!reference.success || (await this.access.mayGetSecret(reference.data.namespace, reference.data.name))) return vars;
    const { [sshPrivateKeySecretVar]: _hidden, ...readable } = vars;
    return readable;
  }

  private async withReadableInventory(records: ClusterRecord[]): Promise<ClusterRecord[]> {
    const namespaces = namespacesOf(records);
    const readable = await Promise.all(
      namespaces.map(async (namespace) => (await Promise.all(inventoryKinds.map((kind) => this.access.mayList(kind, namespace)))).every(Boolean)),
    );
    const kept = new Set(namespaces.filter((_, i) => readable[i]));
    return records.filter(({ metadata }) => kept.has(metadata.namespace));
  }

  private async visibleNamespaces(records: ClusterRecord[], namespace: string | undefined): Promise<Set<string>> {
    if (namespace) return new Set([namespace]);
    const namespaces = namespacesOf(records);
    if (await this.access.mayListClusters()) return new Set(namespaces);
    const allowed = await Promise.all(namespaces.map((ns) => this.access.mayListClusters(ns)));
    return new Set(namespaces.filter((_, i) => allowed[i]));
  }

  private recordsOf(snapshot: InventorySnapshot): ClusterRecord[] {
    let records = this.records.get(snapshot);
    if (!records) {
      records = snapshot.clusters
        .map((object) => ({ object, metadata: clusterMetadata.parse(object.metadata), snapshot }))
        .sort((a, b) => compareKeys(clusterKey(a), clusterKey(b)));
      this.records.set(snapshot, records);
    }
    return records;
  }
}

/**
 * Snapshots are shared between requests while storage does not change, and
 * an inventory computed with every Secret reference depends on nothing else,
 * so callers asking for the same clusters share it; each then gets its own
 * copy of the host variables, without the references it may not read.
 */
const inventories = new WeakMap<InventorySnapshot, Map<string, AnsibleInventory>>();

function sharedInventory(snapshot: InventorySnapshot, records: ClusterRecord[]): AnsibleInventory {
  let computed = inventories.get(snapshot);
  if (!computed) {
    computed = new Map();
    inventories.set(snapshot, computed);
  }
  const key = records.map(clusterKey).join(',');
  let inventory = computed.get(key);
  if (!inventory) {
    try {
      inventory = ansibleInventory(
        snapshot,
        records.map(({ metadata }) => ({ namespace: metadata.namespace, name: metadata.name })),
        { includeSecrets: true },
      );
    } catch (error) {
      if (error instanceof InventoryNameConflictError) throw new InvalidSelectionError(`the selected clusters cannot share one inventory: ${error.message}`);
      throw error;
    }
    computed.set(key, inventory);
  }
  return inventory;
}

/** `<namespace>/<name>`: the order of clusters and the position a cursor names. */
export function clusterKey(record: ClusterRecord): string {
  return `${record.metadata.namespace}/${record.metadata.name}`;
}

export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What an Ansible inventory is made of: OpenStackNodes (its hosts and groups) and the ClusterExtension (its group variables). */
const inventoryKinds = [readableKinds.nodes, readableKinds.clusterExtensions];

function namespacesOf(records: ClusterRecord[]): string[] {
  return [...new Set(records.map(({ metadata }) => metadata.namespace))];
}

const secretReference = z.object({ namespace: z.string(), name: z.string(), key: z.string() });

const sshKeyReference = z.looseObject({
  spec: z.looseObject({
    extensions: z.looseObject({
      ssh: z.looseObject({ privateKeySecretRef: z.looseObject({ name: z.string(), key: z.string().default('ssh-privatekey') }) }),
    }),
  }),
});

function parseSelection(input: ClusterSelection): z.output<typeof clusterSelection> {
  const parsed = clusterSelection.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new InvalidSelectionError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
}

/** Label selectors read as kube reads them, with kube's parse errors. */
function parseSelector(text: string): LabelSelector {
  try {
    return parseLabelSelector(text);
  } catch (error) {
    if (error instanceof ApiError) throw new InvalidSelectionError(error.message);
    throw error;
  }
}
