/**
 * Leader election, so that of several replicas sharing one store only one
 * drives OpenStack. The algorithm is client-go's leaderelection on a Lease:
 * - the holder renews every retryPeriod with a compare-and-swap on the
 *   lease's revision, and gives up (lost) when renewals have not succeeded
 *   for renewDeadline or when the swap finds someone else's write;
 * - a contender takes the lease over only when it has seen the same revision
 *   unchanged for the lease duration, timed on its own monotonic clock, so
 *   clock skew between replicas cannot shorten a lease;
 * - renewDeadline < leaseDuration, so a holder cut off from the store stops
 *   before anyone may take over.
 * Fencing: isLeader() also compares the renew deadline with the monotonic
 * clock, so a holder paused past its deadline (SIGSTOP, a long GC, a frozen
 * VM) knows it lost the lease before any timer has run; `fenceOf` turns that
 * into a check every write of the reconciler passes first (storage writes
 * and OpenStack calls that change something). Reconcilers still stay
 * idempotent and write with optimistic concurrency.
 *
 * The lease record lives in whatever holds objects with compare-and-swap:
 * this server's storage (SQLite, etcd), or a coordination.k8s.io Lease in
 * the management cluster (reconcile/sources/kubernetes-lease.ts).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { KeyExistsError, KeyNotFoundError, RevisionConflictError, type Entry, type JsonObject, type Storage } from '../../storage/interface.js';
import { sleep } from './sleep.js';
import { fallbackLogger } from '../../observability/log.js';

export interface LeaderLock {
  /**
   * Resolves once this replica leads (at once when it already does). Rejects
   * with signal.reason when signal aborts first, or when the lock is released
   * meanwhile.
   */
  acquire(signal: AbortSignal): Promise<void>;
  isLeader(): boolean;
  /** cb runs every time leadership is lost involuntarily; release() does not call it. */
  onLost(cb: () => void): void;
  /** Stops leading or contending and lets another replica take over at once. */
  release(): Promise<void>;
}

/** A single replica: leads from the start and never loses. */
export class AlwaysLeader implements LeaderLock {
  async acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
  }
  isLeader(): boolean {
    return true;
  }
  onLost(): void {}
  async release(): Promise<void> {}
}

/** What a lease's name must be, as a Kubernetes object's name (RFC 1123 subdomain). */
export const dnsSubdomain = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** What a lease record needs: read, create and compare-and-swap, with the storage contract's errors. */
export type LeaseStorage = Pick<Storage, 'get' | 'create' | 'update'>;

export class NotLeaderError extends Error {
  override name = 'NotLeaderError';
}

/** A check that throws NotLeaderError unless `lock` leads right now. */
export function fenceOf(lock: LeaderLock): () => void {
  return () => {
    if (!lock.isLeader()) throw new NotLeaderError('this replica does not hold the leader lease');
  };
}

export interface StorageLeaseLockOptions {
  storage: LeaseStorage;
  /** The lease lives at /leases/<name>; replicas contending for one role share it. */
  name: string;
  /** Unique per replica. Default: hostname and a random UUID, so a restarted process is a new candidate. */
  identity?: string;
  /** How long others wait for a silent holder. Default 12 s: with one retry period, a takeover within 15 s. */
  leaseDurationMs?: number;
  /** How long the holder keeps leading without a successful renewal. Default 8 s. */
  renewDeadlineMs?: number;
  /** Interval of renewals and of acquisition attempts. Default 2 s. */
  retryPeriodMs?: number;
  /** Receives storage errors while acquiring or renewing, which are retried. Default: logged as an error. */
  onError?: (error: unknown) => void;
  /**
   * Asked before taking the lease from no one (released or expired); while it says no, the lock only
   * watches the lease, timing its holder as usual. Sharding (shards.ts) uses it so that the replica a
   * shard is assigned to takes it, at once when its holder dies. Default: always.
   */
  mayAcquire?: () => boolean;
}

/** The fields of coordination.k8s.io/v1 LeaseSpec that leader election uses. */
const leaseSpecSchema = z.object({
  /** Empty once released: anyone may take the lease at once. */
  holderIdentity: z.string(),
  /** Fractional for sub-second test leases; contenders honour the holder's value, not their own. */
  leaseDurationSeconds: z.number().positive(),
  acquireTime: z.string(),
  renewTime: z.string(),
  leaseTransitions: z.number().int().nonnegative(),
});

export type LeaseSpec = z.infer<typeof leaseSpecSchema>;

interface Held {
  /** Revision of our last write of the lease, the CAS precondition of the next. */
  modRevision: number;
  spec: LeaseSpec;
}

export class StorageLeaseLock implements LeaderLock {
  readonly identity: string;
  private readonly storage: LeaseStorage;
  private readonly name: string;
  private readonly key: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly mayAcquire: () => boolean;
  private readonly lostCallbacks: (() => void)[] = [];
  /** Set exactly while leading. */
  private held: Held | undefined;
  /** The lease revision last seen and when (monotonic), to time other holders' leases. */
  private observed: { modRevision: number; at: number } | undefined;
  private attempt: Promise<boolean> | undefined;
  private stopContending: AbortController | undefined;
  private renewing: Promise<void> | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  /** When (monotonic) leadership ends without a renewal. */
  private deadlineAt = 0;

  constructor(options: StorageLeaseLockOptions) {
    this.storage = options.storage;
    this.name = options.name;
    this.key = `/leases/${options.name}`;
    this.identity = options.identity ?? `${hostname()}_${randomUUID()}`;
    this.leaseDurationMs = options.leaseDurationMs ?? 12_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 8_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.onError = options.onError ?? ((error) => fallbackLogger.error({ component: 'reconcile', lease: this.name, err: error }, 'leader lease error'));
    this.mayAcquire = options.mayAcquire ?? (() => true);
    if (!dnsSubdomain.test(this.name)) throw new Error(`lease name ${JSON.stringify(this.name)} is not a DNS subdomain`);
    if (this.identity === '') throw new Error('lease identity must not be empty');
    if (!(this.leaseDurationMs > this.renewDeadlineMs && this.renewDeadlineMs > this.retryPeriodMs && this.retryPeriodMs > 0)) {
      throw new Error('lease timing needs leaseDurationMs > renewDeadlineMs > retryPeriodMs > 0');
    }
  }

  /** Acquisition goes on in the background until it succeeds or release() is called; signal only ends this caller's wait. */
  async acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.held) return;
    this.attempt ??= this.contend();
    if (!(await untilAborted(this.attempt, signal))) throw new Error(`lease ${this.name} was released while acquiring it`);
  }

  isLeader(): boolean {
    return this.held !== undefined && performance.now() < this.deadlineAt;
  }

  /**
   * Whether this replica has the lease and has not lost or released it, even if a renewal is late
   * right now (isLeader, which fences writes, says no until it lands). What decides whose work an
   * object is: a late renewal must not drop work that stays ours once it lands.
   */
  holdsLease(): boolean {
    return this.held !== undefined;
  }

  onLost(cb: () => void): void {
    this.lostCallbacks.push(cb);
  }

  async release(): Promise<void> {
    this.stopContending?.abort();
    // An attempt ends after its current try, which may still win the lease.
    await this.attempt;
    const held = this.held;
    if (!held) return;
    this.resign();
    // Our last renewal may still land; the release must swap against its revision.
    await this.renewing;
    const spec = { ...held.spec, holderIdentity: '', renewTime: new Date().toISOString() };
    try {
      await this.storage.update(this.key, leaseObject(this.name, spec), held.modRevision);
    } catch (error) {
      // Someone else wrote the lease since: it is not ours to release.
      if (!(error instanceof RevisionConflictError || error instanceof KeyNotFoundError)) throw error;
    }
  }

  private contend(): Promise<boolean> {
    const stop = new AbortController();
    this.stopContending = stop;
    const attempt = async () => {
      while (!stop.signal.aborted) {
        try {
          if (await this.tryAcquire()) return true;
        } catch (error) {
          this.onError(error);
        }
        await sleep(this.retryPeriodMs, stop.signal);
      }
      return false;
    };
    return attempt().finally(() => {
      this.attempt = undefined;
    });
  }

  private async tryAcquire(): Promise<boolean> {
    // Timing the deadline from before the read errs on the side of resigning early.
    const startedAt = performance.now();
    const entry = await this.storage.get(this.key);
    const now = new Date().toISOString();
    if (entry === undefined) {
      if (!this.mayAcquire()) return false;
      const spec = this.specFor(undefined, now);
      try {
        return this.won(await this.storage.create(this.key, leaseObject(this.name, spec)), spec, startedAt);
      } catch (error) {
        if (error instanceof KeyExistsError) return false;
        throw error;
      }
    }
    // Timed from after the read: the revision was written no later than that.
    if (this.observed?.modRevision !== entry.modRevision) this.observed = { modRevision: entry.modRevision, at: performance.now() };
    const current = parseLeaseSpec(entry.value);
    const holder = current?.holderIdentity;
    if (holder !== this.identity && holder !== '') {
      // An unreadable lease may come from a newer release: wait it out for our own duration rather than take it.
      const validMs = current ? current.leaseDurationSeconds * 1000 : this.leaseDurationMs;
      if (performance.now() - this.observed.at < validMs) return false;
    }
    if (holder !== this.identity && !this.mayAcquire()) return false;
    const spec = this.specFor(current, now);
    try {
      return this.won(await this.storage.update(this.key, leaseObject(this.name, spec), entry.modRevision), spec, startedAt);
    } catch (error) {
      if (error instanceof RevisionConflictError || error instanceof KeyNotFoundError) return false;
      throw error;
    }
  }

  private specFor(current: LeaseSpec | undefined, now: string): LeaseSpec {
    const ours = current?.holderIdentity === this.identity;
    return {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.leaseDurationMs / 1000,
      acquireTime: ours ? current.acquireTime : now,
      renewTime: now,
      leaseTransitions: (current?.leaseTransitions ?? 0) + (current === undefined || ours ? 0 : 1),
    };
  }

  private won(entry: Entry, spec: LeaseSpec, startedAt: number): true {
    const held: Held = { modRevision: entry.modRevision, spec };
    this.held = held;
    this.armDeadline(startedAt);
    this.scheduleRenewal(held);
    return true;
  }

  private scheduleRenewal(held: Held): void {
    this.renewTimer = setTimeout(() => {
      this.renewing = this.renew(held).finally(() => {
        this.renewing = undefined;
      });
    }, this.retryPeriodMs);
  }

  private async renew(held: Held): Promise<void> {
    const startedAt = performance.now();
    const spec = { ...held.spec, renewTime: new Date().toISOString() };
    try {
      const entry = await this.storage.update(this.key, leaseObject(this.name, spec), held.modRevision);
      held.modRevision = entry.modRevision;
      held.spec = spec;
      if (this.held === held) this.armDeadline(startedAt);
    } catch (error) {
      if (this.held !== held) return;
      if (error instanceof RevisionConflictError || error instanceof KeyNotFoundError) {
        this.lose();
        return;
      }
      // Transient: keep trying until the deadline says otherwise.
      this.onError(error);
    }
    if (this.held === held) this.scheduleRenewal(held);
  }

  private armDeadline(renewalStartedAt: number): void {
    clearTimeout(this.deadlineTimer);
    this.deadlineAt = renewalStartedAt + this.renewDeadlineMs;
    this.deadlineTimer = setTimeout(() => this.lose(), Math.max(0, this.deadlineAt - performance.now()));
  }

  private lose(): void {
    if (!this.held) return;
    this.resign();
    for (const cb of this.lostCallbacks) {
      try {
        cb();
      } catch (error) {
        this.onError(error);
      }
    }
  }

  private resign(): void {
    this.held = undefined;
    clearTimeout(this.renewTimer);
    clearTimeout(this.deadlineTimer);
  }
}

function leaseObject(name: string, spec: LeaseSpec): JsonObject {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec };
}

/** The lease's spec, parsed for leader election; undefined for a value that is no such lease. */
export function parseLeaseSpec(value: JsonObject): LeaseSpec | undefined {
  const parsed = leaseSpecSchema.safeParse(value.spec);
  return parsed.success ? parsed.data : undefined;
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
