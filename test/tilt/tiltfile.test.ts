/**
 * The Tilt dev loop: `tilt ci` on the Tiltfile's default mode, with ports and a data directory of
 * its own, compiles src/, starts the simulated cloud and the server, applies examples/ and exits 0
 * once the example cluster and its machines are Ready; without a Kubernetes cluster. The Tilt CLI
 * is built from Go modules by ../shared/tilt/build.sh (`.ci/run` does it); without it the suite
 * skips, saying so.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePortRun } from '../../harness/control-plane.js';

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

function run(args: string[]): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(tilt, args, { cwd: repository, stdio: ['ignore', 'pipe', 'pipe'] });
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

describe.skipIf(unavailable !== undefined)(unavailable === undefined ? 'tilt ci' : `tilt ci (skipped: ${unavailable})`, () => {
  it('builds, runs and applies the example until its cluster is Ready, with no Kubernetes cluster', async () => {
    const first = await freePortRun(3);
    const [tiltPort, serverPort, cloudPort] = [first, first + 1, first + 2];
    const { code, output } = await run(['ci', '--port', String(tiltPort), '--', `--port=${serverPort}`, `--cloud-port=${cloudPort}`, `--data-dir=${dataDir}`]);
    expect(code, output.slice(-6000)).toBe(0);
    // The last resource waited for the cluster and every machine of examples/ to be Ready.
    expect(output).toContain('openstackcluster.infrastructure.cluster.x-k8s.io/demo condition met');
    for (const machine of ['demo-control-plane-0', 'demo-control-plane-1', 'demo-control-plane-2', 'demo-md-0-0', 'demo-md-0-1', 'demo-md-0-2']) {
      expect(output).toContain(`openstackmachine.infrastructure.cluster.x-k8s.io/${machine} condition met`);
    }
    expect(output).toContain('SUCCESS. All workloads are healthy.');
  }, (limitSeconds + 30) * 1000);
});
