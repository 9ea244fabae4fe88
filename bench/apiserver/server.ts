/**
 * The server half of the API server benchmark: the real app on a throwaway
 * data directory, in its own process so that the RSS and CPU time the
 * benchmark reads from /proc are the server's alone.
 *
 * Protocol with run.ts: one JSON line on stdout once serving; the server
 * stops (and deletes its data directory) when stdin closes or on SIGTERM, so
 * a crashed or interrupted benchmark never leaves it running.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { embeddedCredentials, startApp, type StorageSettings } from '../../src/app.js';
import { aggregatedKinds, servedKinds } from '../../src/served-kinds.js';

export interface ServerHello {
  url: string;
  kubeconfigPath: string;
  dataDir: string;
  pid: number;
  storage: StorageSettings;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(process.env.BENCH_DATA_PARENT ?? os.tmpdir(), 'capo-bench-'));
  // BENCH_ETCD_SERVERS (run.ts --etcd-servers) puts the objects in etcd, under a prefix of this run's own.
  const etcdServers = process.env.BENCH_ETCD_SERVERS?.split(',').filter(Boolean);
  // BENCH_WATCH_CACHE=false (run.ts --no-watch-cache) measures the server without its watch cache.
  const watchCache = process.env.BENCH_WATCH_CACHE !== 'false';
  // BENCH_RECONCILER=true (run.ts --reconciler) runs the reconciler too, on a simulated cloud, with the embedded Cluster API kinds it reads.
  const reconciler = process.env.BENCH_RECONCILER === 'true';
  const app = await startApp({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    // What it serves behind kube-apiserver: the CAPO kinds and the computed ones.
    kinds: reconciler ? servedKinds : aggregatedKinds,
    ...(reconciler && { reconciler: {}, simulatedCloud: { port: 0 } }),
    // One client holds every watcher of the fan-out phase: above the per-user bound a server protects itself with.
    requestLimits: { maxWatchesPerUser: 2_000 },
    watchCache,
    ...(etcdServers && { etcd: { servers: etcdServers, prefix: `/capo-bench-${process.pid}` } }),
  });

  const hello: ServerHello = {
    url: app.url,
    kubeconfigPath: embeddedCredentials(app).kubeconfigPath,
    dataDir,
    pid: process.pid,
    // Read back from the live connection so the report shows the settings in force, not the intended defaults.
    storage: app.storageSettings(),
  };
  process.stdout.write(`${JSON.stringify(hello)}\n`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
    // A normal exit, not a signal death, so that --cpu-prof gets to write its profile.
    process.exit(0);
  };
  process.stdin.on('end', () => void stop());
  process.stdin.on('error', () => void stop());
  process.stdin.resume();
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((error: unknown) => {
  process.stderr.write(`bench server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
