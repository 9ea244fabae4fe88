/**
 * The storage contract every backend implements (SQLite embedded, etcd for HA).
 *
 * It mirrors etcd's model on purpose so an etcd backend is a thin adapter:
 * - one global, strictly increasing revision; every write gets the next one
 *   (it becomes the object's metadata.resourceVersion);
 * - writes are compare-and-swap on an entry's modRevision;
 * - watches replay history after a revision, then stream live events, and
 *   fail with TooOldRevisionError once that history is compacted.
 *
 * Values are JSON objects. Storage never interprets them, except that it owns
 * metadata.resourceVersion: stripped on write, set to modRevision on read.
 * A value whose JSON is larger than `maxValueBytes` is refused with
 * ValueTooLargeError, as etcd refuses requests over its --max-request-bytes,
 * so no write (a patch that grows an object, say) can bloat the store.
 */

export type JsonObject = { [key: string]: unknown };

/** Where a namespaced object lives: the name every layer above storage addresses it by. */
export interface ObjectName {
  namespace: string;
  name: string;
}

/**
 * The largest stored value: what etcd takes by default (--max-request-bytes, 1.5 MiB, for the whole
 * request), less 4 KiB for the key and the transaction around the value. Kubernetes stores custom
 * resources as JSON in etcd, so a management cluster refuses the same objects; and every write of an
 * object costs time and history in proportion to its size (issue 47, H2).
 */
export const maxValueBytes = 1.5 * 1024 * 1024 - 4 * 1024;

export interface Entry {
  key: string;
  /** The stored object, with metadata.resourceVersion set to String(modRevision). */
  value: JsonObject;
  /** Revision of the write that created this key. */
  createRevision: number;
  /** Revision of the last write to this key. */
  modRevision: number;
}

export interface ListRequest {
  /**
   * Read as of this revision (must be >= compactedRevision and <= current).
   * Omitted: the latest state. Pages of one list share one revision.
   */
  revision?: number;
  /** Return only keys strictly after this one (pagination cursor). */
  startAfter?: string;
  /** At most this many matching entries; 0 or omitted means no limit. */
  limit?: number;
  /** Applied before the limit, so a page holds `limit` matching entries when that many exist. */
  filter?: (value: JsonObject) => boolean;
  /**
   * Labels (name, value) that every entry the filter keeps carries in `metadata.labels`: a store may
   * look up the keys carrying them instead of walking the whole range (the watch cache does). The
   * filter still decides.
   */
  requiredLabels?: ReadonlyArray<readonly [string, string]>;
  /**
   * Without `revision`: any recent state will do (kube's resourceVersion "0"), so a cache answers as
   * it stands instead of first catching up with the store. For readers acting on events of that same
   * cache, as an informer reads its own.
   */
  anyRevision?: boolean;
}

export interface ListResult {
  entries: Entry[];
  /** The revision this list reflects. */
  revision: number;
  /** True when more matching entries follow the last one returned. */
  more: boolean;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchEvent {
  type: WatchEventType;
  key: string;
  revision: number;
  /** New state; for DELETED the last state, with resourceVersion = the deletion revision. */
  value: JsonObject;
  /** State before this event (absent for ADDED). Lets watchers compute selector enter/leave. */
  prevValue?: JsonObject;
}

export interface WatchRequest {
  /** Key prefix to watch (a single key is a prefix too). */
  prefix: string;
  /** Deliver events with revision > afterRevision. */
  afterRevision: number;
  /** Called in revision order, after the commit (SQLite: synchronously; etcd: as etcd delivers). Must not throw. */
  onEvent: (event: WatchEvent) => void;
  /**
   * Called at most once if a running watch ends on its own, e.g. when etcd
   * compacts past it (TooOldRevisionError); no event follows. SQLite watches
   * never end this way, but callers must handle it to run on etcd unchanged.
   */
  onError?: (error: StorageError) => void;
}

export interface Watch {
  stop(): void;
  /**
   * A revision through which every event of this watch has been delivered, so a bookmark may carry
   * it. SQLite delivers on commit, so that is the current revision; etcd delivers later, so it is
   * what this watch has seen.
   */
  progress(): Promise<number>;
}

/** The methods through which a reader reaches this process's watch cache. */
export const cacheMethods = ['peek', 'cachedRevision', 'reachCachedRevision', 'getConsistent'] as const satisfies ReadonlyArray<keyof Storage>;

export interface Storage {
  /**
   * The revision of the latest write to this store (0 for an empty store). Watches of the whole store
   * reach it, so waiting for it is waiting for that write's event (on a shared etcd, other tenants'
   * writes do not count).
   */
  currentRevision(): Promise<number>;
  /** Oldest revision whose history is still available to watches and snapshot reads. */
  compactedRevision(): Promise<number>;
  get(key: string): Promise<Entry | undefined>;
  list(prefix: string, request?: ListRequest): Promise<ListResult>;
  /**
   * Throws KeyExistsError when the key exists. The value is handed over: the entry answered may
   * share its members, so the writer must not change it afterwards (update likewise).
   */
  create(key: string, value: JsonObject): Promise<Entry>;
  /**
   * Replace the value if the key's modRevision still equals expectedModRevision.
   * Throws KeyNotFoundError or RevisionConflictError.
   */
  update(key: string, value: JsonObject, expectedModRevision: number): Promise<Entry>;
  /**
   * Remove the key (only if its modRevision equals expectedModRevision, when given).
   * Returns the last state with resourceVersion = the deletion revision.
   */
  delete(key: string, expectedModRevision?: number): Promise<Entry>;
  /** Throws TooOldRevisionError if afterRevision < compactedRevision. */
  watch(request: WatchRequest): Watch;
  // The cache methods. Every store answers them, a store without a watch cache of its own by sending the
  // caller to the store (UncachedStorage, storage/uncached.ts), so a layer that wraps a cached store
  // cannot skip the cache by leaving one out: it must say what it answers.
  /**
   * The entry as this process's watch cache holds it, possibly behind the store (frozen, shared):
   * a first guess that a compare-and-swap then checks, as kube's GuaranteedUpdate starts from its
   * cache. Undefined when the cache does not hold the key, or there is no cache.
   */
  peek(key: string): Entry | undefined;
  /**
   * The revision this process's watch cache reflects, known without asking the backend: every
   * revision up to it exists, and a watch from it on is served from live events alone. Undefined
   * while the cache loads, or when there is no cache.
   */
  cachedRevision(): number | undefined;
  /**
   * Resolves true once this process's watch cache reflects `revision` (at once when it already does),
   * false when it has not within `timeoutMs`, is reloading, or there is no cache, and the caller must
   * ask the backend. The cache sees each write of this store arrive, so the wait costs the backend
   * nothing.
   */
  reachCachedRevision(revision: number, timeoutMs: number): Promise<boolean>;
  /**
   * A get as of a revision read after this call began, served from this process's watch cache once
   * it has caught up, as kube-apiserver serves a consistent list. The value may be frozen and shared:
   * for readers only. Without a cache, a get.
   */
  getConsistent(key: string): Promise<Entry | undefined>;
  /** Liveness of the backend, for /readyz. Throws when unusable. */
  check(): Promise<void>;
  close(): Promise<void>;
}

export class StorageError extends Error {}

export class KeyExistsError extends StorageError {
  constructor(readonly key: string) {
    super(`key exists: ${key}`);
  }
}

export class ValueTooLargeError extends StorageError {
  constructor(
    readonly key: string,
    readonly bytes: number,
  ) {
    super(`value of ${key} is ${bytes} bytes, over the limit of ${maxValueBytes}`);
  }
}

export class KeyNotFoundError extends StorageError {
  constructor(readonly key: string) {
    super(`key not found: ${key}`);
  }
}

export class RevisionConflictError extends StorageError {
  constructor(
    readonly key: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`revision conflict on ${key}: expected ${expected}, found ${actual}`);
  }
}

export class TooOldRevisionError extends StorageError {
  constructor(
    readonly requested: number,
    readonly compacted: number,
  ) {
    super(`too old resource version: ${requested} (${compacted})`);
  }
}

export class FutureRevisionError extends StorageError {
  constructor(
    readonly requested: number,
    readonly current: number,
  ) {
    super(`Too large resource version: ${requested}, current: ${current}`);
  }
}
