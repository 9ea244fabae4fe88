/**
 * The life of a command-line server (`npm start`, `npm run simulator`):
 * options parsed strictly with -h/--help added and boolean flags as pflag
 * takes them, usage errors answered in one line and exit code 2, then
 * serving until SIGTERM or SIGINT.
 */
import net from 'node:net';
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

const byteUnits: Record<string, number> = { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };

/** A size as a Kubernetes quantity takes it (`512Mi`, `16Gi`, `2G`, a number of bytes), from 1 byte to 1 PiB. */
export function bytesOption(name: string, value: string): number {
  const match = /^(\d+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(value);
  const bytes = match ? Number(match[1]) * byteUnits[match[2] ?? '']! : Number.NaN;
  if (!(bytes >= 1 && bytes <= 1024 ** 5)) throw new UsageError(`--${name} must be a size such as 512Mi, 16Gi or a number of bytes, got "${value}"`);
  return bytes;
}

/** pflag's ParseBool: the spellings a Kubernetes binary accepts for `--flag=value`. */
const trueSpellings = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const falseSpellings = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

/**
 * Boolean flags as pflag takes them, which parseArgs does not: bare `--flag` is true and
 * `--flag=false` turns it off (`--flag false` is not a value: pflag never gives a boolean the next
 * argument either). Returns the arguments parseArgs can read and the flags given as false.
 */
export function pflagBooleans(args: string[], options: ParseArgsOptionsConfig): { args: string[]; off: string[] } {
  const off: string[] = [];
  const out: string[] = [];
  for (const arg of args) {
    const match = /^--([^=]+)=(.*)$/s.exec(arg);
    if (!match || options[match[1]!]?.type !== 'boolean') {
      out.push(arg);
      continue;
    }
    const [, name, value] = match as unknown as [string, string, string];
    if (trueSpellings.has(value)) out.push(`--${name}`);
    else if (falseSpellings.has(value)) off.push(name);
    else throw new UsageError(`invalid argument ${JSON.stringify(value)} for "--${name}" flag: must be true or false`);
  }
  return { args: out, off };
}

/** A comma-separated list flag, as kube's StringSlice flags take it; absent stays undefined, empty is an empty list. */
export function listOption(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/**
 * Fails, before anything is written to disk, when the port is taken (a second instance, most
 * often): bound and released at once, so the server binding it a moment later finds it free.
 */
export async function ensurePortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`cannot listen on ${host}:${port}: ${error.code === 'EADDRINUSE' ? 'address already in use (another instance?)' : error.message}`)),
    );
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

export interface ServerCommand<O extends ParseArgsOptionsConfig> {
  /** Prefixes an unexpected failure, e.g. `capo-apiserver: <message>`. */
  name: string;
  /** How a person asks for the usage, named after a usage error, e.g. `npm start -- --help`. */
  helpCommand: string;
  /** Printed for --help, and after a usage error. */
  usage: string;
  options: O;
  start(values: OptionValues<O>): Promise<{ close(): Promise<void>; announcement: string }>;
}

/** The error and where the usage is, as kube's commands answer one: the usage itself would bury the error. */
function usageError(helpCommand: string, message: string): never {
  process.stderr.write(`error: ${message}\nSee '${helpCommand}' for usage.\n`);
  process.exit(2);
}

async function serve<O extends ParseArgsOptionsConfig>(command: ServerCommand<O>): Promise<void> {
  let values: Record<string, unknown>;
  try {
    const { args, off } = pflagBooleans(process.argv.slice(2), command.options);
    ({ values } = parseArgs({ args, options: { ...command.options, ...helpOption }, strict: true, allowPositionals: false }));
    for (const name of off) values[name] = false;
  } catch (error) {
    usageError(command.helpCommand, (error as Error).message);
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
    if (error instanceof UsageError) usageError(command.helpCommand, error.message);
    process.stderr.write(`${command.name}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
