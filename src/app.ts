/**
 * Composition root: wires storage, PKI, registry and the API server from a
 * data directory. `main.ts` calls it for `npm start`; tests call it directly.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LocalAuthorizer } from './apiserver/auth/authorizer.js';
import { HealthChecks } from './observability/health.js';
import { MetricsRegistry } from './observability/metrics.js';
import type { KindDefinition } from './apiserver/registry/kind.js';
import { Registry } from './apiserver/registry/registry.js';
import { startApiServer } from './apiserver/server.js';
import { renderKubeconfig } from './apiserver/tls/kubeconfig.js';
import { ensurePki } from './apiserver/tls/pki.js';
import { startSimulator } from './openstack/simulator/host.js';
import { SqliteStorage } from './storage/sqlite.js';

export interface AppOptions {
  dataDir: string;
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  kinds: KindDefinition[];
  bookmarkIntervalMs?: number;
  /** Watch history kept for resuming watches and paginated lists. */
  historyRetention?: { maxEvents: number; maxAgeMs: number };
  /** Concurrent requests before 429 (defaults as kube-apiserver: 400 read-only, 200 mutating). */
  maxInFlight?: { readOnly: number; mutating: number };
  /** Also run the embedded simulated OpenStack and write its clouds.yaml into the data directory. */
  simulatedCloud?: boolean;
}

export interface RunningApp {
  url: string;
  kubeconfigPath: string;
  /** The embedded cloud's clouds.yaml (clouds `simulator` and `simulator-admin`), when it runs. */
  cloudsYamlPath?: string;
  caPath: string;
  storage: SqliteStorage;
  /** Fails readiness at once, then stops serving and closes storage. */
  close(): Promise<void>;
}

export async function startApp(options: AppOptions): Promise<RunningApp> {
  await mkdir(options.dataDir, { recursive: true });
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

  const server = await startApiServer({
    host: options.host,
    port: options.port,
    tls: { key: pki.serverKeyPem, cert: pki.serverCertPem, clientCa: pki.caCertPem },
    registry: new Registry(options.kinds),
    storage,
    authorizer: new LocalAuthorizer(),
    metrics: new MetricsRegistry(),
    health,
    bookmarkIntervalMs: options.bookmarkIntervalMs,
    maxInFlight: options.maxInFlight,
  });

  const kubeconfigPath = path.join(options.dataDir, 'kubeconfig');
  const caPath = path.join(options.dataDir, 'pki', 'ca.crt');
  await writeFile(
    kubeconfigPath,
    renderKubeconfig({ server: server.url, caCertPem: pki.caCertPem, clientCertPem: pki.adminCertPem, clientKeyPem: pki.adminKeyPem }),
    { mode: 0o600 },
  );

  const cloud = options.simulatedCloud ? await startSimulator({ transitionDelayMs: 2000 }) : undefined;
  const cloudsYamlPath = cloud ? path.join(options.dataDir, 'clouds.yaml') : undefined;
  if (cloud && cloudsYamlPath) await writeFile(cloudsYamlPath, cloud.cloudsYaml(), { mode: 0o600 });

  return {
    url: server.url,
    kubeconfigPath,
    cloudsYamlPath,
    caPath,
    storage,
    close: async () => {
      shuttingDown = true;
      await server.close();
      await cloud?.close();
      await storage.close();
    },
  };
}
