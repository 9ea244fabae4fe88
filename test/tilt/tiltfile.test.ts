/**
 * The Tilt dev loop: `tilt ci` on the Tiltfile's default mode, with ports and a data directory of
 * its own, compiles src/, starts the simulated cloud and the server, applies examples/ and exits 0
 * once the example cluster and its machines are Ready; without a Kubernetes cluster. Then its
 * cluster mode on a real one-node cluster (harness/node): podman builds the dev image, the node's
 * loader puts it into containerd, and tilt/deploy runs as a pod until it is Ready. The Tilt CLI is
 * built from Go modules by ../shared/tilt/build.sh (`.ci/run` does it); without it, or without what
 * the node needs, each suite skips, saying so.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePortRun } from '../../harness/control-plane.js';
import { createDataVolume, createServingSecret } from '../../harness/install-prerequisites.js';
import { nodeUnavailable, startNode } from '../../harness/node.js';

const repository = path.resolve(import.meta.dirname, '../..');
const tilt = process.env.TILT_BIN ?? path.join(os.homedir(), '.cache/capo-tilt/bin/tilt');
const unavailable = existsSync(tilt) ? undefined : `no Tilt CLI at ${tilt} (bash ../shared/tilt/build.sh builds it; TILT_BIN names another)`;
if (unavailable) console.warn(`tilt ci is skipped: ${unavailable}`);

/** Inside the repository (under the ignored .tilt-data/), so the compiled server finds node_modules. */
const dataDir = path.join('.tilt-data', `test-${randomBytes(4).toString('hex')}`);
const limitSeconds = 420;

interface Finished {
  code: number | null;
  output: string;
}

function run(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(tilt, args, { cwd: repository, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), limitSeconds * 1000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

afterAll(async () => {
  await rm(path.join(repository, dataDir), { recursive: true, force: true });
});

/** Tilt's, the server's and the cloud's, chosen once: a second run in the same checkout uses the same ones, as a developer's does (the Images' download URLs name the cloud's port, and their content is immutable). */
let ports: number | undefined;

/** `tilt ci` on the default mode in `dataDir`, which must end with the example cluster and every machine Ready. */
async function tiltCiUntilReady(): Promise<void> {
  ports ??= await freePortRun(3);
  const [tiltPort, serverPort, cloudPort] = [ports, ports + 1, ports + 2];
  const { code, output } = await run(['ci', '--port', String(tiltPort), '--', `--port=${serverPort}`, `--cloud-port=${cloudPort}`, `--data-dir=${dataDir}`]);
  expect(code, output.slice(-6000)).toBe(0);
  // The last resource waited for the cluster and every machine of examples/ to be Ready.
  expect(output).toContain('openstackcluster.infrastructure.cluster.x-k8s.io/demo condition met');
  for (const machine of ['demo-control-plane-0', 'demo-control-plane-1', 'demo-control-plane-2', 'demo-md-0-0', 'demo-md-0-1', 'demo-md-0-2']) {
    expect(output).toContain(`openstackmachine.infrastructure.cluster.x-k8s.io/${machine} condition met`);
  }
  expect(output).toContain('SUCCESS. All workloads are healthy.');
}

describe.skipIf(unavailable !== undefined)(unavailable === undefined ? 'tilt ci' : `tilt ci (skipped: ${unavailable})`, () => {
  it('builds, runs and applies the example until its cluster is Ready, with no Kubernetes cluster', tiltCiUntilReady, (limitSeconds + 30) * 1000);

  it(
    'passes again in the same checkout: the server keeps its database and the simulated cloud its resources',
    async () => {
      expect(existsSync(path.join(repository, dataDir, 'cloud', 'state.json'))).toBe(true);
      await tiltCiUntilReady();
    },
    (limitSeconds + 30) * 1000,
  );
});

const clusterUnavailable = unavailable ?? nodeUnavailable();
if (clusterUnavailable && !unavailable) console.warn(`tilt ci --mode=cluster is skipped: ${clusterUnavailable}`);

describe.skipIf(clusterUnavailable !== undefined)(
  clusterUnavailable === undefined ? 'tilt ci in cluster mode' : `tilt ci in cluster mode (skipped: ${clusterUnavailable})`,
  () => {
    it(
      'builds the dev image with podman, loads it into a real node and runs tilt/deploy there until the pod is Ready',
      async () => {
        const node = await startNode({ crds: ['capi'] });
        try {
          // What the install needs besides deploy/, as the README's install makes it without cert-manager.
          await createDataVolume(node, path.join(node.dir, 'volume'));
          await createServingSecret(node, node.dir);
          const first = await freePortRun(2);
          const env = { ...process.env, KUBECONFIG: node.kubeconfig, NODE_DIR: node.dir };
          const loader = path.join(repository, 'harness', 'node', 'load-image.sh');
          const { code, output } = await run(
            ['ci', '--port', String(first), '--', '--mode=cluster', `--image-loader=${loader}`, `--port=${first + 1}`, `--data-dir=${dataDir}`],
            env,
          );
          expect(code, output.slice(-6000)).toBe(0);
          expect(output).toContain('SUCCESS. All workloads are healthy.');
          const pods = await node.kubectl(['get', 'pods', '-n', 'capo-system', '-o', 'jsonpath={.items[*].spec.containers[0].image}']);
          expect(pods.stdout).toMatch(/^capo-apiserver:tilt-/);
        } finally {
          await node.stop();
        }
      },
      (limitSeconds + 600) * 1000,
    );
  },
);
