/**
 * A work queue with client-go's guarantees, which are what make a reconcile
 * loop correct with several workers:
 * - a key waits in the queue at most once, however often it is added, so a
 *   burst of events costs one reconcile;
 * - a key is handed to one worker at a time: added while being processed, it
 *   is queued again only when that worker calls done, so the next reconcile
 *   sees the newest state and never races the previous one;
 * - delayed and rate-limited adds wait outside the queue and then go through
 *   add, inheriting both rules.
 *
 * One rule is this queue's own: a key handed out drops its pending delayed
 * add. Every pass of our controllers ends by asking for its next one (a
 * requeue at the moment its wait should be over, a resync, a retry; none
 * after a terminal error, which waits for a change), so a delay asked for
 * before the pass began is superseded by it. Kept, it would
 * fire during the pass and queue another right after it; and when a pass is
 * as long as the delay it asks for, each pass's delay would fire during the
 * next, keeping passes back to back (a load balancer read every second
 * instead of every two).
 *
 * Shutting down drops queued and delayed keys (another leader or the next
 * start relists everything) and ends every get() with undefined;
 * shutDownWithDrain also waits for the keys being processed to be done.
 */
import { defaultRateLimiter, type RateLimiter } from './backoff.js';

/** Hooks for instrumentation; see metrics.ts for the Prometheus binding. */
export interface WorkQueueMetrics {
  /** Keys waiting to be handed out, after every change. */
  depth(length: number): void;
  /** A key entered the queue (adds absorbed by de-duplication do not count). */
  added(): void;
  /** A key was scheduled for retry after a failure. */
  retried(): void;
}

export interface WorkQueueOptions<K> {
  /** Delays of addRateLimited. Default: defaultRateLimiter(). */
  rateLimiter?: RateLimiter<K>;
  metrics?: WorkQueueMetrics;
}

interface Delayed<K> {
  key: K;
  readyAt: number;
  /** Breaks ties so keys due at the same time keep the order they were added in. */
  sequence: number;
}

export class WorkQueue<K extends string> {
  /** Insertion-ordered, so it is the FIFO and the de-duplication set at once. */
  private readonly queued = new Set<K>();
  private readonly processing = new Set<K>();
  /** Keys added while being processed, queued again on done. */
  private readonly readdOnDone = new Set<K>();
  private readonly getters: ((key: K | undefined) => void)[] = [];
  private readonly delayed = new DelayedKeys<K>();
  private readonly rateLimiter: RateLimiter<K>;
  private readonly metrics: WorkQueueMetrics | undefined;
  private delayTimer: NodeJS.Timeout | undefined;
  private delayTimerAt = Number.POSITIVE_INFINITY;
  private shuttingDown = false;
  private readonly drainWaiters: (() => void)[] = [];

  constructor(options: WorkQueueOptions<K> = {}) {
    this.rateLimiter = options.rateLimiter ?? defaultRateLimiter<K>();
    this.metrics = options.metrics;
  }

  add(key: K): void {
    if (this.shuttingDown || this.queued.has(key) || this.readdOnDone.has(key)) return;
    this.metrics?.added();
    if (this.processing.has(key)) this.readdOnDone.add(key);
    else this.enqueue(key);
  }

  /** Adds key once delayMs has passed; of several pending delays of one key the earliest wins. */
  addAfter(key: K, delayMs: number): void {
    if (this.shuttingDown) return;
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    this.delayed.put(key, performance.now() + delayMs);
    this.armDelayTimer();
  }

  /** Adds key after the rate limiter's delay for it; each call counts as a failure of key. */
  addRateLimited(key: K): void {
    if (this.shuttingDown) return;
    this.metrics?.retried();
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /**
   * Drops key if it waits, now or delayed, and its backoff: it is no longer this queue's work (its
   * shard went to another replica). A key being processed is not queued again on done.
   */
  remove(key: K): void {
    this.readdOnDone.delete(key);
    if (this.delayed.remove(key)) this.armDelayTimer();
    this.rateLimiter.forget(key);
    if (this.queued.delete(key)) this.metrics?.depth(this.queued.size);
  }

  /** Resets key's backoff; call it when key was processed successfully. */
  forget(key: K): void {
    this.rateLimiter.forget(key);
  }

  /** The next key, marked as being processed until done(key); undefined once shut down. */
  get(): Promise<K | undefined> {
    const [key] = this.queued;
    if (key !== undefined) {
      this.queued.delete(key);
      this.handOut(key);
      this.metrics?.depth(this.queued.size);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(key: K): void {
    if (!this.processing.delete(key)) return;
    if (this.readdOnDone.delete(key)) this.enqueue(key);
    if (this.shuttingDown && this.processing.size === 0) {
      for (const resolve of this.drainWaiters.splice(0)) resolve();
    }
  }

  /** What the admin API shows: keys ready now, being processed, and waiting for a later time. */
  stats(): { queued: number; processing: number; scheduled: number } {
    return { queued: this.queued.size, processing: this.processing.size, scheduled: this.delayed.size };
  }

  /** Keys waiting to be handed out (neither those being processed nor delayed ones). */
  len(): number {
    return this.queued.size;
  }

  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    clearTimeout(this.delayTimer);
    this.delayed.clear();
    this.queued.clear();
    this.readdOnDone.clear();
    this.metrics?.depth(0);
    for (const getter of this.getters.splice(0)) getter(undefined);
  }

  /** Shuts down, then resolves once every key being processed is done. */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private enqueue(key: K): void {
    const getter = this.getters.shift();
    if (getter) {
      this.handOut(key);
      getter(key);
      return;
    }
    this.queued.add(key);
    this.metrics?.depth(this.queued.size);
  }

  private handOut(key: K): void {
    this.processing.add(key);
    if (this.delayed.remove(key)) this.armDelayTimer();
  }

  /** One timer for the earliest delayed key, moved only when that changes. */
  private armDelayTimer(): void {
    const next = this.delayed.nextReadyAt();
    if (next === this.delayTimerAt) return;
    clearTimeout(this.delayTimer);
    this.delayTimerAt = next;
    if (next === Number.POSITIVE_INFINITY) return;
    this.delayTimer = setTimeout(
      () => {
        this.delayTimerAt = Number.POSITIVE_INFINITY;
        for (const key of this.delayed.takeReady(performance.now())) this.add(key);
        this.armDelayTimer();
      },
      Math.max(0, next - performance.now()),
    );
  }
}

/**
 * Delayed keys in a binary min-heap by readyAt. A key delayed again to an
 * earlier time gets a second heap entry; the superseded one is skipped when
 * it surfaces, which keeps every operation logarithmic.
 */
class DelayedKeys<K> {
  private readonly heap: Delayed<K>[] = [];
  private readonly readyAtByKey = new Map<K, number>();
  private sequence = 0;

  get size(): number {
    return this.readyAtByKey.size;
  }

  put(key: K, readyAt: number): void {
    const current = this.readyAtByKey.get(key);
    if (current !== undefined && current <= readyAt) return;
    this.readyAtByKey.set(key, readyAt);
    this.heap.push({ key, readyAt, sequence: this.sequence++ });
    this.siftUp(this.heap.length - 1);
  }

  /** Whether key was pending; its heap entry is skipped when it surfaces. */
  remove(key: K): boolean {
    return this.readyAtByKey.delete(key);
  }

  nextReadyAt(): number {
    this.dropSuperseded();
    return this.heap[0]?.readyAt ?? Number.POSITIVE_INFINITY;
  }

  /** Removes and returns the keys due at now, earliest first. */
  takeReady(now: number): K[] {
    const ready: K[] = [];
    for (this.dropSuperseded(); this.heap.length > 0 && this.heap[0].readyAt <= now; this.dropSuperseded()) {
      const { key } = this.pop();
      this.readyAtByKey.delete(key);
      ready.push(key);
    }
    return ready;
  }

  clear(): void {
    this.heap.length = 0;
    this.readyAtByKey.clear();
  }

  private dropSuperseded(): void {
    while (this.heap.length > 0 && this.readyAtByKey.get(this.heap[0].key) !== this.heap[0].readyAt) this.pop();
  }

  private pop(): Delayed<K> {
    const top = this.heap[0];
    const last = this.heap.pop()!;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  private before(a: Delayed<K>, b: Delayed<K>): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.sequence < b.sequence);
  }

  private siftUp(index: number): void {
    const heap = this.heap;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.before(heap[index], heap[parent])) return;
      [heap[index], heap[parent]] = [heap[parent], heap[index]];
      index = parent;
    }
  }

  private siftDown(index: number): void {
    const heap = this.heap;
    for (;;) {
      let smallest = index;
      for (const child of [2 * index + 1, 2 * index + 2]) {
        if (child < heap.length && this.before(heap[child], heap[smallest])) smallest = child;
      }
      if (smallest === index) return;
      [heap[index], heap[smallest]] = [heap[smallest], heap[index]];
      index = smallest;
    }
  }
}
