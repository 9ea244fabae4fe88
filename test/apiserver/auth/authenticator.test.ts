/**
 * Client certificates are judged at the time of each request, as kube-apiserver's x509 authenticator
 * judges them, even though the server verifies a connection's chain once and remembers the verdict.
 */
import { X509Certificate } from 'node:crypto';
import http2 from 'node:http2';
import https from 'node:https';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { readCredentials, startTestServer, type TestServer } from '../../../harness/test-server.js';

const widgets = '/apis/testing.capo.dev/v1/namespaces/default/widgets';
const dayMs = 24 * 60 * 60 * 1000;

/** One connection with the admin certificate: the status of a GET on it, and whether it was that connection's. */
interface Connection {
  status(path: string): Promise<{ code: number; sameConnection: boolean }>;
  close(): void;
}

async function http2Connection(server: TestServer): Promise<Connection> {
  const { ca, cert, key } = await readCredentials(server);
  const session = http2.connect(server.url, { ca, cert, key });
  return {
    status: (path) =>
      new Promise((resolve, reject) => {
        const stream = session.request({ ':path': path });
        stream.on('response', (headers) => resolve({ code: Number(headers[':status']), sameConnection: !session.destroyed }));
        stream.on('error', reject);
        stream.resume();
      }),
    close: () => session.destroy(),
  };
}

async function http1Connection(server: TestServer): Promise<Connection> {
  const { ca, cert, key } = await readCredentials(server);
  // One kept-alive socket: every request after the first goes on the connection the first opened.
  const agent = new https.Agent({ ca, cert, key, keepAlive: true, maxSockets: 1 });
  let requests = 0;
  return {
    status: (path) =>
      new Promise((resolve, reject) => {
        const first = requests++ === 0;
        const request = https.get(`${server.url}${path}`, { agent }, (response) => {
          response.resume();
          response.on('end', () => resolve({ code: response.statusCode ?? 0, sameConnection: first || request.reusedSocket }));
        });
        request.on('error', reject);
      }),
    close: () => agent.destroy(),
  };
}

describe('client certificate authentication', () => {
  let server: TestServer;
  let adminCertificate: X509Certificate;

  beforeAll(async () => {
    server = await startTestServer();
    adminCertificate = new X509Certificate((await readCredentials(server)).cert);
  });

  afterAll(async () => {
    await server?.stop();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  for (const [protocol, connect] of [
    ['HTTP/1.1', http1Connection],
    ['HTTP/2', http2Connection],
  ] as const) {
    it(`stops accepting a certificate that expires while its ${protocol} connection stays open`, async () => {
      const connection = await connect(server);
      try {
        expect(await connection.status(widgets)).toEqual({ code: 200, sameConnection: true });
        // Only Date moves: the connection, its TLS session and the server's timers stay as they are.
        vi.useFakeTimers({ toFake: ['Date'] });
        vi.setSystemTime(adminCertificate.validToDate.getTime() + dayMs);
        expect(await connection.status(widgets)).toEqual({ code: 401, sameConnection: true });
      } finally {
        connection.close();
      }
    });
  }

  // Over HTTP/2 a refused caller loses its connection (as with kube-apiserver), so only HTTP/1.1 can come back.
  it('accepts a certificate again on its HTTP/1.1 connection when the clock comes back within its validity', async () => {
    const connection = await http1Connection(server);
    try {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(adminCertificate.validFromDate.getTime() - dayMs);
      expect((await connection.status(widgets)).code).toBe(401);
      vi.useRealTimers();
      expect(await connection.status(widgets)).toEqual({ code: 200, sameConnection: true });
    } finally {
      connection.close();
    }
  });
});
