/**
 * The README is true: every shell command of its Quick start and of its GraphQL section runs as
 * written, against `npm start` on the README's own ports (6443, 6445), from a directory laid out as
 * the repository root (examples/, ansible/, scripts/ and data/ as the README names them).
 *
 * Three adaptations, each for a reason: `npm ci` is left out of the start line (installing again
 * would replace node_modules under the running suite) and `npm start` gets `--data-dir` (so the
 * checkout's own ./data is never touched); `npm test` is not run (it is this suite); a `-w` watch
 * runs for 15 s, as a person would press Ctrl-C. The Quick start's last line, the teardown, runs
 * after the GraphQL section's commands, which need the cluster it removes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');

/** The text of a `## ` section, up to the next one. */
function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}`);
  if (start < 0) throw new Error(`README.md has no section "${title}"`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The command lines of each ```bash block: blank lines and whole-line comments left out. */
function bashBlocks(text: string): string[][] {
  return [...text.matchAll(/```bash\n([\s\S]*?)```/g)].map((match) =>
    match[1]!.split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#')),
  );
}

async function portTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(true));
    probe.listen({ host: '127.0.0.1', port, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

const missingTool = ['kubectl', 'curl', 'ansible-inventory', 'ansible-galaxy'].find((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
const busy = (await portTaken(6443)) || (await portTaken(6445)) ? "the README's ports 6443 or 6445 are taken on this machine" : undefined;
const unavailable = missingTool ? `${missingTool} is not installed` : busy;
if (unavailable) console.warn(`the README's commands are not run: ${unavailable}`);

const [startBlock, clusterBlock] = bashBlocks(section('Quick start'));
const [graphqlBlock, ansibleBlock] = bashBlocks(section('GraphQL, the admin API and the Ansible inventory plugin'));

describe.skipIf(unavailable !== undefined)(unavailable === undefined ? "the README's commands" : `the README's commands (skipped: ${unavailable})`, () => {
  let workdir: string;
  let server: ChildProcess;
  const env = (): NodeJS.ProcessEnv => ({
    ...process.env,
    HOME: workdir,
    ANSIBLE_COLLECTIONS_PATH: path.join(workdir, 'collections'),
    ANSIBLE_LOCAL_TEMP: path.join(workdir, 'ansible-tmp'),
  });

  /** One README line, run by bash in the repository-like directory; exported variables carry over through `exports`. */
  let exports = '';
  function run(line: string, timeoutMs = 360_000): { code: number | null; stdout: string; stderr: string } {
    if (line.startsWith('export ')) exports += `${line}\n`;
    const result = spawnSync('bash', ['-c', `${exports}${line}`], { cwd: workdir, env: env(), encoding: 'utf8', timeout: timeoutMs });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  beforeAll(async () => {
    workdir = mkdtempSync(path.join(os.tmpdir(), 'capo-readme-'));
    for (const entry of ['examples', 'ansible', 'scripts']) symlinkSync(path.join(root, entry), path.join(workdir, entry));
    mkdirSync(path.join(workdir, 'collections'));
    const start = startBlock!.find((line) => line.includes('npm start'))!;
    const adapted = start.replace('npm ci && ', '').replace('npm start', `npm --prefix ${root} start -- --data-dir ${path.join(workdir, 'data')}`);
    server = spawn('bash', ['-c', adapted], { cwd: workdir, env: env(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      let output = '';
      server.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('serving on https://127.0.0.1:6443')) resolve();
      });
      server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      server.once('exit', (code) => reject(new Error(`${adapted} exited ${code}: ${output}`)));
    });
  }, 300_000);

  afterAll(async () => {
    if (server?.pid) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      process.kill(-server.pid, 'SIGTERM');
      await exited;
    }
    if (workdir) rmSync(workdir, { recursive: true, force: true });
  }, 60_000);

  it('lists the start line and the test line, and nothing else, as the set-up', () => {
    expect(startBlock).toEqual([expect.stringContaining('npm start'), expect.stringContaining('npm test')]);
  });

  it("builds the example cluster with the Quick start's commands", () => {
    for (const line of clusterBlock!.slice(0, -1)) {
      if (/^OS_CLIENT_CONFIG_FILE=\S+ openstack /.test(line) && spawnSync('sh', ['-c', 'command -v openstack']).status !== 0) {
        console.warn(`not run, the openstack client is not installed: ${line}`);
        continue;
      }
      const watch = / -w\b/.test(line);
      const result = run(watch ? `timeout 15 ${line}` : line);
      // A watch ends when its 15 s are up (124), having printed the machines.
      expect({ line, code: result.code, stderr: result.stderr }).toEqual({ line, code: watch ? 124 : 0, stderr: '' });
      if (watch) expect(result.stdout).toContain('demo-control-plane-0');
    }
    expect(run('kubectl get openstackcluster demo -o jsonpath={.status.initialization.provisioned}').stdout).toBe('true');
  }, 600_000);

  it("answers the GraphQL section's curl commands with data and no errors", () => {
    expect(graphqlBlock!.length).toBeGreaterThanOrEqual(3);
    for (const line of graphqlBlock!) {
      const result = run(line);
      expect({ line, code: result.code, stderr: result.stderr }).toEqual({ line, code: 0, stderr: '' });
      const answer = JSON.parse(result.stdout) as { data?: unknown; errors?: unknown };
      expect({ line, errors: answer.errors }).toEqual({ line, errors: undefined });
      expect(answer.data).toBeDefined();
    }
    const first = JSON.parse(run(graphqlBlock![0]!).stdout).data.clusters.edges[0].node;
    expect(first).toMatchObject({ namespace: 'default', name: 'demo', ready: true });
    expect(first.machines).toHaveLength(6);
  });

  it('runs the Ansible inventory commands', () => {
    for (const line of ansibleBlock!) {
      const result = run(line);
      expect({ line, code: result.code }).toEqual({ line, code: 0 });
    }
    expect(run(ansibleBlock!.find((line) => line.includes('--graph'))!).stdout).toContain('@kube_control_plane');
    expect(existsSync(path.join(workdir, 'collections', 'ansible_collections', 'capo', 'openstack'))).toBe(true);
  }, 120_000);

  it("tears the cluster down with the Quick start's last command", () => {
    const teardown = clusterBlock!.at(-1)!;
    expect(teardown).toContain('kubectl delete -f examples/');
    const result = run(teardown);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run('kubectl get openstackclusters,openstackmachines,openstackservers -o name').stdout).toBe('');
  }, 360_000);
});
