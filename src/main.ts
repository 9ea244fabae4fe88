#!/usr/bin/env node
/** `npm start`: the API server on the embedded defaults (SQLite, local PKI). */
import path from 'node:path';
import { servedKinds } from './api/kinds.js';
import { startApp } from './app.js';
import { integerOption, runServer } from './cli/serve.js';

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
  },
  async start(values) {
    const port = integerOption('port', values.port, 65535);
    const dataDir = path.resolve(values['data-dir']);
    const cloudPort = integerOption('cloud-port', values['cloud-port'], 65535);
    const simulatedCloud = values['no-simulated-cloud'] ? false : { port: cloudPort };
    const app = await startApp({ dataDir, host: values['bind-address'], port, kinds: servedKinds, simulatedCloud, reconciler: {} });
    return {
      close: () => app.close(),
      announcement:
        `capo-apiserver serving on ${app.url}\n  data directory: ${dataDir}\n  kubeconfig:     ${app.kubeconfigPath}\n  reconciler:     running\n` +
        (app.cloud ? `  simulated cloud: ${app.cloud.url} (${app.cloudsYamlPath}; clouds: simulator, simulator-admin)\n` : ''),
    };
  },
});
