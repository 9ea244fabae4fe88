/**
 * How the reconciler lists its kinds: by labels, in one read. Reconcilers list a cluster's machines
 * and servers on most passes, so in a namespace of thousands of objects the cost of a list is paid
 * thousands of times.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KindClient, metaOf } from '../../src/reconcile/objects.js';
import { ResourceStore } from '../../src/apiserver/store/resource-store.js';
import type { Storage, WatchEvent, WatchRequest } from '../../src/storage/interface.js';
import { SqliteStorage } from '../../src/storage/sqlite.js';
import { WatchCache } from '../../src/storage/watch-cache.js';
import { widgetKind } from '../../harness/widget-kind.js';

let cache: WatchCache | undefined;

afterEach(async () => {
  await cache?.close();
});

/**
 * An in-memory store beneath the cache that records the prefixes it is ranged over. `around` sees
 * every call of a Storage method and makes it, with the arguments it chooses, through `call`.
 */
function recordingStore(around: (property: string | symbol, args: unknown[], call: (args: unknown[]) => unknown) => unknown): {
  store: Storage;
  ranged: string[];
} {
  const ranged: string[] = [];
  const store = new Proxy(SqliteStorage.open(':memory:'), {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (property === 'list') ranged.push(String(args[0]));
        return around(property, args, (made) => (value as (...a: unknown[]) => unknown).apply(target, made));
      };
    },
  }) as Storage;
  return { store, ranged };
}

describe('KindClient.list', () => {
  it('selects by labels in one read from the watch cache, however many pages the namespace holds and whatever is written meanwhile', async () => {
    /** Set while the list is read: each read of the store's revision first lets another client's write land. */
    let writeBeforeRevisionRead: (() => Promise<unknown>) | undefined;
    const { store, ranged } = recordingStore((property, args, call) =>
      property === 'currentRevision' && writeBeforeRevisionRead ? writeBeforeRevisionRead().then(() => call(args)) : call(args),
    );
    cache = new WatchCache(store);
    const widgets = new KindClient(new ResourceStore(widgetKind, cache));
    let created = 0;
    const create = () => {
      const index = created++;
      return widgets.create('default', {
        metadata: { name: `w-${String(index).padStart(4, '0')}`, labels: { parity: index % 2 ? 'odd' : 'even' } },
        spec: { color: 'green' },
      });
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
    /** While set, the events of the store's watch wait here: the cache lags the store. */
    let held: (() => void)[] | undefined;
    const { store, ranged } = recordingStore((property, args, call) => {
      if (property !== 'watch') return call(args);
      const request = args[0] as WatchRequest;
      return call([{ ...request, onEvent: (event: WatchEvent) => (held ? held.push(() => request.onEvent(event)) : request.onEvent(event)) }]);
    });
    cache = new WatchCache(store, { freshnessWaitMs: 50 });
    const widgets = new KindClient(new ResourceStore(widgetKind, cache));
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
