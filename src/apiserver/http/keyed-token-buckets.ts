/**
 * Token buckets by key that refuse rather than delay (the work queue's TokenBucket delays): a caller
 * gets `burst` at once and one more every `everyMs`, then is told how long to wait. The dashboard's
 * sign-in limits (per address, per user), preflight runs per user and the event recorder's budget
 * per object use it. The keys tracked are bounded: past `maxKeys` the least recently used goes,
 * which after that long idle would be full again anyway.
 */
interface Bucket {
  tokens: number;
  /** When the tokens were last counted up; a full bucket restarts its clock. */
  at: number;
}

export class KeyedTokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly burst: number,
    private readonly everyMs: number,
    private readonly maxKeys = 10_000,
  ) {}

  /** Takes one token of `key`'s bucket: undefined when there was one, else the milliseconds until there is. */
  take(key: string, now: number): number | undefined {
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    const earned = Math.floor((now - bucket.at) / this.everyMs);
    if (earned > 0) {
      bucket.tokens = Math.min(this.burst, bucket.tokens + earned);
      bucket.at = bucket.tokens === this.burst ? now : bucket.at + earned * this.everyMs;
    }
    // Re-inserted, so the map's order is the order of last use.
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    return bucket.at + this.everyMs - now;
  }
}

/** A wait as Retry-After's whole seconds, at least one; undefined (no wait) stays undefined. */
export function retryAfterSeconds(waitMs: number | undefined): number | undefined {
  return waitMs === undefined ? undefined : Math.max(1, Math.ceil(waitMs / 1000));
}
