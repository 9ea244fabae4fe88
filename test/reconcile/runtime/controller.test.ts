import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MetricsRegistry } from '../../../src/observability/metrics.js';
import type { RateLimiter } from '../../../src/reconcile/runtime/backoff.js';
import {
  Controller,
  generationOrMetadataChanged,
  TerminalError,
  type ControllerOptions,
  type ReconcileResult,
  type Sharding,
} from '../../../src/reconcile/runtime/controller.js';
import { StorageLeaseLock, type LeaderLock } from '../../../src/reconcile/runtime/leader.js';
import { TooOldRevisionError, type JsonObject, type ObjectName, type Storage, type WatchEvent, type WatchRequest } from '../../../src/storage/interface.js';
import { SqliteStorage } from '../../../src/storage/sqlite.js';
import { keysOf } from '../../../src/apiserver/registry/keys.js';
import { advance, settle } from './fake-time.js';

/** The storage layout the controller is given, as the manager gives it a kind's. */
const keys = keysOf({ group: 'infrastructure.cluster.x-k8s.io', plural: 'openstackmachines', namespaced: true });
const keyOf = (name: string) => keys.key('default', name);
/** The name in a rate limiter's key, the object's `namespace/name`. */
const nameOf = (id: string) => id.slice(id.lastIndexOf('/') + 1);

let storage: SqliteStorage;
const controllers: Controller[] = [];
const locks: LeaderLock[] = [];

beforeEach(() => {
  // Fake time drives queue delays and resyncs; SQLite commits on real setImmediate, which stays real.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  storage = SqliteStorage.open(':memory:');
});

afterEach(async () => {
  for (const controller of controllers.splice(0)) await controller.stop();
  for (const lock of locks.splice(0)) await lock.release();
  vi.useRealTimers();
  await storage.close();
});

async function until(condition: () => boolean): Promise<void> {
  for (let step = 0; step < 500 && !condition(); step++) await advance(10);
  expect(condition()).toBe(true);
}

async function create(name: string, extra: JsonObject = {}): Promise<void> {
  await storage.create(keyOf(name), { metadata: { name, namespace: 'default', generation: 1 }, spec: {}, ...extra });
}

/** Read-modify-write of a stored object, as the API server would do it. */
async function change(name: string, mutate: (object: { metadata: JsonObject; spec: JsonObject; status?: JsonObject }) => void): Promise<void> {
  const entry = (await storage.get(keyOf(name)))!;
  const object = structuredClone(entry.value) as { metadata: JsonObject; spec: JsonObject; status?: JsonObject };
  mutate(object);
  await storage.update(keyOf(name), object, entry.modRevision);
}

/** Records reconciles in order as "name" or "name (gone)"; per-name behaviour decides the outcome. */
class Recorder {
  readonly log: string[] = [];
  readonly behaviour = new Map<string, () => Promise<ReconcileResult>>();

  readonly reconcile = async ({ namespace, name }: ObjectName): Promise<ReconcileResult> => {
    const entry = await storage.get(keys.key(namespace, name));
    this.log.push(entry ? name : `${name} (gone)`);
    return (await this.behaviour.get(name)?.()) ?? {};
  };

  count(entry: string): number {
    return this.log.filter((logged) => logged === entry).length;
  }
}

/** Retries after fixed delays, counting failures and forgets per key. */
function fixedLimiter(delayMs: number): RateLimiter<string> & { failures: string[]; forgotten: string[] } {
  const failures: string[] = [];
  const forgotten: string[] = [];
  return {
    failures,
    forgotten,
    when: (key) => {
      failures.push(nameOf(key));
      return delayMs;
    },
    forget: (key) => forgotten.push(nameOf(key)),
  };
}

function start(recorder: Recorder, options: Partial<ControllerOptions> = {}): { controller: Controller; errors: unknown[] } {
  const errors: unknown[] = [];
  const controller = new Controller({
    name: 'openstackmachine',
    storage,
    keys,
    reconcile: recorder.reconcile,
    workers: 1,
    resyncPeriodMs: 0,
    onError: (error) => errors.push(error),
    ...options,
  });
  controllers.push(controller);
  controller.start();
  return { controller, errors };
}

/** A lock the test grants and revokes. */
class ManualLock implements LeaderLock {
  private leader = false;
  private readonly waiters: (() => void)[] = [];
  private readonly lostCallbacks: (() => void)[] = [];

  acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.leader) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push(resolve);
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  }
  isLeader(): boolean {
    return this.leader;
  }
  onLost(cb: () => void): void {
    this.lostCallbacks.push(cb);
  }
  async release(): Promise<void> {
    this.leader = false;
  }
  grant(): void {
    this.leader = true;
    for (const resolve of this.waiters.splice(0)) resolve();
  }
  revoke(): void {
    this.leader = false;
    for (const cb of this.lostCallbacks) cb();
  }
  contenders(): number {
    return this.waiters.length;
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('Controller event handling', () => {
  it('reconciles listed keys, then every create, update and delete of its kind only', async () => {
    await create('a');
    await create('b');
    await storage.create('/registry/infrastructure.cluster.x-k8s.io/openstackmachinetemplates/default/t', { metadata: { name: 't' } });
    const recorder = new Recorder();
    start(recorder);
    await until(() => recorder.log.length === 2);
    expect(recorder.log).toEqual(['a', 'b']);

    await create('c');
    await until(() => recorder.log.length === 3);
    await change('a', (object) => {
      object.spec.flavor = 'm1.large';
      object.metadata.generation = 2;
    });
    await until(() => recorder.log.length === 4);
    await storage.delete(keyOf('b'));
    await until(() => recorder.log.length === 5);
    await storage.create(keyOf('c-2'), { metadata: { name: 'c-2' } });
    await until(() => recorder.log.length === 6);
    expect(recorder.log).toEqual(['a', 'b', 'c', 'a', 'b (gone)', 'c-2']);
  });

  it('with generationOrMetadataChanged ignores status-only writes but not metadata a reconciler acts on', async () => {
    await create('a');
    const recorder = new Recorder();
    start(recorder, { shouldEnqueue: generationOrMetadataChanged });
    await until(() => recorder.log.length === 1);

    // With one worker and a FIFO queue, a sentinel reconciled proves nothing queued before it was skipped.
    const sentinels = ['s1', 's2', 's3', 's4'];
    await change('a', (object) => {
      object.status = { ready: true };
      object.metadata.managedFields = [{ manager: 'capo', subresource: 'status' }];
    });
    await create('s1');
    await until(() => recorder.log.includes('s1'));
    await change('a', (object) => {
      object.metadata.finalizers = ['openstackmachine.infrastructure.cluster.x-k8s.io'];
    });
    await create('s2');
    await until(() => recorder.log.includes('s2'));
    await change('a', (object) => {
      object.metadata.annotations = { 'cluster.x-k8s.io/paused': '' };
    });
    await create('s3');
    await until(() => recorder.log.includes('s3'));
    await change('a', (object) => {
      object.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    });
    await create('s4');
    await until(() => recorder.log.includes('s4'));
    expect(recorder.log.filter((name) => !sentinels.includes(name) || name === 's1')).toEqual(['a', 's1', 'a', 'a', 'a']);
    expect(recorder.log).toEqual(['a', 's1', 'a', 's2', 'a', 's3', 'a', 's4']);
  });

  it('reports a throwing event filter and enqueues anyway', async () => {
    const recorder = new Recorder();
    const { errors } = start(recorder, {
      shouldEnqueue: () => {
        throw new Error('filter bug');
      },
    });
    await settle();
    await create('a');
    await until(() => recorder.log.length === 1);
    expect(errors).toEqual([new Error('filter bug')]);
  });

  it('refuses a root that would also match other kinds', () => {
    const unslashed = { root: keys.root.slice(0, -1), parse: (key: string) => keys.parse(key) };
    expect(() => new Controller({ name: 'x', storage, keys: unslashed, reconcile: async () => ({}) })).toThrow(/must end with "\/"/);
  });
});

describe('generationOrMetadataChanged', () => {
  const event = (type: WatchEvent['type'], value: JsonObject, prevValue?: JsonObject): WatchEvent => ({ type, key: 'k', revision: 2, value, prevValue });

  it('passes additions and deletions and judges updates by metadata other than resourceVersion and managedFields', () => {
    const before = { metadata: { generation: 1, resourceVersion: '1', labels: { a: '1' } }, status: { x: 1 } };
    expect(generationOrMetadataChanged(event('ADDED', before))).toBe(true);
    expect(generationOrMetadataChanged(event('DELETED', before, before))).toBe(true);
    const statusOnly = { metadata: { generation: 1, resourceVersion: '2', labels: { a: '1' }, managedFields: [{}] }, status: { x: 2 } };
    expect(generationOrMetadataChanged(event('MODIFIED', statusOnly, before))).toBe(false);
    expect(generationOrMetadataChanged(event('MODIFIED', { ...statusOnly, metadata: { ...statusOnly.metadata, generation: 2 } }, before))).toBe(true);
    expect(generationOrMetadataChanged(event('MODIFIED', { ...statusOnly, metadata: { ...statusOnly.metadata, labels: {} } }, before))).toBe(true);
    expect(
      generationOrMetadataChanged(event('MODIFIED', { ...statusOnly, metadata: { ...statusOnly.metadata, ownerReferences: [{ uid: 'u' }] } }, before)),
    ).toBe(true);
  });
});

describe('Controller outcomes', () => {
  it('retries errors with backoff until success, then forgets, and counts it in metrics', async () => {
    await create('flaky');
    const recorder = new Recorder();
    let failuresLeft = 2;
    recorder.behaviour.set('flaky', async () => {
      if (failuresLeft-- > 0) throw new Error('409 Conflict');
      return {};
    });
    const limiter = fixedLimiter(1000);
    const registry = new MetricsRegistry({ processMetrics: false });
    const { errors } = start(recorder, { rateLimiter: limiter, metrics: registry });
    await until(() => recorder.log.length === 1);
    await advance(900);
    expect(recorder.log).toHaveLength(1);
    await until(() => recorder.log.length === 3);
    expect(limiter.failures).toEqual(['flaky', 'flaky']);
    expect(limiter.forgotten).toEqual(['flaky']);
    expect(errors).toEqual([new Error('409 Conflict'), new Error('409 Conflict')]);

    const metrics = (await registry.scrape()).body;
    expect(metrics).toContain('reconcile_retries_total{controller="openstackmachine"} 2');
    expect(metrics).toContain('reconcile_queue_adds_total{controller="openstackmachine"} 3');
    expect(metrics).toContain('reconcile_queue_depth{controller="openstackmachine"} 0');
    expect(metrics).toContain('reconcile_duration_seconds_count{controller="openstackmachine",result="error"} 2');
    expect(metrics).toContain('reconcile_duration_seconds_count{controller="openstackmachine",result="success"} 1');
  });

  it('does not retry or resync a TerminalError until the object changes', async () => {
    await create('broken');
    await create('fine');
    const recorder = new Recorder();
    recorder.behaviour.set('broken', async () => {
      throw new TerminalError('flavor m1.huge does not exist');
    });
    const limiter = fixedLimiter(0);
    const { errors } = start(recorder, { rateLimiter: limiter, resyncPeriodMs: 1000 });
    await until(() => recorder.log.length === 2);
    await advance(5000);
    expect(recorder.count('broken')).toBe(1);
    expect(recorder.count('fine')).toBeGreaterThanOrEqual(5);
    expect(limiter.failures).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TerminalError);

    await change('broken', (object) => {
      object.spec.flavor = 'm1.large';
    });
    await until(() => recorder.count('broken') === 2);
  });

  it('resyncs the keys of a namespace together, once a period, at least half a period after their success', async () => {
    await create('a');
    await create('b');
    await storage.create(keys.key('other', 'c'), { metadata: { name: 'c', namespace: 'other', generation: 1 }, spec: {} });
    const recorder = new Recorder();
    start(recorder, { resyncPeriodMs: 1000, workers: 3 });
    await until(() => recorder.log.length === 3);
    const first = () => recorder.log.slice(3);
    // Nothing before half a period.
    await advance(490);
    expect(first()).toEqual([]);
    // The first round of each namespace comes within the next period, a and b at the same instant.
    const seenAt = new Map<string, number>();
    for (let elapsed = 0; elapsed <= 1010 && seenAt.size < 3; elapsed += 10) {
      await advance(10);
      for (const name of first()) if (!seenAt.has(name)) seenAt.set(name, elapsed);
    }
    expect([...seenAt.keys()].sort()).toEqual(['a', 'b', 'c']);
    expect(seenAt.get('a')).toBe(seenAt.get('b'));
    // Then once a period: five more rounds in five periods.
    await advance(5000);
    expect(recorder.count('a')).toBeGreaterThanOrEqual(6);
    expect(recorder.count('a')).toBeLessThanOrEqual(7);
    expect(recorder.count('b')).toBe(recorder.count('a'));
  });

  it('polls again after requeueAfterMs without counting a failure', async () => {
    await create('waiting');
    const recorder = new Recorder();
    let polls = 0;
    recorder.behaviour.set('waiting', async () => (++polls < 3 ? { requeueAfterMs: 500 } : {}));
    const limiter = fixedLimiter(0);
    start(recorder, { rateLimiter: limiter });
    await until(() => recorder.log.length === 1);
    await advance(400);
    expect(recorder.log).toHaveLength(1);
    await advance(1100);
    expect(recorder.log).toEqual(['waiting', 'waiting', 'waiting']);
    await advance(5000);
    expect(recorder.log).toHaveLength(3);
    expect(limiter.failures).toEqual([]);
    expect(limiter.forgotten).toEqual(['waiting', 'waiting', 'waiting']);
  });

  it('runs up to the configured number of workers at once, never one key twice', async () => {
    for (const name of ['a', 'b', 'c', 'd']) await create(name);
    const recorder = new Recorder();
    const gate = deferred();
    let running = 0;
    let maxRunning = 0;
    for (const name of ['a', 'b', 'c', 'd']) {
      recorder.behaviour.set(name, async () => {
        maxRunning = Math.max(maxRunning, ++running);
        await gate.promise;
        running--;
        return {};
      });
    }
    start(recorder, { workers: 3 });
    await until(() => recorder.log.length === 3);
    // A change to a key in flight waits for that reconcile instead of running beside it.
    await change('a', (object) => {
      object.metadata.generation = 2;
    });
    await advance(100);
    expect(recorder.log).toHaveLength(3);
    gate.resolve();
    await until(() => recorder.log.length === 5);
    expect(maxRunning).toBe(3);
    expect(recorder.log.slice(3).sort()).toEqual(['a', 'd']);
  });

  it('stops after in-flight reconciles finish', async () => {
    await create('a');
    await create('b');
    const recorder = new Recorder();
    const gate = deferred();
    recorder.behaviour.set('a', async () => {
      await gate.promise;
      return {};
    });
    const { controller } = start(recorder);
    await until(() => recorder.log.length === 1);
    let stopped = false;
    const stopping = controller.stop().then(() => (stopped = true));
    await advance(100);
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    await create('c');
    await advance(100);
    expect(recorder.log).toEqual(['a']);
  });
});

describe('Controller leadership and relisting', () => {
  it('reconciles only while leading; in-flight work finishes on loss, and regaining relists', async () => {
    await create('a');
    const lock = new ManualLock();
    const recorder = new Recorder();
    start(recorder, { leader: lock });
    await advance(100);
    expect(recorder.log).toEqual([]);

    lock.grant();
    await until(() => recorder.log.length === 1);
    const gate = deferred();
    recorder.behaviour.set('b', async () => {
      await gate.promise;
      return {};
    });
    await create('b');
    await until(() => recorder.log.length === 2);

    lock.revoke();
    await create('c');
    await storage.delete(keyOf('a'));
    await advance(100);
    // b is still in flight: the controller does not contend again before it is done.
    expect(lock.contenders()).toBe(0);
    gate.resolve();
    recorder.behaviour.delete('b');
    await until(() => lock.contenders() === 1);
    await advance(100);
    expect(recorder.log).toEqual(['a', 'b']);

    lock.grant();
    await until(() => recorder.log.length === 5);
    // The relist finds a deleted while nobody watched, as well as every present key.
    expect(recorder.log.slice(2).sort()).toEqual(['a (gone)', 'b', 'c']);
  });

  it('relists when the history after its list was compacted before the watch started', async () => {
    const compacting = SqliteStorage.open(':memory:', { historyRetention: { maxEvents: 0 } });
    let lists = 0;
    const racing = new Proxy(compacting, {
      get(target, property) {
        if (property === 'list') {
          return async (...args: Parameters<Storage['list']>) => {
            const result = await target.list(...args);
            if (++lists === 1) {
              await target.create(keyOf('late'), { metadata: { name: 'late' } });
              await target.compact();
            }
            return result;
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    try {
      await compacting.create(keyOf('early'), { metadata: { name: 'early' } });
      const seen: string[] = [];
      const controller = new Controller({
        name: 'openstackmachine',
        storage: racing,
        keys,
        workers: 1,
        resyncPeriodMs: 0,
        reconcile: async ({ name }) => {
          seen.push(name);
          return {};
        },
      });
      controller.start();
      await until(() => seen.includes('late'));
      await controller.stop();
      expect(lists).toBe(2);
      expect(seen).toEqual(['early', 'late']);
    } finally {
      await compacting.close();
    }
  });

  it('lists and watches again when the storage ends a running watch (compaction on etcd)', async () => {
    let lists = 0;
    let breakWatch: ((error: TooOldRevisionError) => void) | undefined;
    const breaking = new Proxy(storage, {
      get(target, property) {
        if (property === 'list') {
          return (...args: Parameters<Storage['list']>) => {
            if (!args[1]?.startAfter) lists++;
            return target.list(...args);
          };
        }
        if (property === 'watch') {
          return (request: WatchRequest) => {
            breakWatch = request.onError;
            return target.watch(request);
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await create('before');
    const recorder = new Recorder();
    const { errors } = start(recorder, { storage: breaking });
    await until(() => recorder.log.includes('before'));
    expect(lists).toBe(1);
    breakWatch!(new TooOldRevisionError(1, 5));
    await until(() => lists === 2);
    await create('after');
    await until(() => recorder.log.includes('after'));
    expect(errors).toEqual([expect.any(TooOldRevisionError)]);
  });

  it('lists in pages at one revision and retries a failed list', async () => {
    const names = Array.from({ length: 1201 }, (_, i) => `m${String(i).padStart(4, '0')}`);
    for (const name of names) await create(name);
    let lists = 0;
    const failingOnce = new Proxy(storage, {
      get(target, property) {
        if (property === 'list') {
          return async (...args: Parameters<Storage['list']>) => {
            if (++lists === 1) throw new Error('etcd unavailable');
            return target.list(...args);
          };
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const recorder = new Recorder();
    const { errors } = start(recorder, { storage: failingOnce, workers: 10 });
    await until(() => recorder.log.length === names.length);
    expect(errors).toEqual([new Error('etcd unavailable')]);
    // One failed call, then three pages.
    expect(lists).toBe(4);
    expect(recorder.log.sort()).toEqual(names);
  });

  it('moves reconciling to the other replica when the lease changes hands', async () => {
    await create('a');
    await create('b');
    const timing = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };
    const lockA = new StorageLeaseLock({ storage, name: 'capo-reconciler', identity: 'replica-a', ...timing });
    const lockB = new StorageLeaseLock({ storage, name: 'capo-reconciler', identity: 'replica-b', ...timing });
    locks.push(lockA, lockB);
    const recorderA = new Recorder();
    const recorderB = new Recorder();
    const { controller: controllerA } = start(recorderA, { leader: lockA });
    await until(() => recorderA.log.length === 2);
    start(recorderB, { leader: lockB });
    await create('c');
    await until(() => recorderA.log.length === 3);
    await advance(3000);
    expect(recorderB.log).toEqual([]);

    // Replica a shuts down cleanly: its controller stops, then its lease is released.
    await controllerA.stop();
    await lockA.release();
    await until(() => recorderB.log.length === 3);
    expect(recorderB.log.sort()).toEqual(['a', 'b', 'c']);
    expect(recorderA.log).toEqual(['a', 'b', 'c']);
  });
});

/** Shards the test hands to the controller and takes back; an object's group is its `shard` label, the shard its number. */
class ManualShards implements Sharding {
  private readonly held: Set<number>;
  private readonly acquiredCallbacks: ((shard: number) => void)[] = [];
  private readonly releasedCallbacks: ((shard: number) => void)[] = [];

  constructor(held: number[]) {
    this.held = new Set(held);
  }
  shardOf(group: string): number {
    return Number(group);
  }
  holds(shard: number): boolean {
    return this.held.has(shard);
  }
  within<T>(_shard: number, fn: () => T): T {
    return fn();
  }
  onAcquired(cb: (shard: number) => void): void {
    this.acquiredCallbacks.push(cb);
  }
  onReleased(cb: (shard: number) => void): void {
    this.releasedCallbacks.push(cb);
  }
  take(shard: number): void {
    this.held.add(shard);
    for (const cb of this.acquiredCallbacks) cb(shard);
  }
  letGo(shard: number): void {
    this.held.delete(shard);
    for (const cb of this.releasedCallbacks) cb(shard);
  }
}

const groupOfShardLabel = (value: JsonObject) => String((value.metadata as { labels: Record<string, string> }).labels.shard);

async function createInShard(name: string, shard: number): Promise<void> {
  await storage.create(keyOf(name), { metadata: { name, namespace: 'default', generation: 1, labels: { shard: String(shard) } }, spec: {} });
}

async function queueAdds(registry: MetricsRegistry): Promise<number> {
  const line = /^reconcile_queue_adds_total\{controller="openstackmachine"\} (\d+)$/m.exec((await registry.scrape()).body);
  return Number(line?.[1]);
}

describe('Controller sharding', () => {
  it('never queues an object of a shard it does not hold: not listed, not on its events, not when enqueued by name', async () => {
    await createInShard('mine', 0);
    await createInShard('theirs', 1);
    const recorder = new Recorder();
    const registry = new MetricsRegistry({ processMetrics: false });
    const shards = new ManualShards([0]);
    const { controller } = start(recorder, { sharding: { shards, groupOf: groupOfShardLabel }, metrics: registry });
    await until(() => recorder.log.length === 1);

    await change('theirs', (object) => {
      object.spec.size = 2;
    });
    controller.enqueue({ namespace: 'default', name: 'theirs' });
    await storage.delete(keyOf('theirs'));
    await advance(1000);
    expect(recorder.log).toEqual(['mine']);
    expect(await queueAdds(registry)).toBe(1);

    await change('mine', (object) => {
      object.spec.size = 2;
    });
    await until(() => recorder.log.length === 2);
    expect(await queueAdds(registry)).toBe(2);
  });

  it('queues the objects of a shard it takes, and drops the queued and delayed keys of a shard it lets go', async () => {
    await createInShard('a', 0);
    await createInShard('b', 1);
    await createInShard('c', 1);
    const recorder = new Recorder();
    // b polls: a pass of it is always waiting.
    recorder.behaviour.set('b', async () => ({ requeueAfterMs: 500 }));
    const shards = new ManualShards([0]);
    const { controller } = start(recorder, { sharding: { shards, groupOf: groupOfShardLabel } });
    await until(() => recorder.log.length === 1);
    expect(recorder.log).toEqual(['a']);

    shards.take(1);
    await until(() => recorder.count('b') === 1 && recorder.count('c') === 1);
    expect(controller.status().scheduled).toBe(1);

    shards.letGo(1);
    expect(controller.status().scheduled).toBe(0);
    await change('c', (object) => {
      object.spec.size = 2;
    });
    await advance(2000);
    expect(recorder.count('b')).toBe(1);
    expect(recorder.count('c')).toBe(1);

    // Taken again, the shard's objects are listed afresh: c as it is now.
    shards.take(1);
    await until(() => recorder.count('b') === 2 && recorder.count('c') === 2);
    expect(recorder.count('a')).toBe(1);
  });
});
