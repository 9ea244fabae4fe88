/**
 * Starts the real server on a temporary data directory and runs the real
 * kubectl binary against it.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { embeddedCredentials, startApp, type AppOptions, type RunningApp } from '../src/app.js';
import { gadgetKind, widgetKind } from './widget-kind.js';

export interface TestServer extends RunningApp {
  dataDir: string;
  kubeconfigPath: string;
  tokenPath: string;
  /** Runs kubectl; it is killed after timeoutMs (default 60 s). */
  kubectl(args: string[], options?: { input?: string; env?: Record<string, string>; timeoutMs?: number }): Promise<KubectlResult>;
  /** Starts a long-running kubectl (e.g. get -w); caller kills it. */
  spawnKubectl(args: string[]): ChildProcessWithoutNullStreams;
  stop(): Promise<void>;
}

/** Where an embedded server listens, and the admin kubeconfig it wrote. */
export interface ServerAddress {
  url: string;
  kubeconfigPath: string;
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `tokenUsers` are bearer-token users besides the admin, by name with their groups; each one's
 * token is `<name>-token`.
 */
export async function startTestServer(
  options: Partial<Pick<AppOptions, 'bookmarkIntervalMs' | 'historyRetention' | 'kinds' | 'requestLimits' | 'simulatedCloud' | 'reconciler' | 'logger'>> & {
    tokenUsers?: Record<string, string[]>;
  } = {},
): Promise<TestServer> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-test-'));
  const { tokenUsers, ...appOptions } = options;
  if (tokenUsers) {
    const records = Object.entries(tokenUsers).map(([user, groups]) => `${user}-token,${user},${user},"${groups.join(',')}"\n`);
    await writeFile(path.join(dataDir, 'tokens.csv'), records.join(''), { mode: 0o600 });
  }
  const app = await startApp({ dataDir, host: '127.0.0.1', port: 0, kinds: [widgetKind, gadgetKind], ...appOptions });
  const credentials = embeddedCredentials(app);
  const env = { ...process.env, KUBECONFIG: credentials.kubeconfigPath, HOME: dataDir };
  return {
    ...app,
    ...credentials,
    dataDir,
    async kubectl(args, { input, env: extraEnv, timeoutMs = 60_000 } = {}) {
      return new Promise((resolve) => {
        const child = execFile('kubectl', args, { env: { ...env, ...extraEnv }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        });
        if (input !== undefined) child.stdin!.end(input);
      });
    },
    spawnKubectl(args) {
      return spawn('kubectl', args, { env });
    },
    async stop() {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs kubectl; resolves to its stdout, or rejects with its stderr when it fails. */
export async function kubectlOk(server: TestServer, args: string[], input?: string): Promise<string> {
  const result = await server.kubectl(args, { input });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/** Runs a kubectl command that must fail; resolves to its stderr. */
export async function kubectlFails(server: TestServer, args: string[], input?: string): Promise<string> {
  const result = await server.kubectl(args, { input });
  if (result.code === 0) throw new Error(`kubectl ${args.join(' ')} should have failed; stdout: ${result.stdout}`);
  return result.stderr;
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json(): any;
}

/** A raw HTTPS request authenticated with the admin client certificate from the kubeconfig. */
export async function request(
  server: ServerAddress,
  method: string,
  urlPath: string,
  options: { headers?: Record<string, string>; body?: string | Buffer; anonymous?: boolean } = {},
): Promise<HttpResult> {
  const { ca, cert, key } = await readCredentials(server);
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${server.url}${urlPath}`,
      {
        method,
        ca,
        ...(options.anonymous ? {} : { cert, key }),
        headers: { ...(options.body !== undefined ? { 'Content-Length': String(Buffer.byteLength(options.body)) } : {}), ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export interface WatchStream {
  events: any[];
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Resolves once `count` events arrived (or rejects after a timeout). */
  waitFor(count: number, timeoutMs?: number): Promise<any[]>;
  ended: Promise<void>;
  close(): void;
}

/** Opens a watch and collects its newline-delimited JSON events. */
export async function openWatch(server: ServerAddress, urlPath: string, headers: Record<string, string> = {}): Promise<WatchStream> {
  const { ca, cert, key } = await readCredentials(server);
  return new Promise((resolve, reject) => {
    const req = https.request(`${server.url}${urlPath}`, { ca, cert, key, headers }, (res) => {
      const events: any[] = [];
      let buffer = '';
      let endResolve: () => void;
      const ended = new Promise<void>((r) => (endResolve = r));
      res.on('data', (chunk) => {
        buffer += chunk.toString('utf8');
        for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (line.trim()) events.push(JSON.parse(line));
        }
      });
      res.on('end', () => {
        if (buffer.trim()) events.push(JSON.parse(buffer));
        endResolve();
      });
      res.on('close', () => endResolve());
      resolve({
        events,
        status: res.statusCode ?? 0,
        headers: res.headers,
        ended,
        async waitFor(count, timeoutMs = 10_000) {
          const deadline = Date.now() + timeoutMs;
          while (events.length < count) {
            if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} events, got ${JSON.stringify(events)}`);
            await new Promise((r) => setTimeout(r, 20));
          }
          return events;
        },
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The CA and admin client certificate from the server's kubeconfig. */
export async function readCredentials(server: ServerAddress): Promise<{ ca: string; cert: string; key: string }> {
  const config = parseYaml(await readFile(server.kubeconfigPath, 'utf8'));
  const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
  return {
    ca: decode(config.clusters[0].cluster['certificate-authority-data']),
    cert: decode(config.users[0].user['client-certificate-data']),
    key: decode(config.users[0].user['client-key-data']),
  };
}
