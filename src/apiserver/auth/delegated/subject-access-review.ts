/**
 * Authorization decided by the management cluster: a SubjectAccessReview per request not decided
 * lately, as k8s.io/apiserver's delegating authorizer does, with kube's attributes (verb, group,
 * version, resource, subresource, namespace, name; or a non-resource path). Allow and deny are both
 * remembered for ten seconds. Paths that must answer without the management cluster (health checks)
 * and the groups kube-apiserver itself acts as (system:masters) are allowed without asking. A review
 * that fails rejects the promise: the request is answered 500, never allowed.
 */
import { AuthorizationV1Api, type KubeConfig, type V1SubjectAccessReviewSpec } from '@kubernetes/client-node';
import { LRUCache } from 'lru-cache';
import { reviewTimeoutMs, withDeadline } from './deadline.js';
import type { Authorizer, Decision, RequestAttributes } from '../authorizer.js';

export interface SubjectAccessReviewOptions {
  /** Paths allowed to everyone without a review (`--authorization-always-allow-paths`); a trailing `*` matches a prefix. */
  alwaysAllowPaths?: string[];
  /** Groups allowed everything without a review (kube: system:masters). */
  alwaysAllowGroups?: string[];
  cacheTtlMs?: number;
  cacheSize?: number;
  /** How long a review may take (default 10 s). */
  timeoutMs?: number;
}

export const defaultAlwaysAllowPaths = ['/healthz', '/readyz', '/livez'];

export class SubjectAccessReviewAuthorizer implements Authorizer {
  private readonly timeoutMs: number;
  private readonly api: AuthorizationV1Api;
  private readonly decisions: LRUCache<string, Decision>;
  private readonly alwaysAllowPaths: string[];
  private readonly alwaysAllowGroups: string[];

  constructor(kubeconfig: KubeConfig, options: SubjectAccessReviewOptions = {}) {
    this.api = kubeconfig.makeApiClient(AuthorizationV1Api);
    this.timeoutMs = options.timeoutMs ?? reviewTimeoutMs;
    this.decisions = new LRUCache({ max: options.cacheSize ?? 10_000, ttl: options.cacheTtlMs ?? 10_000 });
    this.alwaysAllowPaths = options.alwaysAllowPaths ?? defaultAlwaysAllowPaths;
    this.alwaysAllowGroups = options.alwaysAllowGroups ?? ['system:masters'];
  }

  async authorize(attributes: RequestAttributes): Promise<Decision> {
    if (attributes.user.groups.some((group) => this.alwaysAllowGroups.includes(group))) return { allowed: true };
    if ('nonResource' in attributes && this.alwaysAllowPaths.some((path) => pathMatches(path, attributes.nonResource.path))) return { allowed: true };
    const spec = reviewSpec(attributes);
    const key = JSON.stringify(spec);
    const known = this.decisions.get(key);
    if (known) return known;
    const review = await withDeadline(
      this.api.createSubjectAccessReview({ body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } }),
      this.timeoutMs,
      'SubjectAccessReview',
    );
    const status = review.status;
    const decision: Decision = { allowed: status?.allowed === true && status.denied !== true, reason: status?.reason || status?.evaluationError || undefined };
    this.decisions.set(key, decision);
    return decision;
  }
}

function reviewSpec({ user, ...request }: RequestAttributes): V1SubjectAccessReviewSpec {
  const subject = { user: user.name, uid: user.uid, groups: user.groups, extra: user.extra };
  if ('nonResource' in request) return { ...subject, nonResourceAttributes: { path: request.nonResource.path, verb: request.nonResource.verb } };
  const { verb, group, version, resource, subresource, namespace, name } = request.resource;
  return { ...subject, resourceAttributes: { verb, group, version, resource, subresource, namespace, name } };
}

function pathMatches(pattern: string, path: string): boolean {
  return pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern;
}
