import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RateLimiter } from '../../../src/reconcile/runtime/backoff.js';
import { WorkQueue, type WorkQueueMetrics } from '../../../src/reconcile/runtime/queue.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});

afterEach(() => {
  vi.useRealTimers();
});

/** Delays of 1000·n ms for the n-th failure of a key, to observe what the queue does with them. */
function linearLimiter(): RateLimiter<string> & { failures: Map<string, number> } {
  const failures = new Map<string, number>();
  return {
    failures,
    when(key) {
      const n = (failures.get(key) ?? 0) + 1;
      failures.set(key, n);
      return 1000 * n;
    },
    forget(key) {
      failures.delete(key);
    },
  };
}

/** Takes every queued key without waiting. */
async function drain(queue: WorkQueue<string>): Promise<string[]> {
  const keys: string[] = [];
  while (queue.len() > 0) keys.push((await queue.get())!);
  return keys;
}

describe('WorkQueue de-duplication', () => {
  it('queues a key once and hands keys out in FIFO order', async () => {
    const queue = new WorkQueue<string>();
    for (const key of ['a', 'b', 'a', 'c', 'b', 'a']) queue.add(key);
    expect(queue.len()).toBe(3);
    expect(await drain(queue)).toEqual(['a', 'b', 'c']);
  });

  it('re-queues a key added while it is processed only after done, once', async () => {
    const queue = new WorkQueue<string>();
    queue.add('a');
    expect(await queue.get()).toBe('a');
    queue.add('a');
    queue.add('a');
    queue.add('b');
    // While a is processed nobody else may take it.
    expect(await drain(queue)).toEqual(['b']);
    queue.done('b');
    queue.done('a');
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toBe('a');
    queue.done('a');
    expect(queue.len()).toBe(0);
  });

  it('does not re-queue a key done without a new add', async () => {
    const queue = new WorkQueue<string>();
    queue.add('a');
    queue.done((await queue.get())!);
    expect(queue.len()).toBe(0);
  });

  it('hands an added key to a waiting get at once', async () => {
    const queue = new WorkQueue<string>();
    const waiting = [queue.get(), queue.get()];
    queue.add('a');
    queue.add('a');
    queue.add('b');
    expect(await Promise.all(waiting)).toEqual(['a', 'b']);
    expect(queue.len()).toBe(0);
    // a was handed out, so this add waits for done.
    queue.done('a');
    expect(await queue.get()).toBe('a');
  });
});

describe('WorkQueue delays', () => {
  it('adds delayed keys in order of readiness, ties in the order they were added', async () => {
    const queue = new WorkQueue<string>();
    queue.addAfter('late', 300);
    queue.addAfter('early', 100);
    queue.addAfter('tie-1', 200);
    queue.addAfter('tie-2', 200);
    queue.addAfter('now', 0);
    expect(await drain(queue)).toEqual(['now']);
    await vi.advanceTimersByTimeAsync(99);
    expect(queue.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(await drain(queue)).toEqual(['early']);
    await vi.advanceTimersByTimeAsync(200);
    expect(await drain(queue)).toEqual(['tie-1', 'tie-2', 'late']);
  });

  it('keeps the earliest of several delays of one key and adds it once', async () => {
    const queue = new WorkQueue<string>();
    queue.addAfter('k', 500);
    queue.addAfter('k', 100);
    queue.addAfter('k', 300);
    await vi.advanceTimersByTimeAsync(100);
    expect(await drain(queue)).toEqual(['k']);
    queue.done('k');
    await vi.advanceTimersByTimeAsync(1000);
    expect(queue.len()).toBe(0);
  });

  it('drops the pending delay of a key it hands out: the pass asks for its own next one', async () => {
    const queue = new WorkQueue<string>();
    queue.addAfter('k', 1000);
    queue.add('k');
    const key = (await queue.get())!;
    // The pass runs past the delay asked for before it began, and asks for its next one.
    await vi.advanceTimersByTimeAsync(1000);
    queue.addAfter(key, 1000);
    queue.done(key);
    expect(queue.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(999);
    expect(queue.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(await drain(queue)).toEqual(['k']);
    expect(queue.stats()).toEqual({ queued: 0, processing: 1, scheduled: 0 });
  });

  it('keeps a delay asked for while the key is processed', async () => {
    const queue = new WorkQueue<string>();
    const waiting = queue.get();
    queue.add('k');
    const key = (await waiting)!;
    queue.addAfter(key, 100);
    await vi.advanceTimersByTimeAsync(100);
    queue.done(key);
    expect(await drain(queue)).toEqual(['k']);
  });

  it('de-duplicates a delayed key against the queue', async () => {
    const queue = new WorkQueue<string>();
    queue.add('k');
    queue.addAfter('k', 10);
    await vi.advanceTimersByTimeAsync(10);
    expect(await drain(queue)).toEqual(['k']);
  });

  it('retries with the rate limiter delay per failure and starts over after forget', async () => {
    const limiter = linearLimiter();
    const queue = new WorkQueue<string>({ rateLimiter: limiter });
    queue.addRateLimited('k');
    await vi.advanceTimersByTimeAsync(999);
    expect(queue.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    queue.done((await queue.get())!);
    queue.addRateLimited('k');
    await vi.advanceTimersByTimeAsync(1999);
    expect(queue.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    queue.done((await queue.get())!);
    queue.forget('k');
    expect(limiter.failures.has('k')).toBe(false);
    queue.addRateLimited('k');
    await vi.advanceTimersByTimeAsync(1000);
    expect(queue.len()).toBe(1);
  });
});

describe('WorkQueue removal', () => {
  it('drops a queued, a delayed and a re-queue-on-done key with its backoff, and leaves the others', async () => {
    const limiter = linearLimiter();
    const queue = new WorkQueue<string>({ rateLimiter: limiter });
    queue.add('processed');
    expect(await queue.get()).toBe('processed');
    queue.add('processed');
    queue.add('queued');
    queue.add('kept');
    queue.addRateLimited('delayed');
    for (const key of ['processed', 'queued', 'delayed']) queue.remove(key);
    expect(limiter.failures.has('delayed')).toBe(false);
    queue.done('processed');
    await vi.advanceTimersByTimeAsync(5000);
    expect(await drain(queue)).toEqual(['kept']);
    expect(queue.stats()).toEqual({ queued: 0, processing: 1, scheduled: 0 });
  });
});

describe('WorkQueue shutdown', () => {
  it('ends waiting and later gets with undefined and ignores adds', async () => {
    const queue = new WorkQueue<string>();
    const waiting = queue.get();
    queue.shutDown();
    expect(await waiting).toBeUndefined();
    queue.add('a');
    queue.addAfter('b', 0);
    queue.addRateLimited('c');
    expect(queue.len()).toBe(0);
    expect(await queue.get()).toBeUndefined();
  });

  it('drops queued and delayed keys', async () => {
    const queue = new WorkQueue<string>();
    queue.add('a');
    queue.addAfter('b', 100);
    queue.shutDown();
    expect(queue.len()).toBe(0);
    await vi.advanceTimersByTimeAsync(100);
    expect(await queue.get()).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('with drain resolves only after every key in process is done, without re-queueing', async () => {
    const queue = new WorkQueue<string>();
    queue.add('a');
    queue.add('b');
    const a = (await queue.get())!;
    const b = (await queue.get())!;
    queue.add('a');
    let drained = false;
    const draining = queue.shutDownWithDrain().then(() => (drained = true));
    queue.done(a);
    await Promise.resolve();
    expect(drained).toBe(false);
    queue.done(b);
    await draining;
    expect(await queue.get()).toBeUndefined();
  });

  it('with drain resolves at once when nothing is in process', async () => {
    const queue = new WorkQueue<string>();
    queue.add('a');
    await queue.shutDownWithDrain();
    expect(queue.len()).toBe(0);
  });
});

describe('WorkQueue metrics', () => {
  it('reports depth, effective adds and retries', async () => {
    const depths: number[] = [];
    const counts = { added: 0, retried: 0 };
    const metrics: WorkQueueMetrics = {
      depth: (length) => depths.push(length),
      added: () => counts.added++,
      retried: () => counts.retried++,
    };
    const queue = new WorkQueue<string>({ rateLimiter: linearLimiter(), metrics });
    queue.add('a');
    queue.add('a');
    queue.add('b');
    await queue.get();
    queue.addRateLimited('c');
    await vi.advanceTimersByTimeAsync(1000);
    queue.shutDown();
    expect(depths).toEqual([1, 2, 1, 2, 0]);
    expect(counts).toEqual({ added: 3, retried: 1 });
  });
});
