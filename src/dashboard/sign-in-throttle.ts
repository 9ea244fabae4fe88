/**
 * How often the dashboard lets anyone sign in: a token bucket per client address (every attempt
 * counts, so guessing tokens is slow) and one per user (every sign-in counts, so one user cannot
 * fill the session table and push everyone else's sessions out). Past either, the answer is 429
 * with Retry-After, before the token is even checked for a client.
 */
export interface ThrottleOptions {
  /** Attempts a client may make at once, and how often it gets one more. */
  client?: { burst: number; everyMs: number };
  /** Sign-ins a user may make at once, and how often one more. */
  user?: { burst: number; everyMs: number };
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets kept at most per kind; full ones are forgotten first. */
const maxBuckets = 10_000;

class Buckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly burst: number,
    private readonly everyMs: number,
  ) {}

  /** Takes one token: undefined when there was one, else the seconds until there is. */
  take(key: string, now: number): number | undefined {
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    const earned = Math.floor((now - bucket.at) / this.everyMs);
    if (earned > 0) {
      bucket.tokens = Math.min(this.burst, bucket.tokens + earned);
      bucket.at = bucket.tokens === this.burst ? now : bucket.at + earned * this.everyMs;
    }
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > maxBuckets) this.buckets.delete(this.buckets.keys().next().value as string);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((bucket.at + this.everyMs - now) / 1000));
  }
}

export class SignInThrottle {
  private readonly clients: Buckets;
  private readonly users: Buckets;
  private readonly now: () => number;

  constructor(options: ThrottleOptions = {}) {
    const client = options.client ?? { burst: 20, everyMs: 6_000 };
    const user = options.user ?? { burst: 5, everyMs: 12_000 };
    this.clients = new Buckets(client.burst, client.everyMs);
    this.users = new Buckets(user.burst, user.everyMs);
    this.now = options.now ?? Date.now;
  }

  /** Before the token is checked: undefined, or the seconds the client must wait. */
  attempt(client: string): number | undefined {
    return this.clients.take(client, this.now());
  }

  /** Once the token named a user: undefined, or the seconds that user must wait. */
  signIn(user: string): number | undefined {
    return this.users.take(user, this.now());
  }
}
