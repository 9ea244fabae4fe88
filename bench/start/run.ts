/**
 * How long `npm start` takes on a warm checkout (built, nothing changed): to print --help, and to
 * serve (the announcement line) on a fresh data directory and on one from an earlier start. Each
 * figure is the median and the worst of five runs, through npm as a person types it.
 *
 *   npm run bench:start
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const root = path.resolve(import.meta.dirname, '..', '..');
const runs = 5;

function timedHelp(): number {
  const started = performance.now();
  const result = spawnSync('npm', ['start', '--silent', '--', '--help'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (result.status !== 0) throw new Error(`npm start -- --help exited ${result.status}`);
  return performance.now() - started;
}

/** From the command to its "serving on" line, then SIGTERM. */
function timedServe(dataDir: string): Promise<number> {
  const started = performance.now();
  const child = spawn('npm', ['start', '--silent', '--', '--data-dir', dataDir, '--port', '0', '--cloud-port', '0'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  return new Promise((resolve, reject) => {
    let output = '';
    let elapsed: number | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (elapsed !== undefined || !output.includes('serving on')) return;
      elapsed = performance.now() - started;
      process.kill(-child.pid!, 'SIGTERM');
    });
    child.once('exit', (code) => (elapsed === undefined ? reject(new Error(`npm start exited ${code} before serving: ${output}`)) : resolve(elapsed)));
  });
}

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `median ${(sorted[Math.floor(sorted.length / 2)]! / 1000).toFixed(2)} s, worst ${(sorted.at(-1)! / 1000).toFixed(2)} s`;
}

// Warm: whatever needs building is built before the first timed run.
spawnSync('node', ['scripts/build-if-stale.ts'], { cwd: root, stdio: 'inherit' });
const help = Array.from({ length: runs }, timedHelp);
const fresh: number[] = [];
const again: number[] = [];
const kept = mkdtempSync(path.join(os.tmpdir(), 'capo-start-kept-'));
for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'capo-start-'));
  fresh.push(await timedServe(path.join(dir, 'data')));
  rmSync(dir, { recursive: true, force: true });
  again.push(await timedServe(kept));
}
rmSync(kept, { recursive: true, force: true });
console.log(`machine: ${os.cpus().length} cores, node ${process.version}`);
console.log(`npm start -- --help                         ${summary(help)}`);
console.log(`npm start to serving, fresh data directory  ${summary(fresh)}`);
console.log(`npm start to serving, existing data dir     ${summary(again)}`);
