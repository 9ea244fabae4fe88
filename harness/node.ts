/**
 * A real one-node Kubernetes cluster (harness/node/cluster.sh: etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler, containerd, kubelet, kube-proxy) for running deploy/ as
 * pods, with the ControlPlane surface the other control-plane tests use, plus what a node adds:
 * importing an image into containerd and reaching a container's processes from the host.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { builtBinariesDirectory, controlPlaneAt, controlPlaneUnavailable, installCrdSets, type ControlPlane } from './control-plane.js';
import { imageUnavailable } from './image.js';

const run = promisify(execFile);
const clusterScript = path.join(import.meta.dirname, 'node', 'cluster.sh');
const loadScript = path.join(import.meta.dirname, 'node', 'load-image.sh');
const binaries = builtBinariesDirectory;

export interface Node extends ControlPlane {
  /** The node's address on the pods' bridge: where pods reach kube-apiserver, etcd and anything the host serves. */
  nodeIp: string;
  /** etcd's client URL as pods reach it. */
  podEtcdUrl: string;
  /** Copies an image from podman's store into containerd's, where the kubelet finds it. */
  importImage(image: string): Promise<void>;
  /** The host PID of a container's first process, from its status' containerID (containerd://ID). */
  containerPid(containerId: string): Promise<number>;
}

/** Why a node cannot run here, or undefined when it can. */
export function nodeUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'a kubelet and containerd need root';
  for (const name of ['kubelet', 'kube-scheduler', 'kube-proxy', 'containerd', 'containerd-shim-runc-v2', 'ctr', 'kube-controller-manager']) {
    if (!existsSync(path.join(binaries, name))) return `no ${name} in ${binaries} (run ../shared/k8s/build.sh k8s etcd node)`;
  }
  for (const file of ['/usr/sbin/runc', '/usr/lib/cni/bridge', '/usr/sbin/iptables', '/usr/bin/catatonit']) {
    if (!existsSync(file)) return `no ${file} (apt-get install runc iptables containernetworking-plugins catatonit)`;
  }
  return controlPlaneUnavailable() ?? imageUnavailable();
}

/** Starts the node (fresh state) with the named CRD sets installed; resolves once the node is Ready. */
export async function startNode(options: { crds?: string[] } = {}): Promise<Node> {
  const release = await holdNodeLock();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'capo-node-'));
  const env = { ...process.env, NODE_DIR: dir, BINS: binaries };
  await run('bash', [clusterScript, 'start'], { env, timeout: 300_000 }).catch((error: Error & { stdout?: string; stderr?: string }) => {
    release();
    throw new Error(`${clusterScript} start failed: ${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
  });
  const facts = Object.fromEntries([...(await readFile(path.join(dir, 'env'), 'utf8')).matchAll(/([A-Z_]+)=(\S+)/g)].map((match) => [match[1]!, match[2]!]));
  const plane = await controlPlaneAt({
    dir,
    url: facts.APISERVER!,
    etcdServers: [facts.ETCD_URL!],
    kubeconfig: facts.KUBECONFIG!,
    stop: async () => {
      await run('bash', [clusterScript, 'stop'], { env, timeout: 180_000 });
      release();
    },
  });
  await installCrdSets(plane.kubeconfig, options.crds ?? []);
  const containerd = ['--address', facts.CONTAINERD_ADDRESS!, '-n', 'k8s.io'];
  return {
    ...plane,
    nodeIp: facts.NODE_IP!,
    podEtcdUrl: facts.ETCD_URL!,
    async importImage(image) {
      await run('bash', [loadScript, image], { env, timeout: 300_000 });
    },
    async containerPid(containerId) {
      const id = containerId.replace(/^containerd:\/\//, '');
      const { stdout } = await run(path.join(binaries, 'ctr'), [...containerd, 'tasks', 'ls']);
      const line = stdout.split('\n').find((row) => row.startsWith(`${id} `));
      if (line === undefined) throw new Error(`no task ${id} in containerd:\n${stdout}`);
      return Number(line.trim().split(/\s+/)[1]);
    },
  };
}

/**
 * One node at a time on a machine (its bridge, kubelet ports and kube-proxy's iptables chains are
 * the machine's): test files that start one take turns. The lock is flock's, held by a child
 * process, so it is released however this process ends.
 */
async function holdNodeLock(): Promise<() => void> {
  const holder = spawn('flock', ['--exclusive', path.join(os.tmpdir(), 'capo-node.lock'), '--command', 'echo locked && exec cat'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once('data', () => resolve());
    holder.once('exit', (code) => reject(new Error(`flock exited ${code} before taking the node lock`)));
  });
  return () => holder.stdin.end();
}
