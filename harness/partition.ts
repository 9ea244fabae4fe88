/**
 * Network partitions between processes on loopback: each process runs in a cgroup (v2) of its own,
 * and iptables drops the TCP packets that processes of one cgroup send to or from given ports
 * (`-m cgroup --path`, in the OUTPUT chain every loopback packet crosses). A socket belongs to the
 * cgroup of the process that made it, so processes are started in their cgroup (`commandPrefix`)
 * rather than moved there. Rules live in a chain of this run's own, removed with the cgroups by `close`.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const cgroupRoot = '/sys/fs/cgroup/unified';

/** Why partitions cannot be made here (not root, no cgroup v2, no iptables cgroup match), or undefined when they can. */
export async function partitionsUnavailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'partitions need root (iptables, cgroups)';
  if (!existsSync(path.join(cgroupRoot, 'cgroup.procs'))) return `no cgroup v2 hierarchy at ${cgroupRoot}`;
  const probe = await Partitions.open('probe').catch((error: Error) => error);
  if (probe instanceof Error) return `cannot make iptables rules: ${probe.message.split('\n')[0]}`;
  try {
    await probe.commandPrefix('probe');
    await probe.drop('probe', [9]);
  } catch (error) {
    return `iptables has no cgroup match: ${(error as Error).message.split('\n')[0]}`;
  } finally {
    await probe.close();
  }
  return undefined;
}

export class Partitions {
  private readonly groups = new Set<string>();

  private constructor(
    /** This run's chain and the cgroup directory its processes' cgroups live in. */
    private readonly name: string,
  ) {}

  /** A chain `name` jumped to from OUTPUT, and a cgroup directory of the same name. */
  static async open(label: string): Promise<Partitions> {
    const name = `capo-chaos-${label}-${process.pid}`.slice(0, 28);
    await iptables(['-N', name]);
    await iptables(['-I', 'OUTPUT', '-j', name]);
    await mkdir(path.join(cgroupRoot, name));
    return new Partitions(name);
  }

  /** The command prefix that starts a process in cgroup `group` (made if need be): `sh -c 'echo $$ > …; exec "$0" "$@"'`. */
  async commandPrefix(group: string): Promise<string[]> {
    const directory = path.join(cgroupRoot, this.name, group);
    await mkdir(directory, { recursive: true });
    this.groups.add(group);
    return ['sh', '-c', `echo $$ > ${directory}/cgroup.procs && exec "$0" "$@"`];
  }

  /** Drops every TCP packet the processes of `group` send from or to any of `ports`, until `heal`. */
  async drop(group: string, ports: number[]): Promise<void> {
    await iptables(['-A', this.name, ...this.rule(group, ports)]);
  }

  async heal(group: string, ports: number[]): Promise<void> {
    await iptables(['-D', this.name, ...this.rule(group, ports)]);
  }

  async close(): Promise<void> {
    await iptables(['-D', 'OUTPUT', '-j', this.name]).catch(() => undefined);
    await iptables(['-F', this.name]).catch(() => undefined);
    await iptables(['-X', this.name]).catch(() => undefined);
    for (const group of this.groups) await rmdir(path.join(cgroupRoot, this.name, group)).catch(() => undefined);
    await rmdir(path.join(cgroupRoot, this.name)).catch(() => undefined);
  }

  private rule(group: string, ports: number[]): string[] {
    return ['-p', 'tcp', '-m', 'cgroup', '--path', `${this.name}/${group}`, '-m', 'multiport', '--ports', ports.join(','), '-j', 'DROP'];
  }
}

async function iptables(args: string[]): Promise<void> {
  // -w: wait for the xtables lock rather than fail while another tool holds it.
  await run('iptables', ['-w', ...args]);
}
