/**
 * Summarizes a server CPU profile from `run.js --cpu-prof DIR` phase by
 * phase: which layer (our modules, Node's TLS/HTTP, SQLite, GC) and which
 * functions the server spent its time in.
 *
 *   node dist/bench/apiserver/profile.js DIR [--top N]
 *
 * DIR holds the .cpuprofile written by the server and the phases.json written
 * by run.js; both are stamped with CLOCK_MONOTONIC microseconds.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { PhaseMark } from '../common.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '15' } }, allowPositionals: true });
const dir = positionals[0];
if (!dir) {
  process.stderr.write('usage: node dist/bench/apiserver/profile.js DIR [--top N]\n');
  process.exit(2);
}
const top = Number(values.top);

const profileFile = readdirSync(dir)
  .filter((f) => f.endsWith('.cpuprofile'))
  .map((f) => path.join(dir, f))
  .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
if (!profileFile) throw new Error(`no .cpuprofile in ${dir}`);
const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile;
const phases = JSON.parse(readFileSync(path.join(dir, 'phases.json'), 'utf8')) as PhaseMark[];

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

/** Where a file lives, as a reader of this repository would name it. */
function owner(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName || 'anonymous'}`;
  if (url.startsWith('node:')) {
    const module = url.slice(5).replace(/^internal\//, '');
    if (/tls|crypto/.test(module)) return 'node: TLS';
    if (/http|_http/.test(module)) return 'node: HTTP';
    if (/streams|stream/.test(module)) return 'node: streams';
    if (/net|stream_base/.test(module)) return 'node: net';
    return `node: ${module.split('/')[0]}`;
  }
  const modules = url.indexOf('/node_modules/');
  if (modules >= 0) return url.slice(modules + 14).split('/')[0];
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 6).replace(/\.js$/, '.ts');
  return url;
}

function label(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  const where = owner(frame);
  return frame.url ? `${name} [${where}:${frame.lineNumber + 1}]` : name;
}

interface Tally {
  totalUs: number;
  self: Map<string, number>;
  layers: Map<string, number>;
  inclusive: Map<string, number>;
}

const tallies = new Map<string, Tally>(phases.map((p) => [p.name, { totalUs: 0, self: new Map(), layers: new Map(), inclusive: new Map() }]));
const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);

let time = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  time += profile.timeDeltas[i];
  const duration = i + 1 < profile.timeDeltas.length ? profile.timeDeltas[i + 1] : 0;
  const leaf = byId.get(profile.samples[i])!;
  const selfLabel = label(leaf.callFrame);
  const layer = owner(leaf.callFrame);
  // Nested phases (e.g. "lists: JSON" inside "lists") each count the sample.
  for (const phase of phases) {
    if (time < phase.startUs || time >= phase.endUs) continue;
    const tally = tallies.get(phase.name)!;
    tally.totalUs += duration;
    add(tally.self, selfLabel, duration);
    add(tally.layers, layer, duration);
    const seen = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parentOf.get(id)) {
      const frame = byId.get(id)!.callFrame;
      // Inclusive time is interesting for our own code and libraries; Node internals and roots would swamp it.
      if (!frame.url || frame.url.startsWith('node:')) continue;
      const key = label(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      add(tally.inclusive, key, duration);
    }
  }
}

const pct = (us: number, total: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
function printTop(title: string, map: Map<string, number>, total: number, count: number): void {
  process.stdout.write(`  ${title}\n`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, count)) {
    process.stdout.write(`    ${pct(us, total)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${key}\n`);
  }
}

process.stdout.write(`profile ${profileFile}\n`);
for (const phase of phases) {
  const tally = tallies.get(phase.name)!;
  if (tally.totalUs === 0) continue;
  const idle = tally.layers.get('(idle)') ?? 0;
  process.stdout.write(
    `\n== ${phase.name}: ${((phase.endUs - phase.startUs) / 1e6).toFixed(2)} s wall, main thread busy ${pct(tally.totalUs - idle, tally.totalUs).trim()}\n`,
  );
  printTop('self time by layer', tally.layers, tally.totalUs, top);
  printTop('self time by function', tally.self, tally.totalUs, top);
  printTop('inclusive time (our code and libraries)', tally.inclusive, tally.totalUs, top);
}
