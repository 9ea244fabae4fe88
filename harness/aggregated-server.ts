/**
 * This server in its aggregated mode behind a throwaway control plane (./control-plane.ts): started
 * with a serving certificate for its Service name signed by the cluster CA, registered with one
 * APIService per group-version it serves, and found Available by kube-apiserver.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { aggregatedKinds } from '../src/served-kinds.js';
import type { KindDefinition } from '../src/apiserver/registry/kind.js';
import { startApp, type AppOptions, type RunningApp } from '../src/app.js';
import { registerAggregatedServer, type ControlPlane } from './control-plane.js';

export interface AggregatedServer {
  app: RunningApp;
  /** The cluster CA that signed the serving certificate (PEM), for requests straight to the port. */
  serverCa: string;
  /** The TLS server name the serving certificate carries, as the aggregator asks for it. */
  serverName: string;
  close(): Promise<void>;
}

const namespace = 'capo-system';
const service = 'capo-apiserver';

/** Every group-version the server serves, newest first within a group (the order APIServices prefer). */
export function servedGroupVersions(kinds: KindDefinition[] = aggregatedKinds): { group: string; version: string }[] {
  const seen = new Map<string, { group: string; version: string }>();
  for (const kind of kinds) {
    for (const version of kind.versions) if (version.served) seen.set(`${kind.group}/${version.name}`, { group: kind.group, version: version.name });
  }
  const rank = (version: string) => (version.startsWith('v1beta') ? 0 : 1) * 100 - Number(version.replace(/\D/g, ''));
  return [...seen.values()].sort((a, b) => a.group.localeCompare(b.group) || rank(a.version) - rank(b.version));
}

/** Starts the app aggregated behind `plane` (with what else `options` asks for: the simulated cloud, the reconciler, leader election) and registers it. */
export async function startAggregatedServer(
  plane: ControlPlane,
  options: Pick<AppOptions, 'simulatedCloud' | 'reconciler' | 'leaderElection'> & { kinds?: KindDefinition[] } = {},
): Promise<AggregatedServer> {
  const serverName = `${service}.${namespace}.svc`;
  const serving = await plane.certificate(service, `/CN=${service}`, `extendedKeyUsage=serverAuth\nsubjectAltName=DNS:${serverName},IP:127.0.0.1`);
  const serverCa = readFileSync(plane.caCert, 'utf8');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-aggregated-'));
  const app = await startApp({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    kinds: options.kinds ?? aggregatedKinds,
    servingCertificate: serving,
    aggregated: { kubeconfig: plane.kubeconfig },
    ...options,
  });
  await registerAggregatedServer(plane, {
    namespace,
    service,
    port: Number(new URL(app.url).port),
    caBundlePem: serverCa,
    groupVersions: servedGroupVersions(options.kinds),
  });
  return {
    app,
    serverCa,
    serverName,
    async close() {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
