/**
 * Runs the real ansible-inventory and ansible (ansible-core from Debian)
 * against the collection in ansible/, linked into a temporary collections
 * path. Ansible sees a clean environment whose home, temp and config
 * directories are all inside the workspace, so the user's own are never touched.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

export const collectionDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../ansible');

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /**
   * stderr unwrapped: Ansible wraps warnings at 79 columns when not on a
   * terminal, breaking lines at spaces and after hyphens.
   */
  messages: string;
}

export interface AnsibleWorkspace {
  dir: string;
  /** Writes an inventory configuration into the workspace and returns its path. */
  writeConfig(fileName: string, config: Record<string, unknown>): Promise<string>;
  /** ansible-inventory with `args`; `env` adds to (or, with undefined, removes from) the clean environment. */
  inventory(args: string[], env?: Record<string, string | undefined>): Promise<RunResult>;
  /** Another Ansible command: what only a play shows (templating of host vars, --flush-cache), docs, packaging. */
  run(command: 'ansible' | 'ansible-playbook' | 'ansible-doc' | 'ansible-galaxy', args: string[], env?: Record<string, string | undefined>): Promise<RunResult>;
  close(): Promise<void>;
}

/** Fails with the install command when ansible-core is missing, rather than with a spawn error per test. */
export async function requireAnsible(): Promise<void> {
  const result = await run('ansible-inventory', ['--version'], { PATH: process.env.PATH ?? '' }, os.tmpdir());
  if (result.code !== 0) throw new Error(`ansible-inventory is not on PATH (install ansible-core: apt-get install -y ansible-core): ${result.stderr}`);
}

export async function createAnsibleWorkspace(): Promise<AnsibleWorkspace> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'capo-ansible-'));
  const collections = path.join(dir, 'collections');
  await mkdir(path.join(collections, 'ansible_collections', 'capo'), { recursive: true });
  await symlink(collectionDir, path.join(collections, 'ansible_collections', 'capo', 'openstack'));
  const home = path.join(dir, 'home');
  await mkdir(home);
  const baseEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LC_ALL: 'C.UTF-8',
    HOME: home,
    ANSIBLE_HOME: path.join(dir, 'ansible-home'),
    ANSIBLE_LOCAL_TEMP: path.join(dir, 'ansible-tmp'),
    ANSIBLE_CONFIG: path.join(dir, 'ansible.cfg'),
    ANSIBLE_COLLECTIONS_PATH: collections,
    ANSIBLE_NOCOLOR: '1',
    // A failed source is an error (exit 1), not a warning over an empty inventory.
    ANSIBLE_INVENTORY_UNPARSED_FAILED: 'true',
    // No __pycache__ inside the repository's ansible/ folder.
    PYTHONDONTWRITEBYTECODE: '1',
  };
  await writeFile(baseEnv.ANSIBLE_CONFIG, '[defaults]\n');
  const envFor = (extra: Record<string, string | undefined>) => {
    const env: Record<string, string> = { ...baseEnv };
    for (const [key, value] of Object.entries(extra)) {
      if (value === undefined) delete env[key];
      else env[key] = value;
    }
    return env;
  };
  return {
    dir,
    async writeConfig(fileName, config) {
      const file = path.join(dir, fileName);
      await writeFile(file, stringify(config));
      return file;
    },
    inventory: (args, env = {}) => run('ansible-inventory', args, envFor(env), dir),
    run: (command, args, env = {}) => run(command, args, envFor(env), dir),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

function run(command: string, args: string[], env: Record<string, string>, cwd: string): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(command, args, { env, cwd, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({
        code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
        stdout,
        stderr,
        messages: stderr.replace(/-\n/g, '-').replace(/\s+/g, ' ').trim(),
      });
    });
  });
}
