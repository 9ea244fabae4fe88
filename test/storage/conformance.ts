/**
 * The storage contract (src/storage/interface.ts), one suite for every backend: each backend's test
 * file calls `describeStorageConformance` with a way to open a fresh store. Nothing here assumes
 * a backend of its own: revisions are read relative to the store's current one (an etcd is shared
 * between tests and replicas), keys live under a prefix of each test's own, and watch events are
 * awaited as they arrive (an etcd watch delivers after the write is acknowledged).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  FutureRevisionError,
  KeyExistsError,
  KeyNotFoundError,
  RevisionConflictError,
  StorageError,
  TooOldRevisionError,
  type JsonObject,
  type Storage,
  type Watch,
  type WatchEvent,
} from '../../src/storage/interface.js';

export interface StorageBackend {
  /** A store over the backend's data (fresh, or the same data for a second replica of it). */
  open(options: { onError?: (error: unknown) => void }): Promise<Storage>;
  /** Compacts the store's history through at least its current revision. */
  compactAll(storage: Storage): Promise<void>;
}

export function object(name: string, spec: JsonObject = {}): JsonObject {
  return { metadata: { name }, spec };
}

export function resourceVersionOf(value: JsonObject): unknown {
  return (value.metadata as JsonObject).resourceVersion;
}

/** A watch of `prefix` after `afterRevision` (thrown at once if storage refuses it): its events as they arrive, its error, and a way to await them. */
export class EventRecorder {
  readonly events: WatchEvent[] = [];
  error: StorageError | undefined;
  readonly watch: Watch;
  private waiters: { count: number; resolve: () => void }[] = [];

  constructor(storage: Storage, prefix: string, afterRevision: number) {
    this.watch = storage.watch({ prefix, afterRevision, onEvent: (event) => this.onEvent(event), onError: (error) => this.onError(error) });
  }

  /** Resolves once `count` events (or an error) have arrived. */
  until(count: number): Promise<WatchEvent[]> {
    if (this.events.length >= count || this.error) return Promise.resolve(this.events);
    return new Promise((resolve) => this.waiters.push({ count, resolve: () => resolve(this.events) }));
  }

  private onEvent(event: WatchEvent): void {
    this.events.push(event);
    this.wake();
  }

  private onError(error: StorageError): void {
    this.error = error;
    this.wake();
  }

  private wake(): void {
    this.waiters = this.waiters.filter((waiter) => {
      const done = this.events.length >= waiter.count || this.error !== undefined;
      if (done) waiter.resolve();
      return !done;
    });
  }
}

/** The error a watch from `afterRevision` is refused with, thrown at once or reported through onError. */
async function refusal(storage: Storage, prefix: string, afterRevision: number): Promise<unknown> {
  let recorder: EventRecorder;
  try {
    recorder = new EventRecorder(storage, prefix, afterRevision);
  } catch (error) {
    return error;
  }
  await recorder.until(Number.POSITIVE_INFINITY);
  return recorder.error;
}

export function describeStorageConformance(name: string, backend: StorageBackend): void {
  const opened: Storage[] = [];
  let prefix: string;
  let base: number;

  async function openStorage(options: { onError?: (error: unknown) => void } = {}): Promise<Storage> {
    const storage = await backend.open(options);
    opened.push(storage);
    prefix = `/conformance/${randomUUID().slice(0, 8)}/`;
    base = await storage.currentRevision();
    return storage;
  }

  function watch(storage: Storage, afterRevision: number, under = prefix): EventRecorder {
    return new EventRecorder(storage, under, afterRevision);
  }

  afterEach(async () => {
    for (const storage of opened.splice(0)) await storage.close();
  });

  describe(`${name}: the storage contract`, () => {
    it('creates, gets, updates and deletes, each write at the next revision, which is the resourceVersion', async () => {
      const storage = await openStorage();
      const key = `${prefix}a`;
      const created = await storage.create(key, { ...object('a'), metadata: { name: 'a', resourceVersion: '999' } });
      expect(created.modRevision).toBeGreaterThan(base);
      expect(created).toMatchObject({
        key,
        createRevision: created.modRevision,
        value: { metadata: { name: 'a', resourceVersion: String(created.modRevision) } },
      });
      expect(await storage.get(key)).toEqual(created);
      const updated = await storage.update(key, object('a', { v: 2 }), created.modRevision);
      expect(updated.modRevision).toBeGreaterThan(created.modRevision);
      expect(updated).toMatchObject({
        createRevision: created.modRevision,
        value: { spec: { v: 2 }, metadata: { resourceVersion: String(updated.modRevision) } },
      });
      const deleted = await storage.delete(key, updated.modRevision);
      expect(deleted.modRevision).toBeGreaterThan(updated.modRevision);
      expect(deleted.value).toMatchObject({ spec: { v: 2 }, metadata: { resourceVersion: String(deleted.modRevision) } });
      expect(await storage.get(key)).toBeUndefined();
      expect(await storage.currentRevision()).toBeGreaterThanOrEqual(deleted.modRevision);
    });

    it('gives every object its own managed fields in lists and watch events, also where objects record the same field set', async () => {
      const storage = await openStorage();
      const fieldSet = (...fields: string[]) => ({ 'f:spec': Object.fromEntries([['.', {}], ...fields.map((field) => [`f:${field}`, {}])]) });
      const managed = (fieldsV1: JsonObject) => ({
        ...object('x'),
        metadata: { managedFields: [{ manager: 'kubectl', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1 }] },
      });
      const recorder = watch(storage, base);
      const a = await storage.create(`${prefix}a`, managed(fieldSet('color', 'size')));
      await storage.create(`${prefix}b`, managed(fieldSet('color', 'size')));
      await storage.create(`${prefix}c`, managed(fieldSet('color')));
      await storage.update(`${prefix}a`, managed(fieldSet('weight')), a.modRevision);
      // A large set, twice.
      const large = fieldSet(...Array.from({ length: 2000 }, (_, i) => `field${i}`));
      await storage.create(`${prefix}d`, managed(large));
      await storage.create(`${prefix}e`, managed(large));
      const fieldsOf = (value: JsonObject) => ((value.metadata as JsonObject).managedFields as JsonObject[])[0]!.fieldsV1;
      const events = await recorder.until(6);
      expect(events.map((event) => fieldsOf(event.value))).toEqual([
        fieldSet('color', 'size'),
        fieldSet('color', 'size'),
        fieldSet('color'),
        fieldSet('weight'),
        large,
        large,
      ]);
      expect(fieldsOf(events[3]!.prevValue!)).toEqual(fieldSet('color', 'size'));
      // Objects that record the same set hold one shared copy of it, whatever its size; a set with one field fewer is its own.
      expect(fieldsOf(events[1]!.value)).toBe(fieldsOf(events[0]!.value));
      expect(fieldsOf(events[5]!.value)).toBe(fieldsOf(events[4]!.value));
      expect(fieldsOf(events[2]!.value)).not.toBe(fieldsOf(events[0]!.value));
      const listed = await storage.list(prefix);
      expect(listed.entries.map((entry) => fieldsOf(entry.value))).toEqual([fieldSet('weight'), fieldSet('color', 'size'), fieldSet('color'), large, large]);
      for (const entry of listed.entries) expect(entry.value).toEqual((await storage.get(entry.key))!.value);
    });

    it('shares what objects repeat as one frozen copy, and keeps what differs their own', async () => {
      const storage = await openStorage();
      const recorder = watch(storage, base);
      const rules = [{ name: 'vxlan', direction: 'ingress', protocol: 'udp', portRangeMin: 8472, remoteManagedGroups: ['controlplane', 'worker'] }];
      const spec = (flavor: string) => ({
        bastion: { enabled: true, flavor, image: { filter: { name: 'ubuntu-22.04' } } },
        rules,
        weight: 1.5,
        paused: false,
        note: null,
      });
      const a = await storage.create(`${prefix}a`, object('a', spec('m1.tiny')));
      await storage.create(`${prefix}b`, object('b', spec('m1.tiny')));
      await storage.create(`${prefix}c`, object('c', spec('m1.small')));
      await storage.update(`${prefix}a`, object('a', spec('m1.tiny')), a.modRevision);
      const specOf = (value: JsonObject) => value.spec as JsonObject;
      const [first, second, third, update] = (await recorder.until(4)).map((event) => event.value);
      expect([first, second, third, update].map(specOf)).toEqual([spec('m1.tiny'), spec('m1.tiny'), spec('m1.small'), spec('m1.tiny')]);
      // Equal subtrees are one object; where one leaf differs, the parent is its own and the rest is still shared.
      expect(specOf(second!)).toBe(specOf(first!));
      expect(specOf(update!)).toBe(specOf(first!));
      expect(specOf(third!)).not.toBe(specOf(first!));
      expect(specOf(third!).rules).toBe(specOf(first!).rules);
      expect((specOf(third!).bastion as JsonObject).image).toBe((specOf(first!).bastion as JsonObject).image);
      // Nobody can change what others hold.
      expect(() => {
        (specOf(first!).rules as JsonObject[])[0]!.protocol = 'tcp';
      }).toThrow(TypeError);
      expect(() => {
        (first!.metadata as JsonObject).name = 'z';
      }).toThrow(TypeError);
      const listed = await storage.list(prefix);
      expect(listed.entries.map((entry) => specOf(entry.value))).toEqual([spec('m1.tiny'), spec('m1.tiny'), spec('m1.small')]);
    });

    it('refuses duplicate creates, writes to missing keys and stale revisions', async () => {
      const storage = await openStorage();
      const key = `${prefix}a`;
      const created = await storage.create(key, object('a'));
      await expect(storage.create(key, object('a'))).rejects.toBeInstanceOf(KeyExistsError);
      await expect(storage.update(`${prefix}missing`, object('m'), 1)).rejects.toBeInstanceOf(KeyNotFoundError);
      await expect(storage.delete(`${prefix}missing`)).rejects.toBeInstanceOf(KeyNotFoundError);
      const updated = await storage.update(key, object('a', { v: 2 }), created.modRevision);
      await expect(storage.update(key, object('a', { v: 3 }), created.modRevision)).rejects.toMatchObject({
        expected: created.modRevision,
        actual: updated.modRevision,
      });
      await expect(storage.delete(key, created.modRevision)).rejects.toBeInstanceOf(RevisionConflictError);
      expect((await storage.get(key))?.value).toMatchObject({ spec: { v: 2 } });
    });

    it('lets exactly one of two concurrent read-modify-write cycles win', async () => {
      const storage = await openStorage();
      const key = `${prefix}counter`;
      const created = await storage.create(key, object('counter', { n: 0 }));
      const outcomes = await Promise.allSettled([1, 2].map((n) => storage.update(key, object('counter', { n }), created.modRevision)));
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      expect(outcomes.find((outcome) => outcome.status === 'rejected')?.reason).toBeInstanceOf(RevisionConflictError);
    });

    it('lists a true prefix in key order, in pages, with the filter applied before the limit', async () => {
      const storage = await openStorage();
      const keys = ['ns2/x', 'ns/b', 'ns/a', 'nsx', 'n_/y', 'n%/z', 'ns'].map((key) => `${prefix}${key}`);
      await Promise.all(keys.map((key, i) => storage.create(key, object(key, { even: i % 2 === 0 }))));
      const keysUnder = async (under: string) => (await storage.list(`${prefix}${under}`)).entries.map((entry) => entry.key.slice(prefix.length));
      expect(await keysUnder('ns/')).toEqual(['ns/a', 'ns/b']);
      expect(await keysUnder('n_/')).toEqual(['n_/y']);
      expect(await keysUnder('n%/')).toEqual(['n%/z']);
      const seen: string[] = [];
      const mores: boolean[] = [];
      let startAfter: string | undefined;
      for (;;) {
        const page = await storage.list(prefix, { limit: 3, startAfter });
        seen.push(...page.entries.map((entry) => entry.key));
        mores.push(page.more);
        if (!page.more) break;
        startAfter = page.entries.at(-1)!.key;
      }
      expect(seen).toEqual([...keys].sort());
      expect(mores).toEqual([true, true, false]);
      const even = await storage.list(prefix, { limit: 2, filter: (value) => (value.spec as { even: boolean }).even });
      expect(even.entries).toHaveLength(2);
      expect(even.more).toBe(true);
      expect(even.entries.every((entry) => (entry.value.spec as { even: boolean }).even)).toBe(true);
    });

    it('lists with required labels exactly what the filter keeps, in key order and in pages, after labels change', async () => {
      const storage = await openStorage();
      const labelled = (name: string, labels: Record<string, string>) => ({ metadata: { name, labels }, spec: {} });
      const labelsOf = (i: number) => ({ cluster: `c${i % 4}`, role: i % 3 === 0 ? 'control-plane' : 'worker' });
      const key = (i: number) => `${prefix}ns/m-${String(i).padStart(2, '0')}`;
      await Promise.all(Array.from({ length: 40 }, (_, i) => storage.create(key(i), labelled(`m-${i}`, labelsOf(i)))));
      // Carrying the same labels outside the listed prefix, and inside it under a longer name.
      await storage.create(`${prefix}ns2/m-00`, labelled('m-00', labelsOf(0)));
      await storage.create(`${prefix}nsx`, labelled('nsx', labelsOf(0)));
      // Relabelled into the selection, out of it, and deleted.
      const moved = await storage.get(key(3));
      await storage.update(key(3), labelled('m-3', { cluster: 'c0', role: 'control-plane' }), moved!.modRevision);
      const leaving = await storage.get(key(12));
      await storage.update(key(12), labelled('m-12', { cluster: 'c0', role: 'worker', extra: 'x' }), leaving!.modRevision);
      await storage.delete(key(24));

      const requiredLabels = [
        ['cluster', 'c0'],
        ['role', 'control-plane'],
      ] as const;
      const filter = (value: JsonObject) => {
        const labels = (value.metadata as { labels: Record<string, string> }).labels;
        return labels.cluster === 'c0' && labels.role === 'control-plane';
      };
      const expected = [0, 3, 36].map(key);
      expect((await storage.list(`${prefix}ns/`, { filter, requiredLabels })).entries.map((entry) => entry.key)).toEqual(expected);
      const pages: string[][] = [];
      let startAfter: string | undefined;
      for (;;) {
        const page = await storage.list(`${prefix}ns/`, { filter, requiredLabels, limit: 2, startAfter });
        pages.push(page.entries.map((entry) => entry.key));
        if (!page.more) break;
        startAfter = page.entries.at(-1)!.key;
      }
      expect(pages).toEqual([expected.slice(0, 2), expected.slice(2)]);
      const none = (value: JsonObject) => (value.metadata as { labels: Record<string, string> }).labels.cluster === 'c9';
      expect((await storage.list(`${prefix}ns/`, { filter: none, requiredLabels: [['cluster', 'c9']] })).entries).toEqual([]);
    });

    it('reads a past snapshot, and pages of one list at one revision whatever is written between them', async () => {
      const storage = await openStorage();
      const a = await storage.create(`${prefix}a`, object('a', { v: 1 }));
      const b = await storage.create(`${prefix}b`, object('b', { v: 1 }));
      const c = await storage.create(`${prefix}c`, object('c', { v: 1 }));
      const first = await storage.list(prefix, { limit: 1 });
      await storage.update(`${prefix}a`, object('a', { v: 2 }), a.modRevision);
      await storage.delete(`${prefix}b`, b.modRevision);
      await storage.create(`${prefix}bb`, object('bb'));
      await storage.delete(`${prefix}c`, c.modRevision);
      const rest = await storage.list(prefix, { revision: first.revision, startAfter: first.entries[0]!.key });
      expect(first.entries.map((entry) => entry.key)).toEqual([`${prefix}a`]);
      expect(rest.revision).toBe(first.revision);
      expect(rest.entries.map((entry) => [entry.key, resourceVersionOf(entry.value)])).toEqual([
        [`${prefix}b`, String(b.modRevision)],
        [`${prefix}c`, String(c.modRevision)],
      ]);
      const now = await storage.list(prefix);
      expect(now.entries.map((entry) => [entry.key, (entry.value.spec as { v?: number }).v])).toEqual([
        [`${prefix}a`, 2],
        [`${prefix}bb`, undefined],
      ]);
    });

    it('refuses lists at revisions compacted away or not yet reached', async () => {
      const storage = await openStorage();
      const first = await storage.create(`${prefix}a`, object('a'));
      await storage.create(`${prefix}b`, object('b'));
      await backend.compactAll(storage);
      expect(await storage.compactedRevision()).toBeGreaterThan(first.modRevision);
      await expect(storage.list(prefix, { revision: first.modRevision })).rejects.toBeInstanceOf(TooOldRevisionError);
      const current = await storage.currentRevision();
      await expect(storage.list(prefix, { revision: current + 1000 })).rejects.toBeInstanceOf(FutureRevisionError);
      expect((await storage.list(prefix)).entries).toHaveLength(2);
    });

    it('watches: replays history after a revision, then live events in revision order, each with its previous state', async () => {
      const storage = await openStorage();
      const a = await storage.create(`${prefix}a`, object('a', { v: 1 }));
      const recorder = watch(storage, base);
      const updated = await storage.update(`${prefix}a`, object('a', { v: 2 }), a.modRevision);
      const deleted = await storage.delete(`${prefix}a`);
      await storage.create(`${prefix}b`, object('b'));
      const events = await recorder.until(4);
      expect(events.map((event) => [event.type, event.key])).toEqual([
        ['ADDED', `${prefix}a`],
        ['MODIFIED', `${prefix}a`],
        ['DELETED', `${prefix}a`],
        ['ADDED', `${prefix}b`],
      ]);
      const revisions = events.map((event) => event.revision);
      expect(revisions).toEqual([...revisions].sort((x, y) => x - y));
      expect(events.map((event) => resourceVersionOf(event.value))).toEqual(revisions.map(String));
      const [added, modified, gone] = events;
      expect(added!.prevValue).toBeUndefined();
      expect(modified).toMatchObject({
        revision: updated.modRevision,
        value: { spec: { v: 2 } },
        prevValue: { spec: { v: 1 }, metadata: { resourceVersion: String(a.modRevision) } },
      });
      expect(gone).toMatchObject({ revision: deleted.modRevision, value: { spec: { v: 2 }, metadata: { resourceVersion: String(deleted.modRevision) } } });
      expect(gone!.prevValue).toMatchObject({ metadata: { resourceVersion: String(updated.modRevision) } });
      // A second watch from the same revision sees the same history.
      expect(await watch(storage, base).until(4)).toEqual(events);
    });

    it('watches only keys under the prefix, and not after stop(), even from the callback', async () => {
      const storage = await openStorage();
      const received: string[] = [];
      const stopping = storage.watch({
        prefix: `${prefix}ns/`,
        afterRevision: base,
        onEvent: (event) => {
          received.push(event.key);
          if (received.length === 1) stopping.stop();
        },
      });
      const everything = watch(storage, base);
      for (const key of ['ns2/x', 'ns/y', 'n', 'ns/z']) await storage.create(`${prefix}${key}`, object(key));
      const all = await everything.until(4);
      expect(all).toHaveLength(4);
      const under = watch(storage, base, `${prefix}ns/`);
      expect((await under.until(2)).map((event) => event.key)).toEqual([`${prefix}ns/y`, `${prefix}ns/z`]);
      // A watch opened before a watch cache has loaded is served by the backend, whose deliveries may trail the cache's.
      await vi.waitFor(() => expect(received).toEqual([`${prefix}ns/y`]));
      // Had stop() not held, ns/z would have come before a later write reached another watch.
      await storage.create(`${prefix}ns/w`, object('ns/w'));
      await watch(storage, base, `${prefix}ns/`).until(3);
      expect(received).toEqual([`${prefix}ns/y`]);
    });

    it('isolates a throwing watcher from the others and from the write', async () => {
      const errors: unknown[] = [];
      let reported!: () => void;
      const errorReported = new Promise<void>((resolve) => (reported = resolve));
      const storage = await openStorage({
        onError: (error) => {
          errors.push(error);
          reported();
        },
      });
      storage.watch({
        prefix,
        afterRevision: base,
        onEvent: () => {
          throw new Error('broken watcher');
        },
      });
      const healthy = watch(storage, base);
      await expect(storage.create(`${prefix}a`, object('a'))).resolves.toBeDefined();
      await storage.create(`${prefix}b`, object('b'));
      expect(await healthy.until(2)).toHaveLength(2);
      await errorReported;
      expect(errors[0]).toMatchObject({ message: 'broken watcher' });
    });

    it('refuses watches from compacted or future revisions', async () => {
      const storage = await openStorage();
      const first = await storage.create(`${prefix}a`, object('a'));
      await storage.create(`${prefix}b`, object('b'));
      const current = await storage.currentRevision();
      expect(await refusal(storage, prefix, current + 1000)).toBeInstanceOf(FutureRevisionError);
      await backend.compactAll(storage);
      expect(await refusal(storage, prefix, first.modRevision - 1)).toBeInstanceOf(TooOldRevisionError);
      const compacted = await storage.compactedRevision();
      const live = watch(storage, compacted);
      const c = await storage.create(`${prefix}c`, object('c'));
      expect((await live.until(1)).map((event) => event.revision)).toEqual([c.modRevision]);
    });

    it('names its latest write as the current revision, lists as of it, and vouches for what a watch was given', async () => {
      const storage = await openStorage();
      const a = await storage.create(`${prefix}a`, object('a'));
      expect(await storage.currentRevision()).toBe(a.modRevision);
      expect((await storage.list(prefix)).revision).toBe(a.modRevision);
      const recorder = watch(storage, base);
      expect(await recorder.watch.progress()).toBeGreaterThanOrEqual(base);
      const b = await storage.create(`${prefix}b`, object('b'));
      const events = await recorder.until(2);
      expect(await recorder.watch.progress()).toBeGreaterThanOrEqual(events.at(-1)!.revision);
      expect(events.at(-1)!.revision).toBe(b.modRevision);
      recorder.watch.stop();
    });

    it('reports readiness, and refuses work once closed', async () => {
      const storage = await openStorage();
      await expect(storage.check()).resolves.toBeUndefined();
      await storage.close();
      await expect(storage.get(`${prefix}a`)).rejects.toBeInstanceOf(StorageError);
      await expect(storage.check()).rejects.toBeInstanceOf(StorageError);
    });
  });
}
