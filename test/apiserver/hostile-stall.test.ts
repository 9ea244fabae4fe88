/**
 * The hostile suite for requests that cost the server time rather than memory (issue 47, H1 and the
 * 413 finding): the same URL and header limits over HTTP/2 as over HTTP/1.1, selectors bounded in
 * cost, an unrelated admin GET served promptly while a tenant allowed one namespace sends
 * selector-heavy LISTs of its 3,000 Secrets over both protocols, and an over-limit body answered
 * with 413 to a client that writes its whole body before reading.
 */
import http2 from 'node:http2';
import https from 'node:https';
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedClusterApiKinds } from '../../src/api/embedded/kinds.js';
import { infrastructureKinds } from '../../src/api/infrastructure/kinds.js';
import { pollUntil } from '../../harness/poll.js';
import { readCredentials, request, startTestServer, type TestServer } from '../../harness/test-server.js';

const tenantSecrets = '/api/v1/namespaces/tenant/secrets';
const secretCount = 3000;
const tenantToken = { authorization: 'Bearer tenant-token' };

/** `!k0,!k1,...`: requirements every Secret meets (none carries those labels), so each is evaluated in full. */
function absentLabels(count: number): string {
  return Array.from({ length: count }, (_, i) => `!k${i}`).join(',');
}

/** The longest selector of `!k` terms whose URL stays under `urlBytes`. */
function selectorUnder(urlBytes: number): string {
  let count = 1;
  while (`${tenantSecrets}?labelSelector=${encodeURIComponent(absentLabels(count + 100))}`.length < urlBytes) count += 100;
  return absentLabels(count);
}

interface Answer {
  status: number;
  body: string;
}

function connect(server: TestServer, client: http2.SecureClientSessionOptions): Promise<http2.ClientHttp2Session> {
  const session = http2.connect(server.url, client);
  return new Promise((resolve, reject) => {
    session.once('remoteSettings', () => resolve(session));
    session.once('error', reject);
  });
}

/** One request on an HTTP/2 connection; a reset stream answers status 0. */
function onStream(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: Buffer): Promise<Answer> {
  return new Promise((resolve) => {
    const stream = session.request(headers);
    let status = 0;
    const chunks: Buffer[] = [];
    stream.on('response', (received) => (status = Number(received[':status'])));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('close', () => resolve({ status, body: Buffer.concat(chunks).toString('utf8') }));
    stream.on('error', () => {});
    stream.end(body);
  });
}

/** The status of a request whose answer is read and dropped, as an attacker reads: the test process serves the server too, and keeping 3 MB lists as text would stall it on the client's side. */
function statusOnStream(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders): Promise<number> {
  return new Promise((resolve) => {
    const stream = session.request(headers);
    let status = 0;
    stream.on('response', (received) => (status = Number(received[':status'])));
    stream.on('close', () => resolve(status));
    stream.on('error', () => {});
    stream.resume();
  });
}

function statusOverHttp1(server: TestServer, ca: string, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    https
      .get(`${server.url}${path}`, { ca, headers }, (response) => {
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.resume();
      })
      .on('error', reject);
  });
}

function reasonOf(answer: Answer): string {
  return JSON.parse(answer.body).reason;
}

let server: TestServer;
let admin: http2.ClientHttp2Session;
let tenant: http2.ClientHttp2Session;

beforeAll(async () => {
  server = await startTestServer({ kinds: [...infrastructureKinds, ...embeddedClusterApiKinds], tokenUsers: { tenant: [] } });
  const tenantPolicy = { user: 'tenant', namespace: 'tenant', resource: 'secrets', apiGroup: '', readonly: true };
  await appendFile(
    path.join(server.dataDir, 'policy.jsonl'),
    `${JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec: tenantPolicy })}\n`,
  );
  const credentials = await readCredentials(server);
  admin = await connect(server, credentials);
  tenant = await connect(server, { ca: credentials.ca });
  const create = (namespace: string, name: string) =>
    onStream(
      admin,
      { ':method': 'POST', ':path': `/api/v1/namespaces/${namespace}/secrets`, 'content-type': 'application/json' },
      Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: { token: Buffer.from(name.repeat(40)).toString('base64') } })),
    );
  expect((await create('default', 'unrelated')).status).toBe(201);
  for (let start = 0; start < secretCount; start += 50) {
    const created = await Promise.all(Array.from({ length: 50 }, (_, i) => create('tenant', `secret-${start + i}`)));
    expect(created.map((answer) => answer.status)).toEqual(created.map(() => 201));
  }
  // The policy file is re-read once it changes; the tenant may list once it has been.
  await pollUntil('the tenant policy', async () =>
    (await onStream(tenant, { ':path': `${tenantSecrets}?limit=1`, ...tenantToken })).status === 200 ? true : undefined,
  );
}, 180_000);

afterAll(async () => {
  admin?.close();
  tenant?.close();
  await server?.stop();
});

describe('the same request limits over HTTP/2 as over HTTP/1.1', () => {
  it('refuses a URL of 54 KB (a label selector of thousands of terms) with 431', async () => {
    const answer = await onStream(tenant, { ':path': `${tenantSecrets}?labelSelector=${encodeURIComponent(selectorUnder(54_000))}`, ...tenantToken });
    expect(answer.status).toBe(431);
    expect(
      (await request(server, 'GET', `${tenantSecrets}?labelSelector=${encodeURIComponent(selectorUnder(54_000))}`, { headers: tenantToken, anonymous: true }))
        .status,
    ).toBe(431);
  });

  it('refuses a header of 20 KB with 431, and still serves the connection', async () => {
    expect((await onStream(tenant, { ':path': tenantSecrets, ...tenantToken, 'x-padding': 'p'.repeat(20_000) })).status).toBe(431);
    expect((await onStream(tenant, { ':path': `${tenantSecrets}?limit=1`, ...tenantToken })).status).toBe(200);
  });

  it('refuses 1,000 header fields of 16 KiB in all with 431, as HTTP/1.1 counts them', async () => {
    // node:http2's client sends at most 128 fields unless told otherwise.
    const many = await connect(server, { ca: (await readCredentials(server)).ca, maxHeaderListPairs: 2000 });
    try {
      const fields = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`x-field-${String(i).padStart(4, '0')}`, 'value']));
      expect((await onStream(many, { ':path': tenantSecrets, ...tenantToken, ...fields })).status).toBe(431);
    } finally {
      many.close();
    }
  });

  it('serves a URL just under the limit', async () => {
    const selector = `${'a'.repeat(63)}!=${'b'.repeat(63)}`;
    const answer = await onStream(tenant, {
      ':path': `${tenantSecrets}?limit=1&labelSelector=${encodeURIComponent(selector)}&padding=${'p'.repeat(15_000)}`,
      ...tenantToken,
    });
    expect(answer.status).toBe(200);
  });
});

describe('selector cost', () => {
  it('refuses a label selector of more requirements than allowed, naming the limit', async () => {
    const answer = await onStream(tenant, { ':path': `${tenantSecrets}?labelSelector=${encodeURIComponent(absentLabels(101))}`, ...tenantToken });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: expect.stringMatching(/101 requirements.*at most 100/) });
  });

  it('refuses a set of more values than allowed, naming the limit', async () => {
    const values = Array.from({ length: 101 }, (_, i) => `v${i}`).join(',');
    const answer = await onStream(tenant, { ':path': `${tenantSecrets}?labelSelector=${encodeURIComponent(`k in (${values})`)}`, ...tenantToken });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).message).toMatch(/101 values.*at most 100/);
  });

  it('refuses a field selector of more terms than allowed, naming the limit', async () => {
    const terms = Array.from({ length: 101 }, (_, i) => `metadata.name!=s${i}`).join(',');
    const answer = await onStream(tenant, { ':path': `${tenantSecrets}?fieldSelector=${encodeURIComponent(terms)}`, ...tenantToken });
    expect(answer.status).toBe(400);
    expect(reasonOf(answer)).toBe('BadRequest');
    expect(JSON.parse(answer.body).message).toMatch(/101 terms.*at most 100/);
  });

  it('serves a selector at the limits', async () => {
    const answer = await onStream(tenant, { ':path': `${tenantSecrets}?labelSelector=${encodeURIComponent(absentLabels(100))}`, ...tenantToken });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).items).toHaveLength(secretCount);
  });
});

describe('a tenant cannot stall another', () => {
  const list = (selector: string) => `${tenantSecrets}?labelSelector=${encodeURIComponent(selector)}`;
  const overHttp2 = (selector: string, accept = 'application/json') => statusOnStream(tenant, { ':path': list(selector), ...tenantToken, accept });
  const overHttp1 = async (selector: string) => statusOverHttp1(server, (await readCredentials(server)).ca, list(selector), tenantToken);

  /** The statuses of the attack's requests, and the worst latency of the admin's GETs of an unrelated Secret, one after another while it runs. */
  async function underAttack(title: string, attack: () => Promise<number>[]): Promise<{ statuses: number[]; worstMs: number }> {
    let attacking = true;
    const statuses = Promise.all(attack()).finally(() => (attacking = false));
    const latencies: number[] = [];
    while (attacking) {
      const started = performance.now();
      const answer = await request(server, 'GET', '/api/v1/namespaces/default/secrets/unrelated');
      latencies.push(performance.now() - started);
      expect(answer.status).toBe(200);
    }
    const worstMs = Math.round(Math.max(...latencies));
    console.log(`${title}: the worst of ${latencies.length} admin GETs took ${worstMs} ms`);
    return { statuses: await statuses, worstMs };
  }

  it('while four LISTs over HTTP/2 carry a 54 KB label selector', async () => {
    const { statuses, worstMs } = await underAttack('4 x 54 KB selectors over HTTP/2', () => Array.from({ length: 4 }, () => overHttp2(selectorUnder(54_000))));
    expect(statuses).toEqual([431, 431, 431, 431]);
    expect(worstMs).toBeLessThan(1000);
  }, 120_000);

  it('while four LISTs over HTTP/1.1 carry the longest label selector its URL limit allows', async () => {
    const { statuses, worstMs } = await underAttack('4 x 16 KB selectors over HTTP/1.1', () =>
      Array.from({ length: 4 }, () => overHttp1(selectorUnder(16_000))),
    );
    expect(statuses).toEqual([400, 400, 400, 400]);
    expect(worstMs).toBeLessThan(1000);
  }, 120_000);

  it('while twelve LISTs over both protocols, as JSON and as the Table kubectl asks for, evaluate the most requirements allowed against all 3,000 Secrets', async () => {
    const { statuses, worstMs } = await underAttack('12 x 100-requirement selectors answering 3,000 Secrets', () => [
      ...Array.from({ length: 4 }, () => overHttp2(absentLabels(100))),
      ...Array.from({ length: 4 }, () => overHttp2(absentLabels(100), 'application/json;as=Table;v=v1;g=meta.k8s.io')),
      ...Array.from({ length: 4 }, () => overHttp1(absentLabels(100))),
    ]);
    expect(statuses).toEqual(Array(12).fill(200));
    expect(worstMs).toBeLessThan(1000);
  }, 120_000);
});

describe('an over-limit body', () => {
  const tenMiB = Buffer.alloc(10 * 1024 * 1024, 'x');

  it('is answered 413 over HTTP/1.1 to a client that writes its whole body before reading', async () => {
    const { ca, cert, key } = await readCredentials(server);
    const url = new URL(server.url);
    const socket = tls.connect({ host: url.hostname, port: Number(url.port), ca, cert, key, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
    await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
    // Nothing is read until the body is written, as a client that writes first and reads afterwards.
    socket.pause();
    const head = `POST /api/v1/namespaces/default/secrets HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${tenMiB.length}\r\n\r\n`;
    const written = await new Promise<string>((resolve) =>
      socket.write(Buffer.concat([Buffer.from(head), tenMiB]), (error) => resolve(error ? String(error) : 'written')),
    );
    const answer = await new Promise<string>((resolve) => {
      let received = '';
      const settle = () => resolve(received);
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('utf8');
        const [head, body] = received.split('\r\n\r\n', 2);
        if (body !== undefined && Buffer.byteLength(body) >= Number(/content-length: (\d+)/i.exec(head!)?.[1])) settle();
      });
      socket.on('close', settle);
      socket.on('error', () => {});
      socket.resume();
    });
    socket.destroy();
    expect(written).toBe('written');
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('"reason":"RequestEntityTooLarge"');
  });

  it('is answered 413 over HTTP/2 to a client that writes its whole body before reading', async () => {
    const patch = Buffer.from(JSON.stringify(Array.from({ length: 100_000 }, () => ({ op: 'test', path: '/kind', value: 'Secret' }))));
    const answer = await onStream(
      admin,
      { ':method': 'PATCH', ':path': '/api/v1/namespaces/default/secrets/unrelated', 'content-type': 'application/json-patch+json' },
      patch,
    );
    expect(answer.status).toBe(413);
    expect(reasonOf(answer)).toBe('RequestEntityTooLarge');
  });
});
