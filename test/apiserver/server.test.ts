/**
 * What no client may do to the server over real HTTPS: hold every slot with
 * slow uploads, keep a request or a connection forever, grow the metrics,
 * open watches without end, or turn a bad path into a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import https from 'node:https';
import tls from 'node:tls';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { openWatch, readCredentials, request, startTestServer, type TestServer } from '../../harness/test-server.js';

const base = '/apis/testing.capo.dev/v1/namespaces/default/widgets';
const json = { 'Content-Type': 'application/json' };
const bob = { Authorization: 'Bearer bob-token' };
const execFileAsync = promisify(execFile);

function widget(name: string): string {
  return JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name }, spec: { color: 'red' } });
}

interface SlowUpload {
  /** Resolves with the status the server answered, once it answers. */
  status: Promise<number>;
  /** Resolves when the server closed the connection. */
  closed: Promise<void>;
  abort(): void;
}

/** A create that sends its headers and 10 bytes of its body, then nothing more. */
async function slowUpload(server: TestServer, name: string, headers: Record<string, string> = {}): Promise<SlowUpload> {
  const { ca, cert, key } = await readCredentials(server);
  const body = widget(name);
  let abort = () => {};
  let closedResolve: () => void;
  const closed = new Promise<void>((resolve) => (closedResolve = resolve));
  const status = new Promise<number>((resolve) => {
    const credentials = headers.Authorization ? {} : { cert, key };
    const req = https.request(
      `${server.url}${base}`,
      { method: 'POST', ca, ...credentials, agent: false, headers: { ...json, ...headers, 'Content-Length': String(body.length) } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', () => resolve(0));
    req.on('close', () => closedResolve());
    req.write(body.slice(0, 10));
    abort = () => req.destroy();
  });
  return { status, closed, abort };
}

describe('per-user fairness and the request deadline', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({
      tokenUsers: { bob: ['system:masters'] },
      requestLimits: { maxInFlight: { readOnly: 8, mutating: 8 }, perUserShare: 0.25, requestTimeoutMs: 30_000 },
    });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('keeps one user with slow uploads to its share: the excess gets 429, another user is served', async () => {
    const uploads = await Promise.all(Array.from({ length: 8 }, (_, i) => slowUpload(server, `greedy-${i}`)));
    try {
      // Six of them are refused; each 429 means the greedy user already held its two slots.
      await new Promise<void>((resolve) => {
        let refused = 0;
        for (const upload of uploads) void upload.status.then((code) => code === 429 && ++refused === 6 && resolve());
      });
      const other = await request(server, 'POST', base, { headers: { ...json, ...bob }, body: widget('fair'), anonymous: true });
      expect(other.status, other.body).toBe(201);
      const shed = await request(server, 'POST', base, { headers: json, body: widget('shed') });
      expect(shed.status).toBe(429);
      expect(shed.headers['retry-after']).toBe('1');
      expect(shed.json()).toMatchObject({ kind: 'Status', reason: 'TooManyRequests', details: { retryAfterSeconds: 1 } });
    } finally {
      for (const upload of uploads) upload.abort();
      await Promise.all(uploads.map((upload) => upload.closed));
    }
  });

  it('never refuses a client that keeps exactly its share busy with back-to-back requests on kept-alive connections', async () => {
    // The client runs in a process of its own, as real clients do: its next request can then reach the server
    // in the same loop turn as the previous answer's write completes.
    const client = `
      const https = require('node:https');
      const { URL_, CA, CERT, KEY, BODY } = process.env;
      const agent = new https.Agent({ keepAlive: true, maxSockets: 2, ca: CA, cert: CERT, key: KEY });
      const create = (name) => new Promise((resolve, reject) => {
        const body = BODY.replace('NAME', name);
        const req = https.request(URL_, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode));
        });
        req.on('error', reject);
        req.end(body);
      });
      const statuses = [];
      Promise.all([0, 1].map(async (connection) => {
        for (let i = 0; i < 150; i++) statuses.push(await create('share-' + connection + '-' + i));
      })).then(() => { process.stdout.write(JSON.stringify(statuses)); agent.destroy(); });
    `;
    const { ca, cert, key } = await readCredentials(server);
    // The user's share of 8 mutating slots is 2: two connections, each sending its next create as soon as one is answered.
    const { stdout } = await execFileAsync(process.execPath, ['-e', client], {
      env: { ...process.env, URL_: `${server.url}${base}`, CA: ca, CERT: cert, KEY: key, BODY: widget('NAME') },
    });
    const statuses = JSON.parse(stdout) as number[];
    expect(statuses).toHaveLength(300);
    expect(statuses.filter((status) => status !== 201)).toEqual([]);
  });

  it('gives the slots back when clients go away mid-body', async () => {
    const uploads = await Promise.all(Array.from({ length: 2 }, (_, i) => slowUpload(server, `gone-${i}`)));
    for (const upload of uploads) upload.abort();
    await Promise.all(uploads.map((upload) => upload.closed));
    // The server learns of the aborts asynchronously: ask until a create gets a slot, within the test's time.
    let status = 429;
    while (status === 429) status = (await request(server, 'POST', base, { headers: json, body: widget(`after-${Date.now()}`) })).status;
    expect(status).toBe(201);
  });
});

describe('request deadline', () => {
  it('answers a request still reading its body at the deadline with 504 and closes the connection', async () => {
    const server = await startTestServer({ requestLimits: { requestTimeoutMs: 300 } });
    try {
      const upload = await slowUpload(server, 'stalled');
      expect(await upload.status).toBe(504);
      await upload.closed;
      expect((await request(server, 'GET', `${base}/stalled`)).status).toBe(404);
      // Watches are long-running: the deadline does not cut them.
      const rv = (await request(server, 'GET', base)).json().metadata.resourceVersion;
      const watch = await openWatch(server, `${base}?watch=true&resourceVersion=${rv}`);
      try {
        const slowWrite = await slowUpload(server, 'late');
        expect(await slowWrite.status).toBe(504);
        expect((await request(server, 'POST', base, { headers: json, body: widget('seen') })).status).toBe(201);
        expect((await watch.waitFor(1))[0]).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'seen' } } });
      } finally {
        watch.close();
      }
    } finally {
      await server.stop();
    }
  });
});

describe('connections, paths, metrics and watches', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ requestLimits: { maxWatchesPerUser: 3 } });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('answers an over-limit chunked body with 413 at once, and cuts the connection once a bounded drain of the rest has passed', async () => {
    const { ca, cert, key } = await readCredentials(server);
    const url = new URL(server.url);
    const socket = tls.connect({ host: url.hostname, port: Number(url.port), ca, cert, key, servername: 'localhost' });
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    socket.write(`POST ${base} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const chunk = 'x'.repeat(64 * 1024);
    // 33 MiB in chunks, past what the server drains of a refused body (32 MiB), and then the body is never finished:
    // the server must not wait for its end.
    for (let i = 0; i < 528 && !socket.destroyed; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received).toContain('"reason":"RequestEntityTooLarge"');
  });

  it('answers a path with malformed percent-encoding 400 to a known caller and 401 to an anonymous one', async () => {
    const path = `/apis/testing.capo.dev/v1/namespaces/%E0%A4%A/widgets`;
    const known = await request(server, 'GET', path);
    expect(known.status).toBe(400);
    expect(known.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    const anonymous = await request(server, 'GET', path, { anonymous: true });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized' });
  });

  it('labels metrics only with what the server serves, whoever sends random paths', async () => {
    const seriesCount = async () =>
      (await request(server, 'GET', '/metrics')).body.split('\n').filter((line) => line.startsWith('apiserver_request_total')).length;
    // Warm every label combination these requests (and reading /metrics) can reach, then count.
    const probe = (i: number, anonymous: boolean) => request(server, 'GET', `/apis/x${i}.attacker.io/v1/y${i}/z${i}/w${i}`, { anonymous });
    await probe(0, true);
    await probe(0, false);
    await seriesCount();
    const before = await seriesCount();
    for (let i = 1; i <= 60; i++) await probe(i, i % 2 === 0);
    expect(await seriesCount()).toBe(before);
    const metrics = (await request(server, 'GET', '/metrics')).body;
    expect(metrics).not.toContain('attacker');
    expect(metrics).toMatch(/apiserver_request_total\{[^}]*resource="unknown"[^}]*code="404"\}/);
  });

  it('bounds the watches one user holds open', async () => {
    const watches = await Promise.all(Array.from({ length: 3 }, () => openWatch(server, `${base}?watch=true`)));
    try {
      expect(watches.map((watch) => watch.status)).toEqual([200, 200, 200]);
      const refused = await request(server, 'GET', `${base}?watch=true`);
      expect(refused.status).toBe(429);
      expect(refused.json().message).toMatch(/at most 3 open at once per user/);
    } finally {
      for (const watch of watches) watch.close();
    }
  });
});
