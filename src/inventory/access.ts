/**
 * What one caller may read of the inventory, asked of the server's
 * authorizer with Kubernetes attributes so that RBAC, ABAC or a
 * SubjectAccessReview decide as they do for kubectl. Decisions are cached
 * for the request, so a query over many hosts asks once per namespace and
 * once per Secret.
 */
import { forbiddenMessage, type Authorizer, type RequestAttributes } from '../apiserver/auth/authorizer.js';
import type { UserInfo } from '../apiserver/auth/user.js';

const clusterResource = { group: 'infrastructure.cluster.x-k8s.io', version: 'v1beta2', resource: 'openstackclusters' };
const secretResource = { group: '', version: 'v1', resource: 'secrets' };

/** The caller may not list clusters in a namespace (or across all namespaces). */
export class ForbiddenError extends Error {}

export class InventoryAccess {
  private readonly decisions = new Map<string, Promise<boolean>>();

  constructor(
    readonly user: UserInfo,
    private readonly authorizer: Authorizer,
  ) {}

  /** `list openstackclusters` in the namespace; without one, across all namespaces. */
  mayListClusters(namespace?: string): Promise<boolean> {
    return this.decide({ user: this.user, resource: { verb: 'list', ...clusterResource, ...(namespace ? { namespace } : {}) } });
  }

  async requireListClusters(namespace: string): Promise<void> {
    const attributes: RequestAttributes = { user: this.user, resource: { verb: 'list', ...clusterResource, namespace } };
    if (!(await this.decide(attributes))) throw new ForbiddenError(forbiddenMessage(attributes));
  }

  /** `get secrets <name>` in the namespace: who may read the SSH key may be told where it is. */
  mayGetSecret(namespace: string, name: string): Promise<boolean> {
    return this.decide({ user: this.user, resource: { verb: 'get', ...secretResource, namespace, name } });
  }

  /** A non-resource request, for admin endpoints that are about the server rather than an object. */
  async requirePath(verb: string, path: string): Promise<void> {
    const attributes: RequestAttributes = { user: this.user, nonResource: { verb, path } };
    if (!(await this.decide(attributes))) throw new ForbiddenError(forbiddenMessage(attributes));
  }

  /** An action on one object, such as forcing its reconcile. */
  async requireResource(verb: string, resource: { group: string; version: string; resource: string; subresource?: string; namespace: string; name: string }): Promise<void> {
    const attributes: RequestAttributes = { user: this.user, resource: { verb, ...resource } };
    if (!(await this.decide(attributes))) throw new ForbiddenError(forbiddenMessage(attributes));
  }

  private decide(attributes: RequestAttributes): Promise<boolean> {
    const key = JSON.stringify('resource' in attributes ? attributes.resource : attributes.nonResource);
    let decision = this.decisions.get(key);
    if (!decision) {
      decision = this.authorizer.authorize(attributes).then((d) => d.allowed);
      this.decisions.set(key, decision);
    }
    return decision;
  }
}
