/**
 * The watch cache keeps the storage contract on both backends (the conformance suite, run through
 * it), and does what it is for: many watches and lists cost the backend one watch, lists are as
 * fresh as the store even when another replica wrote, and when its storage watch ends its own
 * watchers end with the same error and the cache loads again.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EtcdStorage } from '../../src/storage/etcd.js';
import { StorageError, TooOldRevisionError, type Entry, type Storage, type WatchRequest } from '../../src/storage/interface.js';
import { SqliteStorage } from '../../src/storage/sqlite.js';
import { WatchCache, type WatchCacheOptions } from '../../src/storage/watch-cache.js';
import { etcdUnavailable, startEtcd, type RunningEtcd } from '../../harness/etcd.js';
import { EventRecorder, describeStorageConformance, object } from './conformance.js';

/** The store under each cache, for the conformance suite's compaction. */
const stores = new WeakMap<Storage, Storage>();

function cached(store: Storage, options: WatchCacheOptions = {}): WatchCache {
  const cache = new WatchCache(store, options);
  stores.set(cache, store);
  return cache;
}

function openSqlite(onError?: (error: unknown) => void): SqliteStorage {
  return SqliteStorage.open(':memory:', { historyRetention: { maxAgeMs: 0 }, compactionIntervalMs: 3_600_000, onError });
}

describeStorageConformance('SQLite behind the watch cache', {
  open: async ({ onError }) => cached(openSqlite(onError), { onError }),
  compactAll: async (storage) => {
    await (stores.get(storage) as SqliteStorage).compact();
  },
});

/**
 * A store that counts the lists, gets, revision reads and watches reaching it, and can end its
 * watches as etcd does when history is compacted under them.
 */
class CountingStore {
  lists = 0;
  gets = 0;
  revisionReads = 0;
  private held?: Promise<void>;
  private heldEvents?: (() => void)[];
  readonly watches: WatchRequest[] = [];
  readonly storage: Storage;

  constructor(store: Storage) {
    this.storage = new Proxy(store, {
      get: (target, property, receiver) => {
        if (property === 'list')
          return (...args: Parameters<Storage['list']>) => {
            this.lists++;
            return target.list(...args);
          };
        if (property === 'get')
          return (...args: Parameters<Storage['get']>) => {
            this.gets++;
            return target.get(...args);
          };
        if (property === 'currentRevision')
          return async () => {
            this.revisionReads++;
            // Read now, answered once released: a read sent before what happens meanwhile.
            const read = target.currentRevision();
            await this.held;
            return read;
          };
        if (property === 'watch')
          return (request: WatchRequest) => {
            this.watches.push(request);
            return target.watch({
              ...request,
              onEvent: (event) => (this.heldEvents ? this.heldEvents.push(() => request.onEvent(event)) : request.onEvent(event)),
            });
          };
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  /** Holds the answers of revision reads until the returned function is called. */
  holdRevisionReads(): () => void {
    let release!: () => void;
    this.held = new Promise((resolve) => {
      release = resolve;
    });
    return () => {
      this.held = undefined;
      release();
    };
  }

  /** Holds the storage watches' events until the returned function is called: a cache behind the store, as on etcd. */
  holdEvents(): () => void {
    this.heldEvents = [];
    return () => {
      const held = this.heldEvents ?? [];
      this.heldEvents = undefined;
      for (const deliver of held) deliver();
    };
  }

  /** Ends the latest storage watch with TooOldRevisionError. */
  compactUnderWatch(): void {
    this.watches.at(-1)!.onError!(new TooOldRevisionError(0, 1));
  }
}

describe('the watch cache over SQLite', () => {
  const opened: Storage[] = [];
  afterEach(async () => {
    for (const storage of opened.splice(0)) await storage.close();
  });

  async function open(options: WatchCacheOptions = {}): Promise<{ cache: WatchCache; counting: CountingStore }> {
    const counting = new CountingStore(openSqlite());
    const cache = cached(counting.storage, options);
    opened.push(cache);
    // Loaded once a list is served from memory.
    await cache.list('/');
    return { cache, counting };
  }

  it('serves a hundred watches and their lists with one storage watch and no storage list after loading', async () => {
    const { cache, counting } = await open();
    const listsAfterLoad = counting.lists;
    const base = await cache.currentRevision();
    const recorders = Array.from({ length: 100 }, (_, i) => new EventRecorder(cache, i % 2 === 0 ? '/even/' : '/', base));
    for (let i = 0; i < 10; i++) await cache.create(`/even/${i}`, object(`e${i}`));
    await Promise.all(recorders.map((recorder) => recorder.until(10)));
    const listed = await cache.list('/even/', { limit: 4 });
    expect(listed.entries.map((entry) => entry.key)).toEqual(['/even/0', '/even/1', '/even/2', '/even/3']);
    expect(listed.more).toBe(true);
    const rest = await cache.list('/even/', { revision: listed.revision, startAfter: '/even/3' });
    expect(rest.entries).toHaveLength(6);
    expect(counting.watches).toHaveLength(1);
    expect(counting.lists).toBe(listsAfterLoad);
  });

  it('answers a hundred concurrent consistent gets from memory with one shared revision read, each seeing the writes before it', async () => {
    const { cache, counting } = await open();
    const written: Entry[] = [];
    for (let i = 0; i < 10; i++) written.push(await cache.create(`/g/${i}`, object(`g${i}`)));
    counting.gets = 0;
    counting.revisionReads = 0;
    const keys = Array.from({ length: 100 }, (_, i) => (i % 11 === 10 ? '/g/absent' : `/g/${i % 11}`));
    const entries = await Promise.all(keys.map((key) => cache.getConsistent(key)));
    expect(entries.map((entry) => entry?.key ?? '/g/absent')).toEqual(keys);
    expect(entries.filter(Boolean).map((entry) => entry!.modRevision)).toEqual(
      keys.filter((key) => key !== '/g/absent').map((key) => written[Number(key.slice(3))]!.modRevision),
    );
    expect(counting.revisionReads).toBe(1);
    expect(counting.gets).toBe(0);
    expect(Object.isFrozen(entries[0]!.value)).toBe(true);

    // A get that begins after a write returns it.
    const updated = await cache.update('/g/3', object('g3', { v: 2 }), written[3]!.modRevision);
    expect(await cache.getConsistent('/g/3')).toMatchObject({ modRevision: updated.modRevision, value: { spec: { v: 2 } } });
    await cache.delete('/g/4');
    expect(await cache.getConsistent('/g/4')).toBeUndefined();
  });

  it('answers a list of any revision as it stands while behind the store, where a consistent one waits and then reads the store', async () => {
    const { cache, counting } = await open({ freshnessWaitMs: 50 });
    await cache.create('/any/a', object('a'));
    const release = counting.holdEvents();
    await cache.create('/any/b', object('b'));
    counting.lists = 0;
    counting.revisionReads = 0;
    const asItStands = await cache.list('/any/', { anyRevision: true });
    expect(asItStands.entries.map((entry) => entry.key)).toEqual(['/any/a']);
    expect({ lists: counting.lists, revisionReads: counting.revisionReads }).toEqual({ lists: 0, revisionReads: 0 });
    const consistent = await cache.list('/any/');
    expect(consistent.entries.map((entry) => entry.key)).toEqual(['/any/a', '/any/b']);
    expect(counting.lists).toBe(1);
    release();
    expect((await cache.list('/any/', { anyRevision: true })).entries.map((entry) => entry.key)).toEqual(['/any/a', '/any/b']);
  });

  it('does not hand a get a revision read that began before it', async () => {
    const { cache, counting } = await open();
    const before = await cache.create('/r/a', object('a', { v: 1 }));
    counting.revisionReads = 0;
    // The first get's revision read is sent; then a write lands, its event not yet in the cache, while that read's answer is held.
    const releaseReads = counting.holdRevisionReads();
    const first = cache.getConsistent('/r/a');
    await Promise.resolve();
    const releaseEvents = counting.holdEvents();
    const written = await cache.update('/r/a', object('a', { v: 2 }), before.modRevision);
    const second = cache.getConsistent('/r/a');
    releaseReads();
    // The first get may answer from the cache as it stands; the second must wait for the write's event.
    expect((await first)!.modRevision).toBe(before.modRevision);
    releaseEvents();
    expect(await second).toMatchObject({ modRevision: written.modRevision, value: { spec: { v: 2 } } });
    expect(counting.revisionReads).toBe(2);
  });

  it('filters a list in time slices, serving others between them, and answers the revision it began at while writes land', async () => {
    const { cache } = await open();
    for (let i = 0; i < 200; i++) await cache.create(`/slices/${String(i).padStart(3, '0')}`, object(`s${i}`));
    const began = await cache.currentRevision();
    let visited = 0;
    let visitedWhenOthersRan: number | undefined;
    let written: Promise<Entry> | undefined;
    // Each object costs 0.2 ms to match, 40 ms for the list: far past one slice.
    const slow = () => {
      visited++;
      for (const until = performance.now() + 0.2; performance.now() < until; );
      return true;
    };
    setImmediate(() => {
      visitedWhenOthersRan = visited;
      written = cache.update('/slices/199', object('changed'), began);
    });
    const listed = await cache.list('/slices/', { anyRevision: true, filter: slow });
    expect(visitedWhenOthersRan).toBeGreaterThan(0);
    expect(visitedWhenOthersRan).toBeLessThan(200);
    expect(listed.revision).toBe(began);
    expect(listed.entries).toHaveLength(200);
    expect(listed.entries[199]!.value.metadata).toMatchObject({ name: 's199' });
    expect((await written)!.modRevision).toBeGreaterThan(began);
  });

  it('hands out frozen values shared with its watchers', async () => {
    const { cache } = await open();
    const recorder = new EventRecorder(cache, '/', await cache.currentRevision());
    await cache.create('/a', object('a', { v: 1 }));
    const [event] = await recorder.until(1);
    const [entry] = (await cache.list('/')).entries;
    expect(entry!.value).toBe(event!.value);
    expect(Object.isFrozen(entry!.value.spec)).toBe(true);
  });

  it('sends a watch from before its event window to the store, which still has that history', async () => {
    const { cache, counting } = await open({ windowEvents: 2 });
    const base = await cache.currentRevision();
    for (let i = 0; i < 5; i++) await cache.create(`/w/${i}`, object(`w${i}`));
    const recorder = new EventRecorder(cache, '/w/', base);
    expect((await recorder.until(5)).map((event) => event.key)).toEqual(['/w/0', '/w/1', '/w/2', '/w/3', '/w/4']);
    expect(counting.watches).toHaveLength(2);
    // Within the window: from memory.
    const recent = new EventRecorder(cache, '/w/', base + 3);
    expect((await recent.until(2)).map((event) => event.key)).toEqual(['/w/3', '/w/4']);
    expect(counting.watches).toHaveLength(2);
  });

  it("ends its watches with the storage watch's error when that ends, then loads again and serves new watches", async () => {
    const { cache, counting } = await open();
    const recorder = new EventRecorder(cache, '/', await cache.currentRevision());
    await cache.create('/a', object('a'));
    await recorder.until(1);
    counting.compactUnderWatch();
    await recorder.until(Number.POSITIVE_INFINITY);
    expect(recorder.error).toBeInstanceOf(TooOldRevisionError);
    // The client's relist and watch, once the cache has loaded again.
    const listed = await cache.list('/');
    expect(listed.entries.map((entry) => entry.key)).toEqual(['/a']);
    const resumed = new EventRecorder(cache, '/', listed.revision);
    const b = await cache.create('/b', object('b'));
    expect((await resumed.until(1)).map((event) => event.revision)).toEqual([b.modRevision]);
    expect(counting.watches).toHaveLength(2);
  });

  it('refuses work once closed', async () => {
    const { cache } = await open();
    await cache.close();
    await expect(cache.list('/')).rejects.toBeInstanceOf(StorageError);
    expect(() => cache.watch({ prefix: '/', afterRevision: 0, onEvent: () => undefined })).toThrow(StorageError);
  });
});

describe('the watch cache loading a store of many objects', () => {
  const opened: Storage[] = [];
  afterEach(async () => {
    for (const storage of opened.splice(0)) await storage.close();
  });

  /** A store of 1,200 objects (three pieces of a load), whose lists `beforeList` may fail or race. */
  async function storeOfMany(
    beforeList: (call: number, store: SqliteStorage) => Promise<void>,
  ): Promise<{ store: SqliteStorage; listed: Parameters<Storage['list']>[] }> {
    const store = openSqlite();
    opened.push(store);
    for (let i = 0; i < 1200; i++) await store.create(`/many/${String(i).padStart(4, '0')}`, object(`m${i}`));
    const listed: Parameters<Storage['list']>[] = [];
    const proxy = new Proxy(store, {
      get: (target, property, receiver) =>
        property === 'list'
          ? async (...args: Parameters<Storage['list']>) => {
              listed.push(args);
              await beforeList(listed.length, target);
              return target.list(...args);
            }
          : Reflect.get(target, property, receiver),
    });
    return { store: proxy, listed };
  }

  async function loaded(store: Storage, onError: (error: unknown) => void): Promise<WatchCache> {
    const cache = new WatchCache(store, { onError });
    opened.push(cache);
    expect(await cache.reachCachedRevision(await store.currentRevision(), 20_000)).toBe(true);
    return cache;
  }

  it('reads again only the piece whose read failed, and says why', async () => {
    const { store, listed } = await storeOfMany(async (call) => {
      if (call === 2) throw new StorageError('etcd: 4 DEADLINE_EXCEEDED');
    });
    const errors: unknown[] = [];
    const cache = await loaded(store, (error) => errors.push(error));
    expect(listed.map(([, request]) => request?.startAfter)).toEqual([undefined, '/many/0499', '/many/0499', '/many/0999']);
    expect(new Set(listed.slice(1).map(([, request]) => request?.revision))).toEqual(new Set([await store.currentRevision()]));
    expect(String(errors)).toContain('reading again after 500 entries: etcd: 4 DEADLINE_EXCEEDED');
    expect((await cache.list('/many/', { anyRevision: true })).entries).toHaveLength(1200);
  });

  it('starts over at once, in one read, when compaction passes the revision it reads at, and holds the state after', async () => {
    const { store, listed } = await storeOfMany(async (call, backend) => {
      if (call !== 2) return;
      // Between two pieces: a write, a deletion, and history compacted past the revision the load reads at.
      const first = (await backend.get('/many/0000'))!;
      await backend.update(first.key, object('m0', { changed: true }), first.modRevision);
      await backend.delete('/many/1199');
      await backend.compact();
    });
    const cache = await loaded(store, () => undefined);
    // Two pieces, then the whole store in one read, which no compaction can pass in the middle.
    expect(listed.map(([, request]) => request?.limit)).toEqual([500, 500, undefined]);
    const { entries } = await cache.list('/many/', { anyRevision: true });
    expect(entries).toHaveLength(1199);
    expect(entries[0]!.value.spec).toEqual({ changed: true });
    expect(entries.at(-1)!.key).toBe('/many/1198');
  });
});

const unavailable = etcdUnavailable();

describe.skipIf(unavailable !== undefined)(
  unavailable === undefined ? 'the watch cache over etcd' : `the watch cache over etcd (skipped: ${unavailable})`,
  () => {
    let etcd: RunningEtcd;

    beforeAll(async () => {
      etcd = await startEtcd();
    }, 60_000);

    afterAll(async () => {
      await etcd?.stop();
    });

    describeStorageConformance('etcd behind the watch cache', {
      open: async ({ onError }) => cached(await EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 0, onError }), { onError }),
      compactAll: async (storage) => {
        const store = stores.get(storage) as EtcdStorage;
        await store.compact();
        await store.compact();
      },
    });

    it("lists on one replica what another replica wrote just before, and streams it to that replica's watchers", async () => {
      const prefix = `/replicas-${Date.now()}/`;
      const [a, b] = await Promise.all([0, 1].map(async () => cached(await EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 0 }))));
      try {
        await b.list(prefix);
        const recorder = new EventRecorder(b, prefix, await b.currentRevision());
        for (let i = 0; i < 20; i++) {
          const written = await a.create(`${prefix}${i}`, object(`r${i}`));
          const listed = await b.list(prefix);
          expect(listed.revision).toBeGreaterThanOrEqual(written.modRevision);
          expect(listed.entries).toHaveLength(i + 1);
        }
        expect(await recorder.until(20)).toHaveLength(20);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('finishes a load slower than the history compaction keeps, under writes, and then holds what etcd holds', async () => {
      const prefix = `/load-under-compaction-${Date.now()}/`;
      const key = (i: number) => `${prefix}${String(i).padStart(4, '0')}`;
      // Both replicas compact as a deployment does, only every second instead of every five minutes,
      // so history reaches back one to two seconds.
      const writer = await EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 1_000 });
      const backend = await EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 1_000 });
      // A loaded etcd: each piece of a paged load takes 700 ms, so a load of 3,000 objects in pieces of
      // 500 outlasts that history and its revision is compacted under it.
      const store = new Proxy(backend, {
        get: (target, property, receiver) =>
          property === 'list'
            ? async (...args: Parameters<Storage['list']>) => {
                if (args[1]?.limit !== undefined) await new Promise((resolve) => setTimeout(resolve, 700));
                return target.list(...args);
              }
            : Reflect.get(target, property, receiver),
      });
      const errors: unknown[] = [];
      let cache: WatchCache | undefined;
      let writing = true;
      try {
        const latest = new Map<number, Entry>();
        const inFlight = 32;
        for (let from = 0; from < 3_000; from += inFlight) {
          const made = await Promise.all(Array.from({ length: inFlight }, (_, j) => writer.create(key(from + j), object(`l${from + j}`, { v: 0 }))));
          for (const [j, entry] of made.entries()) latest.set(from + j, entry);
        }
        // Updates of objects picked by a seeded sequence, 8 at once, until the load is done.
        let seed = 45;
        const pick = () => {
          seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
          return seed % 3_000;
        };
        let updates = 0;
        const writers = Array.from({ length: 8 }, async () => {
          while (writing) {
            const i = pick();
            const current = latest.get(i)!;
            // Two writers that picked the same object: the later one loses the compare-and-swap and reads it again.
            const written = await writer.update(current.key, object(`l${i}`, { v: ++updates }), current.modRevision).catch(() => writer.get(current.key));
            latest.set(i, written!);
          }
        });
        cache = new WatchCache(store, { onError: (error) => errors.push(error) });
        expect(await cache.reachCachedRevision(await writer.currentRevision(), 60_000), String(errors)).toBe(true);
        expect(String(errors)).toContain('too old resource version');
        writing = false;
        await Promise.all(writers);
        const final = await writer.currentRevision();
        expect(await cache.reachCachedRevision(final, 10_000)).toBe(true);
        const fromCache = await cache.list(prefix, { anyRevision: true });
        const fromEtcd = await writer.list(prefix);
        expect(updates).toBeGreaterThan(0);
        expect(fromCache.entries.map(({ key: k, modRevision }) => [k, modRevision])).toEqual(
          fromEtcd.entries.map(({ key: k, modRevision }) => [k, modRevision]),
        );
      } finally {
        writing = false;
        await cache?.close();
        await Promise.all([writer.close(), backend.close()]);
      }
    }, 120_000);

    it('gets on one replica, from memory, what another replica wrote just before', async () => {
      const prefix = `/replica-gets-${Date.now()}/`;
      const [a, b] = await Promise.all([0, 1].map(async () => cached(await EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 0 }))));
      try {
        await b.list(prefix);
        let previous = await a.create(`${prefix}x`, object('x', { v: 0 }));
        for (let v = 1; v <= 20; v++) {
          const written = await a.update(`${prefix}x`, object('x', { v }), previous.modRevision);
          const [seen, missing] = await Promise.all([b.getConsistent(`${prefix}x`), b.getConsistent(`${prefix}absent`)]);
          expect(seen).toMatchObject({ modRevision: written.modRevision, value: { spec: { v } } });
          expect(missing).toBeUndefined();
          previous = written;
        }
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });
  },
);
