import { describe, expect, it } from 'vitest';
import { ConcurrencyLimiter } from '../../../src/reconcile/runtime/limiter.js';

/** A call that records when it starts and runs until released. */
class Calls {
  readonly started: string[] = [];
  private readonly running = new Map<string, () => void>();
  private readonly inFlight = new Map<string, number>();
  maxInFlight = 0;
  readonly maxPerGroup = new Map<string, number>();

  call(group: string, id: string): () => Promise<string> {
    return () =>
      new Promise<string>((resolve) => {
        this.started.push(id);
        const now = (this.inFlight.get(group) ?? 0) + 1;
        this.inFlight.set(group, now);
        this.maxPerGroup.set(group, Math.max(this.maxPerGroup.get(group) ?? 0, now));
        this.maxInFlight = Math.max(
          this.maxInFlight,
          [...this.inFlight.values()].reduce((a, b) => a + b, 0),
        );
        this.running.set(id, () => {
          this.inFlight.set(group, this.inFlight.get(group)! - 1);
          resolve(id);
        });
      });
  }

  finish(id: string): void {
    const finish = this.running.get(id);
    if (!finish) throw new Error(`${id} is not running`);
    this.running.delete(id);
    finish();
  }

  runningIds(): string[] {
    return [...this.running.keys()];
  }
}

/** Lets started calls and released slots propagate. */
const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('ConcurrencyLimiter', () => {
  it('bounds calls per group and overall', async () => {
    const limiter = new ConcurrencyLimiter({ perGroup: 2, total: 3 });
    const calls = new Calls();
    const results: Promise<string>[] = [];
    for (let i = 0; i < 6; i++) {
      results.push(limiter.run('cloud-a', calls.call('cloud-a', `a${i}`)));
      results.push(limiter.run('cloud-b', calls.call('cloud-b', `b${i}`)));
    }
    await settle();
    expect(calls.runningIds()).toHaveLength(3);
    while (calls.runningIds().length > 0) {
      calls.finish(calls.runningIds()[0]);
      await settle();
    }
    expect((await Promise.all(results)).sort()).toEqual(calls.started.slice().sort());
    expect(calls.started).toHaveLength(12);
    expect(calls.maxInFlight).toBe(3);
    expect(calls.maxPerGroup.get('cloud-a')).toBe(2);
    expect(calls.maxPerGroup.get('cloud-b')).toBe(2);
  });

  it('serves groups in turn, each in FIFO order, whatever their backlog', async () => {
    const limiter = new ConcurrencyLimiter({ perGroup: 5, total: 1 });
    const calls = new Calls();
    const results: Promise<string>[] = [];
    for (let i = 0; i < 4; i++) results.push(limiter.run('busy', calls.call('busy', `busy${i}`)));
    results.push(limiter.run('quiet', calls.call('quiet', 'quiet0')));
    results.push(limiter.run('other', calls.call('other', 'other0')));
    results.push(limiter.run('quiet', calls.call('quiet', 'quiet1')));
    await settle();
    while (calls.runningIds().length > 0) {
      calls.finish(calls.runningIds()[0]);
      await settle();
    }
    await Promise.all(results);
    expect(calls.started).toEqual(['busy0', 'busy1', 'quiet0', 'other0', 'busy2', 'quiet1', 'busy3']);
  });

  it('does not let a group at its limit hold back other groups', async () => {
    const limiter = new ConcurrencyLimiter({ perGroup: 1, total: 2 });
    const calls = new Calls();
    void limiter.run('a', calls.call('a', 'a0'));
    void limiter.run('a', calls.call('a', 'a1'));
    void limiter.run('b', calls.call('b', 'b0'));
    await settle();
    expect(calls.started).toEqual(['a0', 'b0']);
    calls.finish('b0');
    calls.finish('a0');
    await settle();
    expect(calls.started).toEqual(['a0', 'b0', 'a1']);
    calls.finish('a1');
  });

  it('frees the slot when the call fails, and passes the failure on', async () => {
    const limiter = new ConcurrencyLimiter({ perGroup: 1, total: 1 });
    await expect(
      limiter.run('a', () => {
        throw new Error('synchronous');
      }),
    ).rejects.toThrow('synchronous');
    await expect(limiter.run('a', async () => Promise.reject(new Error('asynchronous')))).rejects.toThrow('asynchronous');
    await expect(limiter.run('a', async () => 'ok')).resolves.toBe('ok');
  });

  it('rejects limits that are not positive integers', () => {
    expect(() => new ConcurrencyLimiter({ perGroup: 0, total: 1 })).toThrow(/perGroup/);
    expect(() => new ConcurrencyLimiter({ perGroup: 1, total: 1.5 })).toThrow(/total/);
  });
});
