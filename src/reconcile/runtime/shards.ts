/**
 * The reconciler sharded across replicas, for a management plane past what one leader reconciles:
 * every object belongs to the shard of its group (a hash of the group's name; the controller's owner
 * names an object's group, CAPO's reconcilers its cluster: reconcile/cluster-shards.ts), each shard
 * is a lease (StorageLeaseLock, so fencing and takeover timing are the leader lease's), and each
 * replica reconciles the shards whose leases it holds.
 *
 * Who holds what: every replica keeps a member lease (`<name>-member-<id>`) renewed, lists the
 * member leases each retry period, and counts a member alive while its lease's revision keeps
 * changing (timed on its own monotonic clock, as the lock times a holder, so clock skew does not
 * matter). From the same set of members every replica computes the same assignment: each shard goes
 * to the member ranked highest for it by a hash of (member, shard) among those below the fair share
 * ceil(shards / members), so shards are balanced and a member's departure moves little but its own
 * shards. A replica contends for every shard lease (so it times each holder) but takes only those
 * assigned to it, and releases those no longer assigned, which their new owner takes at its next try.
 * A replica killed with -9 stops renewing: its member lease goes stale after the lease duration, at
 * which point its shards' leases have been silent as long, and their new owners take them at once.
 *
 * Fencing: a reconcile runs inside its shard's context (AsyncLocalStorage), and `fence` checks that
 * shard's lease, so a replica paused past its deadline writes nothing for any shard it lost.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Storage } from '../../storage/interface.js';
import { fallbackLogger } from '../../observability/log.js';
import type { Sharding } from './controller.js';
import { NotLeaderError, parseLeaseSpec, StorageLeaseLock, type LeaderLock, type LeaseStorage } from './leader.js';

/** What membership needs beyond a lease: listing the members' leases, and removing long-dead ones. */
export type MemberStorage = LeaseStorage & Pick<Storage, 'list' | 'delete'>;

export interface ShardedLeadershipOptions {
  storage: MemberStorage;
  /** Shard leases are `<name>-shard-<i>`, member leases `<name>-member-<id>`. */
  name: string;
  shards: number;
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onError?: (error: unknown) => void;
}

/** A member lease unchanged this long is removed by whoever sees it (a replica that died long ago). */
const forgetMemberAfterMs = 60 * 60_000;

/** Which shard the objects of `group` are in. */
export function shardOfGroup(group: string, shards: number): number {
  return createHash('sha256').update(group).digest().readUInt32BE(0) % shards;
}

/**
 * The assignment every replica computes alike: shard by shard, the member ranked highest for it
 * (hash of member and shard) that still has fewer than ceil(shards / members).
 */
export function assignShards(members: string[], shards: number): string[] {
  const share = Math.ceil(shards / members.length);
  const load = new Map(members.map((member) => [member, 0]));
  const owners: string[] = [];
  for (let shard = 0; shard < shards; shard++) {
    const ranked = [...members].sort((a, b) => rank(b, shard) - rank(a, shard) || (a < b ? -1 : 1));
    const owner = ranked.find((member) => load.get(member)! < share)!;
    load.set(owner, load.get(owner)! + 1);
    owners.push(owner);
  }
  return owners;
}

function rank(member: string, shard: number): number {
  return createHash('sha256').update(`${member}#${shard}`).digest().readUInt32BE(0);
}

export class ShardedLeadership implements LeaderLock, Sharding {
  readonly identity: string;
  readonly shards: number;
  private readonly storage: MemberStorage;
  private readonly name: string;
  private readonly retryPeriodMs: number;
  private readonly leaseDurationMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly member: StorageLeaseLock;
  private readonly locks: StorageLeaseLock[];
  private readonly context = new AsyncLocalStorage<number>();
  /** Member lease revisions as last seen and when (monotonic). */
  private readonly seen = new Map<string, { modRevision: number; at: number }>();
  private assigned = new Set<number>();
  private members: string[] = [];
  private readonly acquiredCallbacks: ((shard: number) => void)[] = [];
  private readonly releasedCallbacks: ((shard: number) => void)[] = [];
  private readonly lostCallbacks: (() => void)[] = [];
  private readonly membersCallbacks: ((count: number) => void)[] = [];
  private readonly stopped = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(options: ShardedLeadershipOptions) {
    if (!Number.isInteger(options.shards) || options.shards < 1) throw new Error('shards must be a positive integer');
    this.storage = options.storage;
    this.name = options.name;
    this.shards = options.shards;
    this.identity = options.identity ?? `${hostname()}_${randomUUID()}`;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.leaseDurationMs = options.leaseDurationMs ?? 12_000;
    this.onError = options.onError ?? ((error) => fallbackLogger.error({ component: 'reconcile', err: error }, 'shard lease error'));
    const timing = {
      leaseDurationMs: this.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs,
      retryPeriodMs: this.retryPeriodMs,
      onError: this.onError,
    };
    const memberId = createHash('sha256').update(this.identity).digest('hex').slice(0, 12);
    this.member = new StorageLeaseLock({ storage: this.storage, name: `${this.name}-member-${memberId}`, identity: this.identity, ...timing });
    this.locks = Array.from(
      { length: this.shards },
      (_, shard) =>
        new StorageLeaseLock({
          storage: this.storage,
          name: `${this.name}-shard-${shard}`,
          identity: this.identity,
          mayAcquire: () => this.assigned.has(shard),
          ...timing,
        }),
    );
    this.locks.forEach((lock, shard) => {
      lock.onLost(() => this.shardLost(shard));
    });
  }

  /** Joins: keeps the member lease and the assigned shards until release(). Resolves once some shard is held. */
  async acquire(signal: AbortSignal): Promise<void> {
    this.loop ??= this.run();
    if (this.isLeader()) return;
    signal.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.waiters.delete(wake);
        reject(signal.reason);
      };
      const wake = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.waiters.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Whether this replica holds any shard's lease, even while a renewal is late: controllers keep their
   * term through a stall and its writes are fenced per shard, so nothing waits for an acquisition that
   * will not come because the shards never left.
   */
  isLeader(): boolean {
    return this.locks.some((lock) => lock.holdsLease());
  }

  shardOf(group: string): number {
    return shardOfGroup(group, this.shards);
  }

  /**
   * Whether a shard is this replica's work: its lease is held, even while a renewal is late. Writes
   * are fenced by the stricter check (fence), so work done meanwhile fails and is retried rather
   * than dropped; dropping it on a late renewal would strand its objects until their resync.
   */
  holds(shard: number): boolean {
    return this.locks[shard]?.holdsLease() ?? false;
  }

  /** The shards held now. */
  held(): number[] {
    return this.locks.flatMap((lock, shard) => (lock.holdsLease() ? [shard] : []));
  }

  /** Runs `fn` as work of `shard`: `fence` checks that shard's lease inside it. */
  within<T>(shard: number, fn: () => T): T {
    return this.context.run(shard, fn);
  }

  /** Throws NotLeaderError unless the shard of the work in progress is held right now. */
  fence(): void {
    const shard = this.context.getStore();
    if (shard === undefined || !this.locks[shard]?.isLeader()) throw new NotLeaderError(`this replica does not hold the lease of shard ${shard ?? '(none)'}`);
  }

  /** cb runs when this replica takes a shard: its objects need reconciling here now. */
  onAcquired(cb: (shard: number) => void): void {
    this.acquiredCallbacks.push(cb);
  }

  /** cb runs when this replica lets a shard go or loses its lease: its objects are another replica's work now. */
  onReleased(cb: (shard: number) => void): void {
    this.releasedCallbacks.push(cb);
  }

  /** cb runs when the last held shard is lost involuntarily. */
  onLost(cb: () => void): void {
    this.lostCallbacks.push(cb);
  }

  /** cb runs with the number of live members whenever it changes (shared per-cloud limits follow it). */
  onMembers(cb: (count: number) => void): void {
    this.membersCallbacks.push(cb);
  }

  async release(): Promise<void> {
    this.stopped.abort();
    await this.loop;
    await Promise.all([...this.locks.map((lock) => lock.release()), this.member.release()]);
  }

  private async run(): Promise<void> {
    const signal = this.stopped.signal;
    void this.member.acquire(signal).catch(() => undefined);
    for (const [shard, lock] of this.locks.entries()) this.contend(lock, shard);
    while (!signal.aborted) {
      try {
        await this.rebalance();
      } catch (error) {
        this.onError(error);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.retryPeriodMs);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
    }
  }

  /** Contends for a shard lease in the background, again after each loss or release, until stopped. */
  private contend(lock: StorageLeaseLock, shard: number): void {
    if (this.stopped.signal.aborted) return;
    lock.acquire(this.stopped.signal).then(
      () => {
        for (const wake of this.waiters) wake();
        this.waiters.clear();
        for (const cb of this.acquiredCallbacks) this.safely(() => cb(shard));
      },
      () => undefined,
    );
  }

  private shardLost(shard: number): void {
    this.released(shard);
    if (!this.isLeader()) for (const cb of this.lostCallbacks) this.safely(cb);
    this.contend(this.locks[shard]!, shard);
  }

  /** Reads the members, recomputes the assignment, and gives up shards assigned elsewhere. */
  private async rebalance(): Promise<void> {
    const { entries } = await this.storage.list(`/leases/${this.name}-member-`);
    const now = performance.now();
    const alive = new Set([this.identity]);
    for (const entry of entries) {
      const holder = parseLeaseSpec(entry.value)?.holderIdentity ?? '';
      const previous = this.seen.get(entry.key);
      const current = previous?.modRevision === entry.modRevision ? previous : { modRevision: entry.modRevision, at: now };
      this.seen.set(entry.key, current);
      if (holder !== '' && now - current.at < this.leaseDurationMs) alive.add(holder);
      if (now - current.at > forgetMemberAfterMs) await this.storage.delete(entry.key, entry.modRevision).catch(() => undefined);
    }
    const members = [...alive].sort();
    if (members.join('\n') !== this.members.join('\n')) {
      this.members = members;
      for (const cb of this.membersCallbacks) this.safely(() => cb(members.length));
    }
    const owners = assignShards(members, this.shards);
    this.assigned = new Set(owners.flatMap((owner, shard) => (owner === this.identity ? [shard] : [])));
    for (const [shard, lock] of this.locks.entries()) {
      if (lock.holdsLease() && !this.assigned.has(shard)) {
        await lock.release();
        this.released(shard);
        this.contend(lock, shard);
      }
    }
  }

  private released(shard: number): void {
    for (const cb of this.releasedCallbacks) this.safely(() => cb(shard));
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.onError(error);
    }
  }
}
