/**
 * The data directory through the real start: every file the server writes is
 * its owner's only, and a directory loosened between runs is tightened again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chmod, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { embeddedCredentials, startApp, type RunningApp } from '../src/app.js';
import { widgetKind } from '../harness/widget-kind.js';
import { request } from '../harness/test-server.js';
import { createLogger, type Logger } from '../src/observability/log.js';

let dataDir: string | undefined;

afterEach(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function start(dir: string, logger?: Logger): Promise<RunningApp> {
  return startApp({ dataDir: dir, host: '127.0.0.1', port: 0, kinds: [widgetKind], logger });
}

/** Every path below `dir` with its permission bits. */
async function modes(dir: string): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true })) {
    found[entry] = ((await stat(path.join(dir, entry))).mode & 0o777).toString(8);
  }
  found['.'] = ((await stat(dir)).mode & 0o777).toString(8);
  return found;
}

async function writeSomething(app: RunningApp): Promise<void> {
  const body = JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name: `w${Date.now()}` }, spec: { color: 'red' } });
  const res = await request({ url: app.url, ...embeddedCredentials(app) }, 'POST', '/apis/testing.capo.dev/v1/namespaces/default/widgets', {
    headers: { 'Content-Type': 'application/json' },
    body,
  });
  expect(res.status, res.body).toBe(201);
}

describe('data directory permissions', () => {
  it('keeps every file owner-only on a fresh start, the database WAL included', async () => {
    dataDir = path.join(await mkdtemp(path.join(os.tmpdir(), 'capo-modes-')), 'data');
    const app = await start(dataDir);
    try {
      await writeSomething(app);
      const found = await modes(dataDir);
      expect(Object.keys(found)).toEqual(
        expect.arrayContaining(['capo.db', 'capo.db-wal', 'pki/ca.key', 'pki/ca.crt', 'kubeconfig', 'token', 'tokens.csv', 'policy.jsonl']),
      );
      for (const [entry, mode] of Object.entries(found)) expect(`${entry} ${mode}`).toBe(`${entry} ${entry === '.' || entry === 'pki' ? '700' : '600'}`);
    } finally {
      await app.close();
    }
  });

  it('tightens a directory whose modes were loosened, and reports each change', async () => {
    dataDir = path.join(await mkdtemp(path.join(os.tmpdir(), 'capo-modes-')), 'data');
    await (await start(dataDir)).close();
    for (const entry of await readdir(dataDir, { recursive: true })) await chmod(path.join(dataDir, entry), entry === 'pki' ? 0o755 : 0o644);
    await chmod(dataDir, 0o755);
    const warnings: string[] = [];
    const app = await start(dataDir, createLogger({ destination: { write: (line: string) => void warnings.push(JSON.parse(line).msg) } }));
    try {
      await writeSomething(app);
      for (const [entry, mode] of Object.entries(await modes(dataDir)))
        expect(`${entry} ${mode}`).toBe(`${entry} ${entry === '.' || entry === 'pki' ? '700' : '600'}`);
      expect(warnings.some((line) => line.includes('capo.db: mode 0644 -> 0600'))).toBe(true);
      expect(warnings.some((line) => line.endsWith('pki: mode 0755 -> 0700 (the data directory is readable by its owner only)'))).toBe(true);
    } finally {
      await app.close();
    }
  });
});
