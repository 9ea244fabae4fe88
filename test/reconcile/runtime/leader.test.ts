import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AlwaysLeader, fenceOf, NotLeaderError, StorageLeaseLock, type StorageLeaseLockOptions } from '../../../src/reconcile/runtime/leader.js';
import { StorageError, type JsonObject, type Storage } from '../../../src/storage/interface.js';
import { SqliteStorage } from '../../../src/storage/sqlite.js';
import { advance, settle } from './fake-time.js';

// Fake time drives the lease; SQLite commits on real setImmediate, which stays real.
const timing = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };

let storage: SqliteStorage;
const locks: StorageLeaseLock[] = [];

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  storage = SqliteStorage.open(':memory:');
});

afterEach(async () => {
  for (const lock of locks.splice(0)) await lock.release().catch(() => undefined);
  vi.restoreAllMocks();
  vi.useRealTimers();
  await storage.close();
});

function lock(identity: string, options: Partial<StorageLeaseLockOptions> = {}): StorageLeaseLock {
  const created = new StorageLeaseLock({ storage, name: 'capo-reconciler', identity, ...timing, onError: () => undefined, ...options });
  locks.push(created);
  return created;
}

async function leaseSpec(): Promise<JsonObject> {
  const entry = await storage.get('/leases/capo-reconciler');
  return entry!.value.spec as JsonObject;
}

/** A view of the storage that fails every call while down, as a network partition would. */
function partitionable(inner: Storage): { storage: Storage; state: { down: boolean } } {
  const state = { down: false };
  const proxy = new Proxy(inner, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => (state.down ? Promise.reject(new StorageError('unreachable')) : value.apply(target, args));
    },
  });
  return { storage: proxy, state };
}

function track(promise: Promise<void>): { settled: () => boolean; error: () => unknown } {
  let settled = false;
  let error: unknown;
  promise.then(
    () => (settled = true),
    (reason: unknown) => {
      settled = true;
      error = reason;
    },
  );
  return { settled: () => settled, error: () => error };
}

describe('AlwaysLeader', () => {
  it('leads at once and honours an aborted signal', async () => {
    const leader = new AlwaysLeader();
    await leader.acquire(new AbortController().signal);
    expect(leader.isLeader()).toBe(true);
    await expect(leader.acquire(AbortSignal.abort(new Error('stop')))).rejects.toThrow('stop');
  });
});

describe('StorageLeaseLock', () => {
  it('lets one of two contenders lead while it renews', async () => {
    const a = lock('a');
    const b = lock('b');
    await a.acquire(new AbortController().signal);
    const bAcquired = track(b.acquire(new AbortController().signal));
    await advance(3000);
    expect(a.isLeader()).toBe(true);
    expect(b.isLeader()).toBe(false);
    expect(bAcquired.settled()).toBe(false);
    expect(await leaseSpec()).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 1, leaseTransitions: 0 });
    // Acquiring again while leading is immediate.
    await a.acquire(new AbortController().signal);
  });

  it('hands over at once on release', async () => {
    const a = lock('a');
    const b = lock('b');
    await a.acquire(new AbortController().signal);
    const bAcquired = track(b.acquire(new AbortController().signal));
    await advance(300);
    await a.release();
    expect(a.isLeader()).toBe(false);
    await advance(timing.retryPeriodMs + 10);
    expect(bAcquired.settled()).toBe(true);
    expect(b.isLeader()).toBe(true);
    expect(await leaseSpec()).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('takes over a lease left by a crashed holder only after seeing it unchanged for its duration', async () => {
    const now = new Date().toISOString();
    await storage.create('/leases/capo-reconciler', {
      spec: { holderIdentity: 'crashed', leaseDurationSeconds: 2, acquireTime: now, renewTime: now, leaseTransitions: 3 },
    });
    const b = lock('b');
    const bAcquired = track(b.acquire(new AbortController().signal));
    await advance(1900);
    // The holder's 2 s count, not b's own 1 s.
    expect(bAcquired.settled()).toBe(false);
    await advance(200 + timing.retryPeriodMs);
    expect(bAcquired.settled()).toBe(true);
    expect(bAcquired.error()).toBeUndefined();
    expect(await leaseSpec()).toMatchObject({ holderIdentity: 'b', leaseTransitions: 4 });
  });

  it('loses when renewals fail past the deadline, before anyone else takes over', async () => {
    const partition = partitionable(storage);
    const a = lock('a', { storage: partition.storage });
    const b = lock('b');
    let aLeadingWhenBWon: boolean | undefined;
    const lost: string[] = [];
    a.onLost(() => lost.push('a'));
    await a.acquire(new AbortController().signal);
    const bAcquired = b.acquire(new AbortController().signal).then(() => {
      aLeadingWhenBWon = a.isLeader();
    });
    await advance(500);
    partition.state.down = true;
    await advance(timing.renewDeadlineMs);
    expect(lost).toEqual(['a']);
    expect(a.isLeader()).toBe(false);
    await advance(timing.leaseDurationMs);
    await bAcquired;
    expect(aLeadingWhenBWon).toBe(false);
    expect(b.isLeader()).toBe(true);
  });

  it('loses at the first renewal that finds someone else wrote the lease', async () => {
    const a = lock('a');
    const lost: string[] = [];
    a.onLost(() => lost.push('a'));
    await a.acquire(new AbortController().signal);
    const entry = (await storage.get('/leases/capo-reconciler'))!;
    await storage.update('/leases/capo-reconciler', { spec: { ...(entry.value.spec as JsonObject), holderIdentity: 'intruder' } }, entry.modRevision);
    await advance(timing.retryPeriodMs + 10);
    expect(lost).toEqual(['a']);
    expect(a.isLeader()).toBe(false);
    // Losing is not releasing: the intruder's record stays.
    expect(await leaseSpec()).toMatchObject({ holderIdentity: 'intruder' });
  });

  it('keeps leading through failed renewals shorter than the deadline', async () => {
    const partition = partitionable(storage);
    const a = lock('a', { storage: partition.storage });
    let lost = false;
    a.onLost(() => (lost = true));
    await a.acquire(new AbortController().signal);
    partition.state.down = true;
    await advance(timing.renewDeadlineMs - 2 * timing.retryPeriodMs);
    partition.state.down = false;
    await advance(2000);
    expect(lost).toBe(false);
    expect(a.isLeader()).toBe(true);
  });

  it('ends a waiting acquire on abort, and on release', async () => {
    const a = lock('a');
    const b = lock('b');
    await a.acquire(new AbortController().signal);
    const abort = new AbortController();
    const aborted = track(b.acquire(abort.signal));
    const released = track(b.acquire(new AbortController().signal));
    abort.abort(new Error('stopping'));
    await settle();
    expect(aborted.error()).toEqual(new Error('stopping'));
    expect(released.settled()).toBe(false);
    await b.release();
    await settle();
    expect(released.error()).toBeInstanceOf(Error);
    expect(b.isLeader()).toBe(false);
    expect(await leaseSpec()).toMatchObject({ holderIdentity: 'a' });
  });

  it('stops leading the moment its renew deadline passes, before any timer has run (a paused process), and its fence refuses', async () => {
    const a = lock('a');
    await a.acquire(new AbortController().signal);
    const fence = fenceOf(a);
    expect(fence).not.toThrow();
    // The monotonic clock moves on while the process is stopped; no timer has fired yet when it resumes.
    const resumedAt = performance.now() + timing.renewDeadlineMs + 1;
    vi.spyOn(performance, 'now').mockReturnValue(resumedAt);
    expect(a.isLeader()).toBe(false);
    expect(fence).toThrow(NotLeaderError);
  });

  it('refuses timing that would let a cut-off holder overlap its successor', () => {
    expect(() => lock('a', { leaseDurationMs: 1000, renewDeadlineMs: 1000 })).toThrow(/leaseDurationMs > renewDeadlineMs/);
    expect(() => lock('a', { name: 'has/slash' })).toThrow(/DNS subdomain/);
  });
});
