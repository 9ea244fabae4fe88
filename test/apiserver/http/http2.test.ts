/**
 * HTTP/2, as kubectl and client-go speak it: requests and watches as streams of one TLS connection,
 * the express routes (GraphQL) served the same way, and what HTTP/1.1 allows but HTTP/2 forbids
 * (connection headers on a refusal) never breaking a response or the connection it shares.
 */
import http2 from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCredentials, startTestServer, type TestServer } from '../../../harness/test-server.js';

const base = '/apis/testing.capo.dev/v1/namespaces/default/widgets';

interface StreamResult {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: string;
}

/** The status of a GET on this connection, its body left unread. */
function statusOn(connection: http2.ClientHttp2Session, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = connection.request({ ':path': path });
    stream.on('response', (headers) => resolve(Number(headers[':status'])));
    stream.on('error', reject);
    stream.resume();
  });
}

function widget(name: string, color = 'red'): string {
  return JSON.stringify({ apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name }, spec: { color } });
}

describe('HTTP/2', () => {
  let server: TestServer;
  let session: http2.ClientHttp2Session;

  beforeAll(async () => {
    server = await startTestServer();
    const { ca, cert, key } = await readCredentials(server);
    session = http2.connect(server.url, { ca, cert, key });
    await new Promise<void>((resolve, reject) => {
      session.once('remoteSettings', () => resolve());
      session.once('error', reject);
    });
  });

  afterAll(async () => {
    session?.close();
    await server?.stop();
  });

  function send(method: string, path: string, body?: string | Buffer, headers: http2.OutgoingHttpHeaders = {}): Promise<StreamResult> {
    return new Promise((resolve, reject) => {
      const stream = session.request({ ':method': method, ':path': path, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers });
      let status = 0;
      let responseHeaders: http2.IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      stream.on('response', (received) => {
        responseHeaders = received;
        status = Number(received[':status']);
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => resolve({ status, headers: responseHeaders, body: Buffer.concat(chunks).toString('utf8') }));
      stream.on('error', reject);
      stream.end(body);
    });
  }

  /** A watch on its own stream: the events as they arrive, and a way to wait for the n-th. */
  function watch(path: string) {
    const events: { type: string; object: { metadata: { name: string }; spec?: { color?: string } } }[] = [];
    const waiters: { count: number; resolve: () => void }[] = [];
    const stream = session.request({ ':method': 'GET', ':path': path });
    let buffered = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffered += chunk;
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        events.push(JSON.parse(buffered.slice(0, newline)));
        buffered = buffered.slice(newline + 1);
      }
      for (const waiter of waiters.filter((w) => events.length >= w.count)) waiter.resolve();
    });
    return {
      events,
      stream,
      received: (count: number) => new Promise<void>((resolve) => (events.length >= count ? resolve() : waiters.push({ count, resolve }))),
    };
  }

  it('is negotiated by ALPN and limits a connection to 100 concurrent streams, as kube-apiserver does', () => {
    expect(session.alpnProtocol).toBe('h2');
    expect(session.remoteSettings.maxConcurrentStreams).toBe(100);
  });

  it('does not let an anonymous caller keep its connection, as kube-apiserver does since CVE-2023-44487', async () => {
    const { ca } = await readCredentials(server);
    const anonymous = http2.connect(server.url, { ca });
    const closed = new Promise<void>((resolve) => anonymous.once('close', () => resolve()));
    expect(await statusOn(anonymous, base)).toBe(401);
    await closed;
  });

  it("keeps the connection of a caller without credentials that is served (the dashboard's page and cookie-signed calls)", async () => {
    const { ca } = await readCredentials(server);
    const browser = http2.connect(server.url, { ca });
    try {
      const first = await statusOn(browser, '/dashboard/');
      expect(first).not.toBe(401);
      expect(await statusOn(browser, '/dashboard/')).toBe(first);
      expect(browser.closed || browser.destroyed).toBe(false);
    } finally {
      browser.close();
    }
  });

  it('drops front-proxy identity headers a client without the front-proxy certificate sends', async () => {
    const asked = await send('GET', `${base}/nowhere`, undefined, { 'x-remote-user': 'mallory', 'x-remote-group': 'system:masters' });
    expect(asked.status).toBe(404);
  });

  it('creates, reads and answers a Status on streams of one connection', async () => {
    const created = await send('POST', base, widget('over-h2'));
    expect(created.status).toBe(201);
    const [read, missing] = await Promise.all([send('GET', `${base}/over-h2`), send('GET', `${base}/nowhere`)]);
    expect(read.status).toBe(200);
    expect(JSON.parse(read.body).spec.color).toBe('red');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ kind: 'Status', reason: 'NotFound' });
  });

  it('streams two watches beside the writes that feed them, on the same connection', async () => {
    await send('POST', base, widget('watched'));
    const listed = JSON.parse((await send('GET', base)).body);
    const [byName, all] = [
      watch(`${base}?watch=true&fieldSelector=metadata.name%3Dwatched&resourceVersion=${listed.metadata.resourceVersion}`),
      watch(`${base}?watch=true&resourceVersion=${listed.metadata.resourceVersion}`),
    ];
    const patched = await send('PATCH', `${base}/watched`, JSON.stringify({ spec: { color: 'blue' } }), { 'content-type': 'application/merge-patch+json' });
    expect(patched.status).toBe(200);
    await Promise.all([byName.received(1), all.received(1)]);
    for (const { events } of [byName, all])
      expect(events[0]).toMatchObject({ type: 'MODIFIED', object: { metadata: { name: 'watched' }, spec: { color: 'blue' } } });
    byName.stream.close();
    all.stream.close();
  });

  it('answers an over-limit body with a 413 Status on its stream, without its connection header, and keeps the connection', async () => {
    const refused = await send('POST', base, Buffer.alloc(4 * 1024 * 1024, 'x'));
    expect(refused.status).toBe(413);
    expect(refused.headers.connection).toBeUndefined();
    expect(JSON.parse(refused.body)).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge' });
    expect((await send('GET', base)).status).toBe(200);
  });

  it('serves the express routes: a GraphQL query whose JSON body has no Content-Length, as HTTP/2 allows', async () => {
    const answered = await send('POST', '/graphql', JSON.stringify({ query: '{ __typename }' }));
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.body)).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('HTTP/2 connections left idle', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ requestLimits: { idleConnectionMs: 300 } });
  });

  afterAll(async () => {
    await server?.stop();
  });

  async function connect(): Promise<http2.ClientHttp2Session> {
    const { ca, cert, key } = await readCredentials(server);
    const session = http2.connect(server.url, { ca, cert, key });
    await new Promise<void>((resolve) => session.once('remoteSettings', () => resolve()));
    return session;
  }

  it('are closed once they carry no stream, while one carrying a quiet watch stays open', async () => {
    const watching = await connect();
    const watch = watching.request({ ':path': `${base}?watch=true` });
    const watchResponse = new Promise<void>((resolve) => watch.once('response', () => resolve()));
    let delivered = '';
    watch.setEncoding('utf8');
    watch.on('data', (chunk: string) => (delivered += chunk));
    await watchResponse;
    const idle = await connect();
    await new Promise<void>((resolve) => idle.once('close', () => resolve()));
    expect(watching.closed || watching.destroyed).toBe(false);
    const eventArrived = new Promise<void>((resolve) => watch.on('data', () => resolve()));
    const created = watching.request({ ':method': 'POST', ':path': base, 'content-type': 'application/json' });
    created.resume();
    created.end(widget('after-the-idle-one'));
    await eventArrived;
    expect(delivered).toContain('"ADDED"');
    watching.close();
  });
});
