/**
 * The bench server (server.ts) as a child process, and an HTTPS client holding the admin
 * certificate of its kubeconfig: shared by the benchmark (run.ts) and the promotion probe
 * (promotion.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import type { ServerHello } from './server.js';
import { RawClient } from '../raw-client.js';

interface ServerProcess {
  hello: ServerHello;
  child: ChildProcess;
  stop(): Promise<void>;
}

interface ServerProcessOptions {
  nodeFlags: string[];
  /** Added to this process's environment (BENCH_ETCD_SERVERS, BENCH_WATCH_CACHE: see server.ts). */
  env: Record<string, string>;
  /** Every line the server prints on stdout after its hello (a V8 trace asked for in nodeFlags, say). */
  onLine?: (line: string) => void;
}

export async function startServer(options: ServerProcessOptions): Promise<ServerProcess> {
  const entry = fileURLToPath(new URL('./server.js', import.meta.url));
  const child = spawn(process.execPath, [...options.nodeFlags, entry], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...options.env } });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const hello = await new Promise<ServerHello>((resolve, reject) => {
    let buffered = '';
    let greeted = false;
    const timer = setTimeout(() => reject(new Error('server did not start within 30 s')), 30_000);
    child.once('exit', (code) => reject(new Error(`server exited with code ${code} before serving`)));
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      buffered += chunk;
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        // A V8 trace may print before the hello: the hello is the first line that is a JSON object.
        if (greeted || !line.startsWith('{')) {
          options.onLine?.(line);
          continue;
        }
        greeted = true;
        clearTimeout(timer);
        try {
          resolve(JSON.parse(line) as ServerHello);
        } catch (error) {
          reject(error);
        }
      }
    });
  });
  return {
    hello,
    child,
    async stop() {
      // Closing stdin asks for a clean exit (a CPU profile is written on exit); kill only if it hangs.
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface Credentials {
  ca: string;
  cert: string;
  key: string;
}

export function readCredentials(kubeconfigPath: string): Credentials {
  const config = parseYaml(readFileSync(kubeconfigPath, 'utf8'));
  const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
  return {
    ca: decode(config.clusters[0].cluster['certificate-authority-data']),
    cert: decode(config.users[0].user['client-certificate-data']),
    key: decode(config.users[0].user['client-key-data']),
  };
}

/** The raw client with the admin's client certificate. */
export class Client extends RawClient {
  constructor(
    base: URL,
    readonly credentials: Credentials,
    maxSockets: number,
  ) {
    super(base, new https.Agent({ keepAlive: true, maxSockets, ...credentials }));
  }
}
