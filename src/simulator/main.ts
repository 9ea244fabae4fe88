#!/usr/bin/env node
/** `npm run simulator`: the simulated OpenStack cloud as a standalone process, for the CLI and manual tests. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { integerOption, runServer, UsageError } from '../cli/serve.js';
import { startSimulator } from './host.js';

const usage = `Usage: npm run simulator -- --data-dir DIR [options]

Serves simulated Keystone, Neutron, Nova, Octavia, Glance and Cinder APIs on one
port and writes DIR/clouds.yaml with the clouds "simulator" (user demo) and
"simulator-admin" (user admin), e.g.
  OS_CLIENT_CONFIG_FILE=DIR/clouds.yaml openstack --os-cloud simulator image list

The cloud is kept in DIR/state.json (image data in DIR/state-images/): started
again on the same DIR, it serves the same projects, users, networks, servers,
load balancers, images and volumes with the same ids; what was in transition
when it stopped goes on.

Options:
  --data-dir DIR              where clouds.yaml and the cloud's state are written (required)
  --fresh                     start with a new cloud, replacing the one kept in DIR
  --port PORT                 port to listen on (default: 0, a free port)
  --bind-address ADDR         address to listen on (default: 127.0.0.1)
  --transition-delay-ms MS    delay of asynchronous status transitions (default: 2000)
  -h, --help                  print this help and exit
`;

runServer({
  name: 'openstack simulator',
  helpCommand: 'npm run simulator -- --help',
  usage,
  options: {
    'data-dir': { type: 'string' },
    port: { type: 'string', default: '0' },
    'bind-address': { type: 'string', default: '127.0.0.1' },
    'transition-delay-ms': { type: 'string', default: '2000' },
    fresh: { type: 'boolean', default: false },
  },
  async start(values) {
    if (!values['data-dir']) throw new UsageError('--data-dir is required');
    const port = integerOption('port', values.port, 65535);
    const transitionDelayMs = integerOption('transition-delay-ms', values['transition-delay-ms'], 3_600_000);

    const dataDir = path.resolve(values['data-dir']);
    await mkdir(dataDir, { recursive: true });
    const simulator = await startSimulator({
      port,
      host: values['bind-address'],
      transitionDelayMs,
      stateFile: path.join(dataDir, 'state.json'),
      freshState: values.fresh,
    });
    const cloudsPath = path.join(dataDir, 'clouds.yaml');
    await writeFile(cloudsPath, simulator.cloudsYaml('simulator'), { mode: 0o600 });
    return {
      close: () => simulator.close(),
      announcement: `OpenStack simulator serving on ${simulator.url}\n  keystone:    ${simulator.url}/identity/v3\n  clouds.yaml: ${cloudsPath}\n  state:       ${path.join(dataDir, 'state.json')}\n`,
    };
  },
});
