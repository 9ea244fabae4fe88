/**
 * The watch cache (kube-apiserver's cacher): one storage watch feeds an in-memory copy of the store
 * and a window of its recent events, and every watch, every current list and every GET of this
 * server is served from them. A thousand `kubectl get -w`, the computed kinds, the inventory and the
 * reconcilers then cost the backend one watch instead of one each, and a list of 10,000 objects is a
 * walk over sorted keys instead of a range read and 10,000 JSON parses.
 *
 * One watch covers the whole store, where kube opens one per resource. Every write of this server
 * lands in that range (on etcd each write also stamps the store's last-write key, in the same
 * revision), so the cache knows exactly when it has caught up with a revision: a consistent list
 * reads the store's current revision and waits until the cache reaches it (kube asks etcd for a
 * progress notification for the same purpose, which the etcd3 package does not expose). Keys are
 * bucketed by nothing: one sorted array serves every prefix, so a namespace's list is a sub-range.
 * Keys are also kept by label: a list selecting a label's value (a cluster's machines among ten
 * thousand) walks the keys carrying it instead of its whole range.
 *
 * A consistent get (`getConsistent`, what a GET of the API is) is served the same way as a consistent
 * list: the store's current revision is read, shared by the gets and lists that arrive meanwhile, and
 * the answer comes from the copy once it has reached that revision.
 *
 * What goes past the cache, to the store itself: plain gets and writes (they must see the latest state
 * and compare against it, and may change what they read; a write may start from the cache's copy,
 * `peek`, and its compare-and-swap tells whether that copy was current), lists pinned at a revision
 * other than the cache's (pages of a list that started earlier), watches from before the event
 * window, and everything while the cache is loading or relisting. A storage watch that ends
 * (compacted past, say) is replaced by a fresh list and watch; the watches served from the old copy
 * end with the same error, so their clients relist.
 *
 * Values handed out (list entries, consistent gets, event values) are deep-frozen and shared between
 * callers.
 */
import { performance } from 'node:perf_hooks';
import { fallbackLogger } from '../observability/log.js';
import {
  FutureRevisionError,
  StorageError,
  TooOldRevisionError,
  type Entry,
  type JsonObject,
  type ListRequest,
  type ListResult,
  type Storage,
  type Watch,
  type WatchEvent,
  type WatchRequest,
} from './interface.js';
import { RevisionWaiters } from './revision-waiters.js';
import { visitInSlices } from './time-slices.js';
import { freezeShared } from './values.js';

export interface WatchCacheOptions {
  /** Recent events kept for watches resuming from a revision: at most this many (default 10,000)… */
  windowEvents?: number;
  /** …and none older than this (default 75 s, kube's eventFreshDuration). */
  windowMs?: number;
  /** How long a list waits for the cache to reach the store's revision before reading the store (default 3 s). */
  freshnessWaitMs?: number;
  /** Receives errors no caller can be told about (a throwing watch callback). Default: logged. */
  onError?: (error: unknown) => void;
}

/** A watch served from the cache. */
interface Subscriber {
  prefix: string;
  afterRevision: number;
  onEvent: (event: WatchEvent) => void;
  onError?: (error: StorageError) => void;
  /** The revision through which this watch has been given every event. */
  delivered: number;
  active: boolean;
}

/** One load of the cache: a list and the storage watch that follows it. */
interface Copy {
  entries: Map<string, Entry>;
  /** `entries`' keys in order. */
  keys: string[];
  /** The keys whose objects carry each label, by `labelIndexKey`. */
  keysByLabel: Map<string, Set<string>>;
  /** Events after `windowStart`, in revision order, from `head` on. */
  events: WatchEvent[];
  eventTimes: number[];
  head: number;
  /** Every event after this revision is in `events`. */
  windowStart: number;
  /** The revision the copy reflects: the list's, then each event's. */
  revision: number;
  subscribers: Set<Subscriber>;
  watch?: Watch;
}

const reloadDelayMs = 1000;
/**
 * Entries per read while loading. The whole store is read as pieces at one revision, so a read that
 * fails (a deadline missed on a loaded machine, a member restarting) costs that piece again, not the
 * pieces before it: a load of tens of thousands of objects whose every read may fail still finishes.
 */
const loadPieceEntries = 500;

export class WatchCache implements Storage {
  private readonly windowEvents: number;
  private readonly windowMs: number;
  private readonly freshnessWaitMs: number;
  private readonly onError: (error: unknown) => void;
  private copy?: Copy;
  private readonly waiters = new RevisionWaiters();
  private reload?: NodeJS.Timeout;
  /** Ages the window out when no event comes to do it: the last writes to a large object are megabytes each. */
  private readonly windowAging: NodeJS.Timeout;
  private closed = false;
  /** The revision read that callers arriving now will share; it starts once the one under way settles. */
  private nextRevisionRead?: Promise<number>;
  private revisionReadSettled: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Storage,
    options: WatchCacheOptions = {},
  ) {
    this.windowEvents = options.windowEvents ?? 10_000;
    this.windowMs = options.windowMs ?? 75_000;
    this.freshnessWaitMs = options.freshnessWaitMs ?? 3000;
    this.onError = options.onError ?? ((error) => fallbackLogger.error({ component: 'storage', err: error }, 'watch cache error'));
    this.windowAging = setInterval(() => this.copy && this.dropOutOfWindow(this.copy), Math.min(this.windowMs, 10_000));
    this.windowAging.unref();
    void this.load();
  }

  currentRevision(): Promise<number> {
    return this.revisionSinceNow();
  }

  compactedRevision(): Promise<number> {
    return this.store.compactedRevision();
  }

  get(key: string): Promise<Entry | undefined> {
    return this.store.get(key);
  }

  peek(key: string): Entry | undefined {
    return this.copy?.entries.get(key);
  }

  cachedRevision(): number | undefined {
    return this.copy?.revision;
  }

  async reachCachedRevision(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.copy && this.copy.revision >= revision) return true;
    // A release (reload, close) wakes the wait too: the copy then tells.
    return (await this.waiters.wait(revision, timeoutMs)) && this.copy !== undefined && this.copy.revision >= revision;
  }

  async getConsistent(key: string): Promise<Entry | undefined> {
    if (this.closed) throw new StorageError('storage is closed');
    if (!this.copy) return this.store.get(key);
    const current = await this.revisionSinceNow();
    if (!(await this.reachCachedRevision(current, this.freshnessWaitMs)) || !this.copy) return this.store.get(key);
    return this.copy.entries.get(key);
  }

  create(key: string, value: JsonObject): Promise<Entry> {
    return this.store.create(key, value);
  }

  update(key: string, value: JsonObject, expectedModRevision: number): Promise<Entry> {
    return this.store.update(key, value, expectedModRevision);
  }

  delete(key: string, expectedModRevision?: number): Promise<Entry> {
    return this.store.delete(key, expectedModRevision);
  }

  check(): Promise<void> {
    return this.store.check();
  }

  async list(prefix: string, request: ListRequest = {}): Promise<ListResult> {
    if (this.closed) throw new StorageError('storage is closed');
    if (!this.copy) return this.store.list(prefix, request);
    if (request.revision === undefined && !request.anyRevision) {
      // Consistent: as of at least every write acknowledged before this call.
      const current = await this.revisionSinceNow();
      if (!(await this.reachCachedRevision(current, this.freshnessWaitMs))) return this.store.list(prefix, request);
    }
    const copy = this.copy;
    if (!copy || (request.revision !== undefined && request.revision !== copy.revision)) return this.store.list(prefix, request);
    return readRange(copy, prefix, request);
  }

  watch(request: WatchRequest): Watch {
    if (this.closed) throw new StorageError('storage is closed');
    const subscriber: Subscriber = { ...request, delivered: request.afterRevision, active: true };
    let direct: Watch | undefined;
    const end = (error: StorageError) => {
      if (!subscriber.active) return;
      subscriber.active = false;
      subscriber.onError?.(error);
    };
    const start = async () => {
      const copy = this.copy;
      if (!copy || request.afterRevision < copy.windowStart) {
        direct = this.store.watch(request);
        if (!subscriber.active) direct.stop();
        return;
      }
      // Only a watch resuming from the past can fall behind compaction; only one from ahead of the copy can be in the future.
      if (request.afterRevision < copy.revision) {
        const compacted = await this.store.compactedRevision();
        if (request.afterRevision < compacted) return end(new TooOldRevisionError(request.afterRevision, compacted));
      } else if (request.afterRevision > copy.revision) {
        const current = await this.store.currentRevision();
        if (request.afterRevision > current) return end(new FutureRevisionError(request.afterRevision, current));
      }
      if (!subscriber.active) return;
      if (this.copy !== copy) return start();
      this.subscribe(copy, subscriber);
    };
    start().catch((error: unknown) => end(error instanceof StorageError ? error : new StorageError(String(error), { cause: error })));
    return {
      stop: () => {
        subscriber.active = false;
        this.copy?.subscribers.delete(subscriber);
        direct?.stop();
      },
      progress: async () => (direct ? direct.progress() : subscriber.delivered),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reload);
    clearInterval(this.windowAging);
    this.copy?.watch?.stop();
    if (this.copy) for (const subscriber of this.copy.subscribers) subscriber.active = false;
    this.copy = undefined;
    this.waiters.releaseAll();
    await this.store.close();
  }

  /**
   * Lists the whole store and watches from there; retried until it works or the cache closes. Only a
   * list whose revision was compacted meanwhile starts over, at once (it needs the current state) and
   * in one read, as kube-apiserver's reflector falls back to an unpaged list when its pages expire: a
   * load slower than the history compaction keeps would otherwise start over for ever.
   */
  private async load(inOneRead = false): Promise<void> {
    try {
      const listed = await this.listWholeStore(inOneRead);
      if (this.closed) return;
      const copy: Copy = {
        entries: new Map(listed.entries.map((entry) => [entry.key, freezeShared(entry)])),
        keys: listed.entries.map((entry) => entry.key),
        keysByLabel: new Map(),
        events: [],
        eventTimes: [],
        head: 0,
        windowStart: listed.revision,
        revision: listed.revision,
        subscribers: new Set(),
      };
      copy.watch = this.store.watch({
        prefix: '',
        afterRevision: listed.revision,
        onEvent: (event) => this.apply(copy, event),
        onError: (error) => this.invalidate(copy, error),
      });
      for (const entry of listed.entries) indexLabels(copy.keysByLabel, entry.key, entry.value);
      this.copy = copy;
      this.waiters.reached(copy.revision);
    } catch (error) {
      if (this.closed) return;
      this.onError(new StorageError(`watch cache: loading again: ${error instanceof Error ? error.message : String(error)}`));
      const compacted = error instanceof TooOldRevisionError;
      this.reload = setTimeout(() => void this.load(compacted), compacted ? 0 : reloadDelayMs);
    }
  }

  /** The whole store at one revision, read in pieces (or in one read); a read that fails is made again after a pause. */
  private async listWholeStore(inOneRead: boolean): Promise<{ entries: Entry[]; revision: number }> {
    const entries: Entry[] = [];
    let revision: number | undefined;
    for (;;) {
      let piece: ListResult;
      try {
        piece = await this.store.list('', inOneRead ? {} : { revision, startAfter: entries.at(-1)?.key, limit: loadPieceEntries });
      } catch (error) {
        if (error instanceof TooOldRevisionError || this.closed) throw error;
        this.onError(new StorageError(`watch cache: reading again after ${entries.length} entries: ${error instanceof Error ? error.message : String(error)}`));
        await new Promise((resolve) => setTimeout(resolve, reloadDelayMs));
        continue;
      }
      revision = piece.revision;
      entries.push(...piece.entries);
      if (!piece.more) return { entries, revision };
    }
  }

  /** The storage watch ended: watches served from this copy end too (their clients relist), and the cache loads again. */
  private invalidate(copy: Copy, error: StorageError): void {
    if (this.copy !== copy) return;
    this.copy = undefined;
    for (const subscriber of copy.subscribers) {
      if (!subscriber.active) continue;
      subscriber.active = false;
      subscriber.onError?.(error);
    }
    if (!this.closed) void this.load();
  }

  private apply(copy: Copy, event: WatchEvent): void {
    if (event.revision <= copy.revision) return;
    const index = lowerBound(copy.keys, event.key);
    const present = copy.keys[index] === event.key;
    const previous = copy.entries.get(event.key);
    if (previous) unindexLabels(copy.keysByLabel, event.key, previous.value);
    if (event.type === 'DELETED') {
      if (present) copy.keys.splice(index, 1);
      copy.entries.delete(event.key);
    } else {
      if (!present) copy.keys.splice(index, 0, event.key);
      const createRevision = event.type === 'ADDED' ? event.revision : (previous?.createRevision ?? event.revision);
      copy.entries.set(event.key, { key: event.key, value: event.value, createRevision, modRevision: event.revision });
      indexLabels(copy.keysByLabel, event.key, event.value);
    }
    this.remember(copy, event);
    copy.revision = event.revision;
    for (const subscriber of copy.subscribers) this.deliver(subscriber, event);
    if (this.copy === copy) this.waiters.reached(copy.revision);
  }

  /** Keeps the event in the window, dropping what the window no longer holds. */
  private remember(copy: Copy, event: WatchEvent): void {
    copy.events.push(event);
    copy.eventTimes.push(performance.now());
    this.dropOutOfWindow(copy);
  }

  /** Drops the events the window no longer holds, and lets go of them once they are half of the array. */
  private dropOutOfWindow(copy: Copy): void {
    const now = performance.now();
    const outOfWindow = () => copy.events.length - copy.head > this.windowEvents || now - copy.eventTimes[copy.head]! > this.windowMs;
    while (copy.head < copy.events.length && outOfWindow()) {
      copy.windowStart = copy.events[copy.head]!.revision;
      copy.head++;
    }
    if (copy.head * 2 > copy.events.length) {
      copy.events = copy.events.slice(copy.head);
      copy.eventTimes = copy.eventTimes.slice(copy.head);
      copy.head = 0;
    }
  }

  /** Replays the window after the subscriber's revision, then streams live events to it. */
  private subscribe(copy: Copy, subscriber: Subscriber): void {
    const first = partitionPoint(copy.head, copy.events.length, (index) => copy.events[index]!.revision <= subscriber.afterRevision);
    for (let index = first; index < copy.events.length && subscriber.active; index++) this.deliver(subscriber, copy.events[index]!);
    if (subscriber.active) {
      subscriber.delivered = Math.max(subscriber.delivered, copy.revision);
      copy.subscribers.add(subscriber);
    }
  }

  private deliver(subscriber: Subscriber, event: WatchEvent): void {
    if (!subscriber.active || event.revision <= subscriber.delivered) return;
    subscriber.delivered = event.revision;
    if (!event.key.startsWith(subscriber.prefix)) return;
    try {
      subscriber.onEvent(event);
    } catch (error) {
      this.onError(error);
    }
  }

  /**
   * The store's current revision, read after this call began. Callers share reads: one that arrives
   * while a read is under way (it may have been sent before the caller came) waits for the next,
   * which all callers arriving meanwhile share. A burst of consistent gets and lists then costs the
   * backend one or two revision reads instead of one each.
   */
  private revisionSinceNow(): Promise<number> {
    this.nextRevisionRead ??= this.revisionReadSettled.then(() => {
      this.nextRevisionRead = undefined;
      const read = this.store.currentRevision();
      this.revisionReadSettled = read.then(
        () => undefined,
        () => undefined,
      );
      return read;
    });
    return this.nextRevisionRead;
  }
}

/**
 * A list of `prefix` served from the copy, with the storage contract's paging and filtering. The
 * range's entries are taken at once, at the copy's revision (an event replaces an entry, never
 * changes it), and the filter runs over them in time slices, so that a selector over many objects
 * lets other requests through while events move the copy on.
 */
async function readRange(copy: Copy, prefix: string, request: ListRequest): Promise<ListResult> {
  const { startAfter, limit, filter } = request;
  const revision = copy.revision;
  const from = startAfter !== undefined && startAfter >= prefix ? lowerBound(copy.keys, `${startAfter}\0`) : lowerBound(copy.keys, prefix);
  const to = partitionPoint(from, copy.keys.length, (index) => copy.keys[index]!.startsWith(prefix));
  const selected = keysCarrying(copy, from, to, request.requiredLabels);
  const count = selected ? selected.length : to - from;
  const entryAt = (index: number) => copy.entries.get(selected ? selected[index]! : copy.keys[from + index]!)!;
  if (!filter) {
    const taken = limit ? Math.min(limit, count) : count;
    return { entries: Array.from({ length: taken }, (_, index) => entryAt(index)), revision, more: taken < count };
  }
  const entries: Entry[] = [];
  let more = false;
  await visitInSlices(
    Array.from({ length: count }, (_, index) => entryAt(index)),
    (entry) => {
      if (!filter(entry.value)) return true;
      more = Boolean(limit) && entries.length === limit;
      if (!more) entries.push(entry);
      return !more;
    },
  );
  return { entries, revision, more };
}

/**
 * The keys of [from, to) that carry every required label, in order, when the fewest keys carrying
 * one of them are fewer than the range holds (sorted, they cost less than the walk); undefined when
 * the whole range is to be walked.
 */
function keysCarrying(copy: Copy, from: number, to: number, requiredLabels: ListRequest['requiredLabels'] = []): string[] | undefined {
  if (requiredLabels.length === 0 || from === to) return undefined;
  let fewest: ReadonlySet<string> | undefined;
  for (const [name, value] of requiredLabels) {
    const carrying = copy.keysByLabel.get(labelIndexKey(name, value));
    if (!carrying) return [];
    if (!fewest || carrying.size < fewest.size) fewest = carrying;
  }
  if (!fewest || fewest.size >= to - from) return undefined;
  const [first, last] = [copy.keys[from]!, copy.keys[to - 1]!];
  return [...fewest].filter((key) => key >= first && key <= last).sort();
}

/** Label names and values hold no NUL (validation refuses it), so a name and value pair keys one label. */
const labelIndexKey = (name: string, value: string) => `${name}\0${value}`;

/** The index keys of the labels an object carries. */
function labelIndexKeysOf(value: JsonObject): string[] {
  const labels = (value.metadata as { labels?: unknown } | undefined)?.labels;
  if (labels === null || typeof labels !== 'object') return [];
  return Object.entries(labels).flatMap(([name, label]) => (typeof label === 'string' ? [labelIndexKey(name, label)] : []));
}

function indexLabels(keysByLabel: Map<string, Set<string>>, key: string, value: JsonObject): void {
  for (const indexKey of labelIndexKeysOf(value)) {
    const keys = keysByLabel.get(indexKey);
    if (keys) keys.add(key);
    else keysByLabel.set(indexKey, new Set([key]));
  }
}

function unindexLabels(keysByLabel: Map<string, Set<string>>, key: string, value: JsonObject): void {
  for (const indexKey of labelIndexKeysOf(value)) {
    const keys = keysByLabel.get(indexKey);
    keys?.delete(key);
    if (keys?.size === 0) keysByLabel.delete(indexKey);
  }
}

/** The first index whose key is not below `key`. */
function lowerBound(keys: string[], key: string): number {
  return partitionPoint(0, keys.length, (index) => keys[index]! < key);
}

/** The first index in [low, high) where `before` stops holding (it holds for a prefix of the range). */
function partitionPoint(low: number, high: number, before: (index: number) => boolean): number {
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (before(middle)) low = middle + 1;
    else high = middle;
  }
  return low;
}
