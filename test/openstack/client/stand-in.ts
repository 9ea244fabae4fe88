/**
 * A tiny Keystone plus generic service for session tests: Keystone issues
 * tokens against one password, every other path is answered by the test's
 * `reply` function. It records what arrived so tests can count calls.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  /** Path and query as received. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait before answering (for timeouts). */
  delayMs?: number;
}

export type CatalogEntry = { type: string; name?: string; endpoints: { interface: string; region_id?: string; region?: string; url: string }[] };

export interface StandInOptions {
  now?: () => number;
  tokenLifetimeMs?: number;
  tls?: { key: string; cert: string };
  catalog?: (baseUrl: string) => CatalogEntry[];
}

export const projectId = 'p-0001';
export const password = 's3cret-pa55';

export function defaultCatalog(base: string): CatalogEntry[] {
  return [
    { type: 'identity', name: 'keystone', endpoints: [{ interface: 'public', region_id: 'RegionOne', url: `${base}/identity/v3` }] },
    {
      type: 'network',
      name: 'neutron',
      endpoints: [
        { interface: 'public', region_id: 'RegionOne', url: `${base}/network` },
        { interface: 'internal', region_id: 'RegionOne', url: `${base}/network-internal/v2.0/` },
      ],
    },
    { type: 'compute', name: 'nova', endpoints: [{ interface: 'public', region_id: 'RegionOne', url: `${base}/compute/v2.1` }] },
    { type: 'volumev3', name: 'cinderv3', endpoints: [{ interface: 'public', region_id: 'RegionOne', url: `${base}/volume/v3` }] },
    { type: 'load-balancer', name: 'octavia', endpoints: [{ interface: 'public', region_id: 'RegionOne', url: `${base}/load-balancer` }] },
    { type: 'image', name: 'glance', endpoints: [{ interface: 'public', region_id: 'RegionOne', url: `${base}/image` }] },
  ];
}

export class StandIn {
  readonly requests: Recorded[] = [];
  readonly authBodies: unknown[] = [];
  tokensIssued = 0;
  reply: (request: Recorded) => Reply = () => ({ status: 200, body: {} });
  private validTokens = new Set<string>();
  private readonly server: http.Server;
  private readonly now: () => number;
  private readonly lifetimeMs: number;
  private readonly catalog: (base: string) => CatalogEntry[];
  url = '';

  private constructor(options: StandInOptions) {
    this.now = options.now ?? Date.now;
    this.lifetimeMs = options.tokenLifetimeMs ?? 3_600_000;
    this.catalog = options.catalog ?? defaultCatalog;
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => void this.handle(req, Buffer.concat(chunks).toString('utf8'), res));
    };
    this.server = options.tls ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handler) : http.createServer(handler);
  }

  static async start(options: StandInOptions = {}): Promise<StandIn> {
    const standIn = new StandIn(options);
    await new Promise<void>((resolve) => standIn.server.listen(0, '127.0.0.1', resolve));
    const { port } = standIn.server.address() as AddressInfo;
    standIn.url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
    return standIn;
  }

  /** Makes every issued token invalid, as a Keystone key rotation would. */
  revokeTokens(): void {
    this.validTokens.clear();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, body: string, res: http.ServerResponse): Promise<void> {
    const recorded: Recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
    if (recorded.url === '/identity/v3/auth/tokens' && recorded.method === 'POST') {
      this.issue(body, res);
      return;
    }
    this.requests.push(recorded);
    const token = req.headers['x-auth-token'];
    if (typeof token !== 'string' || !this.validTokens.has(token)) {
      send(res, { status: 401, body: { error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } } });
      return;
    }
    const reply = this.reply(recorded);
    if (reply.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (!res.destroyed) send(res, reply);
  }

  private issue(body: string, res: http.ServerResponse): void {
    const auth = JSON.parse(body) as {
      auth: { identity: { methods: string[]; password?: { user: { password: string } }; application_credential?: { secret: string } } };
    };
    this.authBodies.push(auth);
    const identity = auth.auth.identity;
    const ok = identity.methods[0] === 'password' ? identity.password?.user.password === password : identity.application_credential?.secret === password;
    if (!ok) {
      send(res, {
        status: 401,
        headers: { 'x-openstack-request-id': 'req-keystone-1' },
        body: { error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } },
      });
      return;
    }
    this.tokensIssued += 1;
    const token = `tok-${this.tokensIssued}-${'x'.repeat(20)}`;
    this.validTokens.add(token);
    const issuedAt = this.now();
    send(res, {
      status: 201,
      headers: { 'X-Subject-Token': token },
      body: {
        token: {
          methods: identity.methods,
          issued_at: new Date(issuedAt).toISOString(),
          expires_at: new Date(issuedAt + this.lifetimeMs).toISOString(),
          user: { id: 'u-0001', name: 'demo', domain: { id: 'default', name: 'Default' } },
          project: { id: projectId, name: 'demo', domain: { id: 'default', name: 'Default' } },
          catalog: this.catalog(this.url),
        },
      },
    });
  }
}

function send(res: http.ServerResponse, reply: Reply): void {
  const text = reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
  const headers: Record<string, string> = {
    ...(reply.body !== undefined && typeof reply.body !== 'string' ? { 'Content-Type': 'application/json' } : {}),
    ...reply.headers,
  };
  res.writeHead(reply.status, headers);
  res.end(text);
}

export function cloudsYaml(authUrl: string, extra: Record<string, string> = {}, authExtra: Record<string, string> = {}): string {
  const auth = {
    auth_url: authUrl,
    username: 'demo',
    password,
    project_name: 'demo',
    user_domain_name: 'Default',
    project_domain_name: 'Default',
    ...authExtra,
  };
  const lines = [
    'clouds:',
    '  test:',
    '    auth:',
    ...Object.entries(auth).map(([k, v]) => `      ${k}: "${v}"`),
    ...Object.entries(extra).map(([k, v]) => `    ${k}: ${v}`),
  ];
  return `${lines.join('\n')}\n`;
}
