/** Shared set-up for the simulator tests: a running simulator and authenticated fetch. */
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/host.js';
import { pollUntil } from '../../harness/poll.js';

export interface Session {
  token: string;
  projectId: string;
  userId: string;
  catalog: { type: string; endpoints: { interface: string; url: string }[] }[];
}

export async function start(options: SimulatorOptions = {}): Promise<Simulator> {
  return startSimulator(options);
}

export async function login(sim: Simulator, user: 'demo' | 'admin' = 'demo'): Promise<Session> {
  const res = await fetch(`${sim.url}/identity/v3/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: user, domain: { name: 'Default' }, password: `ministack-${user}` } } },
        scope: { project: { name: user, domain: { name: 'Default' } } },
      },
    }),
  });
  if (res.status !== 201) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { token: { project: { id: string }; user: { id: string }; catalog: Session['catalog'] } };
  return { token: res.headers.get('x-subject-token')!, projectId: body.token.project.id, userId: body.token.user.id, catalog: body.token.catalog };
}

export function endpoint(session: Session, type: string): string {
  const entry = session.catalog.find((e) => e.type === type);
  const url = entry?.endpoints.find((e) => e.interface === 'public')?.url;
  if (!url) throw new Error(`no ${type} endpoint`);
  return url;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
}

export async function call(session: Session | string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<CallResult> {
  const token = typeof session === 'string' ? session : session.token;
  const res = await fetch(url, {
    method,
    headers: { 'x-auth-token': token, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  return pollUntil('the simulator', probe, { timeoutMs });
}
