/**
 * `npm start` as its own process: the CLI on a data directory that
 * outlives it, so a test can kill it with SIGKILL at any moment and start it
 * again on the same database, as an operator's supervisor would.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { KubectlResult } from './test-server.js';
import type { Kubectl } from './cluster-flow.js';
import { startScriptFlags } from './start-flags.js';
import { sourceEntry } from './typescript-process.js';

/**
 * The server's entry point: from the sources when this file runs under vitest (harness/), the
 * compiled one when it runs compiled from dist/harness/ (the soak benchmark measures the build).
 */
const compiled = path.basename(path.resolve(import.meta.dirname, '..')) === 'dist';
const serverEntry = compiled ? [path.resolve(import.meta.dirname, '..', 'src/main.js')] : sourceEntry('src/main.ts');
const startupTimeoutMs = 30_000;

export interface ServerProcess {
  url: string;
  pid: number;
  /** kubectl with the kubeconfig the server wrote into its data directory. */
  kubectl: Kubectl;
  /** Everything it printed so far (its JSON log lines included). */
  output(): string;
  /** SIGKILL: no shutdown handler runs; resolves once the process is gone. */
  kill(): Promise<void>;
}

function kubectlFor(dataDir: string): Kubectl {
  const env = { ...process.env, KUBECONFIG: path.join(dataDir, 'kubeconfig'), HOME: dataDir };
  return (args) =>
    new Promise<KubectlResult>((resolve) => {
      execFile('kubectl', args, { env, timeout: 180_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      });
    });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * The flag that lets the server download ORC Image content from a simulated cloud it does not run
 * itself (its mirror is on loopback, which downloads refuse unless allowed): that address and port only.
 */
export function allowMirrorOf(cloudUrl: string): string[] {
  return ['--image-download-allow', new URL(cloudUrl).host];
}

/**
 * Starts the server on the data directory with `extraArgs` (a later --port wins over the default 0); resolves once
 * it announces its URL. No embedded cloud unless `simulatedCloud` (then on a free port, its clouds.yaml in the data
 * directory). `commandPrefix` runs before node (e.g. a shell that puts it in a cgroup, then execs it).
 */
export async function startServerProcess(
  dataDir: string,
  extraArgs: string[] = [],
  { simulatedCloud = false, commandPrefix = [] as string[] } = {},
): Promise<ServerProcess> {
  const cloudArgs = simulatedCloud ? ['--cloud-port', '0'] : ['--no-simulated-cloud'];
  const [command, ...prefixArgs] = [...commandPrefix, process.execPath];
  const child = spawn(command!, [...prefixArgs, ...startScriptFlags(), ...serverEntry, '--data-dir', dataDir, '--port', '0', ...cloudArgs, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not announce itself within ${startupTimeoutMs} ms:\n${output}`));
    }, startupTimeoutMs);
    child.stdout!.on('data', () => {
      const match = /serving on (https:\/\/\S+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      resolve(match[1]);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the server exited during startup (${signal ?? code}):\n${output}`));
    });
  });
  return {
    url,
    pid: child.pid!,
    kubectl: kubectlFor(dataDir),
    output: () => output,
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
    },
  };
}
