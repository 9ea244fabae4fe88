/**
 * HTTP/2 for the server's express routes. kubectl and client-go negotiate h2 by ALPN and carry a
 * process's requests and watches as streams of one connection; over HTTP/1.1 each open watch holds a
 * TLS connection of its own and every event costs a record and a write per watcher.
 *
 * Express 5 gives each request and response its own prototype, built on node:http's IncomingMessage
 * and ServerResponse, which strips node:http2's compatibility objects of their methods (HTTP/2 in
 * express itself is an open proposal, expressjs/express#3730). `http2App` is an express app whose
 * prototypes carry the same express methods over Http2ServerRequest and Http2ServerResponse; the
 * server mounts one router on it and on a plain app and hands each request to the app of its protocol.
 *
 * A request past HTTP/1.1's header limit is refused as HTTP/1.1 refuses it (header-limits.ts).
 * The request also gets node:http's `headersDistinct`, which node:http2 lacks. A request body of
 * unknown length is marked as HTTP/1.1 would mark it, so the body parsers read it.
 * HTTP/2 forbids connection-specific headers and node:http2 throws on them. As Go's HTTP/2 server
 * (kube-apiserver's) does, a response drops them instead: the handlers stay protocol-blind, and
 * `Connection: close` on a refused request means nothing to a stream of a shared connection.
 */
import { Http2ServerRequest, Http2ServerResponse, type OutgoingHttpHeaders } from 'node:http2';
import express from 'express';
import { refuseOversizedHeaders } from './header-limits.js';

const connectionSpecific = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/** An express app for the requests of HTTP/2 streams. */
export function http2App(): express.Express {
  const app = express();
  const request = Object.create(Http2ServerRequest.prototype, {
    ...Object.getOwnPropertyDescriptors(express.request),
    ...Object.getOwnPropertyDescriptors(distinctHeaders),
  }) as express.Request;
  const response = Object.create(Http2ServerResponse.prototype, {
    ...Object.getOwnPropertyDescriptors(express.response),
    ...Object.getOwnPropertyDescriptors(protocolBlindHeaders),
  }) as express.Response;
  const owner = { app: { configurable: true, enumerable: true, writable: true, value: app } };
  app.request = Object.create(request, owner) as express.Request;
  app.response = Object.create(response, owner) as express.Response;
  app.use(refuseOversizedHeaders, markBodyOfUnknownLength);
  return app;
}

/**
 * node:http's `headersDistinct` (each header's values kept apart, which the front-proxy headers are
 * read from), built from the raw headers on first use and kept on the request, which may edit it.
 */
const distinctHeaders = {
  get headersDistinct(): Record<string, string[]> {
    const request = this as unknown as Http2ServerRequest;
    const distinct: Record<string, string[]> = {};
    const raw = request.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i].toLowerCase();
      const values = distinct[name];
      if (values) values.push(raw[i + 1]);
      else distinct[name] = [raw[i + 1]];
    }
    Object.defineProperty(request, 'headersDistinct', { value: distinct, configurable: true, enumerable: true, writable: true });
    return distinct;
  },
};

/**
 * An HTTP/2 request may send a body without Content-Length (the stream's end marks it), which is
 * what node:http's Transfer-Encoding: chunked says over HTTP/1.1 and what the body parsers look for.
 */
function markBodyOfUnknownLength(request: express.Request, _response: express.Response, next: () => void): void {
  const { stream } = request as unknown as Http2ServerRequest;
  if (request.headers['content-length'] === undefined && !stream.endAfterHeaders) request.headers['transfer-encoding'] = 'chunked';
  next();
}

const writeHead = Http2ServerResponse.prototype.writeHead as (this: Http2ServerResponse, status: number, headers?: OutgoingHttpHeaders) => Http2ServerResponse;

const protocolBlindHeaders = {
  setHeader(this: Http2ServerResponse, name: string, value: number | string | readonly string[]): void {
    if (!connectionSpecific.has(name.toLowerCase())) Http2ServerResponse.prototype.setHeader.call(this, name, value);
  },
  writeHead(this: Http2ServerResponse, status: number, ...rest: [(string | OutgoingHttpHeaders)?, OutgoingHttpHeaders?]): Http2ServerResponse {
    const [first, second] = rest;
    const headers = typeof first === 'object' ? first : second;
    const allowed = headers && Object.fromEntries(Object.entries(headers).filter(([name]) => !connectionSpecific.has(name.toLowerCase())));
    return writeHead.call(this, status, allowed);
  },
};
