/**
 * A stand-in for capo-apiserver's GraphQL endpoint: records every request and
 * answers with whatever the test sets, over HTTP or HTTPS.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface StubRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface StubReply {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON unless it is a string. */
  body: unknown;
}

export interface GraphqlStub {
  url: string;
  requests: StubRequest[];
  /** Decides each answer; change it between runs. `null` leaves the request unanswered until close. */
  reply: (request: StubRequest) => StubReply | null;
  close(): Promise<void>;
}

export async function startGraphqlStub(options: { tls?: { key: string; cert: string } } = {}): Promise<GraphqlStub> {
  const stub: GraphqlStub = {
    url: '',
    requests: [],
    reply: () => ({ status: 500, body: 'no reply set' }),
    close: async () => undefined,
  };
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const recorded: StubRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: text === '' ? undefined : JSON.parse(text),
      };
      stub.requests.push(recorded);
      const reply = stub.reply(recorded);
      if (reply === null) return;
      const body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
      response.writeHead(reply.status ?? 200, { 'Content-Type': 'application/json', ...reply.headers });
      response.end(body);
    });
  };
  const server = options.tls ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handle) : http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  stub.url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}/graphql`;
  stub.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return stub;
}
