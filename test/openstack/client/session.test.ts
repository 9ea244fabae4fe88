import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MetricsRegistry } from '../../../src/observability/metrics.js';
import { ensurePki } from '../../../src/apiserver/tls/pki.js';
import { loadCloud, OpenStackError, OpenStackSession, type SessionOptions } from '../../../src/openstack/index.js';
import { cloudsYaml, type CatalogEntry, password, projectId, StandIn, type StandInOptions } from './stand-in.js';

const anything = z.unknown();
const networks = z.object({ networks: z.array(z.object({ id: z.string(), name: z.string() })) });

let standIn: StandIn;
let sessions: OpenStackSession[] = [];
let clock: number;
let sleeps: number[];
let logs: string[];

async function start(options: StandInOptions = {}): Promise<void> {
  standIn = await StandIn.start({ now: () => clock, ...options });
}

async function session(extra: Record<string, string> = {}, options: SessionOptions = {}, auth: Record<string, string> = {}): Promise<OpenStackSession> {
  const cloud = loadCloud({ cloudsYaml: cloudsYaml(`${standIn.url}/identity`, extra, auth), cloudName: 'test' });
  const created = await OpenStackSession.create(cloud, {
    now: () => clock,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    logger: (line) => logs.push(line),
    ...options,
  });
  sessions.push(created);
  return created;
}

async function failure(promise: Promise<unknown>): Promise<OpenStackError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(OpenStackError);
    expect((error as Error).message).not.toContain('\n');
    return error as OpenStackError;
  }
  throw new Error('the request succeeded');
}

beforeEach(() => {
  clock = Date.parse('2026-08-01T12:00:00Z');
  sleeps = [];
  logs = [];
});

afterEach(async () => {
  for (const s of sessions) s.close();
  sessions = [];
  await standIn?.close();
});

describe('OpenStackSession against a stand-in', () => {
  it('issues one token for many calls, concurrent or not, and sends the expected headers', async () => {
    await start();
    standIn.reply = () => ({ status: 200, body: { networks: [{ id: 'n1', name: 'a' }] }, headers: { 'x-openstack-request-id': 'req-1' } });
    const s = await session();
    const results = await Promise.all(Array.from({ length: 20 }, () => s.request('network', { method: 'GET', path: '/v2.0/networks' }, networks)));
    await s.request(
      'network',
      { method: 'GET', path: '/v2.0/networks', query: { name: 'a', fields: ['id', 'name'], shared: false, skip: undefined } },
      networks,
    );
    expect(standIn.tokensIssued).toBe(1);
    expect(results[0]).toMatchObject({ status: 200, body: { networks: [{ id: 'n1', name: 'a' }] }, requestId: 'req-1' });
    const last = standIn.requests.at(-1)!;
    expect(last.url).toBe('/network/v2.0/networks?name=a&fields=id&fields=name&shared=false');
    expect(last.headers['user-agent']).toBe('capo-apiserver/0.1.0');
    expect(last.headers.accept).toBe('application/json');
    expect(last.headers['x-auth-token']).toMatch(/^tok-1-/);
    expect(standIn.authBodies[0]).toEqual({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'demo', domain: { name: 'Default' }, password } } },
        scope: { project: { name: 'demo', domain: { name: 'Default' } } },
      },
    });
    expect(await s.authenticate()).toEqual({ projectId, projectName: 'demo', userId: 'u-0001', expiresAt: new Date(clock + 3_600_000) });
  });

  it('authenticates with an application credential without asking for a scope', async () => {
    await start();
    const yaml = `clouds:\n  ac:\n    auth_type: v3applicationcredential\n    auth:\n      auth_url: ${standIn.url}/identity/v3\n      application_credential_id: ac1\n      application_credential_secret: ${password}\n`;
    const s = await OpenStackSession.create(loadCloud({ cloudsYaml: yaml, cloudName: 'ac' }));
    sessions.push(s);
    await s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything);
    expect(standIn.authBodies[0]).toEqual({
      auth: { identity: { methods: ['application_credential'], application_credential: { id: 'ac1', secret: password } } },
    });
  });

  it('refreshes the token shortly before it expires, once for concurrent callers', async () => {
    await start();
    const s = await session();
    await s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything);
    clock += 3_500_000; // 100 s left: still fine
    await s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything);
    expect(standIn.tokensIssued).toBe(1);
    clock += 50_000; // 50 s left: inside the refresh margin
    await Promise.all(Array.from({ length: 10 }, () => s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything)));
    expect(standIn.tokensIssued).toBe(2);
    expect(standIn.requests.at(-1)!.headers['x-auth-token']).toMatch(/^tok-2-/);
  });

  it('re-authenticates once on a 401, then fails clearly', async () => {
    await start();
    const s = await session();
    await s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything);
    standIn.revokeTokens();
    await s.request('network', { method: 'POST', path: '/v2.0/networks', body: { network: { name: 'x' } } }, anything);
    expect(standIn.tokensIssued).toBe(2);
    expect(standIn.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'POST']);

    standIn.reply = () => ({
      status: 401,
      body: { error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } },
    });
    const error = await failure(s.request('compute', { method: 'GET', path: '/servers' }, anything));
    expect(error.kind).toBe('Unauthorized');
    expect(error.message).toBe(
      'nova GET /servers: 401 Unauthorized: The request you have made requires authentication. (rejected again with a freshly issued token)',
    );
    expect(standIn.tokensIssued).toBe(3);
    expect(standIn.requests).toHaveLength(5);
  });

  it('reports a wrong password as Unauthorized with Keystone’s message, without retrying', async () => {
    await start();
    const s = await session({}, {}, { password: 'wrong' });
    const error = await failure(s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything));
    expect(error.kind).toBe('Unauthorized');
    expect(error.message).toBe(
      'keystone POST /v3/auth/tokens: 401 Unauthorized: The request you have made requires authentication.; check the credentials of cloud "test" [req-keystone-1]',
    );
    expect(error.serviceMessage).toBe('The request you have made requires authentication.');
    expect(standIn.authBodies).toHaveLength(1);
    expect(standIn.requests).toHaveLength(0);
  });

  describe('endpoint selection', () => {
    const twoRegions = (base: string): CatalogEntry[] => [
      {
        type: 'network',
        endpoints: [
          { interface: 'public', region_id: 'RegionOne', url: `${base}/net-one` },
          { interface: 'public', region_id: 'RegionTwo', url: `${base}/net-two/v2.0` },
          { interface: 'admin', region_id: 'RegionTwo', url: `${base}/net-two-admin` },
        ],
      },
    ];

    it('joins paths onto each service’s root', async () => {
      await start();
      const s = await session();
      await s.request('network', { method: 'GET', path: '/v2.0/ports' }, anything);
      await s.request('compute', { method: 'GET', path: '/servers/detail', microversion: '2.53' }, anything);
      await s.request('block-storage', { method: 'GET', path: '/volumes', microversion: '3.60' }, anything);
      await s.request('load-balancer', { method: 'GET', path: '/v2/lbaas/loadbalancers' }, anything);
      await s.request('image', { method: 'GET', path: '/v2/images' }, anything);
      await s.request('identity', { method: 'GET', path: '/v3/auth/projects' }, anything);
      expect(standIn.requests.map((r) => r.url)).toEqual([
        '/network/v2.0/ports',
        '/compute/v2.1/servers/detail',
        `/volume/v3/${projectId}/volumes`,
        '/load-balancer/v2/lbaas/loadbalancers',
        '/image/v2/images',
        '/identity/v3/auth/projects',
      ]);
      expect(standIn.requests[1].headers['openstack-api-version']).toBe('compute 2.53');
      expect(standIn.requests[1].headers['x-openstack-nova-api-version']).toBe('2.53');
      expect(standIn.requests[2].headers['openstack-api-version']).toBe('volume 3.60');
      expect(standIn.requests[2].headers['x-openstack-nova-api-version']).toBeUndefined();
      expect(await s.endpoint('compute')).toBe(`${standIn.url}/compute/v2.1`);
    });

    it('honours the interface, stripping a version suffix the path carries itself', async () => {
      await start();
      const s = await session({ interface: 'internal' });
      await s.request('network', { method: 'GET', path: '/v2.0/ports' }, anything);
      expect(standIn.requests[0].url).toBe('/network-internal/v2.0/ports');
    });

    it('honours the region', async () => {
      await start({ catalog: twoRegions });
      const s = await session({ region_name: 'RegionTwo' });
      await s.request('network', { method: 'GET', path: '/v2.0/ports' }, anything);
      expect(standIn.requests[0].url).toBe('/net-two/v2.0/ports');
    });

    it('refuses to guess between regions', async () => {
      await start({ catalog: twoRegions });
      const s = await session();
      const error = await failure(s.request('network', { method: 'GET', path: '/v2.0/ports' }, anything));
      expect(error.kind).toBe('Config');
      expect(error.message).toBe(
        'neutron: the catalog offers network in several regions (RegionOne, RegionTwo); set region_name in clouds.yaml or the identityRef region',
      );
      expect(standIn.requests).toHaveLength(0);
    });

    it('names what the catalog offers when nothing matches', async () => {
      await start({ catalog: twoRegions });
      const s = await session({ region_name: 'RegionThree' });
      expect((await failure(s.request('network', { method: 'GET', path: '/v2.0/ports' }, anything))).message).toBe(
        'neutron: the catalog has no network endpoint with interface public in region RegionThree; it offers public@RegionOne, public@RegionTwo, admin@RegionTwo',
      );
      expect((await failure(s.request('load-balancer', { method: 'GET', path: '/v2/lbaas/loadbalancers' }, anything))).message).toBe(
        'octavia: the catalog has no load-balancer endpoint with interface public in region RegionThree (the cloud does not run it, or the user has no role in the project)',
      );
    });
  });

  describe('retries', () => {
    it('retries a GET on 503 with full-jitter exponential backoff', async () => {
      await start();
      let calls = 0;
      standIn.reply = () => (++calls <= 3 ? { status: 503, body: 'busy' } : { status: 200, body: { networks: [] } });
      const s = await session();
      const result = await s.request('network', { method: 'GET', path: '/v2.0/networks' }, networks);
      expect(result.body).toEqual({ networks: [] });
      expect(calls).toBe(4);
      expect(sleeps).toHaveLength(3);
      sleeps.forEach((ms, i) => {
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(250 * 2 ** i);
      });
      expect(logs.filter((line) => line.includes(' 503 '))).toHaveLength(3);
      expect(logs.at(-1)).toMatch(/^openstack network GET \/v2\.0\/networks 200 \d+ms retry=3$/);
    });

    it('gives up after the configured retries with a Transient error', async () => {
      await start();
      standIn.reply = () => ({ status: 503, body: '<html><body><h1>503 Service Unavailable</h1>No server is available to handle this request.</body></html>' });
      const s = await session({}, { retries: 2 });
      const error = await failure(s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything));
      expect(error.kind).toBe('Transient');
      expect(error.message).toBe('neutron GET /v2.0/networks: 503 Service Unavailable: No server is available to handle this request.');
      expect(standIn.requests).toHaveLength(3);
    });

    it('never repeats a POST that reached the service', async () => {
      await start();
      standIn.reply = () => ({ status: 503 });
      const s = await session();
      const error = await failure(s.request('network', { method: 'POST', path: '/v2.0/networks', body: { network: {} } }, anything));
      expect(error.kind).toBe('Transient');
      expect(standIn.requests).toHaveLength(1);
      expect(sleeps).toHaveLength(0);
    });

    it('repeats a request marked idempotent', async () => {
      await start();
      let calls = 0;
      standIn.reply = () => (++calls === 1 ? { status: 502 } : { status: 204 });
      const s = await session();
      const result = await s.request('network', { method: 'DELETE', path: '/v2.0/ports/p1', idempotent: true }, z.undefined());
      expect(result.status).toBe(204);
      expect(calls).toBe(2);
    });

    it('honours Retry-After on 429, and leaves long waits to the caller', async () => {
      await start();
      let calls = 0;
      standIn.reply = () => (++calls === 1 ? { status: 429, headers: { 'Retry-After': '2' } } : { status: 200, body: {} });
      const s = await session();
      await s.request('compute', { method: 'GET', path: '/servers' }, anything);
      expect(calls).toBe(2);
      expect(sleeps).toHaveLength(1);
      expect(sleeps[0]).toBeGreaterThanOrEqual(2000);

      standIn.reply = () => ({ status: 429, headers: { 'Retry-After': '120' }, body: { message: 'Rate limit exceeded' } });
      const error = await failure(s.request('compute', { method: 'GET', path: '/servers' }, anything));
      expect(error.kind).toBe('RateLimited');
      expect(error.retryAfterSeconds).toBe(120);
      expect(error.message).toBe('nova GET /servers: 429 Too Many Requests: Rate limit exceeded; retry after 120s');
      expect(standIn.requests).toHaveLength(3);

      standIn.reply = () => ({ status: 429, headers: { 'Retry-After': '1' } });
      expect((await failure(s.request('compute', { method: 'POST', path: '/servers', body: {} }, anything))).kind).toBe('RateLimited');
      expect(standIn.requests).toHaveLength(4);
      expect(sleeps).toHaveLength(1);
    });

    it('stops retrying when an outage has used up the retry budget', async () => {
      await start();
      standIn.reply = () => ({ status: 503 });
      const s = await session();
      for (let i = 0; i < 5; i++) await failure(s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything));
      // Ten retries in all (4 + 4 + 2), then single attempts.
      expect(standIn.requests).toHaveLength(15);
      // Another service has its own budget.
      await failure(s.request('compute', { method: 'GET', path: '/servers' }, anything));
      expect(standIn.requests).toHaveLength(20);
    });
  });

  it('turns a slow answer into a Transient timeout', async () => {
    await start();
    standIn.reply = () => ({ status: 200, body: {}, delayMs: 2_000 });
    const s = await session({}, { timeoutMs: 200, retries: 0 });
    const started = Date.now();
    const error = await failure(s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything));
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(error.kind).toBe('Transient');
    expect(error.message).toBe('neutron GET /v2.0/networks: timed out: no response within 0.2s');
  });

  it('waits longer for a create than for a read, and never repeats a create that timed out', async () => {
    await start();
    const created = { network: { id: 'n1', name: 'made-slowly' } };
    standIn.reply = (request) =>
      request.url.endsWith('/v2.0/networks')
        ? { status: request.method === 'POST' ? 201 : 200, body: request.method === 'POST' ? created : { networks: [] }, delayMs: 600 }
        : { status: 200, body: {} };
    const s = await session({}, { timeoutMs: 200, unrepeatableTimeoutMs: 5_000 });
    const read = await failure(s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything));
    expect(read.message).toBe('neutron GET /v2.0/networks: timed out: no response within 0.2s');
    const answered = await s.request('network', { method: 'POST', path: '/v2.0/networks', body: {} }, anything);
    expect(answered.body).toEqual(created);

    const impatient = await session({}, { timeoutMs: 200, unrepeatableTimeoutMs: 300 });
    const before = standIn.requests.filter((request) => request.method === 'POST' && request.url.endsWith('/v2.0/networks')).length;
    const lost = await failure(impatient.request('network', { method: 'POST', path: '/v2.0/networks', body: {} }, anything));
    expect(lost.message).toBe('neutron POST /v2.0/networks: timed out: no response within 0.3s');
    expect(standIn.requests.filter((request) => request.method === 'POST' && request.url.endsWith('/v2.0/networks')).length - before).toBe(1);
  });

  it('reports an unreachable endpoint once and quickly, even for a POST it may safely resend', async () => {
    const closedPort = await freePort();
    await start({ catalog: () => [{ type: 'network', endpoints: [{ interface: 'public', region_id: 'R', url: `http://127.0.0.1:${closedPort}` }] }] });
    const s = await session();
    const started = Date.now();
    const error = await failure(s.request('network', { method: 'POST', path: '/v2.0/networks', body: {} }, anything));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error.kind).toBe('Unreachable');
    expect(error.message).toBe(`neutron POST /v2.0/networks: cannot reach 127.0.0.1:${closedPort}: connection refused (ECONNREFUSED)`);
    expect(sleeps).toHaveLength(4);
  });

  it('says when a response does not match the schema, naming where', async () => {
    await start();
    standIn.reply = () => ({ status: 200, body: { networks: [{ id: 'n1', name: 7 }] }, headers: { 'x-openstack-request-id': 'req-9' } });
    const s = await session();
    const error = await failure(s.request('network', { method: 'GET', path: '/v2.0/networks' }, networks));
    expect(error.kind).toBe('Unexpected');
    expect(error.message).toBe(
      'neutron GET /v2.0/networks: 200 OK but the response does not have the expected shape: networks.0.name: Invalid input: expected string, received number [req-9]',
    );
  });

  it('accepts only the statuses the caller expects', async () => {
    await start();
    standIn.reply = () => ({ status: 200, body: {} });
    const s = await session();
    expect((await failure(s.request('network', { method: 'PUT', path: '/v2.0/x', body: {}, expect: [202] }, anything))).kind).toBe('Unexpected');
  });

  it('counts requests and token issues in the registry', async () => {
    await start();
    const registry = new MetricsRegistry({ processMetrics: false });
    let calls = 0;
    standIn.reply = () => (++calls === 1 ? { status: 503 } : { status: 200, body: {} });
    const s = await session({}, { metrics: registry });
    await s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything);
    // A second session on the same registry shares the families.
    await (await session({}, { metrics: registry })).request('network', { method: 'GET', path: '/v2.0/networks' }, anything);
    const text = (await registry.scrape()).body;
    expect(text).toContain('openstack_api_requests_total{service="network",method="GET",status="503"} 1\n');
    expect(text).toContain('openstack_api_requests_total{service="network",method="GET",status="200"} 2\n');
    expect(text).toContain('openstack_api_requests_total{service="identity",method="POST",status="201"} 2\n');
    expect(text).toContain('openstack_token_issues_total 2\n');
    expect(text).toContain('openstack_api_request_duration_seconds_count{service="network",method="GET"} 3\n');
  });

  it('never logs tokens or passwords', async () => {
    await start();
    const s = await session();
    await s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything);
    expect(logs).toHaveLength(2);
    expect(logs[0]).toMatch(/^openstack identity POST \/v3\/auth\/tokens 201 \d+ms$/);
    for (const line of logs) {
      expect(line).not.toContain(password);
      expect(line).not.toContain('tok-');
    }
  });

  describe('TLS', () => {
    let dir: string;
    let ca: string;

    beforeEach(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'capo-os-tls-'));
      const pki = await ensurePki(dir, { serverHosts: ['127.0.0.1'] });
      ca = pki.caCertPem;
      await start({ tls: { key: pki.serverKeyPem, cert: pki.serverCertPem } });
    });

    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('rejects a certificate it cannot verify, with advice, and does not retry', async () => {
      const s = await session();
      const error = await failure(s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything));
      expect(error.kind).toBe('TLS');
      expect(error.message).toMatch(
        /^keystone POST \/v3\/auth\/tokens: TLS: certificate not trusted \(.+\) for 127\.0\.0\.1:\d+: set cacert in the identity secret, or verify: false in clouds\.yaml$/,
      );
      expect(sleeps).toHaveLength(0);
    });

    it('trusts the CA from the identity secret', async () => {
      const cloud = loadCloud({ cloudsYaml: cloudsYaml(`${standIn.url}/identity`), cloudName: 'test', caCert: ca });
      const s = await OpenStackSession.create(cloud);
      sessions.push(s);
      await s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything);
      expect(standIn.requests).toHaveLength(1);
    });

    it('trusts the CA file named in clouds.yaml, and says when it cannot be read', async () => {
      const caPath = path.join(dir, 'pki', 'ca.crt');
      const s = await session({ cacert: caPath });
      await s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything);
      const missing = path.join(dir, 'missing.pem');
      const error = await failure(session({ cacert: missing }));
      expect(error.message).toBe(`cloud "test": cacert file ${missing} cannot be read (ENOENT); put the CA bundle in the identity secret's cacert key instead`);
    });

    it('skips verification with verify: false', async () => {
      const s = await session({ verify: 'false' });
      await s.request('network', { method: 'GET', path: '/v2.0/networks' }, anything);
      expect(standIn.requests).toHaveLength(1);
    });
  });
});

/** A port nothing listens on: bound once, then released. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
