/**
 * The life of a command-line server (`npm start`, `npm run simulator`):
 * options parsed strictly with -h/--help added, usage errors answered with
 * the usage and exit code 2, then serving until SIGTERM or SIGINT.
 */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

const helpOption = { help: { type: 'boolean', short: 'h', default: false } } as const;

type Config<O extends ParseArgsOptionsConfig> = { options: O & typeof helpOption; strict: true; allowPositionals: false };
export type OptionValues<O extends ParseArgsOptionsConfig> = ReturnType<typeof parseArgs<Config<O>>>['values'];

/** Thrown from `start` for a bad command line: the user sees the message and the usage, and the exit code is 2. */
export class UsageError extends Error {}

/** A whole decimal number from 0 to max; anything else (empty, hex, exponents) is a usage error. */
export function integerOption(name: string, value: string, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > max) throw new UsageError(`--${name} must be an integer from 0 to ${max}, got "${value}"`);
  return n;
}

/**
 * A duration as kube's flags take it (`60s`, `1m30s`, `2h`), in milliseconds; at least a second,
 * at most a day, since it bounds how long a request may take.
 */
export function durationOption(name: string, value: string): number {
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(value);
  const ms = match && value !== '' ? ((Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0)) * 60 + Number(match[3] ?? 0)) * 1000 : Number.NaN;
  if (!(ms >= 1000 && ms <= 86_400_000)) throw new UsageError(`--${name} must be a duration from 1s to 24h such as 60s or 1m30s, got "${value}"`);
  return ms;
}

/** A boolean flag that takes a value, as kube's `--leader-elect=false`. */
export function booleanOption(name: string, value: string): boolean {
  if (value !== 'true' && value !== 'false') throw new UsageError(`--${name} must be true or false, not ${JSON.stringify(value)}`);
  return value === 'true';
}

/** A comma-separated list flag, as kube's StringSlice flags take it; absent stays undefined, empty is an empty list. */
export function listOption(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

export interface ServerCommand<O extends ParseArgsOptionsConfig> {
  /** Prefixes an unexpected failure, e.g. `capo-apiserver: <message>`. */
  name: string;
  /** Printed for --help, and after a usage error. */
  usage: string;
  options: O;
  start(values: OptionValues<O>): Promise<{ close(): Promise<void>; announcement: string }>;
}

function usageError(usage: string, message: string): never {
  process.stderr.write(`error: ${message}\n\n${usage}`);
  process.exit(2);
}

async function serve<O extends ParseArgsOptionsConfig>(command: ServerCommand<O>): Promise<void> {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ options: { ...command.options, ...helpOption }, strict: true, allowPositionals: false }));
  } catch (error) {
    usageError(command.usage, (error as Error).message);
  }
  if (values.help) {
    process.stdout.write(command.usage);
    return;
  }
  // parseArgs cannot narrow a generic configuration; the values are what it parsed from `command.options`.
  const server = await command.start(values as OptionValues<O>);
  // Handlers go in before the server announces itself: a supervisor may signal as soon as it reads the line.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`received ${signal}, shutting down\n`);
    await server.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  process.stdout.write(server.announcement);
}

export function runServer<O extends ParseArgsOptionsConfig>(command: ServerCommand<O>): void {
  serve(command).catch((error: unknown) => {
    if (error instanceof UsageError) usageError(command.usage, error.message);
    process.stderr.write(`${command.name}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
