/**
 * How the reconciler reads and writes our own kinds: through the same
 * ResourceStore the API handlers use, so every write it makes is validated,
 * converted, versioned and watched exactly like a client's, and carries the
 * reconciler's identity in managedFields.
 *
 * Writes take a mutation of the current object (retried by the store on
 * conflicts) pinned to the uid the reconcile started from, so a status meant
 * for an object that was deleted and created again under the same name is
 * dropped instead of landing on the newcomer.
 */
import { ApiError } from '../apiserver/errors.js';
import type { UserInfo } from '../apiserver/auth/user.js';
import type { KindDefinition, KindVersion } from '../apiserver/registry/kind.js';
import { groupVersionOf } from '../apiserver/registry/registry.js';
import { labelSelectorFromObject } from '../apiserver/selectors/labels.js';
import type { Fence, ResourceStore, WriteOptions } from '../apiserver/store/resource-store.js';
import type { Subresource } from '../apiserver/store/strategy.js';
import type { JsonObject, ObjectName } from '../storage/interface.js';
import { cloneJson, isJsonObject } from '../storage/json.js';

/** The reconciler acts as itself: visible in managedFields and to authorization. */
export const reconcilerUser: UserInfo = {
  name: 'system:serviceaccount:capo-system:capo-apiserver-reconciler',
  groups: ['system:masters', 'system:authenticated'],
};
const fieldManager = 'capo-apiserver-reconciler';

/** The fields every reconciled object has; the rest is read through the kind's own zod schema. */
export interface ObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  generation?: number;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
}

export function metaOf(object: JsonObject): ObjectMeta {
  return object.metadata as unknown as ObjectMeta;
}

/**
 * An object of one of our kinds with its spec typed: the store validated it against the kind's
 * schema on every write, and the reconciler reads it at the storage version that schema is of.
 * The status stays plain JSON: the passes rewrite it as JSON and read it through `statusOf`.
 */
export type KindObject<Spec = unknown> = JsonObject & { metadata: ObjectMeta; spec: Spec };

/**
 * An object of one of our kinds by kind (OpenStackCluster, ...) and name: how a pass asks for a
 * pass of another object (wait-schedule.ts, verified-resources.ts), whose kind picks the controller.
 */
export interface ObjectRef extends ObjectName {
  kind: string;
}

/** The object's status in plain JSON; an empty one when it has none yet. */
export function statusOf(object: JsonObject): JsonObject {
  return isJsonObject(object.status) ? object.status : {};
}

/** The object's spec in plain JSON, for an object of a kind read without its types (another controller's); an empty one when it has none. */
export function specOf(object: JsonObject): JsonObject {
  return isJsonObject(object.spec) ? object.spec : {};
}

/** The name a reference field (`claimRef`, `addressRef`, `identityRef`) holds; undefined when it holds none. */
export function referenceName(reference: unknown): string | undefined {
  return isJsonObject(reference) && typeof reference.name === 'string' ? reference.name : undefined;
}

/** A string field of an object of another controller's kind (an IPAddress's `spec.address`); undefined when it is not one. */
export function stringField(object: JsonObject, field: string): string | undefined {
  const value = object[field];
  return typeof value === 'string' ? value : undefined;
}

/**
 * A stored object of the kind, as its schema types it (see KindObject). An object stored without a
 * spec (the schemas leave it optional, as CRDs do) is read with an empty one, in a copy: the object
 * may be the watch cache's own.
 */
function typed<Spec>(object: JsonObject): KindObject<Spec> {
  return (object.spec === undefined ? { ...object, spec: {} } : object) as KindObject<Spec>;
}

/** `Spec`: the type of the spec of the kind's storage version (z.output of its schema). */
export class KindClient<Spec = unknown> {
  readonly definition: KindDefinition;
  readonly version: KindVersion;
  readonly apiVersion: string;

  constructor(
    /** The kind's one store (apiserver/store/stores.ts), the API handlers' too. */
    readonly store: ResourceStore,
    /** Passed before each of its writes: a replica that lost the lease it reconciles under writes nothing (leader.ts). */
    private readonly fence?: Fence,
  ) {
    const { definition } = store;
    this.definition = definition;
    const storageVersion = definition.versions.find((version) => version.storage);
    if (!storageVersion) throw new Error(`${definition.kind} has no storage version`);
    this.version = storageVersion;
    this.apiVersion = groupVersionOf(definition.group, storageVersion.name);
  }

  get kind(): string {
    return this.definition.kind;
  }

  /** The storage prefix of the kind, for a watch of its changes (routing, a source kept in this server's storage). */
  get prefix(): string {
    return this.store.keys.root;
  }

  /** The namespace and name behind a storage key of this kind, for such a watch's events. */
  nameOf(key: string): ObjectName {
    return this.store.keys.nameOf(key);
  }

  /**
   * The object as fresh as storage, from the watch cache once it has caught up with storage's
   * revision (a read shared by every concurrent reader), else from storage. Read-only: it may be
   * the cache's frozen value.
   */
  async get({ namespace, name }: ObjectName): Promise<KindObject<Spec> | undefined> {
    const object = await this.store.readIfPresent(namespace, name, this.version);
    return object && typed<Spec>(object);
  }

  /**
   * Every object of the namespace (undefined: of every namespace) whose labels include `labels`, as
   * read-only values: one list, selected where it is read. From the watch cache that is a walk of the
   * namespace in memory. Read in pages of 500, each page after the first went to the backend once
   * anything was written meanwhile, three calls a page: up to sixty for a namespace of 10,000 objects.
   *
   * `asCached`: the cache as it stands will do, as a controller-runtime reconciler reads its informer:
   * for routing an event that came from the cache, and for a reading that only shapes a pass (a
   * preflight's count, the zone with the fewest control plane servers, an adoption survey). Such a
   * reading races with the passes beside it however fresh it is, and the event of an object it missed
   * enqueues the pass again. A consistent list first waits for the cache to catch up with the store,
   * and after 3 s reads the store itself: a whole namespace from etcd when the cache lags, which on a
   * loaded replica makes it lag more. What decides a deletion or a release (a cluster's machines all
   * gone, orphans, a Secret's finalizer, a pool's addresses) reads consistently: a machine created a
   * moment ago must hold its cluster's network.
   */
  async list(namespace: string | undefined, labels: Record<string, string> = {}, options: { asCached?: boolean } = {}): Promise<KindObject<Spec>[]> {
    const selection = { labelSelector: labelSelectorFromObject({ matchLabels: labels }), ...(options.asCached ? { resourceVersion: '0' } : {}) };
    return (await this.store.list(namespace, this.version, selection)).items.map((item) => typed<Spec>(item));
  }

  async create(namespace: string, body: JsonObject): Promise<JsonObject> {
    const result = await this.store.create(namespace, { apiVersion: this.apiVersion, kind: this.kind, ...body }, this.version, this.writeOptions());
    return result.object;
  }

  /**
   * Applies `mutate` to the current object (a copy) and writes it, main
   * resource or status. Undefined when the object is gone or is no longer the
   * one with `uid`.
   */
  async update(
    target: ObjectName & { uid: string },
    mutate: (object: JsonObject) => void,
    subresource: Subresource = undefined,
  ): Promise<JsonObject | undefined> {
    return this.write(
      target,
      (current) => {
        const copy = cloneJson(current) as JsonObject;
        mutate(copy);
        return copy;
      },
      subresource,
    );
  }

  /** Applies `mutate` to a copy of the current status and writes it. */
  async updateStatus(target: ObjectName & { uid: string }, mutate: (status: JsonObject) => void): Promise<JsonObject | undefined> {
    return this.write(
      target,
      (current) => {
        // A /status write keeps all but the status as stored: the rest is passed on unchanged, not copied.
        const status = cloneJson(statusOf(current)) as JsonObject;
        mutate(status);
        return { ...current, status };
      },
      'status',
    );
  }

  /**
   * Writes what `patched` makes of the current object, which it must not change (the store's is shared and
   * frozen): the write's one copy is made there. Undefined when the object is gone or is no longer the one with `uid`.
   */
  private async write(
    target: ObjectName & { uid: string },
    patched: (current: JsonObject) => JsonObject,
    subresource: Subresource,
  ): Promise<JsonObject | undefined> {
    let replaced = false;
    try {
      const result = await this.store.patch(
        target.namespace,
        target.name,
        (current) => {
          if (!current || metaOf(current).uid !== target.uid) {
            replaced = true;
            return current ?? {};
          }
          return patched(current);
        },
        this.version,
        subresource,
        this.writeOptions(),
      );
      return replaced ? undefined : result.object;
    } catch (error) {
      if (error instanceof ApiError && error.code === 404) return undefined;
      throw error;
    }
  }

  /** Adds the finalizer, and each of `annotations` the object does not have yet, in one write; whether anything was written. */
  async addFinalizer(target: ObjectName & { uid: string }, finalizer: string, annotations: Record<string, string> = {}): Promise<boolean> {
    let added = false;
    await this.update(target, (object) => {
      const meta = metaOf(object);
      const missing = Object.entries(annotations).filter(([key]) => meta.annotations?.[key] === undefined);
      if (missing.length > 0) meta.annotations = { ...meta.annotations, ...Object.fromEntries(missing) };
      if (!meta.finalizers?.includes(finalizer)) meta.finalizers = [...(meta.finalizers ?? []), finalizer];
      else if (missing.length === 0) return;
      added = true;
    });
    return added;
  }

  async removeFinalizer(target: ObjectName & { uid: string }, finalizer: string): Promise<void> {
    await this.update(target, (object) => {
      const meta = metaOf(object);
      if (meta.finalizers?.includes(finalizer)) meta.finalizers = meta.finalizers.filter((candidate) => candidate !== finalizer);
    });
  }

  /** Starts deletion (finalizers run first); gone already is fine. */
  async delete({ namespace, name }: ObjectName, uid?: string): Promise<void> {
    try {
      await this.store.delete(namespace, name, this.version, {
        dryRun: false,
        user: reconcilerUser,
        fence: this.fence,
        ...(uid ? { preconditions: { uid } } : {}),
      });
    } catch (error) {
      if (error instanceof ApiError && (error.code === 404 || error.code === 409)) return;
      throw error;
    }
  }

  /** Decoded as a request body would be (the store's first step): the reconciler writes only fields the schema knows (Strict). */
  private writeOptions(): WriteOptions {
    return { dryRun: false, fieldManager, fieldValidation: 'Strict', user: reconcilerUser, fence: this.fence };
  }
}
