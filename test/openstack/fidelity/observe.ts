/**
 * Turns what a cloud answered into observations that can be compared across
 * clouds: outcomes (HTTP status, or error kind and fault), the shapes of
 * returned resources (key sets) and the statuses asynchronous resources went
 * through. Ids, addresses, timestamps and request ids differ between any two
 * runs, so values are never kept, except error messages with those parts
 * masked, which are carried for the reader of a failure and never compared.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { OpenStackError } from '../../../src/openstack/index.js';
import type { ServiceRequest, ServiceResponse, ServiceTransport, ServiceType } from '../../../src/openstack/transport.js';
import { isJsonObject } from '../../../src/storage/json.js';

export interface ObservedError {
  kind: string;
  /** The service's machine-readable name for it (Neutron's `type`, Nova's body key), when it has one. */
  fault?: string;
  /** Masked; for people reading a failure, never compared. */
  message?: string;
}

export interface Observation {
  /** Which call, unique within its scenario. */
  call: string;
  /** HTTP status of the (last) response; absent when none came. */
  status?: number;
  error?: ObservedError;
  /** What the returned resource is, e.g. `port`; names the allowlist entries that apply. */
  resource?: string;
  /** Sorted keys of the returned resource. */
  keys?: string[];
  /** Sorted keys one level down, by path (`external_gateway_info`, `fixed_ips[0]`, `addresses.*[0]`). */
  nested?: Record<string, string[]>;
  /** Distinct statuses seen while polling, in order. */
  statuses?: string[];
  /** What the call answered, in words both clouds must agree on (which of the resources asked for a list returned). */
  answer?: string;
}

export interface ScenarioRecord {
  scenario: string;
  observations: Observation[];
}

export interface Shape {
  resource: string;
  nested?: readonly string[];
}

/** Where the transport leaves the status of each response, per observed call. */
const responseSlot = new AsyncLocalStorage<{ status?: number }>();

/** Lets observations see HTTP statuses, which the typed clients do not return. */
export class ObservingTransport implements ServiceTransport {
  constructor(private readonly inner: ServiceTransport) {}

  async request<T>(service: ServiceType, request: ServiceRequest, schema: z.ZodType<T>): Promise<ServiceResponse<T>> {
    const slot = responseSlot.getStore();
    try {
      const response = await this.inner.request(service, request, schema);
      if (slot !== undefined) slot.status = response.status;
      return response;
    } catch (error) {
      if (slot !== undefined) slot.status = error instanceof OpenStackError ? error.status : undefined;
      throw error;
    }
  }
}

export type Attempt<T> = { ok: true; value: T } | { ok: false; error: OpenStackError };

/** The observations of one scenario run; every call goes through here so none is forgotten. */
export class Recorder {
  readonly observations: Observation[] = [];

  constructor(private readonly mask: (message: string) => string) {}

  /**
   * Forgets the observations from `mark` (an earlier `observations.length`)
   * on, for a step the scenario makes again because the cloud's timing, not
   * its behaviour, decided it (a create finished before the next request).
   */
  rewind(mark: number): void {
    this.observations.length = mark;
  }

  /** A call expected to succeed: recorded either way, and a failure ends the scenario. */
  async call<T>(call: string, run: () => Promise<T>, shape?: Shape): Promise<T> {
    const result = await this.attempt(call, run, shape);
    if (!result.ok) throw result.error;
    return result.value;
  }

  /** A call that may fail (the error cases): the outcome is recorded and returned. */
  async attempt<T>(call: string, run: () => Promise<T>, shape?: Shape): Promise<Attempt<T>> {
    const slot: { status?: number } = {};
    try {
      const value = await responseSlot.run(slot, run);
      this.observations.push({ call, ...(slot.status === undefined ? {} : { status: slot.status }), ...(shape === undefined ? {} : shapeOf(value, shape)) });
      return { ok: true, value };
    } catch (error) {
      if (!(error instanceof OpenStackError)) throw error;
      this.observations.push({ call, ...(slot.status === undefined ? {} : { status: slot.status }), error: this.observedError(error) });
      return { ok: false, error };
    }
  }

  /** A call expected to succeed whose answer both clouds must give, as `describe` puts it. */
  async answer<T>(call: string, run: () => Promise<T>, describe: (value: T) => string): Promise<T> {
    const value = await this.call(call, run);
    this.observations.at(-1)!.answer = describe(value);
    return value;
  }

  /**
   * Reads until the status is one of `until`, recording the distinct
   * statuses seen, starting with `initial` (what the create call answered)
   * so that a fast transition still shows where the resource started.
   */
  async poll<T>(
    call: string,
    read: () => Promise<T>,
    statusOf: (value: T) => string,
    options: PollOptions & { until: readonly string[]; initial?: string },
  ): Promise<T> {
    const statuses: string[] = options.initial === undefined ? [] : [options.initial];
    const seen = (status: string) => {
      if (statuses.at(-1) !== status) statuses.push(status);
    };
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      const slot: { status?: number } = {};
      let value: T;
      try {
        value = await responseSlot.run(slot, read);
      } catch (error) {
        if (!(error instanceof OpenStackError)) throw error;
        this.observations.push({ call, statuses, ...(slot.status === undefined ? {} : { status: slot.status }), error: this.observedError(error) });
        throw error;
      }
      const status = statusOf(value);
      seen(status);
      if (options.until.includes(status)) {
        this.observations.push({ call, statuses });
        return value;
      }
      if (Date.now() > deadline) {
        this.observations.push({ call, statuses, error: { kind: 'Timeout', message: `still ${status} after ${options.timeoutMs} ms` } });
        throw new Error(`${call}: still ${status} after ${options.timeoutMs} ms (seen ${statuses.join(' → ')})`);
      }
      await sleep(options.intervalMs);
    }
  }

  /**
   * Reads until the resource answers NotFound and records that answer; with
   * `statusOf`, also the statuses it went through on the way, for resources
   * whose deletion passes through a state of its own (Octavia's PENDING_DELETE).
   */
  async untilGone<T>(call: string, read: () => Promise<T>, options: PollOptions & { statusOf?: (value: T) => string }): Promise<void> {
    const statuses: string[] = [];
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      const slot: { status?: number } = {};
      try {
        const value = await responseSlot.run(slot, read);
        const status = options.statusOf?.(value);
        if (status !== undefined && statuses.at(-1) !== status) statuses.push(status);
      } catch (error) {
        if (!(error instanceof OpenStackError)) throw error;
        this.observations.push({
          call,
          ...(options.statusOf === undefined ? {} : { statuses }),
          ...(slot.status === undefined ? {} : { status: slot.status }),
          error: this.observedError(error),
        });
        if (error.kind === 'NotFound') return;
        throw error;
      }
      if (Date.now() > deadline) {
        this.observations.push({ call, error: { kind: 'Timeout', message: `still there after ${options.timeoutMs} ms` } });
        throw new Error(`${call}: still there after ${options.timeoutMs} ms`);
      }
      await sleep(options.intervalMs);
    }
  }

  private observedError(error: OpenStackError): ObservedError {
    return {
      kind: error.kind,
      ...(error.fault === undefined ? {} : { fault: error.fault }),
      ...(error.serviceMessage === undefined ? {} : { message: this.mask(error.serviceMessage) }),
    };
  }
}

export interface PollOptions {
  intervalMs: number;
  timeoutMs: number;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function shapeOf(value: unknown, shape: Shape): Pick<Observation, 'resource' | 'keys' | 'nested'> {
  const nested: Record<string, string[]> = {};
  for (const at of shape.nested ?? []) {
    const inner = resolve(value, at);
    if (isJsonObject(inner)) nested[at] = Object.keys(inner).sort();
  }
  return {
    resource: shape.resource,
    keys: isJsonObject(value) ? Object.keys(value).sort() : [],
    ...(Object.keys(nested).length === 0 ? {} : { nested }),
  };
}

/** `a.b[0]` indexes an array, `*` takes a map's first value (Nova's `addresses` is keyed by network name). */
function resolve(value: unknown, at: string): unknown {
  let current = value;
  for (const part of at.split('.')) {
    const match = /^([^[]+)(?:\[(\d+)\])?$/.exec(part);
    if (match === null || !isJsonObject(current)) return undefined;
    current = match[1] === '*' ? Object.values(current)[0] : current[match[1]];
    if (match[2] !== undefined) current = Array.isArray(current) ? current[Number(match[2])] : undefined;
  }
  return current;
}

/** Masks what differs between runs, so a recorded message reads the same every time. */
export function messageMask(runPrefix: string): (message: string) => string {
  const names = new RegExp(`${runPrefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[\\w.-]*`, 'g');
  return (message) =>
    message
      .replace(names, '<name>')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
      .replace(/\b[0-9a-f]{32}\b/gi, '<id>')
      .replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?:\/\d{1,2})?\b/g, '<ip>');
}

/**
 * Keys the simulator may return although real Zed did not, by resource (or
 * `resource.path` for nested objects), each with its reason; anything else
 * the simulator adds fails the comparison, as a missing key does. Empty:
 * every extra key found so far is a difference for the simulator to remove.
 */
export const simulatorExtraKeys: readonly { at: string; keys: readonly string[]; reason: string }[] = [];

/**
 * Disagreements between a recorded run and another run of the same scenario,
 * one readable line each (empty when they agree). `exact` (the same cloud
 * again) wants identical key sets; otherwise (the simulator) every recorded
 * key must be present and extra keys must be allowlisted.
 */
export function disagreements(recorded: ScenarioRecord, actual: ScenarioRecord, mode: 'exact' | 'simulator'): string[] {
  const found: string[] = [];
  const count = Math.max(recorded.observations.length, actual.observations.length);
  for (let index = 0; index < count; index++) {
    const want = recorded.observations[index];
    const got = actual.observations[index];
    if (want === undefined) {
      found.push(`${recorded.scenario}: unexpected extra call ${got!.call}: ${outcomeText(got!)}`);
      continue;
    }
    if (got === undefined) {
      found.push(`${recorded.scenario}: ${want.call} never happened (the scenario stopped earlier); recorded ${outcomeText(want)}`);
      continue;
    }
    if (got.call !== want.call) {
      found.push(
        `${recorded.scenario}: call #${index + 1} is ${got.call} (${outcomeText(got)}), recorded ${want.call} (${outcomeText(want)}); not comparing further`,
      );
      break;
    }
    const where = `${recorded.scenario}: ${want.call}`;
    if (outcomeKey(got) !== outcomeKey(want)) found.push(`${where}: outcome ${outcomeText(got)}, real ${outcomeText(want)}`);
    if (want.statuses !== undefined && !sameList(want.statuses, got.statuses ?? [])) {
      found.push(`${where}: statuses ${listText(got.statuses ?? [])}, real ${listText(want.statuses)}`);
    }
    if (want.answer !== undefined && got.answer !== want.answer) found.push(`${where}: answered ${got.answer ?? 'nothing'}, real ${want.answer}`);
    if (want.keys !== undefined) found.push(...keyDisagreements(where, want.resource ?? '', want.keys, got.keys, mode));
    for (const [at, keys] of Object.entries(want.nested ?? {})) {
      found.push(...keyDisagreements(`${where} ${at}`, `${want.resource ?? ''}.${at}`, keys, got.nested?.[at], mode));
    }
    for (const at of Object.keys(got.nested ?? {})) {
      if (want.nested?.[at] === undefined) found.push(`${where} ${at}: is an object (${listText(got.nested![at])}), real had none there`);
    }
  }
  return found;
}

function keyDisagreements(where: string, at: string, want: readonly string[], got: readonly string[] | undefined, mode: 'exact' | 'simulator'): string[] {
  if (got === undefined) return [`${where}: no object returned, real keys ${listText(want)}`];
  const allowed = new Set(mode === 'exact' ? [] : simulatorExtraKeys.filter((entry) => entry.at === at).flatMap((entry) => entry.keys));
  const missing = want.filter((key) => !got.includes(key));
  const extra = got.filter((key) => !want.includes(key) && !allowed.has(key));
  const found: string[] = [];
  if (missing.length > 0) found.push(`${where}: missing keys ${listText(missing)}`);
  if (extra.length > 0) found.push(`${where}: extra keys ${listText(extra)}${mode === 'simulator' ? ' (not in simulatorExtraKeys)' : ''}`);
  return found;
}

function outcomeKey(observation: Observation): string {
  return JSON.stringify([observation.status, observation.error?.kind, observation.error?.fault]);
}

function outcomeText(observation: Observation): string {
  const status = observation.status === undefined ? 'no response' : String(observation.status);
  if (observation.error === undefined) return status;
  const fault = observation.error.fault === undefined ? '' : ` ${observation.error.fault}`;
  const message = observation.error.message === undefined ? '' : ` "${observation.error.message}"`;
  return `${status} ${observation.error.kind}${fault}${message}`;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}

function listText(items: readonly string[]): string {
  return `[${items.join(', ')}]`;
}

const fixturesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

export async function readFixture(scenario: string): Promise<ScenarioRecord> {
  return JSON.parse(await readFile(path.join(fixturesDir, `${scenario}.json`), 'utf8')) as ScenarioRecord;
}

/** Keys sorted at every level, so a re-recording that finds the same thing changes no byte. */
export async function writeFixture(record: ScenarioRecord): Promise<void> {
  await mkdir(fixturesDir, { recursive: true });
  await writeFile(path.join(fixturesDir, `${record.scenario}.json`), `${JSON.stringify(sortedKeys(record), null, 2)}\n`);
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isJsonObject(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys(value[key])]),
  );
}
