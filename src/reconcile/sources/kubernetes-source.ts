/**
 * The management-cluster source: Secrets and Cluster API objects read from
 * kube-apiserver through @kubernetes/client-node.
 *
 * Reads are served from informer caches (WatchedCollection) once they have
 * listed, and by a direct GET before that or while a watch is being restored,
 * so a read never waits for a cache. The same watches report changes.
 *
 * - Clusters and Machines: one cluster-wide watch each, in the newest version
 *   of cluster.x-k8s.io the server serves (v1beta2, else v1beta1), found by
 *   discovery on first use.
 * - Secrets: a management cluster holds many that the reconciler never reads
 *   (service account tokens, Helm releases, certificates), and a cluster-wide
 *   watch would cache them all and need cluster-wide list permission. So
 *   Secrets are watched per namespace, from the first read of a Secret in that
 *   namespace on. Cluster API keeps a cluster's Secrets (identity, bootstrap
 *   data) in the cluster's namespace, so that is one watch per namespace that
 *   holds clusters, plus the namespace of any OpenStackClusterIdentity's
 *   Secret. Changes are reported for every Secret of those namespaces, which
 *   includes every Secret the reconciler read or looked for in vain.
 * - ORC's Images (--orc-images=external): one cluster-wide watch, from the
 *   first imageRef read on.
 */
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { ExponentialBackoff, type ExponentialBackoffOptions } from '../runtime/backoff.js';
import { loadKubeconfig } from './kubeconfig.js';
import { clusterApiGroup, clusterApiVersions, parseCluster, parseMachine, parseSecret, type ClusterApiVersion } from './parse.js';
import type { ClusterApiCluster, ClusterApiMachine, ClusterApiSource, SecretData, SourceChange, SourceKind } from './source.js';
import { servedVersion } from './discovery.js';
import { describeKubeError, WatchedCollection, type WatchSettings } from './watched-collection.js';
import { fallbackLogger } from '../../observability/log.js';
import type { JsonObject } from '../../storage/interface.js';

export interface KubernetesSourceOptions extends WatchSettings {
  /** Receives failed watches and discovery, and throwing listeners. Default: logged as an error. */
  onError?: (error: unknown) => void;
  /** Delays before restoring a failed watch. Default up to 800 ms, doubling up to 30 s, as client-go's reflector. */
  retry?: ExponentialBackoffOptions;
  /** How long a read, discovery, list or watch request may go unanswered before it fails, and a watch stay silent past its timeout. Default 10 s. */
  requestTimeoutMs?: number;
}

type ClusterApiKind = 'Cluster' | 'Machine';

interface ServedCollection {
  version: ClusterApiVersion;
  collection: WatchedCollection;
}

const plurals: Record<ClusterApiKind, string> = { Cluster: 'clusters', Machine: 'machines' };
const orcGroup = 'openstack.k-orc.cloud';
/** The version of ORC's Image that CAPO reads. */
const orcVersion = 'v1alpha1';
type KubeList = KubernetesListObject<KubernetesObject>;

export class KubernetesClusterApiSource implements ClusterApiSource {
  /** From the kubeconfig at `path`, or else as kubectl finds one: $KUBECONFIG, ~/.kube/config, then the pod's service account. */
  static fromKubeconfig(path?: string, options: KubernetesSourceOptions = {}): KubernetesClusterApiSource {
    return new KubernetesClusterApiSource(loadKubeconfig(path), options);
  }

  /** With the service account of the pod this runs in. */
  static inCluster(options: KubernetesSourceOptions = {}): KubernetesClusterApiSource {
    if (!process.env.KUBERNETES_SERVICE_HOST || !process.env.KUBERNETES_SERVICE_PORT) {
      throw new Error('not running in a Kubernetes pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set');
    }
    const config = new KubeConfig();
    config.loadFromCluster();
    return new KubernetesClusterApiSource(config, options);
  }

  private readonly core: CoreV1Api;
  private readonly custom: CustomObjectsApi;
  private readonly config: KubeConfig;
  private readonly onError: (error: unknown) => void;
  private readonly retry: ExponentialBackoffOptions;
  private readonly requestTimeoutMs: number;
  private readonly watchSettings: WatchSettings;
  private readonly discoveryBackoff: ExponentialBackoff<ClusterApiKind>;
  private readonly listeners = new Set<(change: SourceChange) => void>();
  private readonly secrets = new Map<string, WatchedCollection>();
  private orcImages: WatchedCollection | undefined;
  private readonly clusterApi = new Map<ClusterApiKind, Promise<ServedCollection>>();
  private readonly collections = new Set<WatchedCollection>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Why a kind could not be discovered, until it is. */
  private readonly discoveryProblems = new Map<ClusterApiKind, string>();
  /** Clusters and Machines are watched from the first watch() on, for as long as the source lives. */
  private watchingClusterApi = false;
  private closed = false;

  constructor(config: KubeConfig, options: KubernetesSourceOptions = {}) {
    this.core = config.makeApiClient(CoreV1Api);
    this.custom = config.makeApiClient(CustomObjectsApi);
    this.config = config;
    const logger = options.logger ?? fallbackLogger.child({ component: 'cluster-api-source' });
    this.onError = options.onError ?? ((error) => logger.error({ err: error }, 'cluster api source error'));
    this.retry = { baseMs: 800, maxMs: 30_000, ...options.retry };
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.watchSettings = { logger, metrics: options.metrics, minWatchTimeoutMs: options.minWatchTimeoutMs };
    this.discoveryBackoff = new ExponentialBackoff(this.retry);
  }

  async getSecret(namespace: string, name: string): Promise<SecretData | undefined> {
    const object = await this.readThrough('Secret', this.secretsIn(namespace), namespace, name, () => this.core.readNamespacedSecret({ namespace, name }));
    return object === undefined ? undefined : parseSecret(object, { namespace, name });
  }

  async getCluster(namespace: string, name: string): Promise<ClusterApiCluster | undefined> {
    const object = await this.readClusterApi('Cluster', namespace, name);
    return object === undefined ? undefined : parseCluster(object, { namespace, name });
  }

  async setClusterPaused(namespace: string, name: string, paused: boolean): Promise<ClusterApiCluster | undefined> {
    const { version } = await this.served('Cluster');
    const patch = { group: clusterApiGroup, version, namespace, plural: plurals.Cluster, name, body: { spec: { paused } }, fieldManager: 'capo-dashboard' };
    try {
      const object = await this.withinDeadline(this.custom.patchNamespacedCustomObject(patch, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
      return parseCluster(object, { namespace, name });
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw new Error(`patching Cluster ${namespace}/${name}: ${describeKubeError(error)}`, { cause: error });
    }
  }

  async getMachine(namespace: string, name: string): Promise<ClusterApiMachine | undefined> {
    const object = await this.readClusterApi('Machine', namespace, name);
    return object === undefined ? undefined : parseMachine(object, { namespace, name });
  }

  async getOrcImage(namespace: string, name: string): Promise<JsonObject | undefined> {
    this.assertOpen();
    const where = { group: orcGroup, version: orcVersion, plural: 'images' };
    this.orcImages ??= this.collection(
      'Image',
      `/apis/${orcGroup}/${orcVersion}/images`,
      () => this.custom.listClusterCustomObject(where) as Promise<KubeList>,
    );
    return (await this.readThrough('Image', this.orcImages, namespace, name, () => this.custom.getNamespacedCustomObject({ ...where, namespace, name }))) as
      | JsonObject
      | undefined;
  }

  watch(listener: (change: SourceChange) => void): { stop(): void } {
    this.assertOpen();
    this.listeners.add(listener);
    if (!this.watchingClusterApi) {
      this.watchingClusterApi = true;
      for (const kind of ['Cluster', 'Machine'] as const) this.keepWatching(kind);
    }
    return { stop: () => this.listeners.delete(listener) };
  }

  /** For the readiness check: throws with every collection not followed right now (reads then go to kube-apiserver). */
  check(): void {
    const problems = [...this.discoveryProblems.values(), ...[...this.collections].map((collection) => collection.problem())].filter(
      (problem) => problem !== undefined,
    );
    if (problems.length > 0) throw new Error(problems.join('; '));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const collection of this.collections) collection.stop();
    this.collections.clear();
  }

  private async readClusterApi(kind: ClusterApiKind, namespace: string, name: string): Promise<unknown> {
    const { version, collection } = await this.served(kind);
    const plural = plurals[kind];
    return this.readThrough(kind, collection, namespace, name, () =>
      this.custom.getNamespacedCustomObject({ group: clusterApiGroup, version, namespace, plural, name }),
    );
  }

  /** From the cache when it can tell; otherwise from the server, a 404 meaning absent. */
  private async readThrough(kind: SourceKind, collection: WatchedCollection, namespace: string, name: string, get: () => Promise<unknown>): Promise<unknown> {
    const cached = collection.lookup(namespace, name);
    if (cached) return cached.object;
    try {
      return await this.withinDeadline(get());
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw new Error(`reading ${kind} ${namespace}/${name}: ${describeKubeError(error)}`, { cause: error });
    }
  }

  /**
   * A management cluster that stops answering must not hold a reconcile forever: the caller fails
   * and retries with its backoff. The request itself is left to its connection's fate.
   */
  private withinDeadline<T>(request: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.requestTimeoutMs} ms`)), this.requestTimeoutMs);
    });
    return Promise.race([request, deadline]).finally(() => clearTimeout(timer));
  }

  private secretsIn(namespace: string): WatchedCollection {
    this.assertOpen();
    let collection = this.secrets.get(namespace);
    if (!collection) {
      collection = this.collection(
        'Secret',
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`,
        () => this.core.listNamespacedSecret({ namespace }) as Promise<KubeList>,
      );
      this.secrets.set(namespace, collection);
    }
    return collection;
  }

  /** The kind's watched collection, discovering the version first; a failure is retried by the next call. */
  private served(kind: ClusterApiKind): Promise<ServedCollection> {
    this.assertOpen();
    let served = this.clusterApi.get(kind);
    if (!served) {
      served = this.startClusterApi(kind);
      this.clusterApi.set(kind, served);
      served.catch(() => this.clusterApi.delete(kind));
    }
    return served;
  }

  private async startClusterApi(kind: ClusterApiKind): Promise<ServedCollection> {
    const plural = plurals[kind];
    const version = await servedVersion({
      custom: this.custom,
      group: clusterApiGroup,
      versions: clusterApiVersions,
      plural,
      label: plural,
      deadline: (request) => this.withinDeadline(request),
    });
    this.assertOpen();
    const collection = this.collection(
      kind,
      `/apis/${clusterApiGroup}/${version}/${plural}`,
      () => this.custom.listClusterCustomObject({ group: clusterApiGroup, version, plural }) as Promise<KubeList>,
    );
    return { version, collection };
  }

  /** Starts the kind's watch for listeners, retrying discovery until it works or the source closes. */
  private keepWatching(kind: ClusterApiKind): void {
    this.served(kind).then(
      () => {
        this.discoveryBackoff.forget(kind);
        this.discoveryProblems.delete(kind);
      },
      (error: unknown) => {
        if (this.closed) return;
        this.discoveryProblems.set(kind, error instanceof Error ? error.message : String(error));
        this.onError(error);
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          if (!this.closed) this.keepWatching(kind);
        }, this.discoveryBackoff.when(kind));
        this.timers.add(timer);
      },
    );
  }

  private collection(kind: SourceKind, path: string, list: () => Promise<KubeList>): WatchedCollection {
    const collection = new WatchedCollection({
      path,
      config: this.config,
      list,
      onChange: (object) => this.report({ kind, namespace: object.metadata?.namespace ?? '', name: object.metadata?.name ?? '' }),
      onError: this.onError,
      retry: this.retry,
      requestTimeoutMs: this.requestTimeoutMs,
      ...this.watchSettings,
    });
    this.collections.add(collection);
    return collection;
  }

  private report(change: SourceChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the Cluster API source is closed');
  }
}
