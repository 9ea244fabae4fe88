/** The composition root's embedded cloud: kept in the data directory, so a restart on it finds the same cloud. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gadgetKind, widgetKind } from '../harness/widget-kind.js';
import { startApp } from '../src/app.js';
import { call, login } from './simulator/helpers.js';

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-app-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('startApp with the simulated cloud', () => {
  const start = () => startApp({ dataDir, host: '127.0.0.1', port: 0, kinds: [widgetKind, gadgetKind], simulatedCloud: { port: 0, transitionDelayMs: 10 } });

  it('keeps the cloud in the data directory across a restart', async () => {
    const first = await start();
    let network: { id: string };
    try {
      const demo = await login(first.cloud!);
      network = (await call(demo, 'POST', `${first.cloud!.url}/network/v2.0/networks`, { network: { name: 'kept' } })).body.network;
    } finally {
      await first.close();
    }
    const second = await start();
    try {
      const demo = await login(second.cloud!);
      expect((await call(demo, 'GET', `${second.cloud!.url}/network/v2.0/networks/${network.id}`)).body.network.name).toBe('kept');
    } finally {
      await second.close();
    }
  });
});
