/**
 * A watch the storage ends on its own (etcd compacting past it) must reach
 * the client as 410 Expired, so informers relist instead of waiting forever.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiError } from '../../../src/apiserver/errors.js';
import { ResourceStore } from '../../../src/apiserver/store/resource-store.js';
import { startWatch } from '../../../src/apiserver/store/watch.js';
import { TooOldRevisionError, type Storage, type WatchRequest } from '../../../src/storage/interface.js';
import { SqliteStorage } from '../../../src/storage/sqlite.js';
import { WatchCache } from '../../../src/storage/watch-cache.js';
import { widgetKind } from '../../../harness/widget-kind.js';

let storage: SqliteStorage;

afterEach(async () => {
  await storage?.close();
});

describe('startWatch', () => {
  it('fails with 410 Expired when the storage ends the watch', async () => {
    storage = SqliteStorage.open(':memory:');
    let endWatch: WatchRequest['onError'];
    const ending = new Proxy(storage, {
      get(target, property) {
        if (property === 'watch') {
          return (request: WatchRequest) => {
            endWatch = request.onError;
            return target.watch(request);
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Storage;
    const store = new ResourceStore(widgetKind, ending);
    const failures: ApiError[] = [];
    const watch = await startWatch(
      store,
      'default',
      widgetKind.versions[0],
      { sendInitialEvents: false, allowWatchBookmarks: false },
      () => undefined,
      (error) => failures.push(error),
    );
    endWatch!(new TooOldRevisionError(3, 7));
    watch.stop();
    expect(failures.map((f) => f.toStatus())).toEqual([expect.objectContaining({ code: 410, reason: 'Expired', message: 'too old resource version: 3 (7)' })]);
  });

  it('opens a watch from the revision its watch cache reflects, or one it is about to reach, without asking the backend, and still answers 410 for a compacted one', async () => {
    storage = SqliteStorage.open(':memory:', { historyRetention: { maxAgeMs: 0 }, compactionIntervalMs: 3_600_000 });
    const asked: string[] = [];
    const counting = new Proxy(storage, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (property === 'currentRevision' || property === 'compactedRevision') asked.push(property);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as Storage;
    const cache = new WatchCache(counting);
    const store = new ResourceStore(widgetKind, cache);
    for (const name of ['a', 'b', 'c']) await cache.create(`/elsewhere/${name}`, { metadata: { name } });
    // A consistent list returns once the cache has caught up with the last write.
    const { revision } = await cache.list('');
    expect(cache.cachedRevision()).toBe(revision);
    const watchFrom = (resourceVersion: string) =>
      startWatch(
        store,
        'default',
        widgetKind.versions[0],
        { resourceVersion, sendInitialEvents: false, allowWatchBookmarks: false },
        () => undefined,
        () => undefined,
      );

    asked.length = 0;
    const watches = await Promise.all(Array.from({ length: 20 }, () => watchFrom(String(revision))));
    expect(asked).toEqual([]);
    for (const watch of watches) watch.stop();

    // A revision the cache has yet to reach: the watch waits for the cache to see it arrive, not for the backend.
    const waiting = watchFrom(String(revision + 1));
    await cache.create('/elsewhere/d', { metadata: { name: 'd' } });
    (await waiting).stop();
    expect(asked).toEqual([]);

    await storage.compact();
    const refused = await watchFrom('1').then(
      () => undefined,
      (error: ApiError) => error.toStatus(),
    );
    expect(refused).toMatchObject({ code: 410, reason: 'Expired' });
    expect(asked).toContain('compactedRevision');
  });
});
