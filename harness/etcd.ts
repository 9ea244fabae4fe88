/**
 * A real etcd (one member, or a cluster of three) on loopback for the storage tests: etcd 3.6 as ../shared/k8s/build.sh etcd builds it
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
  /** Client URLs, one per member. */
  servers: string[];
  /** Peer URLs, one per member: what members talk to each other on. */
  peers: string[];
  /** SIGKILL of one member (by index); the others keep the cluster's quorum when there are three. */
  killMember(index: number): Promise<void>;
  /** Starts a killed member again on its data directory; resolves once it answers. */
  restartMember(index: number): Promise<void>;
  stop(): Promise<void>;
}

interface Member {
  child: ChildProcess;
  exited: Promise<void>;
  client: string;
  args: string[];
}

/**
 * A fresh etcd cluster of `members` members (1 or 3) on loopback, resolved once every member answers.
 * `commandPrefix` runs before each member's etcd (e.g. a shell that puts it in a cgroup, then execs it).
 */
export async function startEtcd(members: 1 | 3 = 1, options: { commandPrefix?: (member: number) => string[] } = {}): Promise<RunningEtcd> {
  if (binary === undefined) throw new Error(etcdUnavailable());
  const dir = await mkdtemp(path.join(os.tmpdir(), 'capo-etcd-'));
  const port = await freePortRun(2 * members);
  const names = Array.from({ length: members }, (_, i) => `member-${i}`);
  const peerUrl = (i: number) => `http://127.0.0.1:${port + 2 * i + 1}`;
  const initialCluster = names.map((name, i) => `${name}=${peerUrl(i)}`).join(',');
  const log = await open(path.join(dir, 'etcd.log'), 'w');
  const launch = (index: number, client: string, args: string[]): Member => {
    const [command, ...prefixArgs] = [...(options.commandPrefix?.(index) ?? []), binary];
    const child = spawn(command!, [...prefixArgs, ...args], { stdio: ['ignore', log.fd, log.fd] });
    return { child, client, args, exited: new Promise<void>((resolve) => child.once('exit', () => resolve())) };
  };
  const answers = (member: Member) =>
    pollUntil(
      'etcd to answer',
      async () =>
        (await fetch(`${member.client}/health`).then(
          (response) => response.ok,
          () => false,
        ))
          ? true
          : undefined,
      {
        timeoutMs: 30_000,
        intervalMs: 100,
      },
    );
  const running: Member[] = names.map((name, i) => {
    const client = `http://127.0.0.1:${port + 2 * i}`;
    return launch(i, client, [
      `--name=${name}`,
      `--data-dir=${path.join(dir, name)}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peerUrl(i)}`,
      `--initial-advertise-peer-urls=${peerUrl(i)}`,
      `--initial-cluster=${initialCluster}`,
      '--initial-cluster-state=new',
      '--log-level=warn',
    ]);
  });
  try {
    for (const member of running) await answers(member);
  } catch (error) {
    for (const member of running) member.child.kill('SIGKILL');
    throw new Error(`${String(error)}\n${await readFile(path.join(dir, 'etcd.log'), 'utf8')}`);
  }
  return {
    servers: running.map((member) => member.client),
    peers: names.map((_, i) => peerUrl(i)),
    async killMember(index) {
      const member = running[index]!;
      member.child.kill('SIGKILL');
      await member.exited;
    },
    async restartMember(index) {
      const member = running[index]!;
      running[index] = launch(index, member.client, member.args);
      await answers(running[index]!);
    },
    async stop() {
      for (const member of running) member.child.kill('SIGTERM');
      await Promise.all(running.map((member) => member.exited));
      await log.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
