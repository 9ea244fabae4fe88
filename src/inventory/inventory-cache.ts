/**
 * An informer for the inventory's input kinds: their stored objects kept in
 * memory, loaded with one list per kind and then fed by a storage watch from
 * that list's revision, so a snapshot after a write costs one revision read
 * instead of relisting every object.
 *
 * The watch covers the whole keyspace, not only the input kinds: every
 * revision then reaches the cache as an event, so "the cache reflects
 * revision R" is known exactly, also on a backend whose events arrive after
 * its writes are acknowledged. A watch that ends (history compacted past it)
 * is replaced by a fresh list and watch.
 */
import type { KindDefinition } from '../apiserver/registry/kind.js';
import { keysOf, type KindKeys } from '../apiserver/registry/keys.js';
import { readInputs } from '../apiserver/store/computed-storage.js';
import { StorageError, TooOldRevisionError, type JsonObject, type Storage, type Watch, type WatchEvent } from '../storage/interface.js';
import { RevisionWaiters } from '../storage/revision-waiters.js';
import type { InventorySnapshot } from './model.js';

/** Lists in a row that may lose the race against compaction before the cache gives up with its error. */
const loadAttempts = 3;

export class InventoryCache {
  /** Per input kind, its objects by storage key. */
  private readonly objects: Map<string, JsonObject>[];
  /** Per input kind, where its objects live: the cache reads storage directly, as an informer's list and watch. */
  private readonly keys: KindKeys[];
  private readonly prefixes: string[];
  /** The revision `objects` reflect: the list's, then each watched event's. */
  private position = 0;
  /** Counts changes to `objects`, so sorted lists and snapshots are rebuilt only after one. */
  private generation = 0;
  private sorted?: { generation: number; lists: JsonObject[][] };
  /** The last snapshot built per namespace ('' for all). */
  private readonly built = new Map<string, InventorySnapshot>();
  private loaded?: Promise<void>;
  private watch?: Watch;
  private readonly waiters = new RevisionWaiters();
  private closed = false;

  constructor(
    private readonly storage: Storage,
    private readonly kinds: KindDefinition[],
  ) {
    this.keys = kinds.map(keysOf);
    this.prefixes = this.keys.map((keys) => keys.root);
    this.objects = kinds.map(() => new Map());
    // Loaded now so the first query does not pay for the list; a failure is retried by the first query.
    this.sync().catch(() => undefined);
  }

  /**
   * The objects as of the storage's current revision (or later): never older
   * than a write acknowledged before the call. Snapshots are shared: read-only.
   */
  async snapshot(namespace: string | undefined): Promise<InventorySnapshot> {
    const revision = await this.storage.currentRevision();
    for (;;) {
      this.assertOpen();
      await this.sync();
      if (this.position >= revision) return this.build(namespace);
      await this.waiters.wait(revision);
    }
  }

  /** Stops the watch; snapshots asked for afterwards fail. */
  close(): void {
    this.closed = true;
    this.watch?.stop();
    this.watch = undefined;
    this.waiters.releaseAll();
  }

  private sync(): Promise<void> {
    this.loaded ??= this.load().catch((error: unknown) => {
      this.loaded = undefined;
      throw error;
    });
    return this.loaded;
  }

  private async load(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const inputs = await readInputs(this.storage, this.kinds, undefined);
      this.assertOpen();
      this.objects.forEach((objects, i) => {
        objects.clear();
        for (const object of inputs.objects[i]!) objects.set(this.keyOf(i, object), object);
      });
      this.position = inputs.revision;
      this.generation++;
      try {
        // Events after the list replay (synchronously on SQLite) before live ones, so none is missed.
        this.watch = this.storage.watch({ prefix: '', afterRevision: inputs.revision, onEvent: (event) => this.apply(event), onError: () => this.restart() });
        return;
      } catch (error) {
        if (!(error instanceof TooOldRevisionError) || attempt === loadAttempts) throw error;
      }
    }
  }

  private apply(event: WatchEvent): void {
    if (this.closed) return;
    const kind = this.prefixes.findIndex((prefix) => event.key.startsWith(prefix));
    if (kind >= 0) {
      if (event.type === 'DELETED') this.objects[kind]!.delete(event.key);
      else this.objects[kind]!.set(event.key, event.value);
      this.generation++;
    }
    this.position = event.revision;
    this.waiters.reached(this.position);
  }

  /** The watch ended (compaction): list again, and let waiting snapshots wait on the new load. */
  private restart(): void {
    this.watch = undefined;
    this.loaded = undefined;
    if (this.closed) return;
    this.sync().catch(() => undefined);
    this.waiters.releaseAll();
  }

  private build(namespace: string | undefined): InventorySnapshot {
    const selection = namespace ?? '';
    const previous = this.built.get(selection);
    if (previous?.revision === this.position) return previous;
    const lists = this.sortedLists();
    const [clusters = [], machines = [], servers = []] =
      namespace === undefined ? lists : lists.map((objects) => objects.filter((object) => (object.metadata as { namespace?: string }).namespace === namespace));
    const snapshot = { revision: this.position, clusters, machines, servers };
    this.built.set(selection, snapshot);
    return snapshot;
  }

  /** Each kind's objects in key order, as a list returns them. */
  private sortedLists(): JsonObject[][] {
    if (this.sorted?.generation !== this.generation) {
      const lists = this.objects.map((objects) => [...objects.keys()].sort().map((key) => objects.get(key)!));
      this.sorted = { generation: this.generation, lists };
    }
    return this.sorted.lists;
  }

  private keyOf(kind: number, object: JsonObject): string {
    const meta = object.metadata as { namespace: string; name: string };
    return this.keys[kind]!.key(meta.namespace, meta.name);
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageError('the inventory cache is closed');
  }
}
