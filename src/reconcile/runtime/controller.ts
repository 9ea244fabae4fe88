/**
 * The generic reconcile loop of one kind: storage list+watch feeds a work
 * queue, workers call the kind's reconcile function with object names. The
 * storage keys are the owner's to spell (`keys`): the controller lists and
 * watches under the kind's root and turns each key into the name it queues,
 * dedups, rate-limits and resyncs by.
 *
 * Level-triggered: reconcile gets only a name and reads the current object
 * itself (absent means deleted), so a missed or coalesced event costs nothing
 * but latency. Every created, changed and deleted object is enqueued (deleted
 * ones too, so state kept outside the object can be cleaned up without a
 * finalizer), subject to shouldEnqueue.
 *
 * Outcomes: a result with requeueAfterMs polls again without blocking a
 * worker; a thrown error retries with the queue's backoff; a TerminalError
 * (invalid configuration, unrecoverable state) is neither retried nor given a
 * new resync, so the object waits for an event that passes shouldEnqueue (or
 * the relist of a new term); success schedules the object's resync, on its
 * namespace's grid (resync-grid.ts): the objects of one namespace (for CAPO,
 * one workload cluster) resync together, so their resources can be read
 * together, and namespaces apart.
 *
 * Leadership: the loop runs only while the leader lock is held. Each term
 * lists afresh, watches from the list's revision and owns a new queue; when
 * the lock is lost the watch stops, queued work is dropped and workers finish
 * only what is in flight, before contending again. Backoff state survives
 * terms, so a flapping lease does not reset retry delays.
 *
 * Sharding (shards.ts): with `sharding`, a term runs while any shard is held.
 * Every event of the kind still arrives (the watch is the watch cache's, one
 * for the whole store), but an object's shard is known from the object itself
 * (its group), so an object of a shard this replica does not hold is never
 * queued, and the controller keeps nothing about it: its queue, backoff and
 * maps hold the objects of held shards only. Each is reconciled inside its
 * shard's context so that fencing checks that shard's lease. Taking a shard
 * lists the kind and enqueues the shard's objects; giving one up drops them.
 */
import type { MetricsRegistry } from '../../observability/metrics.js';
import { TooOldRevisionError, type JsonObject, type ObjectName, type Storage, type Watch, type WatchEvent } from '../../storage/interface.js';
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
  /** What the requeue waits for, for the debug line of the pass. */
  waitingFor?: readonly string[];
}

/** Reconciles the named object; throwing means retry with backoff. */
export type Reconcile = (name: ObjectName) => Promise<ReconcileResult>;

/** An error retrying cannot fix; the object waits for a change of its own. */
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
  /** cb runs when a held shard is let go or lost. */
  onReleased(cb: (shard: number) => void): void;
}

/**
 * Where the objects of the controller's kind are stored: the owner knows the layout (for our kinds
 * apiserver/registry/keys.ts's KindKeys, which is one), the runtime only asks.
 */
export interface ObjectKeys {
  /** The storage prefix of every object of the kind, ending in '/'. */
  readonly root: string;
  /** The object a key under root holds; undefined for a key that holds none. */
  parse(key: string): ObjectName | undefined;
}

export interface ControllerOptions {
  /** Names the controller in metrics and error reports. */
  name: string;
  storage: Storage;
  /** The storage layout of the kind: what to list and watch, and which object each key holds. */
  keys: ObjectKeys;
  reconcile: Reconcile;
  /** Objects reconciled concurrently. Default 10, as CAPO's controllers. */
  workers?: number;
  /** Resync period, on the object's namespace's grid after the last success; 0 turns resync off. Default 10 minutes. */
  resyncPeriodMs?: number;
  /** Default AlwaysLeader (one replica). The controller never releases the lock: its owner does. */
  leader?: LeaderLock;
  /** Reconcile only the objects of held shards, each in the shard of its group (`groupOf`). Default: every object (one leader). */
  sharding?: { shards: Sharding; groupOf: (value: JsonObject) => string };
  /** Which watch events enqueue their object, e.g. generationOrMetadataChanged. Default: all. */
  shouldEnqueue?: (event: WatchEvent) => boolean;
  /** Retry delays after errors, by object id (`namespace/name`). Default defaultRateLimiter(). */
  rateLimiter?: RateLimiter<string>;
  metrics?: MetricsRegistry;
  /** Receives reconcile errors (with their object) and list failures. Default: logged as an error with the controller and object. */
  onError?: (error: unknown, object?: ObjectName) => void;
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
  private readonly keys: ObjectKeys;
  private readonly reconcile: Reconcile;
  private readonly workers: number;
  private readonly resyncGrid: ResyncGrid | undefined;
  private readonly leader: LeaderLock;
  private readonly sharding: ControllerOptions['sharding'];
  /**
   * The shard of each object of a held shard by id, from the list and the watch (a deleted object's
   * from its last state, until reconciled): the objects this replica may queue.
   */
  private readonly shardOfId = new Map<string, number>();
  /** While a taken shard's objects are being listed, the ids the watch brought meanwhile: the list is older than their events. */
  private readonly takingShards = new Map<number, Set<string>>();
  private readonly shouldEnqueue: (event: WatchEvent) => boolean;
  private readonly rateLimiter: RateLimiter<string>;
  private readonly metrics: ReconcileMetrics | undefined;
  private readonly onError: (error: unknown, object?: ObjectName) => void;
  private readonly log: Logger;
  private readonly stopped = new AbortController();
  /**
   * Ids of the objects present as of the last list and the watch since (of held shards only, when
   * sharded); detects deletions missed between terms.
   */
  private known = new Set<string>();
  private term: AbortController | undefined;
  private queue: WorkQueue<string> | undefined;
  private running: Promise<void> | undefined;

  constructor(options: ControllerOptions) {
    this.name = options.name;
    this.storage = options.storage;
    this.keys = options.keys;
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
    this.onError = options.onError ?? ((error, object) => logFailure(this.log, error, object, actionable));
    // Without the slash, the prefix of machines would also watch machinesets.
    if (!this.keys.root.endsWith('/')) throw new Error(`controller ${this.name}: root must end with "/", got ${this.keys.root}`);
    if (!Number.isInteger(this.workers) || this.workers < 1) throw new Error(`controller ${this.name}: workers must be a positive integer`);
    const resyncPeriodMs = options.resyncPeriodMs ?? defaultResyncPeriodMs;
    if (!(resyncPeriodMs >= 0)) throw new Error(`controller ${this.name}: resyncPeriodMs must be >= 0`);
    this.resyncGrid = resyncPeriodMs > 0 ? new ResyncGrid(resyncPeriodMs) : undefined;
    this.leader.onLost(() => this.term?.abort());
    this.sharding?.shards.onAcquired((shard) => void this.takeShard(shard));
    this.sharding?.shards.onReleased((shard) => this.dropShard(shard));
  }

  /** Starts contending for leadership and reconciling while leading; stop() ends it. */
  start(): void {
    if (this.running) throw new Error(`controller ${this.name} was already started`);
    this.running = this.run();
  }

  /** Stops watching and taking objects, and resolves once in-flight reconciles have finished. */
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
   * Reconciles an object of the kind because something it depends on changed
   * (an owned object, a Secret, the owner Cluster), or `delayMs` from now (a
   * transition it waits on is expected to be over then). Dropped while not
   * leading: the next term lists every object anyway.
   */
  enqueue(name: ObjectName, delayMs = 0): void {
    const id = idOf(name);
    // Another shard's object, or one the watch has not brought yet (its event enqueues it).
    if (this.tracks(id)) this.queue?.addAfter(id, delayMs);
  }

  /** Enqueues every object of held shards and watches from the list's revision; undefined if the term ended first. */
  private async listAndWatch(queue: WorkQueue<string>, ended: AbortSignal, onWatchError: (error: Error) => void): Promise<Watch | undefined> {
    while (!ended.aborted) {
      try {
        const listed = new Map<string, number>();
        const revision = await this.listObjects((id, shard) => listed.set(id, shard));
        if (ended.aborted) return undefined;
        // Held now, after the last page: a shard taken while listing is listed again by takeShard, which this list may have beaten.
        const ids = new Set<string>();
        for (const [id, shard] of listed) {
          if (!this.holdsShard(shard)) continue;
          ids.add(id);
          if (this.sharding) this.shardOfId.set(id, shard);
        }
        // Deleted while nobody watched: reconcile them too, as a DELETED event would have.
        for (const id of this.known) if (!listed.has(id) && this.holdsShard(this.shardOfId.get(id))) queue.add(id);
        this.known = ids;
        const watch = this.storage.watch({
          prefix: this.keys.root,
          afterRevision: revision,
          onEvent: (event) => this.observe(queue, event),
          onError: onWatchError,
        });
        // Only now, so that a list the watch cannot follow costs no reconciles.
        for (const id of ids) queue.add(id);
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

  /** Visits every object of the kind with its shard (0 unsharded), as of the list's revision, read in pages; returns the revision. */
  private async listObjects(visit: (id: string, shard: number) => void): Promise<number> {
    let page = await this.storage.list(this.keys.root, { limit: listPageSize });
    const revision = page.revision;
    for (;;) {
      for (const entry of page.entries) {
        const id = this.idOfKey(entry.key);
        if (id !== undefined) visit(id, this.shardOfValue(entry.value));
      }
      if (!page.more) return revision;
      const startAfter = page.entries[page.entries.length - 1].key;
      page = await this.storage.list(this.keys.root, { revision, startAfter, limit: listPageSize });
    }
  }

  /**
   * A shard taken during a term: its objects are listed and enqueued (the term's own list covers
   * the shards held when it began). The list may be older than events the watch brought since the
   * shard was taken, which are tracked already: their ids are skipped.
   */
  private async takeShard(shard: number): Promise<void> {
    const queue = this.queue;
    if (!queue || !this.sharding) return;
    const broughtMeanwhile = new Set<string>();
    this.takingShards.set(shard, broughtMeanwhile);
    try {
      const taken: string[] = [];
      await this.listObjects((id, idShard) => idShard === shard && taken.push(id));
      if (this.queue !== queue || !this.holdsShard(shard)) return;
      for (const id of taken) {
        if (broughtMeanwhile.has(id) || this.shardOfId.has(id)) continue;
        this.known.add(id);
        this.shardOfId.set(id, shard);
        queue.add(id);
      }
    } catch (error) {
      // The next term's list, or each object's next event, brings them.
      this.onError(error);
    } finally {
      if (this.takingShards.get(shard) === broughtMeanwhile) this.takingShards.delete(shard);
    }
  }

  /** A shard given up: its objects leave the queue and the controller's maps. */
  private dropShard(shard: number): void {
    for (const [id, idShard] of this.shardOfId) if (idShard === shard) this.untrack(id);
  }

  private untrack(id: string): void {
    this.shardOfId.delete(id);
    this.known.delete(id);
    this.queue?.remove(id);
  }

  /** Whether the object may be queued here: unsharded, any; sharded, those of held shards the list or watch brought. */
  private tracks(id: string): boolean {
    return !this.sharding || this.shardOfId.has(id);
  }

  private shardOfValue(value: JsonObject): number {
    return this.sharding ? this.sharding.shards.shardOf(this.sharding.groupOf(value)) : 0;
  }

  /** Whether objects of `shard` are this replica's work (always, unsharded). */
  private holdsShard(shard: number | undefined): boolean {
    if (!this.sharding) return true;
    return shard !== undefined && this.sharding.shards.holds(shard);
  }

  private idOfKey(key: string): string | undefined {
    const name = this.keys.parse(key);
    return name && idOf(name);
  }

  private observe(queue: WorkQueue<string>, event: WatchEvent): void {
    const id = this.idOfKey(event.key);
    if (id === undefined) return;
    const shard = this.shardOfValue(event.value);
    if (!this.holdsShard(shard)) {
      // Another replica's object; or one that moved to another shard (its labels changed), which is dropped here.
      if (this.shardOfId.has(id)) this.untrack(id);
      return;
    }
    this.takingShards.get(shard)?.add(id);
    if (event.type === 'DELETED') this.known.delete(id);
    else this.known.add(id);
    if (this.sharding) this.shardOfId.set(id, shard);
    let enqueue = true;
    try {
      enqueue = this.shouldEnqueue(event);
    } catch (error) {
      this.onError(error, nameOfId(id));
    }
    if (enqueue) queue.add(id);
  }

  private async work(queue: WorkQueue<string>, ended: AbortSignal): Promise<void> {
    for (let id = await queue.get(); id !== undefined; id = await queue.get()) {
      // get() may have handed the object out just before the term ended.
      if (ended.aborted) {
        queue.done(id);
        return;
      }
      await this.process(queue, id);
    }
  }

  private async process(queue: WorkQueue<string>, id: string): Promise<void> {
    const startedAt = performance.now();
    let outcome: ReconcileOutcome;
    let waitingFor: readonly string[] | undefined;
    const shard = this.shardOfId.get(id);
    if (this.sharding && (shard === undefined || !this.sharding.shards.holds(shard))) {
      // Its shard was let go while a delay for it was pending: taking the shard again enqueues it.
      queue.forget(id);
      queue.done(id);
      return;
    }
    const name = nameOfId(id);
    try {
      const result = this.sharding ? await this.sharding.shards.within(shard!, () => this.reconcile(name)) : await this.reconcile(name);
      const { requeueAfterMs } = result;
      waitingFor = result.waitingFor;
      if (!this.known.has(id)) this.shardOfId.delete(id);
      queue.forget(id);
      if (requeueAfterMs !== undefined && requeueAfterMs > 0) {
        outcome = 'requeue';
        if (this.tracks(id)) queue.addAfter(id, requeueAfterMs);
      } else {
        outcome = 'success';
        if (this.resyncGrid && this.known.has(id)) queue.addAfter(id, this.resyncGrid.delay(name.namespace));
      }
    } catch (error) {
      if (error instanceof TerminalError) {
        outcome = 'terminal';
        queue.forget(id);
      } else {
        outcome = 'error';
        // Unless its shard was let go meanwhile.
        if (this.tracks(id)) queue.addRateLimited(id);
      }
      this.onError(error, name);
    }
    queue.done(id);
    const seconds = (performance.now() - startedAt) / 1000;
    this.metrics?.reconciled(outcome, seconds);
    // The controller's name names the kind; with the object's, the line names what request lines name too.
    this.log.debug({ object: id, outcome, durationMs: Math.round(seconds * 1000), waitingFor }, 'reconciled');
  }
}

/**
 * An object's id in the queue, the rate limiter and the controller's maps: `namespace/name`, or
 * the name alone for a cluster-scoped object (neither a namespace nor a name holds a '/').
 */
function idOf({ namespace, name }: ObjectName): string {
  return namespace === '' ? name : `${namespace}/${name}`;
}

function nameOfId(id: string): ObjectName {
  const slash = id.indexOf('/');
  return slash < 0 ? { namespace: '', name: id } : { namespace: id.slice(0, slash), name: id.slice(slash + 1) };
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
function logFailure(log: Logger, error: unknown, name: ObjectName | undefined, actionable: (error: Error) => boolean): void {
  const object = name && idOf(name);
  if (error instanceof Error && (error instanceof TerminalError || actionable(error)))
    log.warn({ object, reason: error.name, error: error.message }, 'reconcile failed');
  else log.error({ object, err: error }, 'reconcile failed');
}
