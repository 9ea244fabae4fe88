/**
 * Storage on etcd v3, for several replicas of the server on the etcd a platform team already runs
 * (under a prefix of its own, as openshift-apiserver shares the cluster's etcd). The contract was
 * shaped after etcd's model, so this is an adapter: the global revision is etcd's, writes are
 * transactions comparing the key's create or mod revision, lists are ranges at one revision
 * (pages read at the first page's revision), watches are etcd watches with prev_kv.
 *
 * The `etcd3` package provides the gRPC connection (TLS, endpoints, reconnects) and its KV and
 * watch clients; watch responses are read raw so that compaction and resumption are handled here.
 *
 * Differences from SQLite callers must allow for: watch events arrive asynchronously after the
 * write is acknowledged (in revision order per watch), and other replicas' writes arrive too.
 *
 * Compaction, as kube-apiserver does it and safe with several replicas: every interval one replica
 * wins a compare-and-swap on `<prefix>#compact_rev_key` that records the revision seen at the
 * previous interval, and compacts etcd to it; so at least one interval of history stays for
 * watches and snapshot lists. The key also tells every replica how far history was compacted.
 */
import type { Etcd3, IKeyValue, IRangeResponse, IResponseHeader, IWatchCreateRequest, IWatchResponse, Watcher as EtcdWatcher } from 'etcd3';
import { Etcd3 as EtcdClient, GRPCUnavailableError } from 'etcd3';
import { circuitBreaker, ConsecutiveBreaker, ExponentialBackoff, handleType, handleWhen, noop, retry, wrap, type IPolicy } from 'cockatiel';
import { readFileSync } from 'node:fs';
import { fallbackLogger } from '../observability/log.js';
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
  type WatchRequest,
} from './interface.js';
import { isJsonObject } from './json.js';
import { prefixUpperBound } from './key-range.js';
import { UncachedStorage } from './uncached.js';
import { freezeShared, parseWithResourceVersion, serializeWithoutResourceVersion, withResourceVersion } from './values.js';

export interface EtcdStorageOptions {
  /** Client URLs, e.g. https://10.0.0.1:2379 (kube-apiserver's --etcd-servers). */
  servers: string[];
  /** Every key of this server lives under it (default /capo-apiserver). */
  prefix?: string;
  /** PEM files: the CA that signed etcd's serving certificates, and this client's certificate and key. */
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  /** How often history is compacted (kube-apiserver: 5 minutes); 0 turns compaction off. */
  compactionIntervalMs?: number;
  /** Deadline of each request to etcd (default 10 s). */
  requestTimeoutMs?: number;
  /** Receives errors no caller can be told about (a throwing watch callback, a failed compaction). Default: logged. */
  onError?: (error: unknown) => void;
}

export const defaultEtcdPrefix = '/capo-apiserver';
const defaultCompactionIntervalMs = 5 * 60_000;
/** Keys read per range request while a filter drops entries. */
const pageSize = 500;

const compactedMessage = 'required revision has been compacted';
const futureMessage = 'required revision is a future revision';

export class EtcdStorage extends UncachedStorage implements Storage {
  private readonly client: Etcd3;
  private readonly prefix: string;
  private readonly compactKey: Buffer;
  /** Written in every write's transaction: its mod revision is this store's current revision. */
  private readonly writeKey: Buffer;
  private readonly requestTimeoutMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly watchers = new Set<EtcdWatcher>();
  private readonly compactionTimer: NodeJS.Timeout | undefined;
  /** The highest compacted revision this replica knows of. */
  private compacted = 0;
  private closed = false;

  private constructor(options: EtcdStorageOptions) {
    super();
    if (options.servers.length === 0) throw new StorageError('etcd storage needs at least one server (--etcd-servers)');
    const read = (file: string | undefined) => (file === undefined ? undefined : readFileSync(file));
    const rootCertificate = read(options.caFile);
    this.client = new EtcdClient({
      hosts: options.servers,
      faultHandling: faultHandling(options.servers.length),
      // etcd answers a watch catching up with up to 1,000 revisions in one message: 4 MB of 4 KB objects, grpc-js's
      // default limit. Past it the stream fails, resumes at the same revision, and fails again, for ever; etcd's own
      // Go client takes up to 2 GiB, as here.
      grpcOptions: { 'grpc.max_receive_message_length': 2 ** 31 - 1 },
      ...(rootCertificate && { credentials: { rootCertificate, certChain: read(options.certFile), privateKey: read(options.keyFile) } }),
    });
    this.prefix = (options.prefix ?? defaultEtcdPrefix).replace(/\/+$/, '');
    // Beside the objects (`<prefix>/...`), never inside a range or watch of them.
    this.compactKey = Buffer.from(`${this.prefix}#compact_rev_key`);
    this.writeKey = Buffer.from(`${this.prefix}#last_write`);
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.onError = options.onError ?? ((error) => fallbackLogger.error({ component: 'storage', err: error }, 'etcd storage error'));
    const interval = options.compactionIntervalMs ?? defaultCompactionIntervalMs;
    if (interval > 0) {
      this.compactionTimer = setInterval(() => this.compact().catch(this.onError), interval);
      this.compactionTimer.unref();
    }
  }

  /** Connects and reads how far history is compacted; fails when etcd does not answer. */
  static async open(options: EtcdStorageOptions): Promise<EtcdStorage> {
    const storage = new EtcdStorage(options);
    try {
      await storage.compactedRevision();
    } catch (error) {
      await storage.close();
      throw new StorageError(`etcd at ${options.servers.join(', ')} does not answer: ${describe(error)}`, { cause: error });
    }
    return storage;
  }

  /** The revision of this store's latest write: etcd's own revision also counts other tenants' writes, which no watch of ours sees. */
  async currentRevision(): Promise<number> {
    const response = await this.call(() => this.client.kv.range({ key: this.writeKey }, this.deadline()));
    return response.kvs[0] ? Number(response.kvs[0].mod_revision) : 0;
  }

  async compactedRevision(): Promise<number> {
    const response = await this.call(() => this.client.kv.range({ key: this.compactKey }, this.deadline()));
    const recorded = response.kvs[0] ? parseCompaction(response.kvs[0].value).compacted : 0;
    this.compacted = Math.max(this.compacted, recorded);
    return this.compacted;
  }

  async get(key: string): Promise<Entry | undefined> {
    const response = await this.call(() => this.client.kv.range({ key: Buffer.from(this.etcdKey(key)) }, this.deadline()));
    return response.kvs[0] && this.toEntry(response.kvs[0]);
  }

  async list(prefix: string, request: ListRequest = {}): Promise<ListResult> {
    const { revision, startAfter, limit, filter } = request;
    if (revision !== undefined && revision < this.compacted) throw new TooOldRevisionError(revision, this.compacted);
    const rangeEnd = Buffer.from(prefixUpperBound(this.etcdPrefix(prefix))!);
    let from = startAfter !== undefined && startAfter >= prefix ? `${this.etcdKey(startAfter)}\0` : this.etcdPrefix(prefix);
    let listRevision = revision;
    const entries: Entry[] = [];
    for (;;) {
      // Without a filter, one more than the limit tells whether more follow.
      const want = filter || !limit ? pageSize : limit - entries.length + 1;
      const page = { key: Buffer.from(from), range_end: rangeEnd, limit: want };
      let response: IRangeResponse;
      if (listRevision === undefined) {
        // The first page and the store's last write in one snapshot: the list is as of that write, which
        // is where later pages and a watch resume (nothing of ours changed up to etcd's revision).
        const read = await this.call(() =>
          this.client.kv.txn({ success: [{ request_range: { key: this.writeKey } }, { request_range: page }] }, this.deadline()),
        );
        const lastWrite = read.responses[0]!.response_range.kvs[0];
        listRevision = lastWrite ? Number(lastWrite.mod_revision) : 0;
        response = read.responses[1]!.response_range;
      } else {
        const pinned = listRevision;
        response = await this.call(() => this.client.kv.range({ ...page, revision: pinned }, this.deadline()), pinned);
      }
      for (const kv of response.kvs) {
        const entry = this.toEntry(kv);
        if (filter && !filter(entry.value)) continue;
        if (limit && entries.length === limit) return { entries, revision: listRevision, more: true };
        entries.push(entry);
      }
      if (!response.more || response.kvs.length === 0) return { entries, revision: listRevision, more: false };
      from = `${response.kvs[response.kvs.length - 1]!.key.toString()}\0`;
    }
  }

  async create(key: string, value: JsonObject): Promise<Entry> {
    const etcdKey = Buffer.from(this.etcdKey(key));
    const json = Buffer.from(serializeWithoutResourceVersion(key, value));
    const response = await this.call(() =>
      this.client.kv.txn(
        {
          compare: [{ key: etcdKey, target: 'Create', result: 'Equal', create_revision: 0 }],
          success: [{ request_put: { key: etcdKey, value: json } }, this.recordWrite()],
        },
        this.deadline(),
      ),
    );
    if (!response.succeeded) throw new KeyExistsError(key);
    const revision = revisionOf(response.header);
    return { key, value: withResourceVersion(value, revision), createRevision: revision, modRevision: revision };
  }

  async update(key: string, value: JsonObject, expectedModRevision: number): Promise<Entry> {
    const etcdKey = Buffer.from(this.etcdKey(key));
    const json = Buffer.from(serializeWithoutResourceVersion(key, value));
    const response = await this.call(() =>
      this.client.kv.txn(
        {
          compare: [{ key: etcdKey, target: 'Mod', result: 'Equal', mod_revision: expectedModRevision }],
          // The key's create_revision comes back with its metadata alone: the old value is not sent.
          success: [{ request_put: { key: etcdKey, value: json } }, this.recordWrite(), { request_range: { key: etcdKey, keys_only: true } }],
          failure: [{ request_range: { key: etcdKey } }],
        },
        this.deadline(),
      ),
    );
    if (!response.succeeded) throw this.casFailure(key, expectedModRevision, response.responses[0]?.response_range.kvs[0]);
    const revision = revisionOf(response.header);
    const written = response.responses[2]!.response_range.kvs[0]!;
    return { key, value: withResourceVersion(value, revision), createRevision: Number(written.create_revision), modRevision: revision };
  }

  async delete(key: string, expectedModRevision?: number): Promise<Entry> {
    const etcdKey = Buffer.from(this.etcdKey(key));
    const guard =
      expectedModRevision === undefined
        ? { key: etcdKey, target: 'Create' as const, result: 'Greater' as const, create_revision: 0 }
        : { key: etcdKey, target: 'Mod' as const, result: 'Equal' as const, mod_revision: expectedModRevision };
    const response = await this.call(() =>
      this.client.kv.txn(
        {
          compare: [guard],
          success: [{ request_delete_range: { key: etcdKey, prev_kv: true } }, this.recordWrite()],
          failure: [{ request_range: { key: etcdKey } }],
        },
        this.deadline(),
      ),
    );
    if (!response.succeeded) throw this.casFailure(key, expectedModRevision ?? 0, response.responses[0]?.response_range.kvs[0]);
    const revision = revisionOf(response.header);
    const last = response.responses[0]!.response_delete_range.prev_kvs[0]!;
    return { key, value: parseWithResourceVersion(last.value.toString(), revision), createRevision: Number(last.create_revision), modRevision: revision };
  }

  watch(request: WatchRequest): Watch {
    const { prefix, afterRevision, onEvent, onError } = request;
    if (afterRevision < this.compacted) throw new TooOldRevisionError(afterRevision, this.compacted);
    let active = true;
    let delivered = afterRevision;
    let watcher: EtcdWatcher | undefined;
    const end = (error: StorageError) => {
      if (!active) return;
      active = false;
      stop();
      onError?.(error);
    };
    const stop = () => {
      active = false;
      if (watcher) {
        this.watchers.delete(watcher);
        void watcher.cancel().catch(() => undefined);
      }
    };
    const start = async () => {
      // etcd waits for a future revision; the contract refuses it, as SQLite does.
      const current = await this.currentRevision();
      if (afterRevision > current) return end(new FutureRevisionError(afterRevision, current));
      if (!active) return;
      const range = this.client
        .watch()
        .prefix(this.etcdPrefix(prefix))
        .withPreviousKV()
        .startRevision(String(afterRevision + 1));
      watcher = range.watcher();
      this.watchers.add(watcher);
      // etcd3 resumes a reconnected watch after the header revision of the last response it read, and
      // a response's header is etcd's revision when it was sent: events of a catch-up still on the way
      // would be skipped. The create request it is about to send resumes after what this watch delivered.
      watcher.on('connecting', (request) => {
        // What etcd3 hands this event is the watcher's own create request, the one it writes next.
        (request as IWatchCreateRequest).start_revision = String(delivered + 1);
      });
      watcher.on('disconnected', (error: unknown) =>
        this.onError(new StorageError(`etcd watch stream lost (${describe(error)}): resuming after revision ${delivered}`)),
      );
      watcher.on('data', (response: IWatchResponse) => {
        for (const event of response.events) {
          if (!active) return;
          const converted = this.toWatchEvent(event.type, event.kv, event.prev_kv);
          delivered = converted.revision;
          try {
            onEvent(converted);
          } catch (error) {
            this.onError(error);
          }
        }
      });
      // A watch etcd cancels (its revision compacted) or that cannot be set up: find out which, then end it.
      // etcd3 has already dropped the watcher. Cancelling it again would ask etcd to cancel a watch etcd
      // still answers for, and etcd3 throws at an answer for a watcher it no longer has, outside any
      // handler: the process exits. A replica whose watch fell behind compaction died that way.
      watcher.on('error', () => {
        this.watchers.delete(watcher!);
        watcher = undefined;
        void this.classifyWatchEnd(delivered).then(end, end);
      });
    };
    start().catch((error: unknown) => end(error instanceof StorageError ? error : new StorageError(describe(error), { cause: error })));
    // Only what arrived: events still in flight from etcd may sit below any revision read now.
    return { stop, progress: async () => delivered };
  }

  async check(): Promise<void> {
    await this.currentRevision();
  }

  /**
   * One round of compaction (see the module comment). Resolves to the compacted revision as this
   * replica knows it afterwards.
   */
  async compact(): Promise<number> {
    const response = await this.call(() => this.client.kv.range({ key: this.compactKey }, this.deadline()));
    const record = response.kvs[0];
    const { compacted, mark } = record ? parseCompaction(record.value) : { compacted: 0, mark: 0 };
    // Marks are this store's revisions, so no list or watch it hands out is older than what it compacts.
    const current = await this.currentRevision();
    const claimed = await this.call(() =>
      this.client.kv.txn(
        {
          compare: [{ key: this.compactKey, target: 'Mod', result: 'Equal', mod_revision: record ? Number(record.mod_revision) : 0 }],
          success: [{ request_put: { key: this.compactKey, value: Buffer.from(JSON.stringify({ compacted: Math.max(compacted, mark), mark: current })) } }],
        },
        this.deadline(),
      ),
    );
    // Another replica compacted this round.
    if (!claimed.succeeded) return this.compactedRevision();
    if (mark > compacted) {
      await this.call(() => this.client.kv.compact({ revision: mark }, this.deadline())).catch((error: unknown) => {
        if (!describe(error).includes(compactedMessage)) throw error;
      });
    }
    this.compacted = Math.max(this.compacted, mark, compacted);
    return this.compacted;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.compactionTimer);
    await Promise.all([...this.watchers].map((watcher) => watcher.cancel().catch(() => undefined)));
    this.watchers.clear();
    this.client.close();
  }

  private etcdKey(key: string): string {
    return this.prefix + key;
  }

  /** Keys all start with `/`, so the store's whole range is `<prefix>/`, leaving `<prefix>#...` to the store's own records. */
  private etcdPrefix(prefix: string): string {
    return this.prefix + (prefix === '' ? '/' : prefix);
  }

  private recordWrite(): { request_put: { key: Buffer; value: Buffer } } {
    return { request_put: { key: this.writeKey, value: Buffer.alloc(0) } };
  }

  private storageKey(kv: IKeyValue): string {
    return kv.key.toString().slice(this.prefix.length);
  }

  private toEntry(kv: IKeyValue): Entry {
    const modRevision = Number(kv.mod_revision);
    return {
      key: this.storageKey(kv),
      value: parseWithResourceVersion(kv.value.toString(), modRevision),
      createRevision: Number(kv.create_revision),
      modRevision,
    };
  }

  private toWatchEvent(type: string, kv: IKeyValue, previous: IKeyValue | undefined): WatchEvent {
    const revision = Number(kv.mod_revision);
    const prevValue = previous && previous.key.length > 0 ? parseWithResourceVersion(previous.value.toString(), Number(previous.mod_revision)) : undefined;
    const key = this.storageKey(kv);
    if (type === 'Delete') {
      // etcd's delete event carries only the key; the last state is the previous one, at the deletion revision.
      const last = prevValue ? structuredClone(prevValue) : { metadata: {} };
      if (isJsonObject(last.metadata)) last.metadata.resourceVersion = String(revision);
      return freezeShared({ type: 'DELETED', key, revision, value: last, ...(prevValue && { prevValue }) });
    }
    const value = parseWithResourceVersion(kv.value.toString(), revision);
    const added = kv.create_revision === kv.mod_revision;
    return freezeShared({ type: added ? 'ADDED' : 'MODIFIED', key, revision, value, ...(!added && prevValue && { prevValue }) });
  }

  /** Why a watch that delivered through `delivered` ended: its next revision compacted, or something else. */
  private async classifyWatchEnd(delivered: number): Promise<StorageError> {
    try {
      await this.call(() => this.client.kv.range({ key: this.compactKey, revision: delivered + 1 }, this.deadline()), delivered + 1);
      return new StorageError('the etcd watch was cancelled');
    } catch (error) {
      return error instanceof StorageError ? error : new StorageError(describe(error), { cause: error });
    }
  }

  private casFailure(key: string, expected: number, current: IKeyValue | undefined): StorageError {
    if (!current) return new KeyNotFoundError(key);
    return new RevisionConflictError(key, expected, Number(current.mod_revision));
  }

  private deadline(): { deadline: Date } {
    return { deadline: new Date(Date.now() + this.requestTimeoutMs) };
  }

  /** Runs a request, turning etcd's revision errors into the contract's (`revision` names the revision read at). */
  private async call<T>(request: () => Promise<T>, revision?: number): Promise<T> {
    if (this.closed) throw new StorageError('storage is closed');
    try {
      return await request();
    } catch (error) {
      const message = describe(error);
      if (message.includes(compactedMessage)) {
        const compacted = await this.compactedRevision().catch(() => this.compacted);
        throw new TooOldRevisionError(revision ?? 0, Math.max(compacted, (revision ?? 0) + 1));
      }
      if (message.includes(futureMessage)) throw new FutureRevisionError(revision ?? 0, await this.currentRevision().catch(() => 0));
      throw new StorageError(`etcd: ${message}`, { cause: error });
    }
  }
}

/**
 * etcd3's defaults retry every "recoverable" error three times and open a five-second circuit
 * breaker per member after three in a row; a request past its deadline counts, and its retries
 * fail at once (the deadline has passed), so one slow moment under load shut a replica off from
 * its only etcd for five seconds, failing every request meanwhile. Here a request is retried on
 * another member only when one was unreachable (UNAVAILABLE), never after its deadline (it may
 * have been applied), and the breaker, which only helps steer away from a dead member, exists only
 * when there is another member to steer to, opening on unreachable members alone, for a second.
 */
function faultHandling(members: number): { host: () => IPolicy; global: IPolicy } {
  const unreachable = handleType(GRPCUnavailableError);
  return {
    host: () => (members > 1 ? circuitBreaker(unreachable, { halfOpenAfter: 1000, breaker: new ConsecutiveBreaker(3) }) : noop),
    global: wrap(
      retry(neverSent, { maxAttempts: 2, backoff: new ExponentialBackoff({ initialDelay: 20, maxDelay: 200 }) }),
      retry(unreachable, { maxAttempts: Math.min(members, 3) - 1 }),
    ),
  };
}

/**
 * etcd3 closes a member's gRPC channel when one call on it fails, and the calls starting on it at
 * that moment fail with "Channel closed before call started": they never reached etcd, so trying
 * them again (on a new channel) is safe even for writes, with one member as with several. Under
 * load on one etcd this failed a client's create with a 500.
 */
const neverSent = handleWhen((error) => error instanceof GRPCUnavailableError && error.message.includes('before call started'));

function revisionOf(header: IResponseHeader): number {
  return Number(header.revision);
}

function parseCompaction(value: Buffer): { compacted: number; mark: number } {
  try {
    const parsed = JSON.parse(value.toString()) as { compacted?: unknown; mark?: unknown };
    return { compacted: Number(parsed.compacted) || 0, mark: Number(parsed.mark) || 0 };
  } catch {
    return { compacted: 0, mark: 0 };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
