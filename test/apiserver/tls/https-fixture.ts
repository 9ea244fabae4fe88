/** A bare HTTPS server configured the way the API server's listener is, for TLS tests. */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { identityFromCertificate, type Pki } from '../../../src/apiserver/tls/pki.js';

export interface Seen {
  authorized: boolean;
  identity?: { user: string; groups: string[] };
  path?: string;
}

export interface HttpsFixture {
  port: number;
  seen: Seen[];
  close(): Promise<void>;
}

/** Requests but does not require client certs; answers every path with JSON naming the caller. */
export async function startHttpsFixture(pki: Pki, host = '127.0.0.1'): Promise<HttpsFixture> {
  const seen: Seen[] = [];
  const server = https.createServer(
    { key: pki.serverKeyPem, cert: pki.serverCertPem, ca: pki.caCertPem, requestCert: true, rejectUnauthorized: false },
    (request, response) => {
      const socket = request.socket as TLSSocket;
      const peer = socket.getPeerCertificate();
      const entry: Seen = { authorized: socket.authorized, path: request.url };
      if (Object.keys(peer).length > 0) entry.identity = identityFromCertificate(peer);
      seen.push(entry);
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ path: request.url, ...entry }));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
