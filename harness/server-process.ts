/**
 * `npm start` as its own process: the compiled CLI on a data directory that
 * outlives it, so a test can kill it with SIGKILL at any moment and start it
 * again on the same database, as an operator's supervisor would.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { KubectlResult } from './test-server.js';
import type { Kubectl } from './cluster-flow.js';

/** The repository, whether this file runs from harness/ (vitest) or compiled from dist/harness/ (the soak benchmark). */
const upOne = path.resolve(import.meta.dirname, '..');
const repository = path.basename(upOne) === 'dist' ? path.dirname(upOne) : upOne;
const entry = path.join(repository, 'dist/src/main.js');
const startupTimeoutMs = 30_000;

export interface ServerProcess {
  url: string;
  pid: number;
  /** kubectl with the kubeconfig the server wrote into its data directory. */
  kubectl: Kubectl;
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

/** Starts `node dist/src/main.js` on the data directory, with no embedded cloud; resolves once it announces its URL. */
export async function startServerProcess(dataDir: string): Promise<ServerProcess> {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first (npm test does)`);
  const child = spawn(process.execPath, [entry, '--data-dir', dataDir, '--port', '0', '--no-simulated-cloud'], { stdio: ['ignore', 'pipe', 'pipe'] });
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
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
    },
  };
}
