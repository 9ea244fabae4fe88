/**
 * Bearer tokens checked by the management cluster: a TokenReview per token not seen lately, as
 * k8s.io/apiserver's delegating token authenticator does. Answers, positive and negative, are kept
 * for ten seconds under the token's SHA-256 (never the token itself), so a client's burst of
 * requests costs one review. A review that fails (kube-apiserver unreachable, timed out, refused)
 * authenticates nobody and is not remembered.
 */
import { createHash } from 'node:crypto';
import { AuthenticationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { LRUCache } from 'lru-cache';
import { reviewTimeoutMs, withDeadline } from './deadline.js';
import type { TokenAuthenticator } from '../authenticator.js';
import { authenticated, type UserInfo } from '../user.js';

export interface TokenReviewOptions {
  /** How long an answer is reused (kube: 10 s). */
  cacheTtlMs?: number;
  /** Tokens remembered at most. */
  cacheSize?: number;
  /** How long a review may take (default 10 s). */
  timeoutMs?: number;
}

export class TokenReviewAuthenticator implements TokenAuthenticator {
  private readonly timeoutMs: number;
  private readonly api: AuthenticationV1Api;
  private readonly answers: LRUCache<string, { user: UserInfo | null }>;

  constructor(kubeconfig: KubeConfig, options: TokenReviewOptions = {}) {
    this.api = kubeconfig.makeApiClient(AuthenticationV1Api);
    this.timeoutMs = options.timeoutMs ?? reviewTimeoutMs;
    this.answers = new LRUCache({ max: options.cacheSize ?? 10_000, ttl: options.cacheTtlMs ?? 10_000 });
  }

  async authenticateToken(token: string): Promise<UserInfo | undefined> {
    const key = createHash('sha256').update(token).digest('hex');
    const known = this.answers.get(key);
    if (known) return known.user ?? undefined;
    const review = await withDeadline(
      this.api.createTokenReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } }),
      this.timeoutMs,
      'TokenReview',
    );
    const status = review.status;
    const user = status?.authenticated && status.user?.username ? authenticated(status.user.username, status.user.groups ?? [], status.user.uid) : undefined;
    const withExtra = user && status?.user?.extra ? { ...user, extra: status.user.extra } : user;
    this.answers.set(key, { user: withExtra ?? null });
    return withExtra;
  }
}
