/**
 * Composition root: wires storage, PKI, registry and the API server from a
 * data directory. `main.ts` calls it for `npm start`; tests call it directly.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AbacAuthorizer } from './apiserver/auth/abac.js';
import { LocalAuthorizer, UnionAuthorizer } from './apiserver/auth/authorizer.js';
import { ensureLocalAuthFiles } from './apiserver/auth/local-auth-files.js';
import { StaticTokenFile } from './apiserver/auth/token-file.js';
import { inventoryRoutes } from './inventory-routes.js';
import { HealthChecks } from './observability/health.js';
import { MetricsRegistry } from './observability/metrics.js';
import type { KindDefinition } from './apiserver/registry/kind.js';
import { Registry } from './apiserver/registry/registry.js';
import type { RequestLimits } from './apiserver/http/request-limits.js';
import { startApiServer } from './apiserver/server.js';
import { renderKubeconfig } from './apiserver/tls/kubeconfig.js';
import { ensurePki } from './apiserver/tls/pki.js';
import type { SessionOptions } from './openstack/index.js';
import { startSimulator, type Simulator } from './openstack/simulator/host.js';
import { startReconciler, type RunningReconciler } from './reconcile/manager.js';
import { storageSecretFinalizers } from './reconcile/identity-guard.js';
import { KindClient } from './reconcile/objects.js';
import { StorageClusterApiSource, type KindDefinitions } from './reconcile/sources/storage-source.js';
import type { Storage } from './storage/interface.js';
import { SqliteStorage } from './storage/sqlite.js';
import { secureDataDir } from './data-dir.js';
import { staticAuthentication } from './apiserver/auth/authenticator.js';

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
  /** Also run the embedded simulated OpenStack and write its clouds.yaml into the data directory. */
  simulatedCloud?: boolean | { port?: number; transitionDelayMs?: number };
  /**
   * Run the reconciler. In the embedded default it reads Secrets, Clusters
   * and Machines from this server's own storage, so they are served too.
   */
  reconciler?: { resyncPeriodMs?: number; workers?: number; sessionOptions?: SessionOptions };
}

export interface RunningApp {
  url: string;
  /** The admin bearer token file (for GraphQL and kubectl --token) and the token and policy files. */
  tokenPath: string;
  metrics: MetricsRegistry;
  /** The embedded simulated cloud, when it runs (tests inject faults through it). */
  cloud?: Simulator;
  reconciler?: RunningReconciler;
  kubeconfigPath: string;
  /** The embedded cloud's clouds.yaml (clouds `simulator` and `simulator-admin`), when it runs. */
  cloudsYamlPath?: string;
  caPath: string;
  storage: Storage;
  /** The settings in force on the SQLite connection. */
  storageSettings(): ReturnType<SqliteStorage['settings']>;
  /** Fails readiness at once, then stops serving and closes storage. */
  close(): Promise<void>;
}

export async function startApp(options: AppOptions): Promise<RunningApp> {
  for (const change of await secureDataDir(options.dataDir)) console.warn(`capo-apiserver: ${change}`);
  const pki = await ensurePki(options.dataDir, { serverHosts: [options.host] });
  const storage = SqliteStorage.open(path.join(options.dataDir, 'capo.db'), options.historyRetention ? { historyRetention: options.historyRetention } : {});

  let shuttingDown = false;
  const health = new HealthChecks();
  health.add('ping', () => undefined, ['livez', 'readyz', 'healthz']);
  health.add('storage', () => storage.check(), ['livez', 'readyz', 'healthz']);
  health.add(
    'shutdown',
    () => {
      if (shuttingDown) throw new Error('server is shutting down');
    },
    ['readyz'],
  );

  // Bearer tokens (kube's token-file format) and per-namespace ABAC policies live in the data directory beside the PKI.
  const authFiles = await ensureLocalAuthFiles(options.dataDir);
  const tokens = await StaticTokenFile.open(authFiles.tokenFile);
  const policies = await AbacAuthorizer.open(authFiles.policyFile);
  const metrics = new MetricsRegistry();
  // Started after the server (it needs the storage the server opened); the admin routes reach it once it exists.
  let reconciler: RunningReconciler | undefined;
  const kinds = options.kinds;
  const server = await startApiServer({
    host: options.host,
    port: options.port,
    tls: { key: pki.serverKeyPem, cert: pki.serverCertPem },
    authentication: staticAuthentication(pki.caCertPem, tokens),
    registry: new Registry(kinds),
    storage,
    authorizer: new UnionAuthorizer([new LocalAuthorizer(), policies]),
    extraRoutes: (app, auth) =>
      inventoryRoutes({
        storage,
        ...auth,
        admin: {
          queue: () => (reconciler ? { controllers: reconciler.status() } : { controllers: [] }),
          reconcile: async (kind, namespace, name) => reconciler?.reconcileNow(kind, namespace, name) ?? false,
          preflight: async (namespace, name) => reconciler?.preflight(namespace, name),
        },
      })(app),
    metrics,
    health,
    bookmarkIntervalMs: options.bookmarkIntervalMs,
    limits: options.requestLimits,
  });

  const kubeconfigPath = path.join(options.dataDir, 'kubeconfig');
  const caPath = path.join(options.dataDir, 'pki', 'ca.crt');
  await writeFile(
    kubeconfigPath,
    renderKubeconfig({ server: server.url, caCertPem: pki.caCertPem, clientCertPem: pki.adminCertPem, clientKeyPem: pki.adminKeyPem }),
    { mode: 0o600 },
  );

  const simulated = options.simulatedCloud === true ? {} : options.simulatedCloud || undefined;
  const cloud = simulated ? await startSimulator({ transitionDelayMs: 2000, ...simulated }) : undefined;
  const cloudsYamlPath = cloud ? path.join(options.dataDir, 'clouds.yaml') : undefined;
  if (cloud && cloudsYamlPath) await writeFile(cloudsYamlPath, cloud.cloudsYaml(), { mode: 0o600 });

  const sourceKinds = options.reconciler ? embeddedSourceKinds(kinds) : undefined;
  reconciler = sourceKinds
    ? startReconciler({
        storage,
        kinds,
        source: new StorageClusterApiSource(storage, sourceKinds),
        secretFinalizers: storageSecretFinalizers(new KindClient(sourceKinds.secret, storage)),
        metrics,
        ...options.reconciler,
      })
    : undefined;

  return {
    url: server.url,
    tokenPath: authFiles.adminTokenFile,
    metrics,
    cloud,
    reconciler,
    kubeconfigPath,
    cloudsYamlPath,
    caPath,
    storage,
    storageSettings: () => storage.settings(),
    close: async () => {
      shuttingDown = true;
      await reconciler?.stop();
      await server.close();
      await cloud?.close();
      tokens.close();
      policies.close();
      await storage.close();
    },
  };
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
