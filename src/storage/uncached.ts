/**
 * The cache methods of a store that keeps no watch cache of its own: the backends, and a store whose
 * entries are computed from another's. Each answer sends the caller to the store itself. A store that
 * wraps a cached one passes them through instead (test/storage/cache-methods.test.ts checks every
 * store the app builds).
 */
import type { Entry, Storage, cacheMethods } from './interface.js';

export abstract class UncachedStorage implements Pick<Storage, (typeof cacheMethods)[number]> {
  abstract get(key: string): Promise<Entry | undefined>;

  peek(_key: string): Entry | undefined {
    return undefined;
  }

  cachedRevision(): number | undefined {
    return undefined;
  }

  reachCachedRevision(_revision: number, _timeoutMs: number): Promise<boolean> {
    return Promise.resolve(false);
  }

  /** A store without a cache reads as of now: a get is already consistent. */
  getConsistent(key: string): Promise<Entry | undefined> {
    return this.get(key);
  }
}
