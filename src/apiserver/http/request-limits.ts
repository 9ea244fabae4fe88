/**
 * What one request may hold, and for how long: in-flight slots shared fairly
 * between users, watches per user, and a deadline for every request that is
 * not long-running. kube-apiserver's generic flags name the same bounds
 * (--max-requests-inflight, --max-mutating-requests-inflight,
 * --request-timeout); its API Priority and Fairness is what keeps one client
 * from crowding out the others, which the per-user share does here in spirit:
 * a user past its share is answered 429 while others still find free slots.
 */
import type { ServerResponse } from 'node:http';
import { errors } from '../errors.js';
import { sendError } from './respond.js';

export interface RequestLimits {
  /** Requests served at once per pool before new ones get 429 (kube: 400 read-only, 200 mutating). */
  maxInFlight: { readOnly: number; mutating: number };
  /** The share of each pool one user may hold at once. */
  perUserShare: number;
  /** Watches one user may hold open at once. */
  maxWatchesPerUser: number;
  /** Deadline of every request but watches, reading its body included (kube: 60 s). */
  requestTimeoutMs: number;
  /** How long a connection with no request in progress stays open (HTTP/1.1 keep-alive, an HTTP/2 connection without streams). */
  idleConnectionMs: number;
}

export const defaultRequestLimits: RequestLimits = {
  maxInFlight: { readOnly: 400, mutating: 200 },
  perUserShare: 0.25,
  maxWatchesPerUser: 250,
  requestTimeoutMs: 60_000,
  // Past the 60 s idle timeout of common load balancers, so they, not we, close a shared connection.
  idleConnectionMs: 65_000,
};

export type Pool = 'readOnly' | 'mutating' | 'watch';

/** Counts what each user holds; `acquire` answers how to give it back, or throws 429. */
export class InFlightLimiter {
  private readonly total = { readOnly: 0, mutating: 0 };
  private readonly byUser = new Map<string, number>();

  constructor(private readonly limits: RequestLimits) {}

  acquire(pool: Pool, user: string): () => void {
    const key = `${pool}\u0000${user}`;
    const held = this.byUser.get(key) ?? 0;
    if (pool === 'watch') {
      if (held >= this.limits.maxWatchesPerUser) {
        throw errors.tooManyRequests(1, `Too many watches: at most ${this.limits.maxWatchesPerUser} open at once per user`);
      }
    } else {
      const limit = this.limits.maxInFlight[pool];
      if (this.total[pool] >= limit || held >= Math.max(1, Math.floor(limit * this.limits.perUserShare))) throw errors.tooManyRequests(1);
      this.total[pool]++;
    }
    this.byUser.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (pool !== 'watch') this.total[pool]--;
      const left = (this.byUser.get(key) ?? 1) - 1;
      if (left === 0) this.byUser.delete(key);
      else this.byUser.set(key, left);
    };
  }
}

/**
 * Ends a request that outlives its deadline with kube's 504. The handler may still finish its work,
 * as in kube; what it writes then is dropped.
 */
export function startDeadline(response: ServerResponse, timeoutMs: number): () => void {
  const timer = setTimeout(() => sendError(response, errors.requestTimeout()), timeoutMs);
  return () => clearTimeout(timer);
}
