/**
 * Shard leases across replicas on one real store (SQLite in memory, through the storage contract):
 * every shard held by exactly one replica and none above its fair share, a replica cut off from the
 * store losing its shards to the others within a lease (and its fence closing), and a replica that
 * joins late getting its share handed over.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StorageError, type Storage } from '../../../src/storage/interface.js';
import { SqliteStorage } from '../../../src/storage/sqlite.js';
import { NotLeaderError } from '../../../src/reconcile/runtime/leader.js';
import { ShardedLeadership, assignShards, shardOfGroup, type MemberStorage } from '../../../src/reconcile/runtime/shards.js';
import { pollUntil } from '../../../harness/poll.js';

const timing = { leaseDurationMs: 900, renewDeadlineMs: 600, retryPeriodMs: 100 };
const shards = 8;
const opened: { storage: Storage; replicas: ShardedLeadership[] }[] = [];

afterEach(async () => {
  for (const { storage, replicas } of opened.splice(0)) {
    await Promise.all(replicas.map((replica) => replica.release().catch(() => undefined)));
    await storage.close();
  }
});

/** A store shared by replicas; each replica's view of it can be cut off (as a partition or a kill -9 would). */
function sharedStore() {
  const storage = SqliteStorage.open(':memory:');
  const replicas: ShardedLeadership[] = [];
  opened.push({ storage, replicas });
  const start = (identity: string) => {
    let cut = false;
    const reachable = <T>(call: () => Promise<T>) => (cut ? Promise.reject(new StorageError('partitioned')) : call());
    const view: MemberStorage = {
      get: (key) => reachable(() => storage.get(key)),
      create: (key, value) => reachable(() => storage.create(key, value)),
      update: (key, value, revision) => reachable(() => storage.update(key, value, revision)),
      list: (prefix, request) => reachable(() => storage.list(prefix, request)),
      delete: (key, revision) => reachable(() => storage.delete(key, revision)),
    };
    const replica = new ShardedLeadership({ storage: view, name: 'capo', shards, identity, ...timing, onError: () => undefined });
    replicas.push(replica);
    void replica.acquire(new AbortController().signal);
    return { replica, cut: () => (cut = true) };
  };
  return { start };
}

/** Resolves once every shard is held by exactly one of `replicas`, each holding its fair share. */
function balanced(replicas: ShardedLeadership[]): Promise<number[][]> {
  return pollUntil(
    `${shards} shards balanced over ${replicas.length} replicas`,
    async () => {
      const held = replicas.map((replica) => replica.held());
      const all = held.flat().sort((a, b) => a - b);
      const fair = Math.ceil(shards / replicas.length);
      const ok = all.length === shards && new Set(all).size === shards && held.every((mine) => mine.length <= fair);
      return ok ? held : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 20 },
  );
}

describe('shard leases', () => {
  it('assigns every shard to one member, none above ceil(shards / members), the same on every replica', () => {
    const members = ['a', 'b', 'c'];
    const owners = assignShards(members, 16);
    expect(assignShards([...members].reverse().sort(), 16)).toEqual(owners);
    for (const member of members) expect(owners.filter((owner) => owner === member).length).toBeLessThanOrEqual(6);
    expect(new Set(owners)).toEqual(new Set(members));
    // An object's shard depends on its group only.
    expect(shardOfGroup('default/demo', 16)).toBe(shardOfGroup('default/demo', 16));
    expect(new Set(Array.from({ length: 200 }, (_, i) => shardOfGroup(`default/c${i}`, 16))).size).toBe(16);
  });

  it('spreads the shards over three replicas, each held by exactly one', async () => {
    const store = sharedStore();
    const replicas = ['a', 'b', 'c'].map((identity) => store.start(identity).replica);
    const held = await balanced(replicas);
    expect(held.map((mine) => mine.length).sort()).toEqual([2, 3, 3]);
  });

  it('hands the shards of a replica cut off from the store to the others within a lease, and fences it', async () => {
    const store = sharedStore();
    const started = ['a', 'b', 'c'].map((identity) => store.start(identity));
    const before = await balanced(started.map(({ replica }) => replica));
    const [victim, ...survivors] = started;
    const lost = before[0]!;
    victim!.cut();
    const cutAt = performance.now();
    const after = await balanced(survivors.map(({ replica }) => replica));
    const takeoverMs = performance.now() - cutAt;
    expect(after.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: shards }, (_, i) => i));
    // A member's lease, then its shards' leases, must go silent for a lease duration before anyone takes them.
    expect(takeoverMs).toBeGreaterThanOrEqual(timing.leaseDurationMs - timing.retryPeriodMs);
    expect(victim!.replica.held()).toEqual([]);
    expect(() => victim!.replica.within(lost[0]!, () => victim!.replica.fence())).toThrow(NotLeaderError);
    const owner = survivors.find(({ replica }) => replica.holds(lost[0]!))!.replica;
    expect(() => owner.within(lost[0]!, () => owner.fence())).not.toThrow();
    // Outside any shard's work, nothing is fenced in.
    expect(() => owner.fence()).toThrow(NotLeaderError);
  });

  it('keeps a shard its work while a renewal is late, fencing its writes until the renewal lands', async () => {
    const store = sharedStore();
    const { replica } = store.start('a');
    const [shard] = (await balanced([replica]))[0]!;
    // The process stalls past its renew deadline (a long GC, CPU starvation): no timer has run yet.
    const stalledUntil = performance.now() + timing.renewDeadlineMs + 50;
    while (performance.now() < stalledUntil) {
      // busy: the event loop is blocked, as in a stall
    }
    expect(replica.holds(shard!)).toBe(true);
    expect(() => replica.within(shard!, () => replica.fence())).toThrow(NotLeaderError);
  });

  it('gives a replica that joins late its share, taken from the others', async () => {
    const store = sharedStore();
    const first = ['a', 'b'].map((identity) => store.start(identity).replica);
    expect((await balanced(first)).map((mine) => mine.length)).toEqual([4, 4]);
    const late = store.start('c').replica;
    const held = await balanced([...first, late]);
    expect(held[2]!.length).toBeGreaterThanOrEqual(2);
  });
});
