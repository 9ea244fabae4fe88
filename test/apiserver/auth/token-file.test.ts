/**
 * The static token file: kube's --token-auth-file CSV read the way Go's csv
 * reader reads it, clear errors naming the line, and reloads on change.
 */
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StaticTokenFile } from '../../../src/apiserver/auth/token-file.js';

let dir: string;
const opened: StaticTokenFile[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'capo-tokens-'));
});

afterEach(async () => {
  for (const file of opened.splice(0)) file.close();
  await rm(dir, { recursive: true, force: true });
});

async function open(text: string, onError?: (error: Error) => void): Promise<StaticTokenFile> {
  const file = path.join(dir, 'tokens.csv');
  await writeFile(file, text);
  const tokens = await StaticTokenFile.open(file, { onError });
  opened.push(tokens);
  return tokens;
}

describe('reading tokens', () => {
  it('maps each token to its user, uid and groups, adding system:authenticated', async () => {
    const tokens = await open(['t-admin,admin,uid-1,system:masters', 't-alice,alice,uid-2,"team-a,team-b"', 't-bob,bob,,', 't-carol,carol,uid-4'].join('\r\n'));
    expect(await tokens.authenticateToken('t-admin')).toEqual({ name: 'admin', uid: 'uid-1', groups: ['system:masters', 'system:authenticated'] });
    expect(await tokens.authenticateToken('t-alice')).toEqual({ name: 'alice', uid: 'uid-2', groups: ['team-a', 'team-b', 'system:authenticated'] });
    expect(await tokens.authenticateToken('t-bob')).toEqual({ name: 'bob', groups: ['system:authenticated'] });
    expect(await tokens.authenticateToken('t-carol')).toEqual({ name: 'carol', uid: 'uid-4', groups: ['system:authenticated'] });
    expect(await tokens.authenticateToken('t-nobody')).toBeUndefined();
    expect(await tokens.authenticateToken('t-admi')).toBeUndefined();
  });

  it('reads quoted fields with doubled quotes, embedded line breaks and blank lines as Go does', async () => {
    const tokens = await open('\n"to""ken",dave,"u\nid",dev\n\n"x,y",erin,uid,\n');
    expect(await tokens.authenticateToken('to"ken')).toEqual({ name: 'dave', uid: 'u\nid', groups: ['dev', 'system:authenticated'] });
    expect((await tokens.authenticateToken('x,y'))?.name).toBe('erin');
  });

  it('accepts an empty file', async () => {
    const tokens = await open('');
    expect(await tokens.authenticateToken('anything')).toBeUndefined();
  });

  it.each([
    ['t1,admin,uid\nt2,bob\n', 'line 2: needs at least 3 columns (token, user name, user uid), found 2'],
    ['t1,admin,uid\n,bob,uid\n', 'line 2: the token is empty'],
    ['t1,,uid\n', 'line 1: the user name is empty'],
    ['t1,admin,uid\n\nt1,bob,uid\n', 'line 3: the token is already used on line 1'],
    ['t1,ad"min,uid\n', 'line 1: bare " in an unquoted field; quote the field and double the quote'],
    ['t1,admin,uid\n"t2,bob,uid\n', 'line 2: quoted field is not closed'],
    ['"t1"x,admin,uid\n', 'line 1: unexpected text after a closing quote'],
  ])('rejects %j naming the line', async (text, message) => {
    await expect(open(text)).rejects.toThrow(`${path.join(dir, 'tokens.csv')}: ${message}`);
  });

  it('names a missing file', async () => {
    const missing = path.join(dir, 'nope.csv');
    await expect(StaticTokenFile.open(missing)).rejects.toThrow(`${missing}: no such file`);
  });
});

describe('reloading', () => {
  it('picks up added and revoked tokens when the file is rewritten in place', async () => {
    const tokens = await open('t1,alice,uid-1\n');
    await writeFile(tokens.path, 't2,bob,uid-2\n');
    await expect.poll(() => tokens.authenticateToken('t2'), { timeout: 10_000 }).toEqual({ name: 'bob', uid: 'uid-2', groups: ['system:authenticated'] });
    expect(await tokens.authenticateToken('t1')).toBeUndefined();
  });

  it('picks up a file replaced by rename, as editors save', async () => {
    const tokens = await open('t1,alice,uid-1\n');
    const staged = path.join(dir, 'tokens.csv.new');
    await writeFile(staged, 't3,carol,uid-3\n');
    await rename(staged, tokens.path);
    await expect.poll(async () => (await tokens.authenticateToken('t3'))?.name, { timeout: 10_000 }).toBe('carol');
  });

  it('picks up a Secret volume update, which swaps the ..data symlink the file points through', async () => {
    await mkdir(path.join(dir, '..v1'));
    await writeFile(path.join(dir, '..v1', 'tokens.csv'), 't1,alice,uid-1\n');
    await symlink('..v1', path.join(dir, '..data'));
    await symlink(path.join('..data', 'tokens.csv'), path.join(dir, 'tokens.csv'));
    const tokens = await StaticTokenFile.open(path.join(dir, 'tokens.csv'));
    opened.push(tokens);
    await mkdir(path.join(dir, '..v2'));
    await writeFile(path.join(dir, '..v2', 'tokens.csv'), 't2,bob,uid-2\n');
    await symlink('..v2', path.join(dir, '..data_tmp'));
    await rename(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
    await expect.poll(async () => (await tokens.authenticateToken('t2'))?.name, { timeout: 10_000 }).toBe('bob');
    expect(await tokens.authenticateToken('t1')).toBeUndefined();
  });

  it('keeps the previous tokens when the new file is invalid, and reports why', async () => {
    const reported: string[] = [];
    const tokens = await open('t1,alice,uid-1\n', (error) => reported.push(error.message));
    await writeFile(tokens.path, 't1,alice\n');
    await tokens.reload();
    expect(reported).toEqual([`${tokens.path}: line 1: needs at least 3 columns (token, user name, user uid), found 2; keeping the previous contents`]);
    expect((await tokens.authenticateToken('t1'))?.name).toBe('alice');
  });
});
