/**
 * How often one user may run a cluster's preflight. Each run makes a handful of OpenStack calls with
 * the cluster's own credentials, so a user allowed only to read a cluster could otherwise spend its
 * cloud's API quota at will (50 requests made 300 calls in 5.7 s). A token bucket per user, shared by
 * the admin API and the dashboard; past it the answer is 429 with Retry-After, before the cloud is
 * asked anything.
 */
import { errors } from '../apiserver/errors.js';
import { KeyedTokenBuckets, retryAfterSeconds } from '../apiserver/http/keyed-token-buckets.js';

export interface PreflightRunLimit {
  /** Runs a user may start at once, and how often one more. */
  burst: number;
  everyMs: number;
}

/** Three at once (a fix and two re-checks), then one every 20 s: a person's pace, about 18 calls a minute. */
const defaultPreflightRunLimit: PreflightRunLimit = { burst: 3, everyMs: 20_000 };

export class PreflightRuns {
  private readonly buckets: KeyedTokenBuckets;

  constructor(limit: PreflightRunLimit = defaultPreflightRunLimit) {
    this.buckets = new KeyedTokenBuckets(limit.burst, limit.everyMs);
  }

  /** Counts a run by `user`; throws 429 when they have started too many lately. */
  admit(user: string): void {
    const wait = retryAfterSeconds(this.buckets.take(user, Date.now()));
    if (wait !== undefined) throw errors.tooManyRequests(wait, `too many preflight runs by ${user}; try again in ${wait} s`);
  }
}
