/**
 * The manifests of examples/, pointed at a running simulated cloud: what a
 * user applies after `npm start`, with the cloud's actual address.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { servedKinds } from '../../../src/served-kinds.js';
import type { SessionOptions } from '../../../src/openstack/index.js';
import type { SimulatorOptions } from '../../../src/simulator/host.js';
import type { ImageDownloadOptions } from '../../../src/reconcile/image/downloads.js';
import type { Logger } from '../../../src/observability/log.js';
import { startTestServer, type TestServer } from '../../../harness/test-server.js';

export const examplesDir = path.resolve(import.meta.dirname, '../../../examples');

/** Copies examples/ to a temporary directory with the simulator's URL in the identity Secret. */
export async function renderExamples(cloudUrl: string): Promise<string> {
  const target = await mkdtemp(path.join(os.tmpdir(), 'capo-examples-'));
  for (const file of await readdir(examplesDir)) {
    if (!file.endsWith('.yaml')) continue;
    const text = await readFile(path.join(examplesDir, file), 'utf8');
    await writeFile(path.join(target, file), text.replaceAll('http://127.0.0.1:6445', cloudUrl));
  }
  return target;
}

export interface ExampleServer {
  server: TestServer;
  /** The rendered copy of examples/. */
  manifests: string;
  stop(): Promise<void>;
}

/**
 * The embedded default as `npm start` runs it (reconciler, simulated cloud with quick transitions), with examples/ ready to apply.
 * `cloud` shapes the simulated cloud, e.g. its availability zones; `tokenUsers` are bearer-token users besides the admin; a short
 * `resyncPeriodMs` finds what changed in the cloud sooner; `imageDownloads` bounds ORC Image downloads (`npm start`'s --image-download-*
 * flags; the simulated cloud's mirror is allowed as it is there); `logger` receives the server's log.
 */
export async function startExampleServer(
  sessionOptions: SessionOptions = {},
  cloud: Pick<SimulatorOptions, 'availabilityZones'> = {},
  tokenUsers?: Record<string, string[]>,
  { resyncPeriodMs = 60_000, imageDownloads, logger }: { resyncPeriodMs?: number; imageDownloads?: ImageDownloadOptions; logger?: Logger } = {},
): Promise<ExampleServer> {
  const server = await startTestServer({
    tokenUsers,
    kinds: servedKinds,
    // FAULT_SEED replays the injected faults of a run that printed it.
    simulatedCloud: { port: 0, transitionDelayMs: 100, faultSeed: process.env.FAULT_SEED === undefined ? undefined : Number(process.env.FAULT_SEED), ...cloud },
    reconciler: { resyncPeriodMs, sessionOptions, imageDownloads },
    ...(logger === undefined ? {} : { logger }),
  });
  const manifests = await renderExamples(server.cloud!.url);
  return {
    server,
    manifests,
    async stop() {
      await server.stop();
      await rm(manifests, { recursive: true, force: true });
    },
  };
}
