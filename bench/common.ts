/**
 * What every benchmark under bench/ shares: nearest-rank statistics, a bounded
 * worker pool, /proc sampling of the measured process and of the machine,
 * phase marks for splitting CPU profiles, and the report's table format.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Nearest-rank percentile: with 30 samples p99 is the maximum, and the reports say so. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export interface Summary {
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(values: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1], mean: sum / sorted.length };
}

export const mb = (kb: number) => (kb / 1024).toFixed(1);

/** Numbers in [0, 1) from a seed: the same sequence every run, so two servers or two runs get the same load. */
export function* pseudoRandom(seed: number): Generator<number, never> {
  let state = seed >>> 0;
  for (;;) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    yield state / 2 ** 32;
  }
}

/** Runs `task(0..total-1)` with `concurrency` requests in flight. */
export async function pool(total: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
}

export interface ProcSample {
  rssKb: number;
  hwmKb: number;
  cpuSeconds: number;
}

const clockTicks = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** RSS, peak RSS and CPU time of another process, from /proc. */
export function sampleProcess(pid: number): ProcSample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  // Fields after the command name, which may itself contain spaces and parentheses.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuSeconds = (Number(rest[11]) + Number(rest[12])) / clockTicks;
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM'), cpuSeconds };
}

/** Machine-wide busy and steal time from /proc/stat. */
export function sampleMachine(): { busySeconds: number; stealSeconds: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields;
  return { busySeconds: (user + nice + system + irq + softirq) / clockTicks, stealSeconds: (steal ?? 0) / clockTicks };
}

/**
 * Phase boundaries on CLOCK_MONOTONIC in microseconds, the clock V8 stamps
 * CPU profile samples with, so profile.ts can split a profile by phase.
 */
export interface PhaseMark {
  name: string;
  startUs: number;
  endUs: number;
}

export const phaseMarks: PhaseMark[] = [];
export const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** Which code was measured; uncommitted changes under src/ make a run hard to reproduce, so they are flagged. */
export function sourceRevision(): string {
  try {
    const options = {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      encoding: 'utf8' as const,
      stdio: ['ignore', 'pipe', 'ignore'] as ['ignore', 'pipe', 'ignore'],
    };
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], options).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], options).trim() !== '';
    return dirty ? `${head} with uncommitted changes under src/` : head;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

export function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r: string[]) => `| ${r.map((cell, c) => cell.padEnd(widths[c])).join(' | ')} |`;
  return [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}
