/**
 * Composition root: wires storage, PKI, registry and the API server from a
 * data directory. `main.ts` calls it for `npm start`; tests call it directly.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { delegatedAccess, localAccess, type DelegatedAccessOptions } from './access.js';
import { inventoryRoutes } from './inventory-routes.js';
import { HealthChecks } from './observability/health.js';
import { createLogger, type Logger } from './observability/log.js';
import { MetricsRegistry } from './observability/metrics.js';
import { ApiError } from './apiserver/errors.js';
import type { KindDefinition } from './apiserver/registry/kind.js';
import { Registry } from './apiserver/registry/registry.js';
import { Stores } from './apiserver/store/stores.js';
import type { RequestLimits } from './apiserver/http/request-limits.js';
import { startApiServer } from './apiserver/server.js';
import { renderKubeconfig } from './apiserver/tls/kubeconfig.js';
import { ensurePki } from './apiserver/tls/pki.js';
import type { SessionOptions } from './openstack/index.js';
import type { Simulator, SimulatorOptions } from './simulator/host.js';
import type { SessionOptions as DashboardSessionOptions } from './dashboard/sessions.js';
import { startReconciler, type RunningReconciler } from './reconcile/manager.js';
import type { ImageDownloadOptions } from './reconcile/image/downloads.js';
import { installationId } from './reconcile/installation.js';
import { fenceOf, StorageLeaseLock } from './reconcile/runtime/leader.js';
import { ShardedLeadership, type MemberStorage } from './reconcile/runtime/shards.js';
import { storageSecretFinalizers } from './reconcile/identity-guard.js';
import { KindClient } from './reconcile/objects.js';
import type { ClusterApiCluster, ClusterApiSource } from './reconcile/sources/source.js';
import type { IpamClients } from './reconcile/deps.js';
import { StorageClusterApiSource, type KindDefinitions } from './reconcile/sources/storage-source.js';
import type { EventSink } from './reconcile/events/recorder.js';
import { startEventTtl } from './api/embedded/event-ttl.js';
import { storageEventSink } from './reconcile/events/storage-sink.js';
import { orcGroup } from './api/orc/kinds.js';
import { imageViewOf } from './dashboard/cluster-view.js';
import type { Storage } from './storage/interface.js';
import type { ResourceStore } from './apiserver/store/resource-store.js';
import { SqliteStorage } from './storage/sqlite.js';
import type { EtcdStorage, EtcdStorageOptions } from './storage/etcd.js';
import { WatchCache } from './storage/watch-cache.js';
import { secureDataDir } from './data-dir.js';
import type { ClusterApiView } from './dashboard/view-types.js';

export interface AppOptions {
  dataDir: string;
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  kinds: KindDefinition[];
  bookmarkIntervalMs?: number;
  /** Watch history kept for resuming watches and paginated lists. */
  historyRetention?: { maxEvents: number; maxAgeMs: number };
  /** In-flight slots, per-user shares, watches per user and the request deadline (kube-like defaults). */
  requestLimits?: Partial<RequestLimits>;
  /** How long the dashboard's sessions last (by default: 12 hours after sign-in, 8 idle). */
  dashboardSessions?: DashboardSessionOptions;
  /** Also run the embedded simulated OpenStack and write its clouds.yaml into the data directory, where it keeps its state (cloud-state.json). */
  simulatedCloud?: boolean | Pick<SimulatorOptions, 'port' | 'transitionDelayMs' | 'faultSeed' | 'availabilityZones' | 'services'>;
  /**
   * Run the reconciler. In the embedded default it reads Secrets, Clusters
   * and Machines from this server's own storage, so they are served too.
   */
  reconciler?: { resyncPeriodMs?: number; workers?: number; sessionOptions?: SessionOptions; imageDownloads?: ImageDownloadOptions };
  /**
   * Run the reconciler only while this replica holds the leader lease (several servers on one etcd,
   * or in a management cluster): in the management cluster as a coordination.k8s.io Lease in
   * `namespace`, otherwise in storage. Its writes to storage and to the cloud are fenced by the lease.
   */
  leaderElection?: LeaderElectionOptions;
  /**
   * Serve behind kube-apiserver's aggregator: authentication and authorization are delegated to the
   * management cluster, and the reconciler reads Secrets, Clusters and Machines there.
   */
  aggregated?: DelegatedAccessOptions;
  /** Where logs go (default: info and above, JSON lines on stderr). */
  logger?: Logger;
  /** Store objects in etcd (several replicas can share it) instead of the data directory's SQLite database. */
  etcd?: EtcdStorageOptions;
  /** Serve watches and current lists from memory, fed by one storage watch (kube-apiserver's --watch-cache; default true). */
  watchCache?: boolean;
  /** The serving certificate and key (PEM); default: the data directory's PKI. */
  servingCertificate?: { cert: string; key: string };
}

export interface RunningApp {
  url: string;
  /** The admin bearer token file (for GraphQL and kubectl --token), in the embedded mode. */
  tokenPath?: string;
  metrics: MetricsRegistry;
  /** The embedded simulated cloud, when it runs (tests inject faults through it). */
  cloud?: Simulator;
  reconciler?: RunningReconciler;
  /** A kubeconfig for the admin, in the embedded mode (aggregated: use the management cluster's). */
  kubeconfigPath?: string;
  /** The embedded cloud's clouds.yaml (clouds `simulator` and `simulator-admin`), when it runs. */
  cloudsYamlPath?: string;
  caPath: string;
  /** What every reader in this process goes through: the watch cache over the backend, or the backend. */
  storage: Storage;
  /** The one store of each served kind, over `storage`: what the API, the reconciler and the dashboard read and write through. */
  stores: Stores;
  /** The backend itself, for what reaches past the cache on purpose (compacting its history now, say). */
  backend: SqliteStorage | EtcdStorage;
  /** The storage backend and the settings in force on it (what a benchmark prints beside its figures). */
  storageSettings(): StorageSettings;
  /** Fails readiness at once, then stops serving and closes storage. */
  close(): Promise<void>;
}

export async function startApp(options: AppOptions): Promise<RunningApp> {
  const logger = options.logger ?? createLogger();
  for (const change of await secureDataDir(options.dataDir)) logger.warn({ component: 'data-dir', dataDir: options.dataDir }, change);
  const pki = await ensurePki(options.dataDir, { serverHosts: [options.host] });
  const storageLog = logger.child({ component: 'storage' });
  const onStorageError = (error: unknown) => storageLog.error({ err: error }, 'storage error');
  const { storage: backend, settings: backendSettings } = options.etcd
    ? await openEtcd(options.etcd, onStorageError)
    : openSqlite(path.join(options.dataDir, 'capo.db'), options.historyRetention, onStorageError);
  // Every reader of storage in this process (API watches and lists, computed kinds, inventory, reconcilers) goes through it.
  const watchCache = options.watchCache ?? true;
  const storage = watchCache ? new WatchCache(backend, { onError: onStorageError }) : backend;
  const storageSettings = () => ({ ...backendSettings(), watchCache });

  let shuttingDown = false;
  const health = new HealthChecks();
  health.add('ping', () => undefined, ['livez', 'readyz', 'healthz']);
  health.add('storage', () => storage.check(), ['livez', 'readyz', 'healthz']);
  health.add('shutdown', () => {
    if (shuttingDown) throw new Error('server is shutting down');
  }, ['readyz']);

  // Embedded: bearer tokens (kube's token-file format) and per-namespace ABAC policies live in the data
  // directory beside the PKI. Aggregated: the management cluster decides.
  const access = options.aggregated ? await delegatedAccess(options.aggregated) : await localAccess(options.dataDir, pki.caCertPem);
  for (const [name, check] of Object.entries(access.checks)) health.add(name, check, ['readyz']);
  const metrics = new MetricsRegistry();
  // Started after the server (it needs the storage the server opened); the admin routes reach it once it exists.
  let reconciler: RunningReconciler | undefined;
  let sources: Awaited<ReturnType<typeof clusterApiSource>> | undefined;
  const kinds = options.kinds;
  const registry = new Registry(kinds);
  // Built once: every reader and writer of a kind's objects in this process goes through its one store.
  const stores = new Stores(registry.kinds, storage, { namespaceLifecycle: access.namespaceLifecycle });
  const servedOrcImage = stores.find(orcGroup, 'Image');
  const servedEvents = stores.find('', 'Event');
  const orcImages = servedOrcImage && new KindClient(servedOrcImage);
  const tls = options.servingCertificate ?? { key: pki.serverKeyPem, cert: pki.serverCertPem };
  const server = await startApiServer({
    host: options.host,
    port: options.port,
    tls,
    authentication: access.authentication,
    registry,
    stores,
    authorizer: access.authorizer,
    extraRoutes: (app, auth) =>
      inventoryRoutes({
        storage,
        ...auth,
        admin: {
          queue: () => (reconciler ? { controllers: reconciler.status() } : { controllers: [] }),
          reconcile: async (kind, namespace, name) => reconciler?.reconcileNow(kind, namespace, name) ?? false,
          preflight: async (namespace, name) => reconciler?.preflight(namespace, name),
          leaks: async () => reconciler?.leaks(),
          cleanUpLeaks: async (targets) => reconciler?.cleanUpLeaks(targets),
        },
        dashboard: {
          tokens: access.authentication.tokens,
          logger: logger.child({ component: 'dashboard' }),
          sessions: options.dashboardSessions,
          // Embedded mode stores Cluster API's Clusters, and the dashboard pauses them through its own API server.
          clusterApiCluster: options.aggregated ? undefined : stores.find('cluster.x-k8s.io', 'Cluster'),
          openstackCalls: options.reconciler ? () => metrics.totalsBy('openstack_api_requests_total', 'service') : undefined,
          // Where the reconciler records Events (this server's storage, or the management cluster).
          readEvents: async (namespace) => (await sources?.eventSink?.list(namespace)) ?? [],
          // ORC Images served here, else (--orc-images=external) ORC's own, read where the reconciler reads them.
          readOrcImage: async (namespace, name) => {
            const object = orcImages ? await orcImages.get({ namespace, name }) : await sources?.source.getOrcImage?.(namespace, name);
            return object && imageViewOf(object);
          },
          // Where the reconciler reads Clusters (its source is started after the server; requests come later still).
          readClusterApiCluster: async (namespace, name) => clusterApiView(await sources?.source.getCluster(namespace, name)),
          // In a management cluster the source that reads Clusters there patches them too (deploy/ grants it patch on Clusters alone).
          setClusterApiPaused:
            options.aggregated && options.reconciler
              ? async (namespace, name, paused, user) => {
                  const source = sources?.source;
                  if (!source?.setClusterPaused) throw new ApiError(503, 'ServiceUnavailable', 'the Cluster API source is still starting');
                  const cluster = await source.setClusterPaused(namespace, name, paused);
                  // kube-apiserver's audit log names this server's service account; this line names who asked.
                  if (cluster)
                    logger.info(
                      { component: 'dashboard', user: user.name, namespace, cluster: name, paused },
                      paused ? 'paused a Cluster for a dashboard user' : 'resumed a Cluster for a dashboard user',
                    );
                  return clusterApiView(cluster);
                }
              : undefined,
        },
      })(app),
    metrics,
    logger: logger.child({ component: 'apiserver' }),
    health,
    bookmarkIntervalMs: options.bookmarkIntervalMs,
    limits: options.requestLimits,
  });

  const kubeconfigPath = options.aggregated ? undefined : path.join(options.dataDir, 'kubeconfig');
  const caPath = path.join(options.dataDir, 'pki', 'ca.crt');
  if (kubeconfigPath) {
    await writeFile(
      kubeconfigPath,
      renderKubeconfig({ server: server.url, caCertPem: pki.caCertPem, clientCertPem: pki.adminCertPem, clientKeyPem: pki.adminKeyPem }),
      { mode: 0o600 },
    );
  }

  const simulated = options.simulatedCloud === true ? {} : options.simulatedCloud || undefined;
  // Loaded only when it runs: a server in a management cluster talks to real clouds, and its heap (all of
  // it marked by every full collection) need not hold the simulated services' code and schemas.
  // Kept in the data directory beside the database: a restart finds the resources its clusters name.
  const stateFile = path.join(options.dataDir, 'cloud-state.json');
  const cloud = simulated ? await (await import('./simulator/host.js')).startSimulator({ transitionDelayMs: 2000, stateFile, ...simulated }) : undefined;
  const cloudsYamlPath = cloud ? path.join(options.dataDir, 'clouds.yaml') : undefined;
  if (cloud && cloudsYamlPath) await writeFile(cloudsYamlPath, cloud.cloudsYaml(), { mode: 0o600 });

  // Behind kube-apiserver: say in the log when an APIService's caBundle would not verify this server.
  // Loaded only when aggregated: the Kubernetes client takes most of a second to load, which the embedded default never needs.
  const stopCaBundleCheck = options.aggregated
    ? await Promise.all([import('./reconcile/sources/kubeconfig.js'), import('./apiserver/registration/ca-bundle-check.js')]).then(
        ([{ loadKubeconfig }, { startCaBundleCheck }]) =>
          startCaBundleCheck({
            kubeconfig: loadKubeconfig(options.aggregated?.kubeconfig),
            servingCertificatePem: tls.cert,
            groupVersions: servedGroupVersions(kinds),
            logger,
          }),
      )
    : undefined;
  // Served Events expire an hour after their last change, as kube-apiserver's.
  const stopEventTtl =
    servedEvents && startEventTtl(servedEvents, (error) => logger.warn({ err: error }, 'expiring Events failed; the next sweep tries again'));
  // The source is the composition root's: it outlives the reconciler's listeners and is closed last.
  sources = options.reconciler ? await clusterApiSource(options, stores, servedEvents, { metrics, logger }) : undefined;
  const sourceCheck = sources?.source.check?.bind(sources.source);
  // Not ready while the reconciler's view of Secrets, Clusters and Machines is not followed (it reads them live meanwhile).
  if (sourceCheck) health.add('cluster-api-informers', sourceCheck, ['readyz']);
  const reconcileLog = logger.child({ component: 'reconcile' });
  const election = options.reconciler ? options.leaderElection : undefined;
  const leases = election && (await leaseStorage(election, options.aggregated, storage));
  const sharded = election && leases && (election.shards ?? 1) > 1 ? shardedLeadership(election, leases, reconcileLog) : undefined;
  const leader = sharded ?? (election && leases ? leaderLock(election, leases, reconcileLog) : undefined);
  const fence = sharded ? () => sharded.fence() : leader && fenceOf(leader);
  reconciler =
    options.reconciler && sources
      ? startReconciler({
          ...sources,
          ...options.reconciler,
          storage,
          stores,
          fence,
          kinds,
          metrics,
          logger: reconcileLog,
          leader,
          sharding: sharded,
          sessionOptions: { ...options.reconciler.sessionOptions, fence },
          imageDownloads: imageDownloadOptions(options.reconciler.imageDownloads, cloud),
          installation: await installationId(storage),
        })
      : undefined;
  if (sharded && reconciler) sharded.onMembers((count) => reconciler?.clouds.shareLimitsAmong(count));

  return {
    url: server.url,
    tokenPath: access.adminTokenPath,
    metrics,
    cloud,
    reconciler,
    kubeconfigPath,
    cloudsYamlPath,
    caPath,
    storage,
    stores,
    backend,
    storageSettings,
    close: async () => {
      shuttingDown = true;
      stopCaBundleCheck?.();
      stopEventTtl?.();
      await reconciler?.stop();
      await leader?.release();
      await sources?.source.close();
      await server.close();
      await cloud?.close();
      access.close();
      await storage.close();
    },
  };
}

export interface LeaderElectionOptions {
  /** The lease's name (kube's --leader-elect-resource-name). */
  name: string;
  /** Where the Lease lives in the management cluster (kube's --leader-elect-resource-namespace). */
  namespace: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Above 1, the reconciler is sharded by cluster across the replicas, one lease per shard (reconcile/runtime/shards.ts). */
  shards?: number;
}

/** Leases live in the management cluster when there is one, else in this server's storage. */
async function leaseStorage(election: LeaderElectionOptions, aggregated: DelegatedAccessOptions | undefined, storage: Storage): Promise<MemberStorage> {
  if (!aggregated) return storage;
  const [{ KubernetesLeaseStorage }, { loadKubeconfig }] = await Promise.all([
    import('./reconcile/sources/kubernetes-lease.js'),
    import('./reconcile/sources/kubeconfig.js'),
  ]);
  return new KubernetesLeaseStorage(loadKubeconfig(aggregated.kubeconfig), election.namespace);
}

/**
 * ORC Image downloads as the operator bounds them; with the simulated cloud running here, its
 * image mirror (on loopback, refused otherwise) is allowed, that address and port only, and the
 * size cap defaults to what its Glance stores: a larger download would only be read to be refused.
 */
function imageDownloadOptions(options: ImageDownloadOptions | undefined, cloud: Simulator | undefined): ImageDownloadOptions | undefined {
  if (!cloud) return options;
  const mirror = new URL(cloud.url);
  return { maxBytes: cloud.imageSizeCap, ...options, allow: [...(options?.allow ?? []), mirror.host] };
}

function shardedLeadership(election: LeaderElectionOptions, leases: MemberStorage, logger: Logger): ShardedLeadership {
  const { name, namespace: _namespace, shards = 1, ...timing } = election;
  const leadership = new ShardedLeadership({
    storage: leases,
    name,
    shards,
    ...timing,
    onError: (error) => logger.warn({ err: error, lease: name }, 'shard leases: retrying'),
  });
  leadership.onAcquired((shard) => logger.info({ lease: name, shard, identity: leadership.identity }, "reconciling a shard: its clusters are this replica's"));
  return leadership;
}

function leaderLock(election: LeaderElectionOptions, leases: MemberStorage, logger: Logger): StorageLeaseLock {
  const { name, namespace: _namespace, shards: _shards, ...timing } = election;
  const lock = new StorageLeaseLock({
    storage: leases,
    name,
    ...timing,
    onError: (error) => logger.warn({ err: error, lease: name }, 'leader lease: retrying'),
  });
  // Said at every acquisition, not only the first: after a lost lease, the log is how an operator (and the chaos soak) tells it leads again.
  const announceLeading = () =>
    lock.acquire(new AbortController().signal).then(
      () => logger.info({ lease: name, identity: lock.identity }, 'leading: this replica runs the reconciler'),
      () => undefined,
    );
  announceLeading();
  lock.onLost(() => {
    logger.warn({ lease: name, identity: lock.identity }, 'lost the leader lease: the reconciler pauses until this replica leads again');
    announceLeading();
  });
  return lock;
}

type BackendSettings = ({ backend: 'sqlite' } & ReturnType<SqliteStorage['settings']>) | { backend: 'etcd'; servers: string[]; prefix: string };

export type StorageSettings = BackendSettings & { watchCache: boolean };

function openSqlite(
  file: string,
  historyRetention: AppOptions['historyRetention'],
  onError: (error: unknown) => void,
): { storage: SqliteStorage; settings: () => BackendSettings } {
  const storage = SqliteStorage.open(file, { ...(historyRetention && { historyRetention }), onError });
  return { storage, settings: () => ({ backend: 'sqlite', ...storage.settings() }) };
}

/** etcd's client (gRPC, protobuf) is loaded only when used: about 40 MB of memory. */
async function openEtcd(options: EtcdStorageOptions, onError: (error: unknown) => void): Promise<{ storage: EtcdStorage; settings: () => BackendSettings }> {
  const { EtcdStorage, defaultEtcdPrefix } = await import('./storage/etcd.js');
  const storage = await EtcdStorage.open({ onError, ...options });
  return { storage, settings: () => ({ backend: 'etcd', servers: options.servers, prefix: options.prefix ?? defaultEtcdPrefix }) };
}

/** The admin kubeconfig and token an embedded server wrote; an aggregated one has none. */
export function embeddedCredentials(app: RunningApp): { kubeconfigPath: string; tokenPath: string } {
  if (!app.kubeconfigPath || !app.tokenPath) throw new Error("the server runs aggregated: use the management cluster's credentials");
  return { kubeconfigPath: app.kubeconfigPath, tokenPath: app.tokenPath };
}

/**
 * Where the reconciler reads Secrets, Clusters and Machines, and meets Cluster API's IPAM objects:
 * the management cluster when aggregated, else this server's own storage (and only then does it hold
 * the identity Secrets' finalizer itself).
 */
async function clusterApiSource(
  options: AppOptions,
  stores: Stores,
  servedEvents: ResourceStore | undefined,
  observed: { metrics: MetricsRegistry; logger: Logger },
): Promise<{ source: ClusterApiSource; secretFinalizers?: ReturnType<typeof storageSecretFinalizers>; ipam?: IpamClients; eventSink?: EventSink }> {
  if (options.aggregated) {
    const [{ KubernetesClusterApiSource }, { KubernetesIpam }, { loadKubeconfig }, { kubernetesEventSink }] = await Promise.all([
      import('./reconcile/sources/kubernetes-source.js'),
      import('./reconcile/sources/kubernetes-ipam.js'),
      import('./reconcile/sources/kubeconfig.js'),
      import('./reconcile/events/kubernetes-sink.js'),
    ]);
    const kubeconfig = loadKubeconfig(options.aggregated.kubeconfig);
    const { metrics, logger } = observed;
    return {
      source: new KubernetesClusterApiSource(kubeconfig, { metrics, logger: logger.child({ component: 'cluster-api-source' }) }),
      ipam: new KubernetesIpam(kubeconfig, { metrics, logger: logger.child({ component: 'ipam' }) }),
      eventSink: kubernetesEventSink(kubeconfig),
    };
  }
  const sourceKinds = embeddedSourceKinds(options.kinds);
  return {
    source: new StorageClusterApiSource(stores, sourceKinds),
    secretFinalizers: storageSecretFinalizers(new KindClient(stores.storeOf(sourceKinds.secret))),
    ...(servedEvents && { eventSink: storageEventSink(new KindClient(servedEvents)) }),
  };
}

/** What the dashboard shows of Cluster API's Cluster. */
function clusterApiView(cluster: ClusterApiCluster | undefined): ClusterApiView | undefined {
  return cluster && { name: cluster.name, paused: cluster.paused, ...(cluster.phase ? { phase: cluster.phase } : {}) };
}

/** Without a kube-apiserver, the Secrets, Clusters and Machines the reconciler reads are objects of this server. */
function embeddedSourceKinds(kinds: KindDefinition[]): KindDefinitions {
  const find = (group: string, kind: string) => {
    const found = kinds.find((candidate) => candidate.group === group && candidate.kind === kind);
    if (!found) throw new Error(`the embedded reconciler reads ${kind} objects from this server, so ${kind} must be among the served kinds`);
    return found;
  };
  return { secret: find('', 'Secret'), cluster: find('cluster.x-k8s.io', 'Cluster'), machine: find('cluster.x-k8s.io', 'Machine') };
}

/** Every group-version some kind is served in. */
function servedGroupVersions(kinds: KindDefinition[]): { group: string; version: string }[] {
  const all = kinds.flatMap((kind) => kind.versions.filter((version) => version.served).map((version) => `${version.name}.${kind.group}`));
  return [...new Set(all)].map((name) => {
    const dot = name.indexOf('.');
    return { version: name.slice(0, dot), group: name.slice(dot + 1) };
  });
}
