import { afterEach, describe, expect, it, vi } from 'vitest';
import { defaultRateLimiter, ExponentialBackoff, MaxOf, TokenBucket } from '../../../src/reconcile/runtime/backoff.js';

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('ExponentialBackoff', () => {
  it('doubles the ceiling per failure up to the cap, per key', () => {
    // Math.random just below 1 shows the ceiling itself.
    vi.spyOn(Math, 'random').mockReturnValue(1 - Number.EPSILON);
    const backoff = new ExponentialBackoff<string>({ baseMs: 1000, maxMs: 10_000 });
    const ceilings = Array.from({ length: 6 }, () => Math.round(backoff.when('a')));
    expect(ceilings).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(Math.round(backoff.when('b'))).toBe(1000);
  });

  it('draws every delay uniformly below the ceiling (full jitter)', () => {
    const backoff = new ExponentialBackoff<string>({ baseMs: 100, maxMs: 1600 });
    for (let round = 0; round < 200; round++) {
      backoff.forget('k');
      for (let failure = 0; failure < 6; failure++) {
        const delay = backoff.when('k');
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(Math.min(1600, 100 * 2 ** failure));
      }
    }
    vi.spyOn(Math, 'random').mockReturnValue(0);
    expect(backoff.when('k')).toBe(0);
  });

  it('starts over after forget', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const backoff = new ExponentialBackoff<string>();
    expect([backoff.when('k'), backoff.when('k'), backoff.when('k')]).toEqual([500, 1000, 2000]);
    backoff.forget('k');
    expect(backoff.when('k')).toBe(500);
  });

  it('stays at the cap after very many failures', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const backoff = new ExponentialBackoff<string>();
    for (let i = 0; i < 2000; i++) backoff.when('k');
    expect(backoff.when('k')).toBe(150_000);
  });

  it('rejects a base above the cap', () => {
    expect(() => new ExponentialBackoff({ baseMs: 10, maxMs: 5 })).toThrow(/baseMs <= maxMs/);
  });
});

describe('TokenBucket', () => {
  it('lets a burst through, then spaces retries at qps, and refills while idle', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const bucket = new TokenBucket({ qps: 10, burst: 3 });
    expect([bucket.when(), bucket.when(), bucket.when()]).toEqual([0, 0, 0]);
    expect([bucket.when(), bucket.when()].map(Math.round)).toEqual([100, 200]);
    await vi.advanceTimersByTimeAsync(1000);
    // 1 s refills 10 tokens, capped at the burst of 3, minus the debt of 2.
    expect([bucket.when(), bucket.when(), bucket.when()]).toEqual([0, 0, 0]);
    expect(Math.round(bucket.when())).toBe(100);
  });
});

describe('MaxOf and the default limiter', () => {
  it('takes the longest delay and forgets in every limiter', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const limiter = new MaxOf<string>(new ExponentialBackoff({ baseMs: 10, maxMs: 1000 }), new ExponentialBackoff({ baseMs: 100, maxMs: 1000 }));
    expect([limiter.when('k'), limiter.when('k')]).toEqual([50, 100]);
    limiter.forget('k');
    expect(limiter.when('k')).toBe(50);
  });

  it('backs off per key from 1 s and bounds overall retries by the bucket', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const limiter = defaultRateLimiter<string>();
    // Jitter at 0 leaves only the bucket: 100 immediate retries, then 10 per second.
    const delays = Array.from({ length: 102 }, (_, i) => limiter.when(`key-${i}`));
    expect(delays.slice(0, 100).every((delay) => delay === 0)).toBe(true);
    expect(delays.slice(100).map(Math.round)).toEqual([100, 200]);
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    expect(limiter.when('fresh')).toBe(500);
  });
});
