#!/usr/bin/env node
/** `npm start`: the API server on the embedded defaults (SQLite, local PKI). */
import path from 'node:path';
import { servedKinds } from './api/kinds.js';
import { startApp } from './app.js';
import { durationOption, integerOption, runServer } from './cli/serve.js';

const usage = `Usage: npm start -- [options]

Serves the Cluster API Provider OpenStack kinds over HTTPS, storing objects in
SQLite under the data directory, where it also writes its CA, serving
certificate and a ready-to-use kubeconfig (KUBECONFIG=<data-dir>/kubeconfig),
and runs the reconciler that builds clusters in OpenStack. Without a
kube-apiserver, the Secrets, Clusters and Machines it reads are served here
too (kubectl apply -f examples/).

By default it also runs the embedded simulated OpenStack cloud on
--cloud-port and writes its clouds.yaml there (OS_CLIENT_CONFIG_FILE=
<data-dir>/clouds.yaml, cloud "simulator"); examples/ points at it.

Options:
  --data-dir DIR        where the database, PKI and kubeconfig live (default: ./data)
  --port PORT           HTTPS port (default: 6443; 0 picks a free port)
  --bind-address ADDR   address to listen on (default: 127.0.0.1)
  --cloud-port PORT     port of the simulated cloud (default: 6445; 0 picks a free port)
  --no-simulated-cloud  do not run the simulated cloud (use identity Secrets of real clouds)
  --max-requests-inflight N           read-only requests served at once before 429 (default: 400)
  --max-mutating-requests-inflight N  writes served at once before 429 (default: 200); one user
                                      may hold a quarter of either at most
  --request-timeout DURATION          deadline of every request but watches, reading its body
                                      included, e.g. 60s, 1m30s (default: 1m0s)
  -h, --help            print this help and exit
`;

runServer({
  name: 'capo-apiserver',
  usage,
  options: {
    'data-dir': { type: 'string', default: './data' },
    port: { type: 'string', default: '6443' },
    'bind-address': { type: 'string', default: '127.0.0.1' },
    'cloud-port': { type: 'string', default: '6445' },
    'no-simulated-cloud': { type: 'boolean', default: false },
    'max-requests-inflight': { type: 'string', default: '400' },
    'max-mutating-requests-inflight': { type: 'string', default: '200' },
    'request-timeout': { type: 'string', default: '1m0s' },
  },
  async start(values) {
    const port = integerOption('port', values.port, 65535);
    const dataDir = path.resolve(values['data-dir']);
    const cloudPort = integerOption('cloud-port', values['cloud-port'], 65535);
    const simulatedCloud = values['no-simulated-cloud'] ? false : { port: cloudPort };
    const requestLimits = {
      maxInFlight: {
        readOnly: integerOption('max-requests-inflight', values['max-requests-inflight'], 100_000),
        mutating: integerOption('max-mutating-requests-inflight', values['max-mutating-requests-inflight'], 100_000),
      },
      requestTimeoutMs: durationOption('request-timeout', values['request-timeout']),
    };
    const app = await startApp({ dataDir, host: values['bind-address'], port, kinds: servedKinds, simulatedCloud, reconciler: {}, requestLimits });
    return {
      close: () => app.close(),
      announcement:
        `capo-apiserver serving on ${app.url}\n  data directory: ${dataDir}\n  kubeconfig:     ${app.kubeconfigPath}\n  reconciler:     running\n` +
        (app.cloud ? `  simulated cloud: ${app.cloud.url} (${app.cloudsYamlPath}; clouds: simulator, simulator-admin)\n` : ''),
    };
  },
});
