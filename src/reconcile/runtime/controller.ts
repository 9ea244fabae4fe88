/**
 * The generic reconcile loop of one kind: storage list+watch feeds a work
 * queue, workers call the kind's reconcile function with storage keys.
 *
 * Level-triggered: reconcile gets only a key and reads the current object
 * itself (absent means deleted), so a missed or coalesced event costs nothing
 * but latency. Every created, changed and deleted key is enqueued (deleted
 * ones too, so state kept outside the object can be cleaned up without a
 * finalizer), subject to shouldEnqueue.
 *
 * Outcomes: a result with requeueAfterMs polls again without blocking a
 * worker; a thrown error retries with the queue's backoff; a TerminalError
 * (invalid configuration, unrecoverable state) is neither retried nor given a
 * new resync, so the key waits for an event that passes shouldEnqueue (or the
 * relist of a new term); success schedules the key's resync, on its resync
 * group's grid (resync-grid.ts; the owner names the group, CAPO's reconcilers
 * a namespace): the objects of one group resync together, so their resources
 * can be read together, and groups apart.
 *
 * Leadership: the loop runs only while the leader lock is held. Each term
 * lists afresh, watches from the list's revision and owns a new queue; when
 * the lock is lost the watch stops, queued work is dropped and workers finish
 * only what is in flight, before contending again. Backoff state survives
 * terms, so a flapping lease does not reset retry delays.
 *
 * Sharding (shards.ts): with `sharding`, a term runs while any shard is held;
 * every key is still listed and watched (to know each object's shard), but
 * only keys of held shards are reconciled, each inside its shard's context so
 * that fencing checks that shard's lease; taking a shard enqueues its keys.
 */
import type { MetricsRegistry } from '../../observability/metrics.js';
import { TooOldRevisionError, type JsonObject, type Storage, type Watch, type WatchEvent } from '../../storage/interface.js';
import { defaultRateLimiter, type RateLimiter } from './backoff.js';
import { AlwaysLeader, type LeaderLock } from './leader.js';
import { reconcileMetrics, type ReconcileMetrics, type ReconcileOutcome } from './metrics.js';
import { WorkQueue } from './queue.js';
import { defaultResyncPeriodMs, ResyncGrid } from './resync-grid.js';
import { sleep } from './sleep.js';
import { isJsonObject, jsonEqual } from '../../storage/json.js';
import { fallbackLogger, type Logger } from '../../observability/log.js';

export interface ReconcileResult {
  /** Reconcile again after this long even without changes: waiting on OpenStack without holding a worker. */
  requeueAfterMs?: number;
}

/** Reconciles the object stored at key; throwing means retry with backoff. */
export type Reconcile = (key: string) => Promise<ReconcileResult>;

/** An error retrying cannot fix; the key waits for the object to change. */
export class TerminalError extends Error {
  override name = 'TerminalError';
}

/** Which objects this replica reconciles, when the reconciler is sharded across replicas. */
export interface Sharding {
  /** The shard of the objects of `group`: objects of one group are always in one shard. */
  shardOf(group: string): number;
  holds(shard: number): boolean;
  /** Runs a reconcile as work of its shard (writes are fenced by that shard's lease). */
  within<T>(shard: number, fn: () => T): T;
  onAcquired(cb: (shard: number) => void): void;
}

export interface ControllerOptions {
  /** Names the controller in metrics and error reports. */
  name: string;
  storage: Storage;
  /** Storage prefix of one kind, ending in '/' (ResourceStore.prefix(undefined)). */
  prefix: string;
  reconcile: Reconcile;
  /** Keys reconciled concurrently. Default 10, as CAPO's controllers. */
  workers?: number;
  /** Resync period, on the key's resync group's grid after the last success; 0 turns resync off. Default 10 minutes. */
  resyncPeriodMs?: number;
  /** The resync group of a key: keys of one group resync at the same instants, so their resources can be read together. */
  resyncGroupOf: (key: string) => string;
  /** Default AlwaysLeader (one replica). The controller never releases the lock: its owner does. */
  leader?: LeaderLock;
  /** Reconcile only the objects of held shards, each in the shard of its group (`groupOf`). Default: every object (one leader). */
  sharding?: { shards: Sharding; groupOf: (value: JsonObject) => string };
  /** Which watch events enqueue their key, e.g. generationOrMetadataChanged. Default: all. */
  shouldEnqueue?: (event: WatchEvent) => boolean;
  /** Retry delays after errors. Default defaultRateLimiter(). */
  rateLimiter?: RateLimiter<string>;
  metrics?: MetricsRegistry;
  /** Receives reconcile errors (with their key) and list failures. Default: logged as an error with the controller and key. */
  onError?: (error: unknown, key?: string) => void;
  /** Where each reconcile's outcome goes at debug level (-v 1), and errors when onError is not given. */
  logger?: Logger;
  /**
   * Failures the user or the cloud can act on (an answer of the cloud's), which the default onError logs as a
   * warning without a stack, as it does a TerminalError. Default: none but TerminalError.
   */
  isActionableFailure?: (error: Error) => boolean;
}

/** Keys per list page: bounds one storage response, as etcd wants. */
const listPageSize = 500;
/** Wait before listing again after a storage failure, or contending again after the lock refused. */
const retryDelayMs = 1000;

export class Controller {
  readonly name: string;
  private readonly storage: Storage;
  private readonly prefix: string;
  private readonly reconcile: Reconcile;
  private readonly workers: number;
  private readonly resyncGrid: ResyncGrid | undefined;
  private readonly resyncGroupOf: (key: string) => string;
  private readonly leader: LeaderLock;
  private readonly sharding: ControllerOptions['sharding'];
  /** Each known key's shard, from the list and the watch (a deleted key's from its last state, until reconciled). */
  private readonly shardOfKey = new Map<string, number>();
  private readonly shouldEnqueue: (event: WatchEvent) => boolean;
  private readonly rateLimiter: RateLimiter<string>;
  private readonly metrics: ReconcileMetrics | undefined;
  private readonly onError: (error: unknown, key?: string) => void;
  private readonly log: Logger;
  private readonly stopped = new AbortController();
  /** Keys present as of the last list and the watch since; detects deletions missed between terms. */
  private known = new Set<string>();
  private term: AbortController | undefined;
  private queue: WorkQueue<string> | undefined;
  private running: Promise<void> | undefined;

  constructor(options: ControllerOptions) {
    this.name = options.name;
    this.storage = options.storage;
    this.prefix = options.prefix;
    this.reconcile = options.reconcile;
    this.workers = options.workers ?? 10;
    this.leader = options.leader ?? new AlwaysLeader();
    this.sharding = options.sharding;
    this.shouldEnqueue = options.shouldEnqueue ?? (() => true);
    this.rateLimiter = options.rateLimiter ?? defaultRateLimiter<string>();
    this.metrics = options.metrics && reconcileMetrics(options.metrics, options.name);
    // One line per failure: the message carries the service, request, status and request id; stacks are noise in a log.
    this.log = (options.logger ?? fallbackLogger).child({ controller: this.name });
    const actionable = options.isActionableFailure ?? (() => false);
    this.onError = options.onError ?? ((error, key) => logFailure(this.log, error, key, actionable));
    // Without the slash, the prefix of machines would also watch machinesets.
    if (!this.prefix.endsWith('/')) throw new Error(`controller ${this.name}: prefix must end with "/", got ${this.prefix}`);
    if (!Number.isInteger(this.workers) || this.workers < 1) throw new Error(`controller ${this.name}: workers must be a positive integer`);
    const resyncPeriodMs = options.resyncPeriodMs ?? defaultResyncPeriodMs;
    if (!(resyncPeriodMs >= 0)) throw new Error(`controller ${this.name}: resyncPeriodMs must be >= 0`);
    this.resyncGrid = resyncPeriodMs > 0 ? new ResyncGrid(resyncPeriodMs) : undefined;
    this.resyncGroupOf = options.resyncGroupOf;
    this.leader.onLost(() => this.term?.abort());
    this.sharding?.shards.onAcquired((shard) => {
      for (const [key, keyShard] of this.shardOfKey) if (keyShard === shard) this.queue?.add(key);
    });
  }

  /** Starts contending for leadership and reconciling while leading; stop() ends it. */
  start(): void {
    if (this.running) throw new Error(`controller ${this.name} was already started`);
    this.running = this.run();
  }

  /** Stops watching and taking keys, and resolves once in-flight reconciles have finished. */
  async stop(): Promise<void> {
    this.stopped.abort();
    this.term?.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    const stopped = this.stopped.signal;
    while (!stopped.aborted) {
      try {
        await this.leader.acquire(stopped);
      } catch (error) {
        if (stopped.aborted) return;
        this.onError(error);
        await sleep(retryDelayMs, stopped);
        continue;
      }
      const term = new AbortController();
      this.term = term;
      // The lock may have been lost before this term existed to hear of it.
      if (stopped.aborted || !this.leader.isLeader()) term.abort();
      await this.lead(term.signal);
      this.term = undefined;
    }
  }

  private async lead(ended: AbortSignal): Promise<void> {
    const queue = new WorkQueue<string>({ rateLimiter: this.rateLimiter, metrics: this.metrics });
    this.queue = queue;
    const workers = Array.from({ length: this.workers }, () => this.work(queue, ended));
    // A watch the storage ends on its own (compaction on etcd) is replaced by a fresh list and watch.
    while (!ended.aborted) {
      let watchEnded!: () => void;
      const broken = new Promise<void>((resolve) => (watchEnded = resolve));
      const watch = await this.listAndWatch(queue, ended, (error) => {
        this.onError(error);
        watchEnded();
      });
      const endedTerm = new Promise<void>((resolve) => ended.addEventListener('abort', () => resolve(), { once: true }));
      if (!ended.aborted) await Promise.race([endedTerm, broken]);
      watch?.stop();
    }
    this.queue = undefined;
    await queue.shutDownWithDrain();
    await Promise.all(workers);
  }

  /** For the admin API: whether this replica leads, and the queue's sizes. */
  status(): { name: string; leading: boolean; queued: number; processing: number; scheduled: number } {
    const stats = this.queue?.stats() ?? { queued: 0, processing: 0, scheduled: 0 };
    return { name: this.name, leading: this.queue !== undefined, ...stats };
  }

  /**
   * Reconciles a key because something it depends on changed (an owned
   * object, a Secret, the owner Cluster), or `delayMs` from now (a
   * transition it waits on is expected to be over then). Dropped while not
   * leading: the next term lists every key anyway.
   */
  enqueue(key: string, delayMs = 0): void {
    if (key.startsWith(this.prefix)) this.queue?.addAfter(key, delayMs);
  }

  /** Enqueues every key and watches from the list's revision; undefined if the term ended first. */
  private async listAndWatch(queue: WorkQueue<string>, ended: AbortSignal, onWatchError: (error: Error) => void): Promise<Watch | undefined> {
    while (!ended.aborted) {
      try {
        const { keys, revision } = await this.listKeys();
        if (ended.aborted) return undefined;
        // Deleted while nobody watched: reconcile them too, as a DELETED event would have.
        for (const key of this.known) if (!keys.has(key)) queue.add(key);
        this.known = keys;
        const watch = this.storage.watch({
          prefix: this.prefix,
          afterRevision: revision,
          onEvent: (event) => this.observe(queue, event),
          onError: onWatchError,
        });
        // Only now, so that a list the watch cannot follow costs no reconciles.
        for (const key of keys) queue.add(key);
        return watch;
      } catch (error) {
        // History was compacted past the list: list again at a newer revision.
        if (error instanceof TooOldRevisionError) continue;
        this.onError(error);
        await sleep(retryDelayMs, ended);
      }
    }
    return undefined;
  }

  private async listKeys(): Promise<{ keys: Set<string>; revision: number }> {
    const keys = new Set<string>();
    let page = await this.storage.list(this.prefix, { limit: listPageSize });
    const revision = page.revision;
    for (;;) {
      for (const entry of page.entries) {
        keys.add(entry.key);
        this.recordShard(entry.key, entry.value);
      }
      if (!page.more) return { keys, revision };
      const startAfter = page.entries[page.entries.length - 1].key;
      page = await this.storage.list(this.prefix, { revision, startAfter, limit: listPageSize });
    }
  }

  private recordShard(key: string, value: JsonObject): void {
    if (this.sharding) this.shardOfKey.set(key, this.sharding.shards.shardOf(this.sharding.groupOf(value)));
  }

  private observe(queue: WorkQueue<string>, event: WatchEvent): void {
    if (event.type === 'DELETED') this.known.delete(event.key);
    else this.known.add(event.key);
    this.recordShard(event.key, event.value);
    let enqueue = true;
    try {
      enqueue = this.shouldEnqueue(event);
    } catch (error) {
      this.onError(error, event.key);
    }
    if (enqueue) queue.add(event.key);
  }

  private async work(queue: WorkQueue<string>, ended: AbortSignal): Promise<void> {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      // get() may have handed the key out just before the term ended.
      if (ended.aborted) {
        queue.done(key);
        return;
      }
      await this.process(queue, key);
    }
  }

  private async process(queue: WorkQueue<string>, key: string): Promise<void> {
    const startedAt = performance.now();
    let outcome: ReconcileOutcome;
    const shard = this.shardOfKey.get(key);
    if (this.sharding && (shard === undefined || !this.sharding.shards.holds(shard))) {
      // Another replica's object (or one not listed yet, which the watch brings): taking its shard enqueues it again.
      if (!this.known.has(key)) this.shardOfKey.delete(key);
      queue.forget(key);
      queue.done(key);
      return;
    }
    try {
      const { requeueAfterMs } = this.sharding ? await this.sharding.shards.within(shard!, () => this.reconcile(key)) : await this.reconcile(key);
      if (!this.known.has(key)) this.shardOfKey.delete(key);
      queue.forget(key);
      if (requeueAfterMs !== undefined && requeueAfterMs > 0) {
        outcome = 'requeue';
        queue.addAfter(key, requeueAfterMs);
      } else {
        outcome = 'success';
        if (this.resyncGrid && this.known.has(key)) queue.addAfter(key, this.resyncGrid.delay(this.resyncGroupOf(key)));
      }
    } catch (error) {
      if (error instanceof TerminalError) {
        outcome = 'terminal';
        queue.forget(key);
      } else {
        outcome = 'error';
        queue.addRateLimited(key);
      }
      this.onError(error, key);
    }
    queue.done(key);
    const seconds = (performance.now() - startedAt) / 1000;
    this.metrics?.reconciled(outcome, seconds);
    // The key is the object's storage key, which names its kind, namespace and name: what request lines name too.
    this.log.debug({ key, outcome, durationMs: Math.round(seconds * 1000) }, 'reconciled');
  }
}

/**
 * Passes creations, deletions, and updates that changed the spec (seen as
 * metadata.generation) or metadata a reconciler acts on: deletionTimestamp,
 * finalizers, annotations (Cluster API's paused), labels, ownerReferences (a
 * machine waits for its owner). Drops status-only writes, the reconciler's
 * own above all, which would otherwise trigger it again.
 */
export function generationOrMetadataChanged(event: WatchEvent): boolean {
  if (event.type !== 'MODIFIED' || event.prevValue === undefined) return true;
  return !jsonEqual(actionableMetadata(event.prevValue), actionableMetadata(event.value));
}

/** Metadata without the fields every write changes. */
function actionableMetadata(object: JsonObject): JsonObject {
  if (!isJsonObject(object.metadata)) return {};
  const { resourceVersion: _resourceVersion, managedFields: _managedFields, ...rest } = object.metadata;
  return rest;
}

/**
 * A failure the user or the cloud can act on (a terminal error: a flavor that does not exist, a
 * refused request; any answer of the cloud's, as `actionable` tells) is a warning in the cloud's
 * words, without a stack: the stack would point into our code, which did its job. Anything else is
 * the server's own fault and logged as an error with its stack.
 */
function logFailure(log: Logger, error: unknown, key: string | undefined, actionable: (error: Error) => boolean): void {
  if (error instanceof Error && (error instanceof TerminalError || actionable(error)))
    log.warn({ key, reason: error.name, error: error.message }, 'reconcile failed');
  else log.error({ key, err: error }, 'reconcile failed');
}
