/**
 * Browser sessions of the dashboard. A browser trades a bearer token, once,
 * for an opaque session id in an HttpOnly, SameSite=Strict cookie, so the
 * token never sits where page script could read it. Each session carries a
 * CSRF token that every mutating call must send back in a header: SameSite
 * already keeps other sites' requests cookie-less, the header also stops a
 * form posted from a sibling origin of the same site.
 *
 * Sessions live in this process's memory (lru-cache, bounded and idle-expired):
 * a restart signs everyone out, and several replicas need sticky routing.
 * A session also ends at its absolute lifetime, however often it is used, and
 * each user holds a bounded number: a user's new session pushes out that user's
 * oldest, never someone else's, so no one user can flush the table.
 *
 * A request that brings its own credentials (through `kubectl proxy`, where
 * kube-apiserver names the user; or a client certificate) needs no session
 * but still a CSRF token: a browser attaches those credentials to any page's
 * requests, as it does cookies. Its token is derived from the user, so
 * nothing is stored for it.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { UserInfo } from '../apiserver/auth/user.js';
import type { TokenReference } from './session-tokens.js';

export interface Session {
  readonly id: string;
  readonly user: UserInfo;
  readonly csrfToken: string;
  /** What the session was made with, checked again on use (absent for a request's own credentials). */
  readonly token?: TokenReference;
  /** When it was made, on the store's clock. */
  readonly createdAt: number;
}

export interface SessionOptions {
  /** A session unused this long is gone (default 8 hours, a working day). */
  idleMs?: number;
  /** A session this old is gone, used or not (default 12 hours: a long working day, never into the next). */
  maxLifetimeMs?: number;
  /** The oldest sessions give way past this many (default 10,000). */
  maxSessions?: number;
  /** A user's oldest session gives way past this many of theirs (default 10: a few browsers each). */
  maxPerUser?: number;
  /** The clock the absolute lifetime is counted on (tests move it). */
  now?: () => number;
}

const defaultSessionOptions = { idleMs: 8 * 3_600_000, maxLifetimeMs: 12 * 3_600_000, maxSessions: 10_000, maxPerUser: 10 } as const;

export class SessionStore {
  private readonly sessions: LRUCache<string, Session>;
  /** Each user's session ids, oldest first. */
  private readonly byUser = new Map<string, string[]>();
  private readonly secret = randomBytes(32);
  private readonly maxLifetimeMs: number;
  private readonly maxPerUser: number;
  private readonly now: () => number;

  constructor(options: SessionOptions = {}) {
    const settings = { ...defaultSessionOptions, ...options };
    this.maxLifetimeMs = settings.maxLifetimeMs;
    this.maxPerUser = settings.maxPerUser;
    this.now = options.now ?? Date.now;
    this.sessions = new LRUCache({ max: settings.maxSessions, ttl: settings.idleMs, updateAgeOnGet: true, dispose: (session) => this.forget(session) });
  }

  create(user: UserInfo, token: TokenReference): Session {
    const session = { id: randomToken(), user, csrfToken: randomToken(), token, createdAt: this.now() };
    const own = this.byUser.get(user.name) ?? [];
    for (const oldest of own.slice(0, Math.max(0, own.length - this.maxPerUser + 1))) this.sessions.delete(oldest);
    this.byUser.set(user.name, [...(this.byUser.get(user.name) ?? []), session.id]);
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session of that id: unknown, idle too long and past its lifetime are all undefined. */
  get(id: string | undefined): Session | undefined {
    const session = id === undefined ? undefined : this.sessions.get(id);
    if (session && this.now() - session.createdAt >= this.maxLifetimeMs) {
      this.sessions.delete(session.id);
      return undefined;
    }
    return session;
  }

  /** The stateless session of a request authenticated by its own credentials; its id is empty. */
  ofRequest(user: UserInfo): Session {
    const csrfToken = createHmac('sha256', this.secret)
      .update(JSON.stringify([user.name, user.uid ?? '', user.groups]))
      .digest('base64url');
    return { id: '', user, csrfToken, createdAt: this.now() };
  }

  delete(id: string): void {
    this.sessions.delete(id);
  }

  private forget(session: Session): void {
    const left = (this.byUser.get(session.user.name) ?? []).filter((id) => id !== session.id);
    if (left.length === 0) this.byUser.delete(session.user.name);
    else this.byUser.set(session.user.name, left);
  }
}

/** Compares in constant time, so the time a refusal takes tells nothing of the token. */
export function csrfTokenMatches(session: Session, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const expected = Buffer.from(session.csrfToken);
  const given = Buffer.from(presented);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

function randomToken(): string {
  return randomBytes(32).toString('base64url');
}
