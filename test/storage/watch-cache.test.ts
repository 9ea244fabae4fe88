/**
 * The watch cache keeps the storage contract on both backends (the conformance suite, run through
 * it), and does what it is for: many watches and lists cost the backend one watch, lists are as
 * fresh as the store even when another replica wrote, and when its storage watch ends its own
 * watchers end with the same error and the cache loads again.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EtcdStorage } from '../../src/storage/etcd.js';
import { StorageError, TooOldRevisionError, type Storage, type WatchRequest } from '../../src/storage/interface.js';
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
 * A store that counts the lists and watches reaching it, and can end its watches as etcd does when
 * history is compacted under them.
 */
class CountingStore {
  lists = 0;
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
        if (property === 'watch')
          return (request: WatchRequest) => {
            this.watches.push(request);
            return target.watch(request);
          };
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
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

  it('ends its watches with the storage watch\'s error when that ends, then loads again and serves new watches', async () => {
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

const unavailable = etcdUnavailable();

describe.skipIf(unavailable !== undefined)(unavailable === undefined ? 'the watch cache over etcd' : `the watch cache over etcd (skipped: ${unavailable})`, () => {
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

  it('lists on one replica what another replica wrote just before, and streams it to that replica\'s watchers', async () => {
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
});
