/**
 * Authorization decisions. The embedded server chains LocalAuthorizer and a
 * policy file (abac.ts); serving behind kube-apiserver plugs in a
 * SubjectAccessReview authorizer with the same attributes. Handlers other
 * than the Kubernetes routes (GraphQL, admin API) ask the same authorizer,
 * for example `{ verb: 'get', group: '', version: 'v1', resource: 'secrets',
 * namespace, name }` before returning an SSH key.
 */
import type { UserInfo } from './user.js';

export interface ResourceAttributes {
  /** Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection. */
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface NonResourceAttributes {
  verb: string;
  path: string;
}

export type RequestAttributes = { user: UserInfo } & ({ resource: ResourceAttributes } | { nonResource: NonResourceAttributes });

export interface Decision {
  allowed: boolean;
  reason?: string;
}

export interface Authorizer {
  authorize(attributes: RequestAttributes): Promise<Decision>;
}

/** Paths any authenticated user may read, as kube's system:discovery / public-info-viewer roles grant. */
const discoveryPaths = [/^\/apis?(\/|$)/, /^\/openapi\//, /^\/openapi$/, /^\/version\/?$/];

/**
 * The embedded default: system:masters may do anything; other authenticated
 * users may read discovery and OpenAPI; anonymous users may do nothing.
 */
export class LocalAuthorizer implements Authorizer {
  async authorize({ user, ...request }: RequestAttributes): Promise<Decision> {
    if (user.groups.includes('system:masters')) return { allowed: true };
    if ('nonResource' in request && user.groups.includes('system:authenticated')) {
      const { verb, path } = request.nonResource;
      if ((verb === 'get' || verb === 'head') && discoveryPaths.some((p) => p.test(path))) return { allowed: true };
    }
    return { allowed: false, reason: 'no policy grants this request' };
  }
}

/**
 * Asks each authorizer in turn and lets the first that allows decide, as
 * kube-apiserver chains --authorization-mode entries: LocalAuthorizer first,
 * then the policy file.
 */
export class UnionAuthorizer implements Authorizer {
  constructor(private readonly authorizers: readonly Authorizer[]) {}

  async authorize(attributes: RequestAttributes): Promise<Decision> {
    const reasons: string[] = [];
    for (const authorizer of this.authorizers) {
      const decision = await authorizer.authorize(attributes);
      if (decision.allowed) return decision;
      if (decision.reason) reasons.push(decision.reason);
    }
    return { allowed: false, reason: reasons.join('; ') };
  }
}

/** kube's 403 message for a denied request. */
export function forbiddenMessage(attributes: RequestAttributes): string {
  const user = attributes.user.name;
  if ('nonResource' in attributes) return `forbidden: User "${user}" cannot ${attributes.nonResource.verb} path "${attributes.nonResource.path}"`;
  const r = attributes.resource;
  const resource = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  const subject = `${r.group ? `${r.resource}.${r.group}` : r.resource}${r.name ? ` "${r.name}"` : ''}`;
  const scope = r.namespace ? `in the namespace "${r.namespace}"` : 'at the cluster scope';
  return `${subject} is forbidden: User "${user}" cannot ${r.verb} resource "${resource}" in API group "${r.group}" ${scope}`;
}
