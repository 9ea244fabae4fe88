/**
 * Every OpenStack request the reconciler makes, as its session reports them
 * (one log line per HTTP attempt, retries included), with start and end
 * times, so a benchmark can count calls by service, method and path shape,
 * split them by phase, and find the peak number in flight.
 */
import { performance } from 'node:perf_hooks';
import type { ServedRequest } from '../../src/simulator/host.js';

export interface Call {
  service: string;
  method: string;
  /** Path and query as the session logged them. */
  path: string;
  /** HTTP status, or the error kind when there was no response. */
  outcome: string;
  startMs: number;
  endMs: number;
  /** 0 for a first attempt. */
  retry: number;
}

// `openstack <service> <method> <path> <status|error kind> <ms>ms[ <request id>][ retry=<n>]`, see OpenStackSession.exchange.
const linePattern = /^openstack (\S+) (\S+) (\S+) (\S+) (\d+)ms(?: (?!retry=)\S+)?(?: retry=(\d+))?$/;

export class CallLog {
  readonly calls: Call[] = [];
  /** Lines that did not parse: the session's format changed and the counts would be wrong. */
  readonly unparsed: string[] = [];

  /** For SessionOptions.logger: called when an attempt ends. */
  readonly logger = (line: string): void => {
    const endMs = performance.now();
    const match = linePattern.exec(line);
    if (!match) {
      this.unparsed.push(line);
      return;
    }
    const [, service, method, path, outcome, ms, retry] = match;
    this.calls.push({ service, method, path, outcome, startMs: endMs - Number(ms), endMs, retry: retry === undefined ? 0 : Number(retry) });
  };

  /** For startSimulator's `onRequest`: the calls as the cloud served them, whoever made them (a retry is a call like any other). */
  readonly record = (request: ServedRequest): void => {
    this.calls.push({
      service: request.service,
      method: request.method,
      path: request.path,
      outcome: String(request.status),
      startMs: request.startMs,
      endMs: request.endMs,
      retry: 0,
    });
  };

  /** Calls that ended at or after `fromMs` and before `toMs`. */
  between(fromMs: number, toMs = Infinity): Call[] {
    return this.calls.filter((call) => call.endMs >= fromMs && call.endMs < toMs);
  }

  lastEndMs(): number {
    return this.calls.length === 0 ? -Infinity : this.calls[this.calls.length - 1].endMs;
  }

  /** Resolves once no call has ended for `quietMs` (bounded by `capMs`), so a phase's trailing calls are counted in it. */
  async settle(quietMs: number, capMs: number): Promise<void> {
    const deadline = performance.now() + capMs;
    while (performance.now() < deadline) {
      const quietFor = performance.now() - Math.max(this.lastEndMs(), 0);
      if (quietFor >= quietMs) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(quietMs - quietFor + 5, deadline - performance.now())));
    }
  }

  assertParsed(): void {
    if (this.unparsed.length > 0) throw new Error(`${this.unparsed.length} session log lines did not parse, e.g. ${JSON.stringify(this.unparsed[0])}`);
  }
}

const uuidPattern = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}/gi;

/** The request's shape: IDs become {id}, query values are dropped (`/v2.0/ports?network_id=&tags=`). */
export function pathShape(path: string): string {
  const [base, query] = path.split('?', 2);
  const shape = base.replace(uuidPattern, '{id}');
  if (query === undefined) return shape;
  const keys = [...new Set(query.split('&').map((pair) => decodeURIComponent(pair.split('=')[0])))];
  return `${shape}?${keys.map((key) => `${key}=`).join('&')}`;
}

/** Counts calls by a key, largest first, ties by key. */
export function countBy(calls: Call[], key: (call: Call) => string): [string, number][] {
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(key(call), (counts.get(key(call)) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

export const byServiceMethod = (call: Call) => `${call.service} ${call.method}`;
export const byRequestShape = (call: Call) => `${call.service} ${call.method} ${pathShape(call.path)}`;

/** Most calls in flight at once, from their start and end times. */
export function peakConcurrency(calls: Call[]): number {
  const edges: [number, number][] = [];
  for (const call of calls) edges.push([call.startMs, 1], [call.endMs, -1]);
  // Ends before starts at the same instant: back-to-back calls do not overlap.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let current = 0;
  let peak = 0;
  for (const [, change] of edges) {
    current += change;
    peak = Math.max(peak, current);
  }
  return peak;
}
