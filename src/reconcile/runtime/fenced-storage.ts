/**
 * The reconciler's view of storage when several replicas share it: reads and watches pass
 * through, and every write first passes the fence (see leader.ts), so a replica that lost the
 * leader lease, even one paused while it lost it, writes nothing more.
 */
import type { Storage } from '../../storage/interface.js';

export function fencedStorage(storage: Storage, fence: () => void): Storage {
  return {
    currentRevision: () => storage.currentRevision(),
    compactedRevision: () => storage.compactedRevision(),
    get: (key) => storage.get(key),
    list: (prefix, request) => storage.list(prefix, request),
    watch: (request) => storage.watch(request),
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
  };
}
