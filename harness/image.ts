/**
 * capo-apiserver's container image as a user builds and runs it: podman builds the repository's
 * Dockerfile through scripts/image/build.sh (which makes the build's Node.js base from Debian's
 * packages and the npm registry when no image registry serves one), and runs it with the limits
 * these machines allow.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repository = path.resolve(import.meta.dirname, '..');
const buildScript = path.join(repository, 'scripts', 'image', 'build.sh');

/**
 * `podman run` sets the image's rlimits, and raising one past the hard limit needs CAP_SYS_RESOURCE,
 * which these machines do not grant ("error setting rlimit type 7: operation not permitted"): these
 * stay below the hard limits (20,000 open files, 96,362 processes here).
 */
export const podmanLimits = ['--ulimit', 'nofile=16384:16384', '--ulimit', 'nproc=4096:4096'];

/** Why no image can be built here, or undefined when it can. */
export function imageUnavailable(): string | undefined {
  for (const tool of ['/usr/bin/podman', '/usr/sbin/debootstrap']) {
    if (!existsSync(tool)) return `no ${tool} (apt-get install podman debootstrap)`;
  }
  return undefined;
}

/**
 * Builds the image (or the Dockerfile stage `target`) and returns its name. Builds from several
 * test files take turns through a lock, so the second finds every layer cached.
 */
export async function buildImage(target?: string): Promise<string> {
  const image = `localhost/capo-apiserver:test${target === undefined ? '' : `-${target}`}`;
  const lock = path.join(repository, '.image-build.lock');
  const { stdout } = await run('flock', [lock, buildScript, image, ...(target === undefined ? [] : [target])], {
    cwd: repository,
    maxBuffer: 64 * 1024 * 1024,
    timeout: 30 * 60_000,
  }).catch((error: Error & { stderr?: string }) => {
    throw new Error(`${buildScript} ${image} failed: ${error.message}\n${(error.stderr ?? '').slice(-4000)}`);
  });
  const built = stdout.trim().split('\n').at(-1);
  if (built !== image) throw new Error(`${buildScript} printed ${built}, not ${image}`);
  return image;
}

/** podman with these arguments; rejects with its stderr when it fails. */
export async function podman(args: string[]): Promise<string> {
  const { stdout } = await run('podman', args, { maxBuffer: 64 * 1024 * 1024, timeout: 5 * 60_000 }).catch((error: Error & { stderr?: string }) => {
    throw new Error(`podman ${args.join(' ')} failed: ${error.message}\n${error.stderr ?? ''}`);
  });
  return stdout;
}
