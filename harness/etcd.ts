/**
 * A real etcd on loopback for the storage tests: etcd 3.6 as ../shared/k8s/build.sh etcd builds it
 * (~/.cache/capo-k8s/bins/etcd), else Debian's etcd-server; a fresh data directory, ports below the
 * ephemeral range, stopped (and its data removed) by `stop`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePortRun } from './control-plane.js';
import { pollUntil } from './poll.js';

const candidates = [path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'capo-k8s', 'bins', 'etcd'), '/usr/bin/etcd'];
const binary = candidates.find((candidate) => existsSync(candidate));

/** Why no etcd can start here, or undefined when one can. */
export function etcdUnavailable(): string | undefined {
  return binary === undefined ? `no etcd in ${candidates.join(' or ')} (run ../shared/k8s/build.sh etcd, or apt-get install etcd-server)` : undefined;
}

export interface RunningEtcd {
  /** Client URLs. */
  servers: string[];
  stop(): Promise<void>;
}

export async function startEtcd(): Promise<RunningEtcd> {
  if (binary === undefined) throw new Error(etcdUnavailable());
  const dir = await mkdtemp(path.join(os.tmpdir(), 'capo-etcd-'));
  const port = await freePortRun(2);
  const client = `http://127.0.0.1:${port}`;
  const peer = `http://127.0.0.1:${port + 1}`;
  const log = await open(path.join(dir, 'etcd.log'), 'w');
  const child: ChildProcess = spawn(
    binary,
    [
      '--name=test',
      `--data-dir=${path.join(dir, 'data')}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=test=${peer}`,
      '--log-level=warn',
    ],
    { stdio: ['ignore', log.fd, log.fd] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await pollUntil('etcd to answer', async () => ((await fetch(`${client}/health`).then((response) => response.ok, () => false)) ? true : undefined), { timeoutMs: 30_000, intervalMs: 100 });
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${String(error)}\n${await readFile(path.join(dir, 'etcd.log'), 'utf8')}`);
  }
  return {
    servers: [client],
    async stop() {
      child.kill('SIGTERM');
      await exited;
      await log.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
