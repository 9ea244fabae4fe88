/**
 * The servers the API benchmarks load: this server (bench/apiserver/server.ts in a process of its
 * own, on SQLite or etcd, its reconciler on or off) and kube-apiserver of a control plane from
 * ../shared/k8s serving CAPO's own CRDs. Shared by run.ts and deployed.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, readCredentials, startServer } from './server-process.js';
import { group } from './open-stack-cluster.js';
import { sharedDirectory, type ControlPlane } from '../../harness/control-plane.js';

/** CAPO's CRDs as this repository checks compatibility against them. */
export const capoCrds = path.join(sharedDirectory, 'reference', 'capo-crds');

/** One server the load runs against: its client, the process whose RSS and CPU count, and how it stores. */
export interface Target {
  name: string;
  durability: string;
  /** An HTTP/1.1 client of keep-alive connections, at most `maxSockets` at once. */
  client: Client;
  pid: number;
  /** The etcd it stores in, whose fsync and commit latencies are read around the watch phase. */
  etcdUrl?: string;
  stop(): Promise<void>;
}

export interface OurServerOptions {
  /** Node's flags for the server process. */
  nodeFlags: string[];
  cpuProfDir?: string;
  watchCache: boolean;
  /** The server runs its reconciler against a simulated cloud, as a deployment runs it. */
  reconciler: boolean;
  /** The most keep-alive connections the client opens. */
  maxSockets?: number;
}

export async function ourServer(options: OurServerOptions, name: string, etcdServers: string | undefined, log: (text: string) => void): Promise<Target> {
  const server = await startServer({
    nodeFlags: [...options.nodeFlags, ...(options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : [])],
    env: {
      BENCH_WATCH_CACHE: String(options.watchCache),
      BENCH_RECONCILER: String(options.reconciler),
      ...(etcdServers && { BENCH_ETCD_SERVERS: etcdServers }),
    },
  });
  const { hello } = server;
  const { storage } = hello;
  log(
    `${name}: pid ${hello.pid} at ${hello.url}, watch cache ${storage.watchCache ? 'on' : 'off'}, reconciler ${options.reconciler ? 'on' : 'off'}, node flags: ${options.nodeFlags.join(' ') || 'none'}${options.cpuProfDir ? `, CPU profile to ${options.cpuProfDir}` : ''}`,
  );
  const durability =
    storage.backend === 'sqlite'
      ? `SQLite journal_mode=${storage.journalMode}, synchronous=${storage.synchronous}, locking_mode=${storage.lockingMode}; ` +
        'every write is acknowledged only after its group commit is fsynced, so acknowledged writes survive kill -9 (and, with FULL, power loss)'
      : `etcd at ${storage.servers.join(', ')} under ${storage.prefix}; every write is acknowledged after etcd commits it`;
  const client = new Client(new URL(hello.url), readCredentials(hello.kubeconfigPath), options.maxSockets ?? 64);
  return {
    name,
    durability,
    client,
    pid: hello.pid,
    ...(storage.backend === 'etcd' && { etcdUrl: storage.servers[0] }),
    stop: async () => {
      client.agent.destroy();
      await server.stop();
    },
  };
}

/** kube-apiserver of a fresh control plane serving CAPO's CRDs, with `namespaces` made (its etcd is where `ours on etcd` stores too). */
export async function kubeApiServer(plane: ControlPlane, namespaces: readonly string[], log: (text: string) => void, maxSockets = 64): Promise<Target> {
  for (const args of [
    ['apply', '--server-side', '-f', capoCrds],
    ['wait', '--for=condition=Established', `crd/openstackclusters.${group}`, '--timeout=60s'],
    ...namespaces.map((namespace) => ['create', 'namespace', namespace]),
  ]) {
    const result = await plane.kubectl(args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  }
  const pid = Number(readFileSync(path.join(plane.dir, 'kube-apiserver.pid'), 'utf8').trim());
  log(`kube-apiserver: pid ${pid} at ${plane.url}, CAPO's CRDs from ${capoCrds}`);
  const client = new Client(new URL(plane.url), { ca: readFileSync(plane.caCert, 'utf8'), ...plane.admin }, maxSockets);
  return {
    name: 'kube-apiserver',
    durability: `etcd at ${plane.etcdServers.join(', ')} under /registry; every write is acknowledged after etcd commits it`,
    client,
    pid,
    etcdUrl: plane.etcdServers[0],
    stop: async () => client.agent.destroy(),
  };
}
