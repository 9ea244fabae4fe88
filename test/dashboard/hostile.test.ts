/**
 * The dashboard against callers who try to lock others out or outlive their rights (issue 47, M1-M3
 * and the low findings), over real HTTPS: a flood of slow unauthenticated requests and one user's
 * 250 live-update streams leave other signed-in users served; one user signing in again and again
 * never signs anyone else out; a session ends when its token is revoked and at its absolute lifetime
 * however much it is used; failed sign-ins are logged without the token; the page's asset paths never
 * answer 500; preflight runs are limited per user.
 */
import http2 from 'node:http2';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed, teamAObjects } from '../../harness/inventory-fixtures.js';
import { startInventoryServer, tokens, type InventoryServer } from '../../harness/inventory-server.js';

let server: InventoryServer;
/** The sessions' clock, moved by the lifetime test. */
let now = Date.parse('2026-01-01T08:00:00Z');
const warnings: { fields: Record<string, unknown>; message: string }[] = [];
const preflightRuns: string[] = [];
/** Sessions at most in the whole table: small, so that one user's sign-ins would fill it. */
const maxSessions = 40;

beforeAll(async () => {
  server = await startInventoryServer({
    admin: {
      reconcile: async () => true,
      preflight: async (namespace, name) => {
        preflightRuns.push(`${namespace}/${name}`);
        return { passed: true };
      },
    },
    dashboard: {
      sessions: { maxSessions, now: () => now },
      // The per-user and per-address throttles would stop the floods below first; these tests are about what lies behind them.
      signIns: { client: { burst: 1_000_000, everyMs: 1 }, user: { burst: 1_000_000, everyMs: 1 } },
      logger: { warn: (fields, message) => warnings.push({ fields, message }) },
    },
  });
  await seed(server, teamAObjects(1));
});

afterAll(async () => {
  await server?.close();
});

interface SignedIn {
  cookie: string;
  csrfToken: string;
}

async function signIn(token: string): Promise<SignedIn> {
  const answer = await server.request('POST', '/dashboard/api/session', { body: { token } });
  expect(answer.status).toBe(200);
  const cookie = String((answer.headers['set-cookie'] as string[])[0]).split(';')[0]!;
  return { cookie, csrfToken: answer.body.csrfToken };
}

const asSession = (session: SignedIn, method: string, urlPath: string) =>
  server.request(method, urlPath, { headers: { Cookie: session.cookie, ...(method === 'GET' ? {} : { 'X-CSRF-Token': session.csrfToken }) } });

/**
 * A request with no credentials that announces a body and never finishes sending it. `started`
 * resolves once the server has taken the request up (its 100 Continue) or answered it, `answered`
 * with the answer's status; `abort` cuts it.
 */
function slowRequest(method: string, urlPath: string): { started: Promise<void>; answered: Promise<number>; abort(): void } {
  const request = https.request(`${server.url}${urlPath}`, {
    method,
    ca: server.pki.caCertPem,
    agent: false,
    headers: { 'Content-Type': 'application/json', 'Content-Length': '1000', Expect: '100-continue' },
  });
  const answered = new Promise<number>((resolve) => {
    request.once('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.once('error', () => resolve(0));
  });
  const started = new Promise<void>((resolve) => {
    request.once('continue', () => {
      request.write('{"token": "');
      resolve();
    });
    void answered.then(() => resolve());
  });
  request.flushHeaders();
  return { started, answered, abort: () => request.destroy() };
}

describe('M1: a flood of unauthenticated requests', () => {
  it('leaves a signed-in user served while 160 slow requests without credentials hold their bodies open', { timeout: 60_000 }, async () => {
    const bob = await signIn(tokens.bob);
    const flood = [
      ...Array.from({ length: 100 }, () => slowRequest('GET', '/dashboard/api/clusters')),
      ...Array.from({ length: 60 }, () => slowRequest('POST', '/dashboard/api/session')),
    ];
    try {
      await Promise.all(flood.map((request) => request.started));
      const started = performance.now();
      const read = await asSession(bob, 'GET', '/dashboard/api/clusters');
      const readMs = performance.now() - started;
      expect(read.status).toBe(200);
      expect((await asSession(bob, 'POST', '/dashboard/api/namespaces/team-a/clusters/c1/reconcile')).status).toBe(202);
      expect(readMs).toBeLessThan(1000);
      // A call that needs a session is refused before its body is read; sign-ins hold at most the anonymous share.
      expect(new Set(await Promise.all(flood.slice(0, 100).map((request) => request.answered)))).toEqual(new Set([401]));
    } finally {
      for (const request of flood) request.abort();
      // Until the server has seen them go, the held sign-ins fill the unauthenticated share, sign-ins included.
      await expect.poll(async () => (await server.request('POST', '/dashboard/api/session', { body: { token: 'wrong' } })).status).toBe(401);
    }
  });

  it("counts one user's 250 live-update streams against that user only", { timeout: 60_000 }, async () => {
    const bob = await signIn(tokens.bob);
    const erin = await signIn(tokens.erin);
    // HTTP/2, as a browser opens them: at most 100 streams a connection.
    const connections = Array.from({ length: 3 }, () => http2.connect(server.url, { ca: server.pki.caCertPem }));
    const open = (session: SignedIn, connection: http2.ClientHttp2Session) =>
      new Promise<number>((resolve, reject) => {
        const stream = connection.request({ ':path': '/dashboard/api/events', cookie: session.cookie, accept: 'text/event-stream' });
        stream.once('response', (headers) => resolve(Number(headers[':status'])));
        stream.once('error', reject);
      });
    try {
      const bobs = await Promise.all(Array.from({ length: 250 }, (_, i) => open(bob, connections[i % 3]!)));
      expect(bobs.every((status) => status === 200)).toBe(true);
      expect(await open(bob, connections[0]!)).toBe(429);
      expect(await open(erin, connections[1]!)).toBe(200);
    } finally {
      for (const connection of connections) connection.destroy();
    }
  });
});

describe('M2: one user signing in again and again', () => {
  it("pushes out only that user's own oldest sessions, never another user's", async () => {
    const erin = await signIn(tokens.erin);
    const bobs: SignedIn[] = [];
    for (let i = 0; i < maxSessions * 2; i++) bobs.push(await signIn(tokens.bob));
    expect((await asSession(erin, 'GET', '/dashboard/api/session')).status).toBe(200);
    // Bob keeps his ten newest.
    expect((await asSession(bobs.at(-1)!, 'GET', '/dashboard/api/session')).status).toBe(200);
    expect((await asSession(bobs.at(-10)!, 'GET', '/dashboard/api/session')).status).toBe(200);
    expect((await asSession(bobs.at(-11)!, 'GET', '/dashboard/api/session')).status).toBe(401);
  });

  it("logs a failed sign-in at warn with the client's address and without the token", async () => {
    warnings.length = 0;
    const refused = await server.request('POST', '/dashboard/api/session', { body: { token: 'guessed-token-123' } });
    expect(refused.status).toBe(401);
    expect(warnings).toEqual([{ fields: { client: '127.0.0.1' }, message: expect.stringContaining('sign-in refused') }]);
    expect(JSON.stringify(warnings)).not.toContain('guessed-token-123');
  });
});

describe('M3: sessions end', () => {
  it('when the token they were made with is revoked', async () => {
    const carol = await signIn(tokens.carol);
    expect((await asSession(carol, 'GET', '/dashboard/api/session')).status).toBe(200);
    await server.revokeToken(tokens.carol);
    expect((await asSession(carol, 'GET', '/dashboard/api/session')).status).toBe(401);
    expect((await asSession(carol, 'GET', '/dashboard/api/clusters')).status).toBe(401);
  });

  it('at their absolute lifetime of 12 hours, however recently they were used', async () => {
    const dave = await signIn(tokens.dave);
    const hour = 3_600_000;
    for (const hours of [4, 4, 3.9]) {
      now += hours * hour;
      expect((await asSession(dave, 'GET', '/dashboard/api/session')).status).toBe(200);
    }
    now += 0.1 * hour;
    expect((await asSession(dave, 'GET', '/dashboard/api/session')).status).toBe(401);
  });
});

describe('low findings', () => {
  it.each([
    ['/dashboard/assets/..%2f..', 404],
    ['/dashboard/assets/..%2f..%2fpackage.json', 404],
    ['/dashboard/assets/%00', 400],
    ['/dashboard/assets/a%00b.js', 400],
    ['/dashboard/assets/%zz', 400],
    ['/dashboard/%zz', 400],
    // No session: who asks is unknown, so nothing about the path is told.
    ['/dashboard/api/%zz', 401],
  ])('answers %s without credentials with %d, never 500', async (urlPath, status) => {
    const answer = await server.request('GET', urlPath);
    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({ kind: 'Status', code: status });
  });

  it('lets a read-only user start three preflight runs at once, then answers 429 with Retry-After', async () => {
    const alice = await signIn(tokens.alice);
    preflightRuns.length = 0;
    const answers = [];
    for (let i = 0; i < 50; i++) answers.push(await asSession(alice, 'GET', '/dashboard/api/namespaces/team-a/clusters/c1/preflight'));
    expect(answers.slice(0, 3).map((answer) => answer.status)).toEqual([200, 200, 200]);
    for (const refused of answers.slice(3)) {
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect(answers[3]!.body).toMatchObject({
      kind: 'Status',
      reason: 'TooManyRequests',
      message: expect.stringMatching(/^too many preflight runs by alice; try again in \d+ s$/),
    });
    expect(preflightRuns).toHaveLength(3);
    // The admin API shares the count.
    expect((await server.request('GET', '/admin/v1/namespaces/team-a/clusters/c1/preflight', { token: tokens.alice })).status).toBe(429);
  });
});
