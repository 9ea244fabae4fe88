/**
 * A store layered over the watch cache reaches it through each of the storage interface's cache
 * methods (`cacheMethods`). A layer that answered one as a store without a cache does would send its
 * readers to the backend with nothing to show for it; every layer the app and its tests put over a
 * cache is checked here, and so is a layer that drops each method in turn.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openStackNodeResource } from '../../src/inventory/kinds/openstacknode.js';
import { ComputedStorage } from '../../src/apiserver/store/computed-storage.js';
import { cacheMethods, type Storage } from '../../src/storage/interface.js';
import { SqliteStorage } from '../../src/storage/sqlite.js';
import { UncachedStorage } from '../../src/storage/uncached.js';
import { WatchCache } from '../../src/storage/watch-cache.js';
import { CountingStorage } from '../../harness/inventory-server.js';
import { object } from './conformance.js';

type CacheMethod = (typeof cacheMethods)[number];

const key = '/registry/widgets/default/a';
const closing: Storage[] = [];
afterEach(async () => {
  await Promise.all(closing.splice(0).map((storage) => storage.close()));
});

/** A cache over SQLite holding one object, and a count of the backend's gets. */
async function loadedCache(): Promise<{ cache: WatchCache; backendGets: () => number }> {
  let gets = 0;
  const backend = SqliteStorage.open(':memory:');
  const counted = new Proxy(backend, {
    get: (target, property, receiver) =>
      property === 'get'
        ? (...args: Parameters<Storage['get']>) => {
            gets++;
            return target.get(...args);
          }
        : Reflect.get(target, property, receiver),
  });
  const cache = new WatchCache(counted);
  closing.push(cache, backend);
  const { modRevision } = await backend.create(key, object('a'));
  expect(await cache.reachCachedRevision(modRevision, 10_000)).toBe(true);
  return { cache, backendGets: () => gets };
}

/** The cache methods a layer answers without its cache, each read through it as a reader would. */
async function methodsMissingTheCache(layer: Storage, cache: WatchCache, backendGets: () => number): Promise<CacheMethod[]> {
  const missing: CacheMethod[] = [];
  if (layer.peek(key)?.modRevision !== cache.peek(key)?.modRevision) missing.push('peek');
  if (layer.cachedRevision() !== cache.cachedRevision()) missing.push('cachedRevision');
  if (!(await layer.reachCachedRevision(cache.cachedRevision() ?? 0, 0))) missing.push('reachCachedRevision');
  const gets = backendGets();
  const entry = await layer.getConsistent(key);
  if (!entry || backendGets() !== gets) missing.push('getConsistent');
  return missing;
}

/** `layer` with one cache method answered as a store without a cache answers it. */
function dropping(layer: Storage, method: CacheMethod): Storage {
  const uncached = UncachedStorage.prototype[method] as (...args: unknown[]) => unknown;
  return new Proxy(layer, {
    get: (target, property, receiver) => (property === method ? uncached.bind(target) : Reflect.get(target, property, receiver)),
  });
}

const layers: Record<string, (cache: Storage) => Storage> = {
  'the watch cache itself': (cache) => cache,
  "the inventory tests' counting store": (cache) => new CountingStorage(cache),
};

describe('the cache methods through every layer over the watch cache', () => {
  it.each(Object.entries(layers))('%s reaches the cache through each of them', async (_name, layerOver) => {
    const { cache, backendGets } = await loadedCache();
    expect(await methodsMissingTheCache(layerOver(cache), cache, backendGets)).toEqual([]);
  });

  it.each(cacheMethods)('a layer that drops %s is caught', async (method) => {
    const { cache, backendGets } = await loadedCache();
    // Dropping reachCachedRevision also sends getConsistent, which waits through it, to the backend.
    expect(await methodsMissingTheCache(dropping(cache, method), cache, backendGets)).toContain(method);
  });

  it("a computed kind's store waits on its inputs' cache, which serves its reads", async () => {
    const { cache } = await loadedCache();
    const nodes = new ComputedStorage(openStackNodeResource, cache);
    const revision = cache.cachedRevision() ?? 0;
    expect(await nodes.reachCachedRevision(revision, 0)).toBe(true);
    expect(await dropping(nodes, 'reachCachedRevision').reachCachedRevision(revision, 0)).toBe(false);
  });
});
