/**
 * kube-apiserver's NamespaceLifecycle admission for the objects this server stores: nothing is
 * created in a namespace that does not exist or is being deleted, so no object can appear in a
 * namespace the namespace controller is tearing down (kube-apiserver admits only its own
 * resources; an aggregated server admits its own). Namespaces are read from the management cluster
 * through an informer, with a live read when the cache has not seen a namespace yet (it may have
 * just been created), as kube's plugin does.
 */
import { CONNECT, CoreV1Api, ERROR, type KubeConfig, makeInformer, type V1Namespace } from '@kubernetes/client-node';
import { reviewTimeoutMs, withDeadline } from '../auth/delegated/deadline.js';
import { errors } from '../errors.js';

export interface NamespaceLifecycle {
  /** Resolves when `namespace` may receive a new `resource` object named `name`; rejects with kube's Status otherwise. */
  admitCreate(namespace: string, resource: { group: string; resource: string }, name: string): Promise<void>;
}

export class KubernetesNamespaceLifecycle implements NamespaceLifecycle {
  private readonly core: CoreV1Api;
  private readonly informer;
  private stopped = false;
  /** Why namespaces are not followed right now, from a failed list or watch until the next connect. */
  private failure: string | undefined;

  constructor(kubeconfig: KubeConfig) {
    this.core = kubeconfig.makeApiClient(CoreV1Api);
    this.informer = makeInformer<V1Namespace>(kubeconfig, '/api/v1/namespaces', () => this.core.listNamespace());
    // A failed list or watch is retried; until then admission reads namespaces live.
    this.informer.on(ERROR, (error: unknown) => {
      this.failure = `watching /api/v1/namespaces: ${error instanceof Error ? error.message : String(error)}`;
      if (!this.stopped) setTimeout(() => void this.informer.start().catch(() => undefined), 2_000).unref();
    });
    this.informer.on(CONNECT, () => {
      this.failure = undefined;
    });
  }

  /** For the readiness check: throws while namespaces are read live because their watch failed. */
  check(): void {
    if (this.failure) throw new Error(this.failure);
  }

  start(): void {
    void this.informer.start().catch(() => undefined);
  }

  stop(): void {
    this.stopped = true;
    void this.informer.stop();
  }

  async admitCreate(namespace: string, resource: { group: string; resource: string }, name: string): Promise<void> {
    admitCreateInto(this.informer.get(namespace) ?? (await this.read(namespace)), namespace, resource, name);
  }

  private async read(namespace: string): Promise<V1Namespace | undefined> {
    try {
      return await withDeadline(this.core.readNamespace({ name: namespace }), reviewTimeoutMs, `reading namespace ${namespace}`);
    } catch (error) {
      if (error && typeof error === 'object' && 'code' in error && error.code === 404) return undefined;
      throw errors.internal(`cannot read namespace ${namespace} from the management cluster: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/** The decision on a namespace as found (undefined: it does not exist), with kube's Status for a refusal. */
export function admitCreateInto(found: V1Namespace | undefined, namespace: string, resource: { group: string; resource: string }, name: string): void {
  if (!found) throw errors.notFound({ group: '', resource: 'namespaces' }, namespace);
  if (found.metadata?.deletionTimestamp || found.status?.phase === 'Terminating') {
    const qualified = resource.group ? `${resource.resource}.${resource.group}` : resource.resource;
    throw errors.forbidden(`${qualified} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`, {
      name,
      group: resource.group,
      kind: resource.resource,
      causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
    });
  }
}
