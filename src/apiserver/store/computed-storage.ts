/**
 * A read-only Storage whose entries are computed from stored objects of
 * other kinds. ResourceStore and the watch machinery run on it unchanged, so
 * a computed kind gets the semantics of a stored one: selectors, paging and
 * continue tokens, resourceVersion rules, watch resumption, 410 Gone and
 * bookmarks.
 *
 * Reads compute from one snapshot of the inputs (one paged list per input
 * kind, all at one revision). A watch loads the inputs as of its start
 * revision, then applies every input event to its own copy and recomputes
 * only the objects the event affects, so each computed event reflects
 * exactly the inputs at the event's revision, in revision order. A computed
 * event's resourceVersion is that revision, and resuming a watch from it
 * replays the input events after it.
 */
import {
  StorageError,
  type Entry,
  type JsonObject,
  type ListRequest,
  type ListResult,
  type Storage,
  type Watch,
  type WatchEvent,
  type WatchRequest,
} from '../../storage/interface.js';
import type { ComputedInputs, ComputedSource, KindDefinition } from '../registry/kind.js';
import { UncachedStorage } from '../../storage/uncached.js';
import { withResourceVersion } from '../../storage/values.js';
import { ensureMetadata } from './object.js';
import { keysOf, type KindKeys } from '../registry/keys.js';

/** Entries per storage read when loading inputs: large, so that reads stay constant for any realistic cluster. */
const inputPageSize = 5000;

export class ComputedStorage extends UncachedStorage implements Storage {
  private readonly source: ComputedSource;
  /** The computed kind's own key layout. */
  private readonly keys: KindKeys;

  constructor(
    private readonly definition: KindDefinition,
    private readonly storage: Storage,
  ) {
    super();
    if (!definition.computed) throw new Error(`${definition.kind} is not a computed kind`);
    this.source = definition.computed;
    this.keys = keysOf(definition);
  }

  currentRevision(): Promise<number> {
    return this.storage.currentRevision();
  }

  compactedRevision(): Promise<number> {
    return this.storage.compactedRevision();
  }

  /**
   * A computed kind's revisions are its inputs' store's: a watch of one waits on that store's cache. It
   * keeps no entries of its own to peek at, and its reads are computed from that store's lists, which
   * the cache serves.
   */
  override reachCachedRevision(revision: number, timeoutMs: number): Promise<boolean> {
    return this.storage.reachCachedRevision(revision, timeoutMs);
  }

  async get(key: string): Promise<Entry | undefined> {
    const { namespace, name } = this.parseKey(key);
    const inputs = await readInputs(this.storage, this.source.inputs, namespace);
    const object = this.source.computeOne(inputs, namespace, name);
    return object && this.entryOf(object);
  }

  async list(prefix: string, request: ListRequest = {}): Promise<ListResult> {
    const namespace = this.namespaceOf(prefix);
    const inputs = await readInputs(this.storage, this.source.inputs, namespace, request.revision);
    const entries = this.source
      .computeAll(inputs)
      .map((object) => this.entryOf(object))
      .filter((entry) => entry.key.startsWith(prefix) && (request.startAfter === undefined || entry.key > request.startAfter))
      .filter((entry) => !request.filter || request.filter(entry.value))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const limited = request.limit ? entries.slice(0, request.limit) : entries;
    return { entries: limited, revision: inputs.revision, more: limited.length < entries.length };
  }

  watch(request: WatchRequest): Watch {
    const namespace = this.namespaceOf(request.prefix);
    const prefixes = this.source.inputs.map((kind) => keysOf(kind).prefix(namespace));
    const state = prefixes.map(() => new Map<string, JsonObject>());
    const computed = new Map<string, JsonObject>();
    // Input events that arrive while the starting inputs load wait here, in order.
    let waiting: WatchEvent[] | undefined = [];
    let active = true;

    const stop = () => {
      active = false;
      underlying.stop();
    };
    const fail = (error: unknown) => {
      if (!active) return;
      stop();
      request.onError?.(error instanceof StorageError ? error : new StorageError(error instanceof Error ? error.message : String(error)));
    };
    const snapshot = (revision: number): ComputedInputs => ({ revision, objects: state.map((objects) => [...objects.values()]) });

    const apply = (event: WatchEvent) => {
      const input = prefixes.findIndex((prefix) => event.key.startsWith(prefix));
      const previous = state[input].get(event.key);
      if (event.type === 'DELETED') state[input].delete(event.key);
      else state[input].set(event.key, event.value);
      const inputs = snapshot(event.revision);
      const affected = [
        ...(previous ? this.source.affectedBy(inputs, previous) : []),
        ...(event.type === 'DELETED' ? [] : this.source.affectedBy(inputs, event.value)),
      ];
      // An object reached through both the old and the new input state changes once.
      const seen = new Set<string>();
      for (const { namespace: objectNamespace, name } of affected) {
        const key = this.keys.key(objectNamespace, name);
        if (seen.has(key) || !key.startsWith(request.prefix)) continue;
        seen.add(key);
        const before = computed.get(key);
        const after = this.source.computeOne(inputs, objectNamespace, name);
        if (after) {
          const value = withResourceVersion(after, event.revision);
          computed.set(key, value);
          request.onEvent({ type: before ? 'MODIFIED' : 'ADDED', key, revision: event.revision, value, prevValue: before });
        } else if (before) {
          computed.delete(key);
          request.onEvent({ type: 'DELETED', key, revision: event.revision, value: withResourceVersion(before, event.revision), prevValue: before });
        }
      }
    };

    const underlying = this.storage.watch({
      prefix: commonPrefix(prefixes),
      afterRevision: request.afterRevision,
      onEvent: (event) => {
        if (!active || !prefixes.some((prefix) => event.key.startsWith(prefix))) return;
        if (waiting) waiting.push(event);
        else {
          try {
            apply(event);
          } catch (error) {
            fail(error);
          }
        }
      },
      onError: fail,
    });

    readInputEntries(this.storage, this.source.inputs, namespace, request.afterRevision)
      .then(({ revision, entries }) => {
        if (!active) return;
        entries.forEach((kindEntries, i) => {
          for (const entry of kindEntries) state[i].set(entry.key, entry.value);
        });
        for (const object of this.source.computeAll(snapshot(revision))) {
          const { namespace: objectNamespace, name } = ensureMetadata(object);
          computed.set(this.keys.key(objectNamespace, name!), object);
        }
        const queued = waiting!;
        waiting = undefined;
        for (const event of queued) if (active) apply(event);
      })
      .catch(fail);

    // Events held back until the inputs are read have not been delivered yet.
    return { stop, progress: async () => (waiting ? request.afterRevision : underlying.progress()) };
  }

  async create(): Promise<Entry> {
    throw this.readOnly();
  }

  async update(): Promise<Entry> {
    throw this.readOnly();
  }

  async delete(): Promise<Entry> {
    throw this.readOnly();
  }

  check(): Promise<void> {
    return this.storage.check();
  }

  /** The underlying storage belongs to the caller, who closes it. */
  async close(): Promise<void> {}

  private readOnly(): StorageError {
    return new StorageError(`${this.definition.kind} objects are computed from other objects and cannot be written`);
  }

  private entryOf(object: JsonObject): Entry {
    const meta = ensureMetadata(object);
    const revision = Number(meta.resourceVersion);
    if (!meta.name || !meta.namespace || !Number.isSafeInteger(revision) || revision <= 0) {
      throw new StorageError(`a computed ${this.definition.kind} needs a namespace, a name and a resourceVersion`);
    }
    return { key: this.keys.key(meta.namespace, meta.name), value: object, createRevision: revision, modRevision: revision };
  }

  /** The namespace a key prefix of the computed kind is scoped to; undefined for all namespaces. */
  private namespaceOf(prefix: string): string | undefined {
    const base = this.keys.root;
    if (prefix === base) return undefined;
    if (!prefix.startsWith(base) || !prefix.endsWith('/')) throw new StorageError(`${prefix} is not a prefix of ${this.definition.kind} objects`);
    return prefix.slice(base.length, -1);
  }

  private parseKey(key: string): { namespace: string; name: string } {
    const parsed = this.keys.parse(key);
    if (!parsed || parsed.name.includes('/')) throw new StorageError(`${key} is not a key of a ${this.definition.kind} object`);
    return parsed;
  }
}

/**
 * The stored objects of `kinds` in a namespace (every namespace when
 * undefined), all as of one revision: the given one, else the latest
 * committed. One paged list per kind, whatever the number of objects.
 */
export async function readInputs(storage: Storage, kinds: KindDefinition[], namespace: string | undefined, revision?: number): Promise<ComputedInputs> {
  const read = await readInputEntries(storage, kinds, namespace, revision);
  return { revision: read.revision, objects: read.entries.map((entries) => entries.map((entry) => entry.value)) };
}

async function readInputEntries(
  storage: Storage,
  kinds: KindDefinition[],
  namespace: string | undefined,
  revision?: number,
): Promise<{ revision: number; entries: Entry[][] }> {
  // Pinned to a committed revision up front so that every page of every kind reads the same state.
  const pinned = revision ?? (await storage.currentRevision());
  const entries = await Promise.all(
    kinds.map(async (kind) => {
      const prefix = keysOf(kind).prefix(namespace);
      const all: Entry[] = [];
      let startAfter: string | undefined;
      for (;;) {
        const page = await storage.list(prefix, { revision: pinned, startAfter, limit: inputPageSize });
        all.push(...page.entries);
        if (!page.more || page.entries.length === 0) return all;
        startAfter = page.entries[page.entries.length - 1].key;
      }
    }),
  );
  return { revision: pinned, entries };
}

function commonPrefix(prefixes: string[]): string {
  let common = prefixes[0] ?? '';
  for (const prefix of prefixes.slice(1)) {
    let i = 0;
    while (i < common.length && i < prefix.length && common[i] === prefix[i]) i++;
    common = common.slice(0, i);
  }
  return common;
}
