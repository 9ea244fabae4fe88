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

export interface Session {
  readonly id: string;
  readonly user: UserInfo;
  readonly csrfToken: string;
}

export interface SessionOptions {
  /** A session unused this long is gone (default 8 hours, a working day). */
  idleMs?: number;
  /** The oldest sessions give way past this many (default 10,000). */
  maxSessions?: number;
}

export class SessionStore {
  private readonly sessions: LRUCache<string, Session>;
  private readonly secret = randomBytes(32);

  constructor(options: SessionOptions = {}) {
    this.sessions = new LRUCache({ max: options.maxSessions ?? 10_000, ttl: options.idleMs ?? 8 * 3_600_000, updateAgeOnGet: true });
  }

  create(user: UserInfo): Session {
    const session = { id: randomToken(), user, csrfToken: randomToken() };
    this.sessions.set(session.id, session);
    return session;
  }

  get(id: string | undefined): Session | undefined {
    return id === undefined ? undefined : this.sessions.get(id);
  }

  /** The stateless session of a request authenticated by its own credentials; its id is empty. */
  ofRequest(user: UserInfo): Session {
    const csrfToken = createHmac('sha256', this.secret).update(JSON.stringify([user.name, user.uid ?? '', user.groups])).digest('base64url');
    return { id: '', user, csrfToken };
  }

  delete(id: string): void {
    this.sessions.delete(id);
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
