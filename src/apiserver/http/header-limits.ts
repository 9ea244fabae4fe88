/**
 * The header limit HTTP/1.1 requests meet, applied to HTTP/2 requests too. Node's HTTP/1.1 parser
 * refuses a request line and headers over `http.maxHeaderSize` (16 KiB) with 431 (client-errors.ts);
 * node:http2 only resets streams far past that (its advertised header list size is 64 KiB), so a
 * 54 KB label selector was served over HTTP/2 that HTTP/1.1 refused. A request over the same limit
 * is answered 431 here, as Go's HTTP/2 server (kube-apiserver's) answers a header list past its limit.
 */
import { maxHeaderSize } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse, ServerOptions } from 'node:http2';
import type express from 'express';

/**
 * What node:http2 takes before it resets a stream: a header list size, advertised to clients (Go's
 * keeps under it), with room for a list past the limit to be answered 431; and node:http's 2,000
 * header fields (server.maxHeadersCount), which the 16 KiB allow over HTTP/1.1 (past them HTTP/1.1
 * drops fields, HTTP/2 resets the stream with ENHANCE_YOUR_CALM).
 */
export const http2HeaderOptions = {
  maxHeaderListPairs: 2000,
  settings: { maxHeaderListSize: 4 * maxHeaderSize },
} satisfies ServerOptions;

/** The HTTP/2 app's first step: a request whose header list would not pass HTTP/1.1's parser is answered 431, as HTTP/1.1 answers it. */
export function refuseOversizedHeaders(request: express.Request, response: express.Response, next: () => void): void {
  if (http1HeaderBytes(request as unknown as Http2ServerRequest) <= maxHeaderSize) return next();
  (response as unknown as Http2ServerResponse).writeHead(431, { 'Content-Length': 0 }).end();
}

/** The request line and header lines HTTP/1.1 would carry: `METHOD path HTTP/1.1`, then `name: value` for each field. */
function http1HeaderBytes(request: Http2ServerRequest): number {
  let bytes = request.method.length + request.url.length + ' HTTP/1.1\r\n'.length + 1;
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!raw[i].startsWith(':')) bytes += raw[i].length + raw[i + 1].length + ': \r\n'.length;
  }
  // The authority is HTTP/1.1's Host header.
  return bytes + (request.authority ? `host: ${request.authority}\r\n`.length : 0);
}
