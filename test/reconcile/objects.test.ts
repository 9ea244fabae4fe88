/**
 * How the reconciler lists its kinds: by labels, in one read. Reconcilers list a cluster's machines
 * and servers on most passes, so in a namespace of thousands of objects the cost of a list is paid
 * thousands of times.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KindClient, metaOf } from '../../src/reconcile/objects.js';
import type { Storage, WatchRequest } from '../../src/storage/interface.js';
import { SqliteStorage } from '../../src/storage/sqlite.js';
import { WatchCache } from '../../src/storage/watch-cache.js';
import { widgetKind } from '../../harness/widget-kind.js';

let cache: WatchCache | undefined;

afterEach(async () => {
  await cache?.close();
});

describe('KindClient.list', () => {
  it('selects by labels in one read from the watch cache, however many pages the namespace holds and whatever is written meanwhile', async () => {
    const storage = SqliteStorage.open(':memory:');
    const ranged: string[] = [];
    /** Set while the list is read: each read of the store's revision first lets another client's write land. */
    let writeBeforeRevisionRead: (() => Promise<unknown>) | undefined;
    const counting = new Proxy(storage, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const call = () => (value as (...a: unknown[]) => unknown).apply(target, args);
          if (property === 'list') ranged.push(String(args[0]));
          if (property === 'currentRevision' && writeBeforeRevisionRead) return writeBeforeRevisionRead().then(call);
          return call();
        };
      },
    }) as Storage;
    cache = new WatchCache(counting);
    const widgets = new KindClient(widgetKind, cache);
    let created = 0;
    const create = () => {
      const index = created++;
      return widgets.create('default', { metadata: { name: `w-${String(index).padStart(4, '0')}`, labels: { parity: index % 2 ? 'odd' : 'even' } }, spec: { color: 'green' } });
    };
    // Past two pages of 500.
    while (created < 1_100) await create();
    await cache.list('');
    ranged.length = 0;

    // Read in pages, the second page would find the cache past the first page's revision, and read the store.
    writeBeforeRevisionRead = create;
    const odd = await widgets.list('default', { parity: 'odd' });
    writeBeforeRevisionRead = undefined;

    expect(ranged).toEqual([]);
    const names = odd.map((object) => metaOf(object).name);
    expect(names).toEqual(Array.from({ length: created }, (_, index) => `w-${String(index).padStart(4, '0')}`).filter((_, index) => index % 2 === 1));
    expect(await widgets.list('default', { parity: 'none' })).toEqual([]);
    expect(await widgets.list('default')).toHaveLength(created);
  });

  it('answers asCached from the cache as it stands while the cache lags the store, reading nothing of the store; a consistent list reads the store', async () => {
    const storage = SqliteStorage.open(':memory:');
    const ranged: string[] = [];
    /** While set, the events of the store's watch wait here: the cache lags the store. */
    let held: (() => void)[] | undefined;
    const lagging = new Proxy(storage, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (property === 'list') ranged.push(String(args[0]));
          if (property === 'watch') {
            const request = args[0] as WatchRequest;
            return target.watch({ ...request, onEvent: (event) => (held ? held.push(() => request.onEvent(event)) : request.onEvent(event)) });
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as Storage;
    cache = new WatchCache(lagging, { freshnessWaitMs: 50 });
    const widgets = new KindClient(widgetKind, cache);
    const create = (name: string) => widgets.create('default', { metadata: { name, labels: { cluster: 'a' } }, spec: { color: 'green' } });
    await create('w-1');
    await cache.list('');
    ranged.length = 0;

    held = [];
    await create('w-2');
    const names = async (options: { asCached?: boolean }) => (await widgets.list('default', { cluster: 'a' }, options)).map((object) => metaOf(object).name);
    expect(await names({ asCached: true })).toEqual(['w-1']);
    expect(ranged).toEqual([]);
    expect(await names({})).toEqual(['w-1', 'w-2']);
    expect(ranged).toHaveLength(1);

    for (const deliver of held.splice(0)) deliver();
    held = undefined;
    expect(await names({ asCached: true })).toEqual(['w-1', 'w-2']);
    expect(ranged).toHaveLength(1);
  });
});
