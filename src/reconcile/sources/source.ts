/**
 * Where the reconciler reads what it does not own: Secrets (identityRef
 * clouds.yaml and cacert, bootstrap data) and Cluster API's Cluster and
 * Machine. In a management cluster they live in kube-apiserver
 * (KubernetesClusterApiSource); in the embedded default our own API server
 * serves them from its storage (StorageClusterApiSource).
 */
import type { JsonObject } from '../../storage/interface.js';
import { TerminalError } from '../runtime/controller.js';

export interface SecretData {
  namespace: string;
  name: string;
  resourceVersion: string;
  type?: string;
  data: Record<string, Buffer>;
}

export interface ClusterApiCluster {
  namespace: string;
  name: string;
  uid: string;
  /** spec.paused, or the cluster.x-k8s.io/paused annotation on the Cluster. */
  paused: boolean;
  /** It has a deletionTimestamp: Cluster API is tearing it down, machines first. */
  deleting: boolean;
  labels: Record<string, string>;
  infrastructureRef?: { kind: string; name: string };
  /** Only when set, i.e. host non-empty and port non-zero, as Cluster API's IsValid. */
  controlPlaneEndpoint?: { host: string; port: number };
  /** status.phase as Cluster API's controllers set it (Provisioning, Provisioned, ...); shown, never acted on. */
  phase?: string;
}

export interface ClusterApiMachine {
  namespace: string;
  name: string;
  uid: string;
  clusterName: string;
  labels: Record<string, string>;
  /** The label cluster.x-k8s.io/control-plane is present. */
  controlPlane: boolean;
  bootstrapDataSecretName?: string;
  failureDomain?: string;
  version?: string;
  infrastructureRef?: { kind: string; name: string };
}

export type SourceKind = 'Secret' | 'Cluster' | 'Machine' | 'Image';

export type SourceChange = { kind: SourceKind; namespace: string; name: string };

export interface ClusterApiSource {
  /** Undefined when the object does not exist; MalformedObjectError when it cannot be read. */
  getSecret(namespace: string, name: string): Promise<SecretData | undefined>;
  getCluster(namespace: string, name: string): Promise<ClusterApiCluster | undefined>;
  getMachine(namespace: string, name: string): Promise<ClusterApiMachine | undefined>;
  /**
   * ORC's own Image objects, for a management cluster where ORC is installed
   * and this server does not serve Images (--orc-images=external). Sources
   * without it have no Images but the served ones.
   */
  getOrcImage?(namespace: string, name: string): Promise<JsonObject | undefined>;
  /**
   * Sets a Cluster's spec.paused where Cluster API keeps it: the dashboard's pause and resume in a
   * management cluster, once the caller was found allowed to patch the Cluster. Undefined when the
   * Cluster does not exist. A source whose Clusters this server stores has none: the dashboard
   * writes those through the API server itself.
   */
  setClusterPaused?(namespace: string, name: string, paused: boolean): Promise<ClusterApiCluster | undefined>;
  /** Every change (add/update/delete) of a Secret, Cluster or Machine, so dependants can be requeued. */
  watch(listener: (change: SourceChange) => void): { stop(): void };
  /** For the readiness check, when the source follows something outside the process: throws with why it does not right now. */
  check?(): void;
  close(): Promise<void>;
}

/**
 * An object the source cannot interpret. Terminal: retrying reads the same
 * object again; the source's watch reports the change that fixes it, which is
 * what requeues its dependants.
 */
export class MalformedObjectError extends TerminalError {
  override name = 'MalformedObjectError';

  constructor(
    readonly kind: SourceKind,
    readonly namespace: string,
    readonly objectName: string,
    readonly problem: string,
  ) {
    super(`${kind} ${namespace}/${objectName} is malformed: ${problem}`);
  }
}
