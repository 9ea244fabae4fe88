/**
 * /livez, /readyz and /healthz with the output of kube-apiserver's healthz
 * package, byte for byte, so probes, `kubectl get --raw '/readyz?verbose'`
 * and scripts that grep for "[-]" read us like any kube component.
 * Independent of the HTTP framework: the caller writes status and body with
 * the headers below.
 */

export type HealthEndpoint = 'livez' | 'readyz' | 'healthz';

export const healthContentType = 'text/plain; charset=utf-8';

export const healthHeaders: Readonly<Record<string, string>> = Object.freeze({
  'Content-Type': healthContentType,
  'X-Content-Type-Options': 'nosniff',
});

export interface HealthResult {
  status: number;
  body: string;
}

type Check = () => void | Promise<void>;

interface NamedCheck {
  name: string;
  check: Check;
  endpoints: ReadonlySet<HealthEndpoint>;
}

/** kube installs this when an endpoint has no checks of its own. */
const ping: NamedCheck = { name: 'ping', check: () => {}, endpoints: new Set() };

export class HealthChecks {
  private readonly checks: NamedCheck[] = [];

  /** Checks run in the order they were added, which is also the order they are listed. */
  add(name: string, check: Check, endpoints: HealthEndpoint[]): void {
    if (!/^[^/?#]+$/.test(name)) throw new Error(`invalid health check name ${JSON.stringify(name)}`);
    if (this.checks.some((existing) => existing.name === name)) throw new Error(`health check ${name} already added`);
    this.checks.push({ name, check, endpoints: new Set(endpoints) });
  }

  /** `subCheck` is the segment after the endpoint ("/readyz/storage" → "storage"). */
  async evaluate(endpoint: HealthEndpoint, subCheck: string | undefined, query: URLSearchParams): Promise<HealthResult> {
    const checks = this.checks.filter((c) => c.endpoints.has(endpoint));
    if (checks.length === 0) checks.push(ping);
    if (subCheck !== undefined) {
      const named = checks.find((c) => c.name === subCheck);
      // Go's http.NotFound text, which is what kube's mux answers for an unregistered check path.
      if (!named) return { status: 404, body: '404 page not found\n' };
      const failure = await run(named.check);
      return failure === undefined ? { status: 200, body: 'ok' } : serverError(`internal server error: ${failure}`);
    }

    const excluded = new Set(query.getAll('exclude'));
    let listing = '';
    let failed = false;
    for (const { name, check } of checks) {
      if (excluded.delete(name)) {
        listing += `[+]${name} excluded: ok\n`;
      } else if ((await run(check)) === undefined) {
        listing += `[+]${name} ok\n`;
      } else {
        // Public endpoint: the reason is only shown on the per-check path.
        listing += `[-]${name} failed: reason withheld\n`;
        failed = true;
      }
    }
    if (excluded.size > 0) {
      const quoted = [...excluded].sort().map((name) => JSON.stringify(name));
      listing += `warn: some health checks cannot be excluded: no matches for ${quoted.join(',')}\n`;
    }
    if (failed) return serverError(`${listing}${endpoint} check failed`);
    if (!query.has('verbose')) return { status: 200, body: 'ok' };
    return { status: 200, body: `${listing}${endpoint} check passed\n` };
  }
}

/** The failure reason, or undefined when the check passed. */
async function run(check: Check): Promise<string | undefined> {
  try {
    await check();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Go's http.Error appends a newline to the message. */
function serverError(message: string): HealthResult {
  return { status: 500, body: `${message}\n` };
}
