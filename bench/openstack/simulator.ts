/**
 * The simulator half of the OpenStack benchmark: `startSimulator` in its own
 * process, so that the RSS and CPU time read from /proc are the simulator's
 * alone and the load process's CPU is the client's alone.
 *
 * Protocol with run.ts: one JSON line (SimulatorHello) on stdout once
 * serving. Each line `memory` on stdin is answered by one JSON line with
 * process.memoryUsage() taken after a full GC. The simulator stops when stdin
 * closes or on SIGTERM, so an interrupted benchmark never leaves it running.
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { startSimulator } from '../../src/simulator/host.js';

export interface SimulatorHello {
  url: string;
  cloudsYaml: string;
  /** The member-role cloud in cloudsYaml; `${cloudName}-admin` is the admin one. */
  cloudName: string;
  pid: number;
  transitionDelayMs: number;
  /** Demo-project quotas this entry lifted, by resource. */
  unlimitedQuotas: string[];
}

export interface MemoryReply {
  memory: NodeJS.MemoryUsage;
  /** False when the process was started without --expose-gc, so the figures include garbage. */
  collected: boolean;
}

const cloudName = 'simulator';
/**
 * The bench chooses its own population (1,000 ports plus 32 in-flight
 * creates, and servers whose ports count too); ministack's demo quotas would
 * refuse part of it. Unlimited still runs the same quota checks per create.
 */
const unlimitedQuotas = ['port', 'instances', 'cores', 'ram'];

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'transition-delay-ms': { type: 'string', default: '20' } }, strict: true });
  const transitionDelayMs = Number(values['transition-delay-ms']);
  if (!Number.isInteger(transitionDelayMs) || transitionDelayMs < 0)
    throw new Error(`--transition-delay-ms must be a non-negative integer, got "${values['transition-delay-ms']}"`);

  const simulator = await startSimulator({ host: '127.0.0.1', port: 0, transitionDelayMs });
  for (const resource of unlimitedQuotas) simulator.setQuota('demo', resource, Infinity);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await simulator.close();
    // A normal exit rather than a signal death, so that --cpu-prof gets to write its profile.
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());

  const gc = (globalThis as { gc?: () => void }).gc;
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line.trim() !== 'memory') return;
    gc?.();
    const reply: MemoryReply = { memory: process.memoryUsage(), collected: gc !== undefined };
    process.stdout.write(`${JSON.stringify(reply)}\n`);
  });
  lines.on('close', () => void stop());

  const hello: SimulatorHello = {
    url: simulator.url,
    cloudsYaml: simulator.cloudsYaml(cloudName),
    cloudName,
    pid: process.pid,
    transitionDelayMs,
    unlimitedQuotas,
  };
  process.stdout.write(`${JSON.stringify(hello)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench simulator: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
