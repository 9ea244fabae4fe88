/**
 * The standalone simulator process (compiled as `npm run simulator` would
 * run it) and, when Debian's python3-openstackclient is installed, the real
 * `openstack` CLI against the simulator.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startSimulator, type Simulator } from '../../src/simulator/host.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
/** Inside the project, so that the compiled code resolves node_modules. */
const outDir = path.join(root, 'node_modules/.cache/simulator-main-test');

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'capo-simulator-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('npm run simulator', () => {
  beforeAll(async () => {
    await rm(outDir, { recursive: true, force: true });
    const tsc = path.join(root, 'node_modules/.bin/tsc');
    const args = [
      '--ignoreConfig',
      '--outDir',
      outDir,
      '--rootDir',
      root,
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--skipLibCheck',
      '--types',
      'node',
      'src/simulator/main.ts',
    ];
    // Type errors are tsc -p's business; only the emitted JavaScript matters here.
    await run(tsc, args, { cwd: root }).catch(() => undefined);
  });

  it('prints help', async () => {
    const { stdout } = await run(process.execPath, [path.join(outDir, 'src/simulator/main.js'), '--help']);
    expect(stdout).toContain('--data-dir DIR');
    expect(stdout).toContain('--transition-delay-ms MS');
    expect(stdout).toContain('--fresh');
  });

  it('writes clouds.yaml, serves Keystone and stops on SIGTERM', async () => {
    const dataDir = path.join(tmp, 'data');
    const child = spawn(process.execPath, [path.join(outDir, 'src/simulator/main.js'), '--data-dir', dataDir, '--port', '0', '--transition-delay-ms', '10'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /serving on (http:\/\/\S+)/.exec(out);
          if (match) resolve(match[1]!);
        });
        child.on('exit', (code) => reject(new Error(`exited with ${code}`)));
      });
      const clouds = parseYaml(await readFile(path.join(dataDir, 'clouds.yaml'), 'utf8')) as any;
      expect(Object.keys(clouds.clouds)).toEqual(['simulator', 'simulator-admin']);
      expect(clouds.clouds.simulator.auth).toMatchObject({ auth_url: `${url}/identity/v3`, username: 'demo', project_name: 'demo' });
      expect(clouds.clouds['simulator-admin'].auth.username).toBe('admin');
      const auth = clouds.clouds.simulator.auth;
      const res = await fetch(`${auth.auth_url}/auth/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          auth: {
            identity: { methods: ['password'], password: { user: { name: auth.username, domain: { name: auth.user_domain_name }, password: auth.password } } },
            scope: { project: { name: auth.project_name, domain: { name: auth.project_domain_name } } },
          },
        }),
      });
      expect(res.status).toBe(201);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      // The cloud is kept in the data directory for the next start.
      expect(JSON.parse(await readFile(path.join(dataDir, 'state.json'), 'utf8')).services.identity.users).toHaveLength(3);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

const openstackCli = ['/usr/bin/openstack', ...(process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, 'openstack'))].find((p) =>
  existsSync(p),
);
if (!openstackCli) process.stdout.write('skipping the openstack CLI test: `openstack` (python3-openstackclient) is not on PATH\n');

describe.skipIf(!openstackCli)('the openstack CLI against the simulator', () => {
  let sim: Simulator;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    sim = await startSimulator({ transitionDelayMs: 100 });
    const cloudsPath = path.join(tmp, 'clouds.yaml');
    await writeFile(cloudsPath, sim.cloudsYaml('simulator'));
    env = { PATH: process.env.PATH, HOME: tmp, OS_CLIENT_CONFIG_FILE: cloudsPath, LANG: 'C.UTF-8' };
  });
  afterAll(async () => {
    await sim?.close();
  });
  const openstack = async (...args: string[]) => {
    const { stdout } = await run(openstackCli!, ['--os-cloud', 'simulator', ...args, '-f', 'json'], { env, timeout: 60_000 });
    return JSON.parse(stdout);
  };

  it('issues a token', async () => {
    const token = await openstack('token', 'issue');
    expect(token.id).toMatch(/^gAAAAA/);
    expect(token.project_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('lists images', async () => {
    const images = (await openstack('image', 'list')) as { Name: string; Status: string }[];
    expect(images).toContainEqual(expect.objectContaining({ Name: 'ubuntu-22.04', Status: 'active' }));
  });

  it('creates and lists volumes', async () => {
    const volume = await openstack('volume', 'create', '--size', '1', 'v1');
    expect(volume).toMatchObject({ name: 'v1', size: 1, status: 'creating' });
    // creating → available takes the simulator's transition delay: list until it shows.
    await vi.waitFor(
      async () => {
        const volumes = (await openstack('volume', 'list')) as { ID: string; Name: string; Status: string }[];
        expect(volumes).toContainEqual(expect.objectContaining({ ID: volume.id, Name: 'v1', Status: 'available' }));
      },
      { timeout: 20_000, interval: 100 },
    );
  });
});
