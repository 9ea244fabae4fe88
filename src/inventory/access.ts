/**
 * What one caller may read of the inventory, asked of the server's
 * authorizer with Kubernetes attributes so that RBAC, ABAC or a
 * SubjectAccessReview decide as they do for kubectl. Decisions are cached
 * for the request, so a query over many hosts asks once per namespace and
 * kind, and once per Secret.
 *
 * Every derived view (GraphQL, the admin inventory, the dashboard) shows an
 * object of a kind only to a caller that REST would let list that kind in
 * that namespace: the same question, asked here, whatever the view.
 */
import { forbiddenMessage, type Authorizer, type RequestAttributes } from '../apiserver/auth/authorizer.js';
import type { UserInfo } from '../apiserver/auth/user.js';
import { computedGroup, computedVersion } from './computed-group.js';

/** A kind as an authorizer is asked about it. */
export interface ResourceKind {
  group: string;
  version: string;
  resource: string;
}

const infrastructureGroup = 'infrastructure.cluster.x-k8s.io';
const clusterResource: ResourceKind = { group: infrastructureGroup, version: 'v1beta2', resource: 'openstackclusters' };
const secretResource = { group: '', version: 'v1', resource: 'secrets' };

/** The kinds the derived views show of a cluster besides the OpenStackCluster itself, as REST names them. */
export const readableKinds = {
  machines: { group: infrastructureGroup, version: 'v1beta2', resource: 'openstackmachines' },
  servers: { group: infrastructureGroup, version: 'v1alpha1', resource: 'openstackservers' },
  nodes: { group: computedGroup, version: computedVersion, resource: 'openstacknodes' },
  clusterExtensions: { group: computedGroup, version: computedVersion, resource: 'clusterextensions' },
  events: { group: '', version: 'v1', resource: 'events' },
  images: { group: 'openstack.k-orc.cloud', version: 'v1alpha1', resource: 'images' },
} as const satisfies Record<string, ResourceKind>;

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

  requireListClusters(namespace: string): Promise<void> {
    return this.requireList([{ kind: clusterResource, namespace }]);
  }

  /** `list <kind>` in the namespace: what REST asks before it shows any object of that kind there. */
  mayList(kind: ResourceKind, namespace: string): Promise<boolean> {
    return this.decide(listAttributes(this.user, kind, namespace));
  }

  /**
   * Every `list <kind>` in its namespace, asked at once (each question once per request); refused
   * with the first denied one, in the order given.
   */
  async requireList(checks: { kind: ResourceKind; namespace: string }[]): Promise<void> {
    const attributes = checks.map(({ kind, namespace }) => listAttributes(this.user, kind, namespace));
    const allowed = await Promise.all(attributes.map((a) => this.decide(a)));
    const denied = attributes.find((_, i) => !allowed[i]);
    if (denied) throw new ForbiddenError(forbiddenMessage(denied));
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
  async requireResource(
    verb: string,
    resource: { group: string; version: string; resource: string; subresource?: string; namespace: string; name: string },
  ): Promise<void> {
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

function listAttributes(user: UserInfo, kind: ResourceKind, namespace: string): RequestAttributes {
  return { user, resource: { verb: 'list', ...kind, namespace } };
}
