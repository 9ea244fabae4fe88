/**
 * The fence over a watch cache: writes pass the fence first, and the cache's own reads (peek,
 * getConsistent, the cached revision) stay the cache's, not dropped for reads from the backend.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fencedStorage } from '../../../src/reconcile/runtime/fenced-storage.js';
import { NotLeaderError } from '../../../src/reconcile/runtime/leader.js';
import type { Storage } from '../../../src/storage/interface.js';
import { SqliteStorage } from '../../../src/storage/sqlite.js';
import { WatchCache } from '../../../src/storage/watch-cache.js';

const opened: Storage[] = [];

afterEach(async () => {
  for (const storage of opened.splice(0).reverse()) await storage.close();
});

describe('fenced storage', () => {
  it("keeps the watch cache's methods and fences every write", async () => {
    const backend = SqliteStorage.open(':memory:');
    const cache = new WatchCache(backend);
    opened.push(backend, cache);
    let leading = true;
    const fenced = fencedStorage(cache, () => {
      if (!leading) throw new NotLeaderError('lost');
    });
    const created = await fenced.create('/a', { n: 1 });
    expect(await fenced.reachCachedRevision?.(created.modRevision, 1000)).toBe(true);
    expect(fenced.cachedRevision?.()).toBe(created.modRevision);
    expect(fenced.peek?.('/a')?.value).toMatchObject({ n: 1 });
    expect((await fenced.getConsistent?.('/a'))?.value).toMatchObject({ n: 1 });
    leading = false;
    await expect(fenced.update('/a', { n: 2 }, created.modRevision)).rejects.toThrow(NotLeaderError);
    await expect(fenced.delete('/a')).rejects.toThrow(NotLeaderError);
    await expect(fenced.create('/b', {})).rejects.toThrow(NotLeaderError);
    expect((await fenced.get('/a'))?.value).toMatchObject({ n: 1 });
  });

  it('has no cache methods over a store without a cache', () => {
    const backend = SqliteStorage.open(':memory:');
    opened.push(backend);
    const fenced = fencedStorage(backend, () => undefined);
    expect([fenced.peek, fenced.cachedRevision, fenced.reachCachedRevision, fenced.getConsistent]).toEqual([undefined, undefined, undefined, undefined]);
  });
});
