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
    const watch = await startWatch(store, ending, 'default', widgetKind.versions[0], { sendInitialEvents: false, allowWatchBookmarks: false }, () => undefined, (error) => failures.push(error));
    endWatch!(new TooOldRevisionError(3, 7));
    watch.stop();
    expect(failures.map((f) => f.toStatus())).toEqual([expect.objectContaining({ code: 410, reason: 'Expired', message: 'too old resource version: 3 (7)' })]);
  });
});
