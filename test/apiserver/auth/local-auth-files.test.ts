/** The embedded default's token and policy files in the data directory. */
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbacAuthorizer } from '../../../src/apiserver/auth/abac.js';
import { ensureLocalAuthFiles } from '../../../src/apiserver/auth/local-auth-files.js';
import { StaticTokenFile } from '../../../src/apiserver/auth/token-file.js';

let dataDir: string;

beforeEach(async () => {
  dataDir = path.join(await mkdtemp(path.join(os.tmpdir(), 'capo-authfiles-')), 'data');
});

afterEach(async () => {
  await rm(path.dirname(dataDir), { recursive: true, force: true });
});

async function adminOf(tokenFile: string, token: string) {
  const tokens = await StaticTokenFile.open(tokenFile);
  try {
    return await tokens.authenticateToken(token);
  } finally {
    tokens.close();
  }
}

describe('ensureLocalAuthFiles', () => {
  it('creates an admin token in system:masters, the bare token with mode 0600, and a policy file that parses', async () => {
    const files = await ensureLocalAuthFiles(dataDir);
    expect(files).toEqual({
      tokenFile: path.join(dataDir, 'tokens.csv'),
      adminTokenFile: path.join(dataDir, 'token'),
      policyFile: path.join(dataDir, 'policy.jsonl'),
    });
    const token = await readFile(files.adminTokenFile, 'utf8');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await stat(files.adminTokenFile)).mode & 0o777).toBe(0o600);
    expect((await stat(files.tokenFile)).mode & 0o777).toBe(0o600);
    expect(await adminOf(files.tokenFile, token)).toEqual({ name: 'admin', uid: 'admin', groups: ['system:masters', 'system:authenticated'] });
    const policies = await AbacAuthorizer.open(files.policyFile);
    policies.close();
  });

  it('leaves existing files alone', async () => {
    const first = await ensureLocalAuthFiles(dataDir);
    await appendFile(first.tokenFile, 'alice-token,alice,alice\n');
    const before = await Promise.all([first.tokenFile, first.adminTokenFile, first.policyFile].map((file) => readFile(file, 'utf8')));
    await ensureLocalAuthFiles(dataDir);
    const after = await Promise.all([first.tokenFile, first.adminTokenFile, first.policyFile].map((file) => readFile(file, 'utf8')));
    expect(after).toEqual(before);
  });

  it('writes the admin token from an existing token file when the bare token was deleted', async () => {
    await ensureLocalAuthFiles(dataDir);
    await writeFile(path.join(dataDir, 'tokens.csv'), 'alice-token,alice,alice\nkept-admin,admin,admin,"dev,system:masters"\n');
    await rm(path.join(dataDir, 'token'));
    const files = await ensureLocalAuthFiles(dataDir);
    expect(await readFile(files.adminTokenFile, 'utf8')).toBe('kept-admin');
  });

  it('adds an admin record when the token file has none and the bare token is missing', async () => {
    await ensureLocalAuthFiles(dataDir);
    await writeFile(path.join(dataDir, 'tokens.csv'), 'alice-token,alice,alice');
    await rm(path.join(dataDir, 'token'));
    const files = await ensureLocalAuthFiles(dataDir);
    const token = await readFile(files.adminTokenFile, 'utf8');
    expect((await adminOf(files.tokenFile, token))?.groups).toContain('system:masters');
    expect((await adminOf(files.tokenFile, 'alice-token'))?.name).toBe('alice');
  });

  it('recreates the token file around a kept bare token', async () => {
    const first = await ensureLocalAuthFiles(dataDir);
    const token = await readFile(first.adminTokenFile, 'utf8');
    await rm(first.tokenFile);
    await ensureLocalAuthFiles(dataDir);
    expect((await adminOf(first.tokenFile, token))?.name).toBe('admin');
  });

  it('refuses an empty bare token file', async () => {
    await ensureLocalAuthFiles(dataDir);
    await writeFile(path.join(dataDir, 'token'), '\n');
    await expect(ensureLocalAuthFiles(dataDir)).rejects.toThrow(`${path.join(dataDir, 'token')} is empty; delete it to have a new admin token created`);
  });
});
