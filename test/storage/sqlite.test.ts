import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { FutureRevisionError, StorageError, TooOldRevisionError, type WatchEvent } from '../../src/storage/interface.js';
import { SqliteStorage, type SqliteStorageOptions } from '../../src/storage/sqlite.js';
import { pollUntil } from '../../harness/poll.js';
import { sourceEntry } from '../../harness/typescript-process.js';
import { describeStorageConformance, object, resourceVersionOf } from './conformance.js';

describeStorageConformance('SQLite', {
  // History kept until a test compacts it; the periodic compaction never runs within a test.
  open: async ({ onError }) => SqliteStorage.open(':memory:', { historyRetention: { maxAgeMs: 0 }, compactionIntervalMs: 3_600_000, onError }),
  compactAll: async (storage) => {
    await (storage as SqliteStorage).compact();
  },
});

const opened: SqliteStorage[] = [];
const temporaryDirectories: string[] = [];

function openStorage(path = ':memory:', options: SqliteStorageOptions = {}): SqliteStorage {
  const storage = SqliteStorage.open(path, options);
  opened.push(storage);
  return storage;
}

function temporaryDatabasePath(): string {
  const directory = mkdtempSync(join(tmpdir(), 'capo-sqlite-test-'));
  temporaryDirectories.push(directory);
  return join(directory, 'store.db');
}

function recordEvents(storage: SqliteStorage, prefix: string, afterRevision: number): WatchEvent[] {
  const events: WatchEvent[] = [];
  storage.watch({ prefix, afterRevision, onEvent: (event) => events.push(event) });
  return events;
}

afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
  for (const directory of temporaryDirectories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe('SqliteStorage writes and reads', () => {
  it('creates, gets, updates and deletes with revisions as resourceVersion', async () => {
    const storage = openStorage();
    expect(await storage.currentRevision()).toBe(0);

    const created = await storage.create('/a/x', object('x', { size: 1 }));
    expect(created).toMatchObject({ key: '/a/x', createRevision: 1, modRevision: 1 });
    expect(resourceVersionOf(created.value)).toBe('1');
    expect(await storage.get('/a/x')).toEqual(created);

    const updated = await storage.update('/a/x', object('x', { size: 2 }), 1);
    expect(updated).toMatchObject({ createRevision: 1, modRevision: 2, value: { spec: { size: 2 } } });
    expect(resourceVersionOf(updated.value)).toBe('2');

    const deleted = await storage.delete('/a/x', 2);
    expect(deleted).toMatchObject({ key: '/a/x', createRevision: 1, modRevision: 3, value: { spec: { size: 2 } } });
    expect(resourceVersionOf(deleted.value)).toBe('3');
    expect(await storage.get('/a/x')).toBeUndefined();
    expect(await storage.currentRevision()).toBe(3);
  });

  it('ignores a client resourceVersion and never mutates or shares caller objects', async () => {
    const storage = openStorage();
    const input = { metadata: { name: 'x', resourceVersion: '999' }, spec: { list: [1] } };
    const created = await storage.create('/a/x', input);
    expect(input).toEqual({ metadata: { name: 'x', resourceVersion: '999' }, spec: { list: [1] } });
    expect(resourceVersionOf(created.value)).toBe('1');

    (created.value.spec as { list: number[] }).list.push(2);
    const first = await storage.get('/a/x');
    (first!.value.spec as { list: number[] }).list.push(3);
    expect((await storage.get('/a/x'))!.value.spec).toEqual({ list: [1] });
  });

  it('executes writes of one tick in order, so later checks see earlier writes', async () => {
    const storage = openStorage();
    const outcomes = await Promise.allSettled([
      storage.create('/a/x', object('x')),
      storage.create('/a/x', object('x')),
      storage.update('/a/x', object('x', { v: 2 }), 1),
      storage.delete('/a/x', 2),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(await storage.get('/a/x')).toBeUndefined();
  });

  it('acknowledges writes and publishes their events only after the commit', async () => {
    const storage = openStorage();
    const events = recordEvents(storage, '/a/', 0);
    let acknowledged = false;
    const write = storage.create('/a/x', object('x')).then(() => (acknowledged = true));
    const read = storage.get('/a/x');
    await Promise.resolve();
    expect(acknowledged).toBe(false);
    expect(events).toHaveLength(0);
    await write;
    expect(events).toHaveLength(1);
    expect((await read)?.modRevision).toBe(1);
  });

  it('keeps revisions strictly increasing across keys and reopening, even after deleting everything', async () => {
    const path = temporaryDatabasePath();
    const storage = openStorage(path);
    const revisions: number[] = [];
    for (const key of ['/a/1', '/b/1', '/a/2']) revisions.push((await storage.create(key, object(key))).modRevision);
    for (const key of ['/a/1', '/b/1', '/a/2']) revisions.push((await storage.delete(key)).modRevision);
    await storage.close();

    const reopened = openStorage(path);
    expect(await reopened.currentRevision()).toBe(6);
    revisions.push((await reopened.create('/a/1', object('again'))).modRevision);
    expect(revisions).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('refuses a second open of a file that is in use, naming the file and what to do', async () => {
    const path = temporaryDatabasePath();
    openStorage(path);
    expect(() => SqliteStorage.open(path)).toThrow(
      `another process holds the SQLite database ${path} (database is locked): one replica owns it; several replicas need --storage etcd`,
    );
  });

  it('closes idempotently, committing writes already issued and refusing new ones', async () => {
    const path = temporaryDatabasePath();
    const storage = openStorage(path);
    const write = storage.create('/a/x', object('x'));
    await Promise.all([storage.close(), storage.close()]);
    await expect(write).resolves.toMatchObject({ modRevision: 1 });
    await expect(storage.get('/a/x')).rejects.toBeInstanceOf(StorageError);
    expect(await openStorage(path).get('/a/x')).toMatchObject({ modRevision: 1 });
  });
});

describe('SqliteStorage list', () => {
  it('reads a past snapshot unaffected by later creates, updates and deletes', async () => {
    const storage = openStorage();
    await storage.create('/s/a', object('a', { v: 1 }));
    await storage.create('/s/b', object('b', { v: 1 }));
    const b = await storage.update('/s/b', object('b', { v: 2 }), 2);
    await storage.create('/s/c', object('c', { v: 1 }));
    const snapshot = await storage.list('/s/');
    expect(snapshot.revision).toBe(4);

    await storage.update('/s/a', object('a', { v: 9 }), 1);
    await storage.update('/s/a', object('a', { v: 10 }), 5);
    await storage.delete('/s/b', b.modRevision);
    await storage.create('/s/d', object('d'));
    await storage.delete('/s/c');
    await storage.create('/s/c', object('c', { v: 'recreated' }));

    const past = await storage.list('/s/', { revision: 4 });
    expect(past.revision).toBe(4);
    expect(past.entries).toEqual(snapshot.entries);
    expect(past.entries.map((entry) => [entry.key, resourceVersionOf(entry.value), entry.createRevision])).toEqual([
      ['/s/a', '1', 1],
      ['/s/b', '3', 2],
      ['/s/c', '4', 4],
    ]);
    expect((await storage.list('/s/')).entries.map((entry) => entry.key)).toEqual(['/s/a', '/s/c', '/s/d']);
  });

  it('refuses revisions that are compacted or in the future', async () => {
    const storage = openStorage(':memory:', { historyRetention: { maxEvents: 1 } });
    for (let i = 0; i < 4; i++) await storage.create(`/r/${i}`, object(`o${i}`));
    expect(await storage.compact()).toBe(3);
    expect(await storage.compactedRevision()).toBe(3);
    await expect(storage.list('/r/', { revision: 2 })).rejects.toBeInstanceOf(TooOldRevisionError);
    expect((await storage.list('/r/', { revision: 3 })).entries).toHaveLength(3);
    await expect(storage.list('/r/', { revision: 5 })).rejects.toBeInstanceOf(FutureRevisionError);
  });
});

describe('SqliteStorage watch', () => {
  it('replays history after a revision, then streams live events in revision order', async () => {
    const storage = openStorage();
    await storage.create('/w/a', object('a'));
    await storage.create('/w/b', object('b'));
    await storage.update('/w/a', object('a', { v: 2 }), 1);
    const events = recordEvents(storage, '/w/', 1);
    expect(events.map((event) => [event.type, event.key, event.revision])).toEqual([
      ['ADDED', '/w/b', 2],
      ['MODIFIED', '/w/a', 3],
    ]);

    await Promise.all([storage.create('/w/c', object('c')), storage.delete('/w/b'), storage.update('/w/a', object('a', { v: 3 }), 3)]);
    await storage.create('/w/d', object('d'));
    expect(events.map((event) => event.revision)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(events.map((event) => resourceVersionOf(event.value))).toEqual(['2', '3', '4', '5', '6', '7']);
  });

  it('shares deep-frozen event values between watchers', async () => {
    const storage = openStorage();
    const first = recordEvents(storage, '/w/', 0);
    const second = recordEvents(storage, '/w/', 0);
    await storage.create('/w/a', object('a', { nested: { v: 1 } }));
    expect(first[0]).toBe(second[0]);
    expect(() => {
      (first[0].value.spec as { nested: { v: number } }).nested.v = 2;
    }).toThrow(TypeError);
  });

  it('does not repeat events to a watcher started while a batch is pending', async () => {
    const storage = openStorage();
    await storage.create('/w/a', object('a'));
    const write = storage.create('/w/b', object('b'));
    const events = recordEvents(storage, '/w/', 0);
    expect(events.map((event) => event.revision)).toEqual([1]);
    await write;
    expect(events.map((event) => event.revision)).toEqual([1, 2]);
  });

  it('refuses compacted and future revisions', async () => {
    const storage = openStorage(':memory:', { historyRetention: { maxAgeMs: 0 } });
    await storage.create('/w/a', object('a'));
    await storage.create('/w/b', object('b'));
    expect(() => recordEvents(storage, '/w/', 3)).toThrow(FutureRevisionError);
    await storage.compact();
    expect(() => recordEvents(storage, '/w/', 1)).toThrow(TooOldRevisionError);
    const events = recordEvents(storage, '/w/', 2);
    await storage.create('/w/c', object('c'));
    expect(events.map((event) => event.revision)).toEqual([3]);
  });
});

describe('SqliteStorage history retention', () => {
  it('keeps at most maxEvents events', async () => {
    const storage = openStorage(':memory:', { historyRetention: { maxEvents: 3, maxAgeMs: 60_000 } });
    for (let i = 0; i < 10; i++) await storage.create(`/h/${i}`, object(`o${i}`));
    expect(await storage.compact()).toBe(7);
    expect(recordEvents(storage, '/h/', 7).map((event) => event.revision)).toEqual([8, 9, 10]);
  });

  it('keeps events younger than maxAgeMs', async () => {
    const storage = openStorage(':memory:', { historyRetention: { maxEvents: 1000, maxAgeMs: 60_000 } });
    for (let i = 0; i < 5; i++) await storage.create(`/h/${i}`, object(`o${i}`));
    expect(await storage.compact()).toBe(0);
  });

  it('persists the compacted revision', async () => {
    const path = temporaryDatabasePath();
    const storage = openStorage(path, { historyRetention: { maxAgeMs: 0 } });
    await storage.create('/h/a', object('a'));
    await storage.compact();
    await storage.close();
    expect(await openStorage(path).compactedRevision()).toBe(1);
  });
});

describe('SqliteStorage disk space (issue 47, H2)', () => {
  /** An object of about 1 MB, as large as a stored value may be, told apart by `round`. */
  const large = (round: number) => object('large', { round, tags: Array.from({ length: 4_000 }, (_, i) => `tag-${i}-${'x'.repeat(240)}`) });
  const megabytes = (path: string) => [path, `${path}-wal`].reduce((sum, file) => sum + (existsSync(file) ? statSync(file).size : 0), 0) / 1e6;

  it('keeps the history within maxBytes, so repeated writes to a large object leave the file bounded', async () => {
    const path = temporaryDatabasePath();
    const storage = openStorage(path, { historyRetention: { maxBytes: 8 * 1024 * 1024 } });
    let entry = await storage.create('/big/a', large(0));
    for (let round = 1; round <= 60; round++) entry = await storage.update('/big/a', large(round), entry.modRevision);
    // 60 writes of 1 MB kept whole (each event holds the value and the one it replaced) would be 120 MB.
    expect(megabytes(path)).toBeLessThan(40);
    expect(await storage.compactedRevision()).toBeGreaterThan(40);
    expect((await storage.get('/big/a'))?.value.spec).toMatchObject({ round: 60 });
  });

  it('gives the space of a deleted large object back to the file system once its history is compacted', async () => {
    const path = temporaryDatabasePath();
    const storage = openStorage(path, { historyRetention: { maxAgeMs: 0 }, compactionIntervalMs: 3_600_000 });
    let entry = await storage.create('/big/a', large(0));
    for (let round = 1; round <= 10; round++) entry = await storage.update('/big/a', large(round), entry.modRevision);
    const full = megabytes(path);
    expect(full).toBeGreaterThan(10);
    await storage.delete('/big/a');
    await storage.compact();
    const shrunk = await pollUntil('the file to shrink', async () => (megabytes(path) < 1 ? megabytes(path) : undefined));
    expect(shrunk).toBeLessThan(1);
  });

  it('switches a database made without incremental auto-vacuum at open, keeping what it holds', async () => {
    const path = temporaryDatabasePath();
    const storage = openStorage(path);
    await storage.create('/kept/a', object('a'));
    await storage.close();
    const plain = new Database(path);
    plain.pragma('auto_vacuum = NONE');
    plain.exec('VACUUM');
    expect(plain.pragma('auto_vacuum', { simple: true })).toBe(0);
    plain.close();
    const reopened = openStorage(path);
    expect(reopened.settings().autoVacuum).toBe('INCREMENTAL');
    expect((await reopened.get('/kept/a'))?.value.metadata).toMatchObject({ name: 'a' });
  });
});

describe('SqliteStorage crash safety', () => {
  it('keeps every acknowledged write after kill -9', async () => {
    const path = temporaryDatabasePath();
    const child = spawn(process.execPath, [...sourceEntry('test/storage/fixtures/crash-writer.ts'), path], { stdio: ['ignore', 'pipe', 'inherit'] });
    const acknowledged = new Map<string, number>();
    let buffered = '';
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const [key, revision] = line.split(' ');
        acknowledged.set(key, Number(revision));
      }
      if (acknowledged.size >= 500) child.kill('SIGKILL');
    });
    await exited;
    expect(acknowledged.size).toBeGreaterThanOrEqual(500);

    const storage = openStorage(path);
    for (const [key, revision] of acknowledged) {
      const entry = await storage.get(key);
      expect(entry, key).toMatchObject({ key, modRevision: revision, value: { spec: { payload: 'x'.repeat(256) } } });
    }
    const recovered = await storage.currentRevision();
    expect(recovered).toBeGreaterThanOrEqual(Math.max(...acknowledged.values()));
    const next = await storage.create('/crash/after-restart', object('after'));
    expect(next.modRevision).toBe(recovered + 1);
  });
});
