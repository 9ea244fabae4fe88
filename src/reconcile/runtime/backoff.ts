/**
 * Retry delays for failed reconciles, after client-go's workqueue rate
 * limiters: a per-key exponential backoff (here with full jitter, so keys that
 * failed together against one cloud outage do not retry in lockstep) combined
 * with an overall token bucket that caps the retry rate of a whole controller.
 */

export interface RateLimiter<K> {
  /** The delay before the next retry of key; counts as one more failure. */
  when(key: K): number;
  /** The key succeeded (or stopped mattering): its next failure starts from the base again. */
  forget(key: K): void;
}

export interface ExponentialBackoffOptions {
  /** Ceiling of the first retry's delay. */
  baseMs?: number;
  /** No delay exceeds this. */
  maxMs?: number;
}

/**
 * base·2^failures capped at max, drawn uniformly below that ceiling ("full
 * jitter"). Defaults suit cloud APIs: OpenStack needs seconds to recover from
 * a 409 or a rate limit, and 5 minutes bounds how stale a broken object gets.
 */
export class ExponentialBackoff<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(options: ExponentialBackoffOptions = {}) {
    this.baseMs = options.baseMs ?? 1000;
    this.maxMs = options.maxMs ?? 5 * 60_000;
    if (!(this.baseMs > 0) || !(this.maxMs >= this.baseMs)) {
      throw new Error(`backoff needs 0 < baseMs <= maxMs, got ${this.baseMs} and ${this.maxMs}`);
    }
  }

  when(key: K): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    // 2 ** failures overflows to Infinity long after the cap applies, which Math.min absorbs.
    const ceiling = Math.min(this.maxMs, this.baseMs * 2 ** failures);
    return Math.random() * ceiling;
  }

  forget(key: K): void {
    this.failures.delete(key);
  }
}

export interface TokenBucketOptions {
  /** Sustained retries per second. */
  qps?: number;
  /** Retries allowed at once after a quiet period. */
  burst?: number;
}

/**
 * One bucket for all keys. Each retry reserves a token, going into debt when
 * the bucket is empty; the debt is the delay (golang.org/x/time/rate's
 * Reserve), so a storm of failures is spread at qps instead of being dropped.
 */
export class TokenBucket<K> implements RateLimiter<K> {
  private readonly qps: number;
  private readonly burst: number;
  private tokens: number;
  private updatedAt = performance.now();

  constructor(options: TokenBucketOptions = {}) {
    this.qps = options.qps ?? 10;
    this.burst = options.burst ?? 100;
    if (!(this.qps > 0) || !(this.burst >= 1)) throw new Error(`token bucket needs qps > 0 and burst >= 1`);
    this.tokens = this.burst;
  }

  when(): number {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.updatedAt) * this.qps) / 1000);
    this.updatedAt = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  forget(): void {}
}

/** The longest delay of several limiters; every limiter sees every failure. */
export class MaxOf<K> implements RateLimiter<K> {
  private readonly limiters: readonly RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    this.limiters = limiters;
  }

  when(key: K): number {
    return Math.max(0, ...this.limiters.map((limiter) => limiter.when(key)));
  }

  forget(key: K): void {
    for (const limiter of this.limiters) limiter.forget(key);
  }
}

/** client-go's default controller rate limiter with cloud-sized backoff: 1 s to 5 min per key, 10 qps burst 100 overall. */
export function defaultRateLimiter<K>(): RateLimiter<K> {
  return new MaxOf<K>(new ExponentialBackoff<K>(), new TokenBucket<K>());
}
