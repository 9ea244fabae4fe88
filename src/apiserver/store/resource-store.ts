/**
 * The generic store of one kind: Kubernetes object semantics on top of the
 * Storage contract (kube's generic registry Store). It owns server-managed
 * metadata, generation, optimistic concurrency, finalizers and two-phase
 * deletion, dry runs, version conversion and managedFields, the same for
 * every kind; what differs between kinds (status subresource, admission,
 * validation, selectable fields) it asks of the kind's strategy.
 *
 * A write takes the object as the request sent it (the parsed body, in the
 * request's version) and runs every step itself, for every writer: decoding
 * (decode.ts), namespace lifecycle admission on creates, mutating admission,
 * metadata and schema validation and managedFields in the request's version,
 * then the one conversion to the storage version, the kind's admission rules
 * on the converted object, and the write. Parsing bodies, negotiation and
 * streaming live in handlers/.
 */
import { randomUUID } from 'node:crypto';
import {
  KeyExistsError,
  KeyNotFoundError,
  RevisionConflictError,
  ValueTooLargeError,
  maxValueBytes,
  type Entry,
  type JsonObject,
  type Storage,
} from '../../storage/interface.js';
import { ApiError, errors, FieldError, type ResourceRef } from '../errors.js';
import type { KindDefinition, KindVersion } from '../registry/kind.js';
import { keysOf, type KindKeys } from '../registry/keys.js';
import { groupVersionOf, storageVersionOf } from '../registry/registry.js';
import { structuralSchemaOf } from '../schema/structural.js';
import { applyDefaults } from '../schema/defaults.js';
import { FieldManager } from '../fieldmanager/index.js';
import type { LabelSelector } from '../selectors/labels.js';
import type { FieldSelector } from '../selectors/fields.js';
import { clone, ensureMetadata, nowTimestamp, specOf, type ObjectMeta } from './object.js';
import { strategyFor, type ResourceStrategy, type Subresource } from './strategy.js';
import { decodeContinue, encodeContinue } from './continue-token.js';
import { FanOutMemo } from './fan-out-memo.js';
import { WriteTurns } from './turns.js';
import type { UserInfo } from '../auth/user.js';
import { jsonEqual } from '../../storage/json.js';
import { withResourceVersion } from '../../storage/values.js';
import type { NamespaceLifecycle } from '../admission/namespace-lifecycle.js';
import { decodeObject, type FieldValidation } from './decode.js';

/** Passed before each write reaches storage; a throw refuses the write (the reconciler's lease, reconcile/leader.ts). */
export type Fence = () => void;

export interface WriteOptions {
  dryRun: boolean;
  fieldManager: string;
  /** How decoding treats fields the schema does not know. */
  fieldValidation: FieldValidation;
  user: UserInfo;
  fence?: Fence;
}

export interface WriteResult {
  object: JsonObject;
  warnings: string[];
  /** True when the write created the object (201). */
  created: boolean;
}

export interface Selection {
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
}

export interface ListOptions extends Selection {
  limit?: number;
  continueToken?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
}

export interface ListOutput {
  items: JsonObject[];
  resourceVersion: string;
  continueToken?: string;
}

export interface DeleteOptions {
  dryRun: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  user: UserInfo;
  fence?: Fence;
}

export interface DeleteResult {
  object: JsonObject;
  /** False when finalizers keep the object around (it is now terminating). */
  deleted: boolean;
}

/**
 * A patch: the object it makes of the current one (in the request version), as a request would send it;
 * the store decodes it. The current object must not be changed: it may be the watch cache's frozen value,
 * shared with every reader (a patch that changes in place changes a copy of its own).
 */
export type Mutation = (current: JsonObject) => unknown;

/** One PUT, PATCH or apply: the object it writes, how the new state follows from the current one, and the write's options. */
interface UpdateRequest {
  namespace: string | undefined;
  name: string;
  version: KindVersion;
  subresource: Subresource;
  options: WriteOptions;
  /**
   * The decoded object the write asks for, from the current one, which it must not change (it may be
   * the watch cache's frozen value, shared with every reader); its decoding warnings go into `warnings`.
   * What it returns is the write's own: the store changes it on its way to storage.
   */
  mutate: (current: JsonObject, warnings: string[]) => JsonObject;
  operation: 'update' | 'apply';
}

/** What a store asks of the world outside storage before it writes. */
export interface StoreAdmission {
  /** Refuses creates into namespaces that are missing or being deleted (aggregated mode). */
  namespaceLifecycle?: NamespaceLifecycle;
}

const maxGenerateNameAttempts = 8;
const generateNameAlphabet = 'bcdfghjklmnpqrstvwxz2456789';
/** How long a read asking for a future resourceVersion waits before answering 504. */
const futureRevisionWaitMs = 3000;

export class ResourceStore {
  readonly ref: ResourceRef;
  /** Where its objects live in storage. */
  readonly keys: KindKeys;
  readonly strategy: ResourceStrategy;
  private readonly storageVersion: KindVersion;
  private readonly fieldManagers = new Map<string, FieldManager>();
  /** The conversions of the stored object an event is fanning out (presentToWatchers). */
  private readonly fanOutConversions = new FanOutMemo<JsonObject>();

  constructor(
    readonly definition: KindDefinition,
    /** What it reads and writes, and what a watch of the kind follows: for a computed kind, the objects computed (ComputedStorage). */
    readonly storage: Storage,
    private readonly admission: StoreAdmission = {},
  ) {
    this.ref = { group: definition.group, resource: definition.plural };
    this.keys = keysOf(definition);
    this.storageVersion = storageVersionOf(definition);
    this.strategy = strategyFor(definition);
  }

  // ---- keys --------------------------------------------------------------

  key(namespace: string | undefined, name: string): string {
    return this.keys.key(namespace, name);
  }

  /** Key prefix for one namespace, or for every object of the kind (registry/keys.ts). */
  prefix(namespace: string | undefined): string {
    return this.keys.prefix(namespace);
  }

  // ---- conversion ----------------------------------------------------------

  /** A stored object as seen in a served version. */
  present(stored: JsonObject, version: KindVersion): JsonObject {
    if (version.name === this.storageVersion.name) return stored;
    return this.definition.converter!.fromStorage(stored, version.name);
  }

  /**
   * The same, for an event fanned out to many watchers: every watcher of a version is handed one
   * conversion, which it must only read.
   */
  presentToWatchers(stored: JsonObject, version: KindVersion): JsonObject {
    if (version.name === this.storageVersion.name) return stored;
    return this.fanOutConversions.get(stored, version.name, () => this.present(stored, version));
  }

  private toStorage(object: JsonObject, version: KindVersion): JsonObject {
    if (version.name === this.storageVersion.name) return object;
    return this.definition.converter!.toStorage(object);
  }

  private groupVersion(version: KindVersion): string {
    return groupVersionOf(this.definition.group, version.name);
  }

  private fieldManager(version: KindVersion): FieldManager {
    let manager = this.fieldManagers.get(version.name);
    if (!manager) {
      manager = new FieldManager(structuralSchemaOf(version), { statusSubresource: this.definition.subresources.status });
      this.fieldManagers.set(version.name, manager);
    }
    return manager;
  }

  // ---- reads -------------------------------------------------------------

  /** Whether a stored object is selected; undefined when the selection selects everything. */
  matcher(selection: Selection): ((stored: JsonObject) => boolean) | undefined {
    const { labelSelector, fieldSelector } = selection;
    if ((!labelSelector || labelSelector.empty) && (!fieldSelector || fieldSelector.empty)) return undefined;
    return (stored) => (labelSelector?.matches(ensureMetadata(stored).labels) ?? true) && (fieldSelector?.matches(this.strategy.fieldsOf(stored)) ?? true);
  }

  async get(namespace: string | undefined, name: string, version: KindVersion): Promise<JsonObject> {
    return this.presentFound(await this.storage.get(this.key(namespace, name)), name, version);
  }

  /**
   * GET: `get` for a caller that only reads the object (it may be frozen and shared), served from the
   * watch cache as fresh as the store, so a GET costs the backend at most a shared revision read.
   */
  async read(namespace: string | undefined, name: string, version: KindVersion): Promise<JsonObject> {
    const key = this.key(namespace, name);
    return this.presentFound(await this.storage.getConsistent(key), name, version);
  }

  /** `read` answering undefined for an object that is not there: a controller's lookup, which often misses, needs no NotFound built. */
  async readIfPresent(namespace: string | undefined, name: string, version: KindVersion): Promise<JsonObject | undefined> {
    const entry = await this.storage.getConsistent(this.key(namespace, name));
    return entry && this.present(entry.value, version);
  }

  private presentFound(entry: Entry | undefined, name: string, version: KindVersion): JsonObject {
    if (!entry) throw errors.notFound(this.ref, name);
    return this.present(entry.value, version);
  }

  async list(namespace: string | undefined, version: KindVersion, options: ListOptions): Promise<ListOutput> {
    const prefix = this.prefix(namespace);
    const filter = this.matcher(options);
    let revision: number | undefined;
    let startAfter: string | undefined;

    if (options.continueToken) {
      if (options.resourceVersion && options.resourceVersion !== '0') {
        throw errors.badRequest('specifying resource version is not allowed when using continue');
      }
      const position = decodeContinue(options.continueToken, prefix);
      revision = position.revision;
      startAfter = position.startAfter;
      // Only this server issues tokens, at revisions it had: a later one was made by hand.
      const current = await this.storage.currentRevision();
      if (revision > current) throw errors.badRequest(`continue key is not valid: resource version ${revision} is newer than the server's ${current}`);
      const compacted = await this.storage.compactedRevision();
      if (revision < compacted) {
        const fresh = encodeContinue({ revision: await this.storage.currentRevision(), startAfter });
        throw errors.expired(
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
          fresh,
        );
      }
    } else {
      revision = await this.readRevision(options.resourceVersion, options.resourceVersionMatch, Boolean(options.limit));
    }

    const result = await this.storage.list(prefix, {
      revision,
      startAfter,
      limit: options.limit,
      filter,
      requiredLabels: options.labelSelector?.requiredLabels,
      // resourceVersion "0" asks for any recent state, which kube serves from its watch cache as it stands.
      anyRevision: options.resourceVersion === '0' && !options.continueToken,
    });
    const items = result.entries.map((e) => this.present(e.value, version));
    const output: ListOutput = { items, resourceVersion: String(result.revision) };
    if (result.more && result.entries.length > 0) {
      output.continueToken = encodeContinue({ revision: result.revision, startAfter: result.entries[result.entries.length - 1].key });
    }
    return output;
  }

  /**
   * Which snapshot a list reads, per kube's resourceVersion semantics:
   * unset or "0" read the latest; Exact (or a legacy RV with a limit) reads
   * that snapshot; NotOlderThan reads the latest once it has caught up.
   */
  private async readRevision(resourceVersion: string | undefined, match: ListOptions['resourceVersionMatch'], paged: boolean): Promise<number | undefined> {
    if (match && !resourceVersion) {
      throw errors.invalid('meta.k8s.io', 'ListOptions', '', [
        FieldError.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'),
      ]);
    }
    if (!resourceVersion || resourceVersion === '0') {
      if (match === 'Exact') {
        throw errors.invalid('meta.k8s.io', 'ListOptions', '', [
          FieldError.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
        ]);
      }
      return undefined;
    }
    const requested = parseResourceVersion(resourceVersion);
    await this.waitForRevision(requested);
    if (match === 'Exact' || (!match && paged)) return requested;
    return undefined;
  }

  /** Waits briefly for the store to reach a revision a client has seen elsewhere, else 504. */
  async waitForRevision(requested: number): Promise<void> {
    const deadline = Date.now() + futureRevisionWaitMs;
    // A revision the watch cache reaches exists; asking the backend would cost a round trip per watch.
    if (await this.storage.reachCachedRevision(requested, futureRevisionWaitMs)) return;
    // No cache, or one reloading or behind: the backend tells, polled until the deadline.
    let current = await this.storage.currentRevision();
    while (current < requested) {
      if (Date.now() >= deadline) throw errors.resourceVersionTooLarge(requested, current);
      await new Promise((resolve) => setTimeout(resolve, 100));
      current = await this.storage.currentRevision();
    }
  }

  // ---- writes ------------------------------------------------------------

  /** POST: `body` is the request's object in `version`, decoded here. */
  async create(namespace: string | undefined, body: unknown, version: KindVersion, options: WriteOptions): Promise<WriteResult> {
    const warnings: string[] = [];
    const object = this.decode(body, version, options.fieldValidation, warnings);
    const meta = ensureMetadata(object);
    await this.admitCreate(namespace, String(meta.name ?? ''));
    this.bindNamespace(meta, namespace);
    if (meta.resourceVersion) {
      throw errors.badRequest('resourceVersion should not be set on objects to be created');
    }
    return this.insert(object, version, options, warnings, (o) =>
      this.fieldManager(version).update(undefined, o, this.writeContext(version, options, undefined)),
    );
  }

  /**
   * Stores a new object (already decoded and admitted) with server-managed
   * metadata, retrying generateName collisions.
   */
  private async insert(
    object: JsonObject,
    version: KindVersion,
    options: WriteOptions,
    warnings: string[],
    trackFields: (object: JsonObject) => JsonObject,
  ): Promise<WriteResult> {
    const admitted = this.strategy.canonicalize(object);
    const meta = ensureMetadata(admitted);
    const generated = !meta.name && typeof meta.generateName === 'string';
    for (let attempt = 0; ; attempt++) {
      const candidate = clone(admitted);
      const candidateMeta = ensureMetadata(candidate);
      if (generated) candidateMeta.name = `${meta.generateName}${randomSuffix()}`;
      this.initializeServerFields(candidate);
      const turns = new WriteTurns();
      await turns.giveWay();
      this.validate(candidate, undefined, version, warnings);
      await turns.giveWay();
      const tracked = trackFields(candidate);
      await turns.giveWay();
      const stored = this.toStorage(tracked, version);
      this.admitRules(stored, undefined, options.dryRun);
      if (options.dryRun) {
        if (await this.storage.get(this.key(candidateMeta.namespace, candidateMeta.name!))) {
          if (generated && attempt < maxGenerateNameAttempts) continue;
          throw errors.alreadyExists(this.ref, candidateMeta.name!);
        }
        return { object: this.present(stored, version), warnings, created: true };
      }
      options.fence?.();
      try {
        const entry = await this.storage.create(this.key(candidateMeta.namespace, candidateMeta.name!), stored);
        return { object: this.present(entry.value, version), warnings, created: true };
      } catch (error) {
        if (error instanceof KeyExistsError) {
          if (generated && attempt < maxGenerateNameAttempts) continue;
          throw errors.alreadyExists(this.ref, candidateMeta.name!);
        }
        throw tooLargeOr(error);
      }
    }
  }

  private initializeServerFields(object: JsonObject): void {
    const meta = ensureMetadata(object);
    meta.uid = randomUUID();
    meta.creationTimestamp = nowTimestamp();
    meta.generation = 1;
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    this.strategy.prepareForCreate(object);
  }

  /** PUT: a full replacement (`body`, decoded here), guarded by the object's resourceVersion. */
  async replace(
    namespace: string | undefined,
    name: string,
    body: unknown,
    version: KindVersion,
    subresource: Subresource,
    options: WriteOptions,
  ): Promise<WriteResult> {
    const warnings: string[] = [];
    const object = this.decode(body, version, options.fieldValidation, warnings);
    const meta = ensureMetadata(object);
    this.bindNamespace(meta, namespace);
    this.checkName(meta, name);
    if (!meta.resourceVersion) {
      throw errors.invalid(this.definition.group, this.definition.kind, name, [
        FieldError.invalid('metadata.resourceVersion', 0, 'must be specified for an update'),
      ]);
    }
    return this.update({ namespace, name, version, subresource, options, mutate: () => object, operation: 'update' }, warnings);
  }

  /**
   * PATCH: `mutate` maps the current object (request version) to the patched
   * one, which is decoded like a body; both run again when a concurrent
   * writer wins, and the last attempt's decoding warnings are the answer's.
   */
  async patch(
    namespace: string | undefined,
    name: string,
    mutate: Mutation,
    version: KindVersion,
    subresource: Subresource,
    options: WriteOptions,
  ): Promise<WriteResult> {
    const decodePatched = (current: JsonObject, warnings: string[]) => this.decode(mutate(current), version, options.fieldValidation, warnings);
    return this.update({ namespace, name, version, subresource, options, mutate: decodePatched, operation: 'update' }, []);
  }

  /**
   * Server-side apply: merges a partial object (`body`, decoded here without
   * defaults: the merged object is defaulted, so a manager does not come to
   * own defaults it never sent) owned by `fieldManager`, creating it if missing.
   */
  async apply(
    namespace: string | undefined,
    name: string,
    body: unknown,
    version: KindVersion,
    subresource: Subresource,
    options: WriteOptions & { force: boolean },
  ): Promise<WriteResult> {
    const warnings: string[] = [];
    const applied = this.decode(body, version, options.fieldValidation, warnings, { defaults: false });
    // One read decides both: an apply that would create is a create to admission, and only an admitted
    // one creates (the insert refuses a key that exists meanwhile), as in kube's patch handler, where
    // admission sees the operation the store's read found. A /status apply of a missing object is
    // admitted too before its 404, as in kube.
    const existing = await this.storage.get(this.key(namespace, name));
    if (!existing) await this.admitCreate(namespace, name);
    const meta = ensureMetadata(applied);
    this.bindNamespace(meta, namespace);
    this.checkName(meta, name);
    if (meta.managedFields !== undefined) {
      throw errors.badRequest('metadata.managedFields must be nil');
    }
    const scoped = this.scopeApplied(applied, subresource);
    const context = { ...this.writeContext(version, options, subresource), force: options.force };
    // ApplyConflictError is already kube's 409 for apply conflicts.
    const merge = (live: JsonObject | undefined): JsonObject =>
      applyDefaults(this.fieldManager(version).apply(live, scoped, context), structuralSchemaOf(version));
    if (!existing) {
      if (subresource) throw errors.notFound(this.ref, name);
      const created = merge(undefined);
      ensureMetadata(created).namespace = meta.namespace;
      try {
        return await this.insert(created, version, options, warnings, (o) => o);
      } catch (error) {
        // Lost a create race: apply onto what the winner stored.
        if (!(error instanceof ApiError && error.reason === 'AlreadyExists')) throw error;
      }
    }
    return this.update({ namespace, name, version, subresource, options, mutate: (current) => merge(current), operation: 'apply' }, warnings);
  }

  /**
   * Main-resource applies may not set status and status applies only set
   * status: a manager must not claim fields the write will discard.
   */
  private scopeApplied(applied: JsonObject, subresource: Subresource): JsonObject {
    if (!this.definition.subresources.status) return applied;
    if (subresource === 'status') {
      const meta = ensureMetadata(applied);
      const scoped: JsonObject = { apiVersion: applied.apiVersion, kind: applied.kind, metadata: { name: meta.name, namespace: meta.namespace } };
      if (applied.status !== undefined) scoped.status = applied.status;
      return scoped;
    }
    const { status: _status, ...rest } = applied;
    return rest;
  }

  /**
   * The read-modify-write loop behind PUT, PATCH and apply. `mutate` may be
   * called again when a concurrent writer wins, unless the new object pins a
   * resourceVersion, in which case the client gets 409 as kube does.
   *
   * The first attempt starts from the watch cache's copy when there is one, as
   * kube's GuaranteedUpdate does: on etcd that saves a round trip per write.
   * The copy may be behind the store, so whatever it leads to short of a
   * successful compare-and-swap (a failed precondition, a refusal, a no-op) is
   * decided again from a fresh read.
   */
  private async update(request: UpdateRequest, warnings: string[]): Promise<WriteResult> {
    const { namespace, name, version, options } = request;
    const key = this.key(namespace, name);
    // A dry run answers without a compare-and-swap to check its guess, so it reads the store.
    let guess = !options.dryRun;
    for (;;) {
      const cached = guess ? this.storage.peek(key) : undefined;
      guess = false;
      const entry = cached ?? (await this.storage.get(key));
      if (!entry) throw errors.notFound(this.ref, name);
      // Possibly the cache's frozen value, shared with its watchers: read here, never changed; the write builds a new object.
      const live = entry.value;
      const current = this.present(live, version);
      // Each attempt decodes and validates afresh: its warnings replace an abandoned attempt's.
      const attemptWarnings = [...warnings];
      let stored: JsonObject | undefined;
      const turns = new WriteTurns();
      try {
        stored = await this.change(request, { live, current, modRevision: entry.modRevision }, attemptWarnings, turns);
      } catch (error) {
        // A refusal may come from the copy being behind; a TypeError (a write into the frozen copy, say) is a bug, not staleness.
        if (cached && !(error instanceof TypeError)) continue;
        throw error;
      }
      if (!stored) {
        if (cached) continue;
        return { object: current, warnings: attemptWarnings, created: false };
      }

      const nextMeta = ensureMetadata(stored);
      const finishesDeletion = Boolean(nextMeta.deletionTimestamp) && (nextMeta.finalizers ?? []).length === 0;
      if (options.dryRun) return { object: this.present(withResourceVersion(stored, entry.modRevision), version), warnings: attemptWarnings, created: false };
      options.fence?.();
      try {
        if (finishesDeletion) {
          await this.storage.delete(key, entry.modRevision);
          return { object: this.present(withResourceVersion(stored, entry.modRevision), version), warnings: attemptWarnings, created: false };
        }
        const written = await this.storage.update(key, stored, entry.modRevision);
        return { object: this.present(written.value, version), warnings: attemptWarnings, created: false };
      } catch (error) {
        // A pinned resourceVersion fails the check above on the next attempt.
        if (error instanceof RevisionConflictError) continue;
        if (error instanceof KeyNotFoundError) throw errors.notFound(this.ref, name);
        throw tooLargeOr(error);
      }
    }
  }

  /**
   * One attempt's new object, in the storage version, from the stored one (`live`, and `current`, it
   * in the request version, at `modRevision`), or undefined when the write changes nothing.
   */
  private async change(
    request: UpdateRequest,
    { live, current, modRevision }: { live: JsonObject; current: JsonObject; modRevision: number },
    warnings: string[],
    turns: WriteTurns,
  ): Promise<JsonObject | undefined> {
    const { namespace, name, version, subresource, options, mutate, operation } = request;
    await turns.giveWay();
    const requested = this.strategy.canonicalize(mutate(current, warnings));
    const requestedMeta = ensureMetadata(requested);
    this.bindNamespace(requestedMeta, namespace);
    this.checkName(requestedMeta, name);
    const pinnedVersion = requestedMeta.resourceVersion;
    if (pinnedVersion !== undefined && pinnedVersion !== '' && pinnedVersion !== String(modRevision)) {
      throw errors.modified(this.ref, name);
    }
    if (requestedMeta.uid && requestedMeta.uid !== ensureMetadata(current).uid) {
      throw errors.conflict(
        this.ref,
        name,
        `Precondition failed: UID in precondition: ${requestedMeta.uid}, UID in object meta: ${ensureMetadata(current).uid}`,
      );
    }

    const next = this.strategy.prepareForUpdate(requested, current, subresource);
    await turns.giveWay();
    this.validate(next, current, version, warnings);
    await turns.giveWay();
    const tracked = operation === 'apply' ? next : this.fieldManager(version).update(current, next, this.writeContext(version, options, subresource));
    const nextMeta = ensureMetadata(tracked);
    if (!jsonEqual(specOf(tracked), specOf(current))) nextMeta.generation = (ensureMetadata(current).generation ?? 0) + 1;
    await turns.giveWay();
    const stored = this.toStorage(tracked, version);
    // Rules judge a write that changes nothing too, as they always have: it may still be refused.
    this.admitRules(stored, live, options.dryRun);
    return jsonEqual(withoutResourceVersion(tracked), withoutResourceVersion(current)) ? undefined : stored;
  }

  async delete(namespace: string | undefined, name: string, version: KindVersion, options: DeleteOptions): Promise<DeleteResult> {
    const key = this.key(namespace, name);
    for (;;) {
      const entry = await this.storage.get(key);
      if (!entry) throw errors.notFound(this.ref, name);
      const current = this.present(entry.value, version);
      const meta = ensureMetadata(current);
      this.checkPreconditions(name, meta, options.preconditions);

      const finalizers = [...(meta.finalizers ?? [])];
      const policyFinalizer = options.propagationPolicy === 'Foreground' ? 'foregroundDeletion' : options.propagationPolicy === 'Orphan' ? 'orphan' : undefined;
      if (policyFinalizer && !meta.deletionTimestamp) {
        const other = policyFinalizer === 'orphan' ? 'foregroundDeletion' : 'orphan';
        const index = finalizers.indexOf(other);
        if (index >= 0) finalizers.splice(index, 1);
        if (!finalizers.includes(policyFinalizer)) finalizers.push(policyFinalizer);
      }

      if (finalizers.length === 0) {
        if (options.dryRun) return { object: current, deleted: true };
        options.fence?.();
        try {
          const removed = await this.storage.delete(key, entry.modRevision);
          return { object: this.present(removed.value, version), deleted: true };
        } catch (error) {
          if (error instanceof RevisionConflictError) continue;
          if (error instanceof KeyNotFoundError) throw errors.notFound(this.ref, name);
          throw error;
        }
      }

      // Two-phase deletion: mark terminating and let finalizers run.
      if (meta.deletionTimestamp && jsonEqual(finalizers, meta.finalizers ?? [])) return { object: current, deleted: false };
      const next = clone(current);
      const nextMeta = ensureMetadata(next);
      if (!nextMeta.deletionTimestamp) {
        nextMeta.deletionTimestamp = nowTimestamp();
        nextMeta.deletionGracePeriodSeconds = 0;
        nextMeta.generation = (nextMeta.generation ?? 0) + 1;
      }
      nextMeta.finalizers = finalizers;
      delete nextMeta.resourceVersion;
      // Like kube, deletion bookkeeping is the server's, not a field manager's.
      if (options.dryRun) return { object: next, deleted: false };
      options.fence?.();
      try {
        const written = await this.storage.update(key, this.toStorage(next, version), entry.modRevision);
        return { object: this.present(written.value, version), deleted: false };
      } catch (error) {
        if (error instanceof RevisionConflictError) continue;
        throw error;
      }
    }
  }

  async deleteCollection(namespace: string | undefined, version: KindVersion, selection: Selection, options: DeleteOptions): Promise<JsonObject[]> {
    const { items } = await this.list(namespace, version, selection);
    const results: JsonObject[] = [];
    for (const item of items) {
      const meta = ensureMetadata(item);
      try {
        results.push((await this.delete(meta.namespace, meta.name!, version, options)).object);
      } catch (error) {
        // Deleted concurrently: that is the outcome the caller asked for.
        if (!(error instanceof ApiError && error.code === 404)) throw error;
      }
    }
    return results;
  }

  private checkPreconditions(name: string, meta: ObjectMeta, preconditions: DeleteOptions['preconditions']): void {
    if (preconditions?.uid && preconditions.uid !== meta.uid) {
      throw errors.conflict(this.ref, name, `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${meta.uid}`);
    }
    if (preconditions?.resourceVersion && preconditions.resourceVersion !== meta.resourceVersion) {
      throw errors.conflict(
        this.ref,
        name,
        `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in meta: ${meta.resourceVersion}`,
      );
    }
  }

  /** A request body as an object of `version` (decode.ts); its unknown fields go into `warnings` as `fieldValidation` says. */
  private decode(body: unknown, version: KindVersion, fieldValidation: FieldValidation, warnings: string[], options?: { defaults: boolean }): JsonObject {
    const decoded = decodeObject(body, this.definition, version, fieldValidation, options);
    warnings.push(...decoded.warnings);
    return decoded.object;
  }

  /** kube's NamespaceLifecycle: nothing new appears in a namespace that is missing or being deleted. */
  private async admitCreate(namespace: string | undefined, name: string): Promise<void> {
    if (this.definition.namespaced && namespace !== undefined) await this.admission.namespaceLifecycle?.admitCreate(namespace, this.ref, name);
  }

  /** Metadata and schema, in the request's version. */
  private validate(object: JsonObject, old: JsonObject | undefined, version: KindVersion, warnings: string[]): void {
    const result = this.strategy.validate(object, old, version);
    warnings.push(...result.warnings);
    this.refuseInvalid(object, result.errors);
  }

  /** The kind's admission rules, on the object converted for storage and, on updates, the stored object it replaces. */
  private admitRules(stored: JsonObject, live: JsonObject | undefined, dryRun: boolean): void {
    this.refuseInvalid(stored, this.strategy.admit(stored, live, { dryRun }));
  }

  private refuseInvalid(object: JsonObject, causes: FieldError[]): void {
    if (causes.length === 0) return;
    const meta = ensureMetadata(object);
    throw errors.invalid(this.definition.group, this.definition.kind, meta.name ?? meta.generateName ?? '', causes);
  }

  private bindNamespace(meta: ObjectMeta, namespace: string | undefined): void {
    if (!this.definition.namespaced) {
      delete meta.namespace;
      return;
    }
    if (meta.namespace === undefined || meta.namespace === '') meta.namespace = namespace;
    else if (meta.namespace !== namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
  }

  private checkName(meta: ObjectMeta, name: string): void {
    if (meta.name === undefined || meta.name === '') meta.name = name;
    else if (meta.name !== name) throw errors.badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
  }

  private writeContext(version: KindVersion, options: WriteOptions, subresource: Subresource) {
    return { manager: options.fieldManager, apiVersion: this.groupVersion(version), subresource, now: nowTimestamp() };
  }
}

export function parseResourceVersion(text: string): number {
  if (!/^[1-9]\d*$/.test(text)) {
    throw errors.badRequest(`invalid resource version "${text}"`);
  }
  return Number(text);
}

function withoutResourceVersion(object: JsonObject): JsonObject {
  const copy = { ...object, metadata: { ...ensureMetadata(object) } };
  delete (copy.metadata as ObjectMeta).resourceVersion;
  return copy;
}

function randomSuffix(): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += generateNameAlphabet[Math.floor(Math.random() * generateNameAlphabet.length)];
  return suffix;
}

/** A value the storage refuses for its size is the client's to shrink: kube's 413. */
function tooLargeOr(error: unknown): unknown {
  if (!(error instanceof ValueTooLargeError)) return error;
  return errors.tooLarge(`Request entity too large: the object would be stored as ${error.bytes} bytes, over the limit of ${maxValueBytes}`);
}
