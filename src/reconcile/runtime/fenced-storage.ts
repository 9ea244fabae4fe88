/**
 * The reconciler's view of storage when several replicas share it: reads and watches pass
 * through, and every write first passes the fence (see leader.ts), so a replica that lost the
 * leader lease, even one paused while it lost it, writes nothing more.
 *
 * Every method of the contract is named here, the optional ones (the watch cache's) too, each
 * present when the wrapped storage has it: one left out would silently turn the reconciler's reads
 * from the cache into reads from the backend, so leaving one out fails to compile (`satisfies`).
 */
import type { Storage } from '../../storage/interface.js';

export function fencedStorage(storage: Storage, fence: () => void): Storage {
  return {
    currentRevision: () => storage.currentRevision(),
    compactedRevision: () => storage.compactedRevision(),
    get: (key) => storage.get(key),
    list: (prefix, request) => storage.list(prefix, request),
    watch: (request) => storage.watch(request),
    peek: storage.peek?.bind(storage),
    cachedRevision: storage.cachedRevision?.bind(storage),
    reachCachedRevision: storage.reachCachedRevision?.bind(storage),
    getConsistent: storage.getConsistent?.bind(storage),
    check: () => storage.check(),
    close: () => storage.close(),
    create: async (key, value) => {
      fence();
      return storage.create(key, value);
    },
    update: async (key, value, expectedModRevision) => {
      fence();
      return storage.update(key, value, expectedModRevision);
    },
    delete: async (key, expectedModRevision) => {
      fence();
      return storage.delete(key, expectedModRevision);
    },
  } satisfies { [K in keyof Required<Storage>]: Storage[K] };
}
