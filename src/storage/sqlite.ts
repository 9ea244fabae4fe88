/**
 * Embedded Storage backend on SQLite (better-sqlite3, WAL journal).
 *
 * Durability and group commit. Writes issued while a batch is open run
 * immediately inside that batch's transaction, so the compare-and-swap checks
 * of later writes see earlier ones. The batch commits on setImmediate (one
 * fsync with synchronous=FULL for everything issued in that turn of the event
 * loop); only then are watch events published and the batch's promises
 * settled. If the commit fails, every promise of the batch rejects with the
 * commit error. So a resolved write has reached the disk, and the throughput
 * does not collapse when fsync is slow (network block storage).
 *
 * Reads while a batch is open run on the same connection and may therefore see
 * the batch's writes, but their promises settle only together with the batch:
 * after the commit, or rejected if it fails. Guarantee: no caller ever observes
 * a write before it is durable, and every read reflects at least all writes
 * acknowledged before it was issued (linearizable). Watch replay, being
 * synchronous, reads only committed events; the batch's events follow live.
 *
 * Object sharing. Values returned by get, list and the writes are fresh objects
 * the caller owns. Watch event values are parsed once per event, deep-frozen and
 * shared by all watchers; clone before modifying.
 *
 * History retention. Events (the basis of watch replay and snapshot lists) are
 * kept while younger than maxAgeMs, and at most the latest maxEvents of them,
 * holding at most maxBytes of values; compaction drops everything older or
 * beyond. Each event holds the value and the one it replaced, so writes to a
 * large object filled the history by megabytes a write: past maxBytes, the
 * write's own commit compacts, down to three quarters of it.
 * compactedRevision is the highest dropped revision: watches after it and
 * snapshot lists at it still work. After a compaction, the pages it freed are
 * returned to the file system (sqlite-space.ts).
 *
 * The database is opened with an exclusive lock: the in-memory revision
 * counter and the watch fan-out assume this process is the only writer, so a
 * second server on the same file fails at open instead of reusing revisions.
 */
import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import {
  FutureRevisionError,
  KeyExistsError,
  KeyNotFoundError,
  RevisionConflictError,
  StorageError,
  TooOldRevisionError,
  type Entry,
  type JsonObject,
  type ListRequest,
  type ListResult,
  type Storage,
  type Watch,
  type WatchEvent,
  type WatchEventType,
  type WatchRequest,
} from './interface.js';
import { prefixUpperBound } from './key-range.js';
import { UncachedStorage } from './uncached.js';
import { prepareSpaceReturn, returnFreePagesStep } from './sqlite-space.js';
import { freezeShared, parseWithResourceVersion, serializeWithoutResourceVersion } from './values.js';
import { fallbackLogger } from '../observability/log.js';

export interface HistoryRetention {
  maxEvents: number;
  maxAgeMs: number;
  /** Of the events' values and previous values together (counted in UTF-16 units: bytes for ASCII JSON). */
  maxBytes: number;
}

export interface SqliteStorageOptions {
  /** Defaults: 100000 events, 5 minutes, 128 MiB. */
  historyRetention?: Partial<HistoryRetention>;
  /** FULL (default) survives power loss; NORMAL survives process crashes only. */
  synchronous?: 'FULL' | 'NORMAL';
  /** How often history is compacted. Default 30 s. */
  compactionIntervalMs?: number;
  /** Receives errors no caller can be told about: a throwing watch callback, a failed periodic compaction. Default: logged as an error. */
  onError?: (error: unknown) => void;
}

const DEFAULT_RETENTION: HistoryRetention = { maxEvents: 100_000, maxAgeMs: 5 * 60_000, maxBytes: 128 * 1024 * 1024 };
const DEFAULT_COMPACTION_INTERVAL_MS = 30_000;
const SCHEMA_VERSION = 1;
/** Tolerates brief locks by external tools before failing instead of blocking the event loop for long. */
const BUSY_TIMEOUT_MS = 2_000;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS objects (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    create_revision INTEGER NOT NULL,
    mod_revision INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS events (
    revision INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    type TEXT NOT NULL,
    -- NULL for DELETED: the last state is prev_value.
    value TEXT,
    -- NULL for ADDED.
    prev_value TEXT,
    create_revision INTEGER NOT NULL,
    prev_mod_revision INTEGER,
    created_at_ms INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS meta (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
  );
  INSERT OR IGNORE INTO meta (name, value) VALUES ('revision', 0), ('compacted', 0);
`;

/** The bytes the history holds; octet_length reads a value's size from its record, not the value. */
const EVENT_BYTES = 'coalesce(octet_length(value), 0) + coalesce(octet_length(prev_value), 0)';
const HISTORY_BYTES = `SELECT coalesce(sum(${EVENT_BYTES}), 0) FROM events`;

interface ObjectRow {
  key: string;
  value: string;
  create_revision: number;
  mod_revision: number;
}

interface EventRow {
  revision: number;
  key: string;
  type: WatchEventType;
  value: string | null;
  prev_value: string | null;
  prev_mod_revision: number | null;
}

/** How one operation of a batch is settled once the batch's fate is known. */
interface Settlement {
  afterCommit(): void;
  onFailure(error: unknown): void;
}

interface Batch {
  settlements: Settlement[];
  events: EventRow[];
  compactionRequested: boolean;
  commitTimer: NodeJS.Immediate;
  /** Resolves when the batch has committed or failed. */
  finished: Promise<void>;
  finish(): void;
}

interface Watcher {
  prefix: string;
  /** Events up to this revision were replayed; live delivery starts after it. */
  replayedThrough: number;
  onEvent: (event: WatchEvent) => void;
  active: boolean;
}

interface KeyRange {
  lower: string;
  lowerInclusive: boolean;
  upper: string | undefined;
}

export class SqliteStorage extends UncachedStorage implements Storage {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly watchers = new Set<Watcher>();
  private readonly compactionTimer: NodeJS.Timeout;
  private batch: Batch | undefined;
  private closed = false;
  /** Set while free pages are being returned; resolves when that is done. */
  private spaceReturn: Promise<void> | undefined;

  private constructor(
    private readonly db: Database.Database,
    private readonly retention: HistoryRetention,
    private readonly onError: (error: unknown) => void,
    compactionIntervalMs: number,
    private committedRevision: number,
    /** Includes the open batch's writes; equals committedRevision otherwise. */
    private pendingRevision: number,
    private compacted: number,
    /** What the events hold, as counted by HISTORY_BYTES; the open batch's events included. */
    private historyBytes: number,
  ) {
    super();
    this.compactionTimer = setInterval(() => {
      this.compact().catch(this.onError);
    }, compactionIntervalMs);
    this.compactionTimer.unref();
  }

  static open(path: string, options: SqliteStorageOptions = {}): SqliteStorage {
    // The database holds Secrets; SQLite gives the WAL and shared-memory files the main file's mode.
    if (path !== ':memory:') closeSync(openSync(path, 'a', 0o600));
    const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      prepareSpaceReturn(db);
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
      const schemaVersion = db.pragma('user_version', { simple: true }) as number;
      if (schemaVersion !== 0 && schemaVersion !== SCHEMA_VERSION) {
        throw new StorageError(`${path}: unsupported storage schema version ${schemaVersion}`);
      }
      // A write transaction takes the exclusive lock now rather than at the first client write.
      db.transaction(() => {
        db.exec(SCHEMA);
        db.pragma(`user_version = ${SCHEMA_VERSION}`);
      }).immediate();
      const readMeta = db.prepare<[string], number>('SELECT value FROM meta WHERE name = ?').pluck();
      const revision = readMeta.get('revision')!;
      return new SqliteStorage(
        db,
        { ...DEFAULT_RETENTION, ...options.historyRetention },
        options.onError ?? ((error) => fallbackLogger.error({ component: 'storage', err: error }, 'sqlite storage error')),
        options.compactionIntervalMs ?? DEFAULT_COMPACTION_INTERVAL_MS,
        revision,
        revision,
        readMeta.get('compacted')!,
        db.prepare<[], number>(HISTORY_BYTES).pluck().get()!,
      );
    } catch (error) {
      db.close();
      // The exclusive lock is held by another server on the same file: a second replica of a
      // Deployment on one volume, or a server left running. Say which database and what to do.
      if (error instanceof Database.SqliteError && error.code === 'SQLITE_BUSY') {
        throw new StorageError(
          `another process holds the SQLite database ${path} (${error.message}): one replica owns it; several replicas need --storage etcd`,
        );
      }
      throw error;
    }
  }

  async currentRevision(): Promise<number> {
    this.assertOpen();
    return this.committedRevision;
  }

  async compactedRevision(): Promise<number> {
    this.assertOpen();
    return this.compacted;
  }

  async get(key: string): Promise<Entry | undefined> {
    this.assertOpen();
    return this.read(() => {
      const row = this.selectObject(key);
      return row && toEntry(row);
    });
  }

  async list(prefix: string, request: ListRequest = {}): Promise<ListResult> {
    this.assertOpen();
    const { revision, startAfter, limit, filter } = request;
    if (revision !== undefined) {
      if (revision < this.compacted) throw new TooOldRevisionError(revision, this.compacted);
      if (revision > this.committedRevision) throw new FutureRevisionError(revision, this.committedRevision);
    }
    return this.read(() => {
      const range = keyRange(prefix, startAfter);
      const listRevision = revision ?? this.pendingRevision;
      const rows = listRevision === this.pendingRevision ? this.latestRows(range) : this.snapshotRows(range, listRevision);
      const entries: Entry[] = [];
      let more = false;
      for (const row of rows) {
        const entry = toEntry(row);
        if (filter && !filter(entry.value)) continue;
        if (limit && entries.length === limit) {
          more = true;
          break;
        }
        entries.push(entry);
      }
      return { entries, revision: listRevision, more };
    });
  }

  async create(key: string, value: JsonObject): Promise<Entry> {
    this.assertOpen();
    const json = serializeWithoutResourceVersion(key, value);
    return this.write(() => {
      if (this.selectObject(key)) throw new KeyExistsError(key);
      const revision = ++this.pendingRevision;
      this.statement('INSERT INTO objects (key, value, create_revision, mod_revision) VALUES (?, ?, ?, ?)').run(key, json, revision, revision);
      this.recordEvent({ revision, key, type: 'ADDED', value: json, prev_value: null, prev_mod_revision: null }, revision);
      return toEntry({ key, value: json, create_revision: revision, mod_revision: revision });
    });
  }

  async update(key: string, value: JsonObject, expectedModRevision: number): Promise<Entry> {
    this.assertOpen();
    const json = serializeWithoutResourceVersion(key, value);
    return this.write(() => {
      const current = this.selectObject(key);
      if (!current) throw new KeyNotFoundError(key);
      if (current.mod_revision !== expectedModRevision) {
        throw new RevisionConflictError(key, expectedModRevision, current.mod_revision);
      }
      const revision = ++this.pendingRevision;
      this.statement('UPDATE objects SET value = ?, mod_revision = ? WHERE key = ?').run(json, revision, key);
      this.recordEvent(
        {
          revision,
          key,
          type: 'MODIFIED',
          value: json,
          prev_value: current.value,
          prev_mod_revision: current.mod_revision,
        },
        current.create_revision,
      );
      return toEntry({ key, value: json, create_revision: current.create_revision, mod_revision: revision });
    });
  }

  async delete(key: string, expectedModRevision?: number): Promise<Entry> {
    this.assertOpen();
    return this.write(() => {
      const current = this.selectObject(key);
      if (!current) throw new KeyNotFoundError(key);
      if (expectedModRevision !== undefined && current.mod_revision !== expectedModRevision) {
        throw new RevisionConflictError(key, expectedModRevision, current.mod_revision);
      }
      const revision = ++this.pendingRevision;
      this.statement('DELETE FROM objects WHERE key = ?').run(key);
      this.recordEvent(
        {
          revision,
          key,
          type: 'DELETED',
          value: null,
          prev_value: current.value,
          prev_mod_revision: current.mod_revision,
        },
        current.create_revision,
      );
      return toEntry({ ...current, mod_revision: revision });
    });
  }

  watch(request: WatchRequest): Watch {
    this.assertOpen();
    const { prefix, afterRevision, onEvent } = request;
    if (afterRevision < this.compacted) throw new TooOldRevisionError(afterRevision, this.compacted);
    if (afterRevision > this.committedRevision) throw new FutureRevisionError(afterRevision, this.committedRevision);
    const watcher: Watcher = { prefix, replayedThrough: this.committedRevision, onEvent, active: true };
    const range = keyRange(prefix, undefined);
    // Bounded by committedRevision: events of an open batch are uncommitted and arrive live after its commit.
    const history = this.statement<EventRow>(
      `SELECT revision, key, type, value, prev_value, prev_mod_revision FROM events
       WHERE revision > @after AND revision <= @through AND ${keyRangeCondition(range)}
       ORDER BY revision`,
    ).all({ after: afterRevision, through: watcher.replayedThrough, ...range });
    for (const row of history) this.deliver(watcher, toWatchEvent(row));
    this.watchers.add(watcher);
    return {
      stop: () => {
        watcher.active = false;
        this.watchers.delete(watcher);
      },
      // Events are published on commit, before any promise of that batch settles.
      progress: () => this.currentRevision(),
    };
  }

  /** The durability settings in force on the open connection (what a benchmark reports beside its figures). */
  settings(): { journalMode: string; synchronous: string; lockingMode: string; autoVacuum: string } {
    const pragma = (name: string) => this.db.pragma(name, { simple: true });
    return {
      journalMode: String(pragma('journal_mode')).toUpperCase(),
      synchronous: ['OFF', 'NORMAL', 'FULL', 'EXTRA'][Number(pragma('synchronous'))] ?? 'unknown',
      lockingMode: String(pragma('locking_mode')).toUpperCase(),
      autoVacuum: ['NONE', 'FULL', 'INCREMENTAL'][Number(pragma('auto_vacuum'))] ?? 'unknown',
    };
  }

  async check(): Promise<void> {
    this.assertOpen();
    this.statement('SELECT 1').get();
  }

  /**
   * Drops history according to the retention rule, with the next commit.
   * Resolves to the new compacted revision.
   */
  async compact(): Promise<number> {
    this.assertOpen();
    const batch = this.openBatch();
    batch.compactionRequested = true;
    return new Promise((resolve, reject) => {
      batch.settlements.push({ afterCommit: () => resolve(this.compacted), onFailure: reject });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.compactionTimer);
    this.watchers.clear();
    if (this.batch) await this.batch.finished;
    await this.spaceReturn;
    this.db.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new StorageError('storage is closed');
  }

  private statement<Row = unknown>(sql: string): Database.Statement<unknown[], Row> {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement as Database.Statement<unknown[], Row>;
  }

  private selectObject(key: string): ObjectRow | undefined {
    return this.statement<ObjectRow>('SELECT key, value, create_revision, mod_revision FROM objects WHERE key = ?').get(key);
  }

  private latestRows(range: KeyRange): IterableIterator<ObjectRow> {
    return this.statement<ObjectRow>(
      `SELECT key, value, create_revision, mod_revision FROM objects
       WHERE ${keyRangeCondition(range)} ORDER BY key`,
    ).iterate(range);
  }

  /**
   * The state at `revision`: current rows of keys untouched since then, plus,
   * for each key changed since, the state its first later event replaced
   * (nothing if that event created the key).
   */
  private snapshotRows(range: KeyRange, revision: number): IterableIterator<ObjectRow> {
    return this.statement<ObjectRow>(
      `WITH changed AS (
         SELECT key, min(revision) AS first_revision FROM events
         WHERE revision > @revision AND ${keyRangeCondition(range)}
         GROUP BY key
       )
       SELECT key, value, create_revision, mod_revision FROM objects
       WHERE ${keyRangeCondition(range)} AND key NOT IN (SELECT key FROM changed)
       UNION ALL
       SELECT e.key, e.prev_value, e.create_revision, e.prev_mod_revision
       FROM changed JOIN events e ON e.revision = changed.first_revision
       WHERE e.type <> 'ADDED'
       ORDER BY key`,
    ).iterate({ revision, ...range });
  }

  private recordEvent(event: EventRow, createRevision: number): void {
    this.statement(
      `INSERT INTO events (revision, key, type, value, prev_value, create_revision, prev_mod_revision, created_at_ms)
       VALUES (@revision, @key, @type, @value, @prev_value, @createRevision, @prev_mod_revision, @createdAtMs)`,
    ).run({ ...event, createRevision, createdAtMs: Date.now() });
    this.batch!.events.push(event);
    this.historyBytes += (event.value?.length ?? 0) + (event.prev_value?.length ?? 0);
    if (this.historyBytes > this.retention.maxBytes) this.batch!.compactionRequested = true;
  }

  /** Runs a read now; while a batch is open its result waits for that batch, whose writes it may have seen. */
  private read<T>(operation: () => T): Promise<T> {
    const batch = this.batch;
    if (!batch) return Promise.resolve(operation());
    const value = operation();
    return new Promise((resolve, reject) => {
      batch.settlements.push({ afterCommit: () => resolve(value), onFailure: reject });
    });
  }

  /**
   * Runs a write now inside the open batch. A StorageError (failed precondition)
   * leaves the transaction untouched; any other error may have left it half
   * applied, so the whole batch is rolled back.
   */
  private write<T>(operation: () => T): Promise<T> {
    const batch = this.openBatch();
    return new Promise((resolve, reject) => {
      let afterCommit: () => void;
      try {
        const value = operation();
        afterCommit = () => resolve(value);
      } catch (error) {
        if (!(error instanceof StorageError)) {
          reject(error);
          this.abortBatch(batch, error);
          return;
        }
        afterCommit = () => reject(error);
      }
      batch.settlements.push({ afterCommit, onFailure: reject });
    });
  }

  private openBatch(): Batch {
    if (this.batch) return this.batch;
    this.statement('BEGIN IMMEDIATE').run();
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const batch: Batch = {
      settlements: [],
      events: [],
      compactionRequested: false,
      commitTimer: setImmediate(() => this.commitBatch(batch)),
      finished,
      finish,
    };
    this.batch = batch;
    return batch;
  }

  private commitBatch(batch: Batch): void {
    let compactedTo = this.compacted;
    try {
      if (batch.compactionRequested) compactedTo = this.compactWithinTransaction();
      if (this.pendingRevision !== this.committedRevision) {
        this.statement("UPDATE meta SET value = ? WHERE name = 'revision'").run(this.pendingRevision);
      }
      this.statement('COMMIT').run();
    } catch (error) {
      this.abortBatch(batch, error);
      return;
    }
    this.batch = undefined;
    this.committedRevision = this.pendingRevision;
    const freedHistory = compactedTo > this.compacted;
    this.compacted = compactedTo;
    this.publish(batch.events);
    for (const settlement of batch.settlements) settlement.afterCommit();
    batch.finish();
    if (freedHistory) this.returnFreePages().catch(this.onError);
  }

  /**
   * Returns the database's free pages to the file system, a bounded step at a time between batches,
   * and truncates the WAL; runs after every compaction that dropped events. Resolves when done.
   */
  returnFreePages(): Promise<void> {
    this.spaceReturn ??= (async () => {
      try {
        for (;;) {
          await setImmediatePromise();
          while (this.batch) await this.batch.finished;
          if (this.closed || !returnFreePagesStep(this.db)) return;
        }
      } finally {
        this.spaceReturn = undefined;
      }
    })();
    return this.spaceReturn;
  }

  private abortBatch(batch: Batch, error: unknown): void {
    clearImmediate(batch.commitTimer);
    this.batch = undefined;
    this.pendingRevision = this.committedRevision;
    try {
      if (this.db.inTransaction) this.statement('ROLLBACK').run();
      this.historyBytes = this.statement<number>(HISTORY_BYTES).pluck().get()!;
    } catch (rollbackError) {
      this.onError(rollbackError);
    }
    for (const settlement of batch.settlements) settlement.onFailure(error);
    batch.finish();
  }

  private compactWithinTransaction(): number {
    const { maxEvents, maxAgeMs } = this.retention;
    const firstYoungRevision = this.statement<number>('SELECT revision FROM events WHERE created_at_ms > ? ORDER BY revision LIMIT 1')
      .pluck()
      .get(Date.now() - maxAgeMs);
    const beyondAge = firstYoungRevision === undefined ? this.pendingRevision : firstYoungRevision - 1;
    const beyondCount = this.pendingRevision - maxEvents;
    const compactTo = Math.max(beyondAge, beyondCount, this.beyondBytes(), this.compacted);
    if (compactTo > this.compacted) {
      this.statement('DELETE FROM events WHERE revision <= ?').run(compactTo);
      this.statement("UPDATE meta SET value = ? WHERE name = 'compacted'").run(compactTo);
      this.historyBytes = this.statement<number>(HISTORY_BYTES).pluck().get()!;
    }
    return compactTo;
  }

  /** Past maxBytes, the newest revision whose dropping leaves at most three quarters of it; 0 below. */
  private beyondBytes(): number {
    const { maxBytes } = this.retention;
    if (this.historyBytes <= maxBytes) return 0;
    return (
      this.statement<number>(
        `SELECT revision FROM (SELECT revision, sum(${EVENT_BYTES}) OVER (ORDER BY revision DESC) AS newer FROM events)
         WHERE newer > ? ORDER BY revision DESC LIMIT 1`,
      )
        .pluck()
        .get(Math.floor((maxBytes * 3) / 4)) ?? 0
    );
  }

  private publish(events: EventRow[]): void {
    for (const row of events) {
      let event: WatchEvent | undefined;
      for (const watcher of this.watchers) {
        if (row.revision <= watcher.replayedThrough || !row.key.startsWith(watcher.prefix)) continue;
        event ??= toWatchEvent(row);
        this.deliver(watcher, event);
      }
    }
  }

  private deliver(watcher: Watcher, event: WatchEvent): void {
    if (!watcher.active) return;
    try {
      watcher.onEvent(event);
    } catch (error) {
      this.onError(error);
    }
  }
}

function toEntry(row: ObjectRow): Entry {
  return {
    key: row.key,
    value: parseWithResourceVersion(row.value, row.mod_revision),
    createRevision: row.create_revision,
    modRevision: row.mod_revision,
  };
}

function toWatchEvent(row: EventRow): WatchEvent {
  const event: WatchEvent = {
    type: row.type,
    key: row.key,
    revision: row.revision,
    value: parseWithResourceVersion(row.value ?? row.prev_value!, row.revision),
  };
  if (row.prev_value !== null) event.prevValue = parseWithResourceVersion(row.prev_value, row.prev_mod_revision!);
  return freezeShared(event);
}

/**
 * Keys are compared bytewise (UTF-8) by SQLite, so a range scan, unlike LIKE,
 * matches exactly the keys starting with the prefix and uses the primary key.
 */
function keyRange(prefix: string, startAfter: string | undefined): KeyRange {
  const upper = prefixUpperBound(prefix);
  if (startAfter !== undefined && startAfter >= prefix) return { lower: startAfter, lowerInclusive: false, upper };
  return { lower: prefix, lowerInclusive: true, upper };
}

function keyRangeCondition(range: KeyRange): string {
  const lower = `key ${range.lowerInclusive ? '>=' : '>'} @lower`;
  return range.upper === undefined ? lower : `${lower} AND key < @upper`;
}
