/**
 * How often the dashboard lets anyone sign in: a token bucket per client address (every attempt
 * counts, so guessing tokens is slow) and one per user (every sign-in counts; the session store also
 * bounds each user's live sessions). Past either, the answer is 429 with Retry-After, before the
 * token is even checked for a client.
 */
import { KeyedTokenBuckets, retryAfterSeconds } from '../apiserver/http/keyed-token-buckets.js';

export interface ThrottleOptions {
  /** Attempts a client may make at once, and how often it gets one more. */
  client?: { burst: number; everyMs: number };
  /** Sign-ins a user may make at once, and how often one more. */
  user?: { burst: number; everyMs: number };
  now?: () => number;
}

export class SignInThrottle {
  private readonly clients: KeyedTokenBuckets;
  private readonly users: KeyedTokenBuckets;
  private readonly now: () => number;

  constructor(options: ThrottleOptions = {}) {
    const client = options.client ?? { burst: 20, everyMs: 6_000 };
    const user = options.user ?? { burst: 5, everyMs: 12_000 };
    this.clients = new KeyedTokenBuckets(client.burst, client.everyMs);
    this.users = new KeyedTokenBuckets(user.burst, user.everyMs);
    this.now = options.now ?? Date.now;
  }

  /** Before the token is checked: undefined, or the seconds the client must wait. */
  attempt(client: string): number | undefined {
    return retryAfterSeconds(this.clients.take(client, this.now()));
  }

  /** Once the token named a user: undefined, or the seconds that user must wait. */
  signIn(user: string): number | undefined {
    return retryAfterSeconds(this.users.take(user, this.now()));
  }
}
