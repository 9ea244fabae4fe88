/**
 * The container image as a user builds and runs it (scripts/image/build.sh, podman): small, no shell,
 * non-root on a read-only root filesystem with its data on a volume; the embedded default serves
 * `kubectl apply -f examples/` to Ready from inside it; SIGTERM ends it with exit 0 and every
 * acknowledged write on disk. Skipped, naming why, where podman or debootstrap is missing.
 */
import { randomBytes } from 'node:crypto';
import { chown, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { apply, waitForReady, type Kubectl } from '../../harness/cluster-flow.js';
import { freePortRun, kubectlWith } from '../../harness/control-plane.js';
import { buildImage, imageUnavailable, podman, podmanLimits } from '../../harness/image.js';
import { startIdentityWriters } from '../../harness/identity-writers.js';
import { pollUntil } from '../../harness/poll.js';
import { renderExamples } from '../reconcile/flows/examples.js';

const unavailable = imageUnavailable();
if (unavailable) console.warn(`the image tests are skipped: ${unavailable}`);

/** The size the runtime image must stay within: node (109 MB stripped), its libraries, dist/src and the production dependencies. */
const imageSizeBudget = 200 * 1000 * 1000;
const nonRoot = 65532;

let image: string;
let dataDir: string;
const containers: string[] = [];

beforeAll(async () => {
  if (unavailable) return;
  image = await buildImage();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-image-'));
  // The volume as a PersistentVolume arrives: an empty directory the pod's fsGroup may write.
  await chown(dataDir, nonRoot, nonRoot);
}, 30 * 60_000);

afterAll(async () => {
  if (unavailable) return;
  for (const name of containers) await podman(['rm', '--force', '--time', '0', name]).catch(() => undefined);
  await rm(dataDir, { recursive: true, force: true });
});

interface Container {
  name: string;
  url: string;
  kubectl: Kubectl;
}

/** Runs the image on host networking with its data directory on the volume; resolves once /readyz answers ok. */
async function runImage(port: number, cloudPort: number): Promise<Container> {
  const name = `capo-image-test-${randomBytes(4).toString('hex')}`;
  containers.push(name);
  await podman([
    'run',
    '--detach',
    '--name',
    name,
    '--read-only',
    '--network',
    'host',
    ...podmanLimits,
    '--volume',
    `${dataDir}:/var/lib/capo-apiserver`,
    image,
    '--data-dir=/var/lib/capo-apiserver',
    '--bind-address=127.0.0.1',
    `--port=${port}`,
    `--cloud-port=${cloudPort}`,
  ]);
  const asAdmin = kubectlWith(path.join(dataDir, 'kubeconfig'));
  const kubectl: Kubectl = (args) => asAdmin(args);
  await pollUntil(
    `${name} to answer /readyz`,
    async () => {
      const state = (await podman(['inspect', '--format', '{{.State.Status}}', name])).trim();
      if (state === 'exited') throw new Error(`${name} exited during startup:\n${await podman(['logs', name])}`);
      const ready = await kubectl(['get', '--raw', '/readyz']);
      return ready.code === 0 && ready.stdout === 'ok' ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  return { name, url: `https://127.0.0.1:${port}`, kubectl };
}

/** SIGTERM, as the kubelet and `podman stop` send it; resolves with the exit code. */
async function terminate(name: string): Promise<number> {
  await podman(['kill', '--signal', 'TERM', name]);
  await podman(['wait', name]);
  return Number((await podman(['inspect', '--format', '{{.State.ExitCode}}', name])).trim());
}

describe.skipIf(unavailable !== undefined)(unavailable === undefined ? 'the container image' : `the container image (skipped: ${unavailable})`, () => {
  it('is within its size budget, runs as non-root and carries no shell', async () => {
    const [size, user] = (await podman(['image', 'inspect', '--format', '{{.Size}} {{.Config.User}}', image])).trim().split(' ');
    console.log(`image ${image}: ${(Number(size) / 1e6).toFixed(1)} MB`);
    expect(Number(size)).toBeLessThanOrEqual(imageSizeBudget);
    expect(user).toBe(`${nonRoot}:${nonRoot}`);
    const shell = await podman(['run', '--rm', ...podmanLimits, '--entrypoint', '/bin/sh', image, '-c', 'true']).then(
      () => 'ran',
      (error: Error) => error.message,
    );
    expect(shell).not.toBe('ran');
  });

  it(
    'serves the embedded default read-only from a volume: examples/ to Ready, then a clean SIGTERM keeps every acknowledged write',
    async () => {
      const first = await freePortRun(2);
      const container = await runImage(first, first + 1);

      // Every file of the data directory is the non-root user's and its alone.
      const files = await readdir(dataDir, { recursive: true });
      for (const file of files) {
        const info = await stat(path.join(dataDir, file));
        expect(info.uid, file).toBe(nonRoot);
        if (info.isFile()) expect(info.mode & 0o777, file).toBe(0o600);
      }

      const manifests = await renderExamples(`http://127.0.0.1:${first + 1}`);
      try {
        await apply(container.kubectl, manifests);
        await waitForReady(container.kubectl, 'demo', 240);
      } finally {
        await rm(manifests, { recursive: true, force: true });
      }

      const writes = await startIdentityWriters(container.url, dataDir, 'term');
      await vi.waitFor(() => expect(writes.acknowledged.length).toBeGreaterThanOrEqual(100), { timeout: 60_000, interval: 10 });
      const exitCode = terminate(container.name);
      await writes.finished();
      expect(await exitCode).toBe(0);
      expect(await podman(['logs', container.name])).toContain('shutting down');

      const again = await runImage(first, first + 1);
      const { stdout } = await again.kubectl(['get', 'openstackclusteridentities', '-o', 'name']);
      const stored = new Set(
        stdout
          .trim()
          .split('\n')
          .map((line) => line.split('/')[1]),
      );
      expect(writes.acknowledged.filter((name) => !stored.has(name))).toEqual([]);
      // The cluster built before the restart is still stored (the simulated cloud lived in the old container).
      const machines = await again.kubectl(['get', 'openstackclusters,openstackmachines', '-o', 'name']);
      expect(machines.stdout.trim().split('\n')).toHaveLength(7);
      expect(await terminate(again.name)).toBe(0);
    },
    10 * 60_000,
  );
});
