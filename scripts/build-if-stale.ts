/**
 * The build (`npm run build`, `--always`) and `npm start`'s build step (without it: only when a
 * source changed since the last build), so a start on a warm checkout goes straight to the server
 * (a full build takes ~30 s on 2 cores). Stale means a file the build reads (what tsconfig.json
 * includes, the dashboard under web/, the compiler settings, package-lock.json) is newer than
 * dist/.build-stamp, which every successful build writes. Run by Node itself (type stripping),
 * since it decides whether to compile.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync, writeFileSync, type Dirent } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const stamp = path.join(root, 'dist', '.build-stamp');
const sourceDirs = ['src', 'harness', 'bench', 'test', 'scripts', 'web'];
const sourceFiles = ['tsconfig.json', 'package.json', 'package-lock.json'];

/** The newest modification time under `dir`, in ms; 0 where it does not exist. */
function newest(dir: string): number {
  let latest = 0;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(full));
    else if (entry.isFile()) latest = Math.max(latest, statSync(full).mtimeMs);
  }
  return latest;
}

function mtime(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

const always = process.argv.includes('--always');
const built = mtime(stamp);
if (!always) {
  const sources = Math.max(...sourceDirs.map((dir) => newest(path.join(root, dir))), ...sourceFiles.map((file) => mtime(path.join(root, file))));
  if (built > 0 && built >= sources) process.exit(0);
  process.stderr.write(built === 0 ? 'building (first start)...\n' : 'sources changed since the last build: building...\n');
}
const started = Date.now();
const build = spawnSync('npm', ['run', '--silent', 'build:compile'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
// The stamp takes the time the build started: a source saved during the build makes the next start build again.
writeFileSync(stamp, `${new Date(started).toISOString()}\n`);
utimesSync(stamp, new Date(started), new Date(started));
