#!/usr/bin/env node
/** `npm start`: the API server on the embedded defaults (SQLite, local PKI). */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { servedKinds } from './api/kinds.js';
import { startApp } from './app.js';

const usage = `Usage: npm start -- [options]

Serves the Cluster API Provider OpenStack kinds over HTTPS, storing objects in
SQLite under the data directory, where it also writes its CA, serving
certificate and a ready-to-use kubeconfig (KUBECONFIG=<data-dir>/kubeconfig).

Options:
  --data-dir DIR        where the database, PKI and kubeconfig live (default: ./data)
  --port PORT           HTTPS port (default: 6443; 0 picks a free port)
  --bind-address ADDR   address to listen on (default: 127.0.0.1)
  -h, --help            print this help and exit
`;

function fail(message: string): never {
  process.stderr.write(`error: ${message}\n\n${usage}`);
  process.exit(2);
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        'data-dir': { type: 'string', default: './data' },
        port: { type: 'string', default: '6443' },
        'bind-address': { type: 'string', default: '127.0.0.1' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    fail((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(usage);
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be an integer from 0 to 65535, got "${values.port}"`);

  const dataDir = path.resolve(values['data-dir']!);
  const app = await startApp({ dataDir, host: values['bind-address']!, port, kinds: servedKinds });
  // Handlers go in before the server announces itself: a supervisor may signal as soon as it reads the line.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`received ${signal}, shutting down\n`);
    await app.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  process.stdout.write(`capo-apiserver serving on ${app.url}\n  data directory: ${dataDir}\n  kubeconfig:     ${app.kubeconfigPath}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`capo-apiserver: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
