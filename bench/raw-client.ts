/**
 * The floor the benchmarks measure against: node:http(s) with a keep-alive
 * agent, bytes in and out, nothing parsed, so the figures are the server's
 * and not a client library's.
 */
import http from 'node:http';
import https from 'node:https';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  ms: number;
}

export interface RawRequestOptions {
  body?: string;
  /** Default application/json when there is a body. */
  contentType?: string;
  accept?: string;
  headers?: Record<string, string>;
}

export class RawClient {
  /** For requests a benchmark makes itself (long-lived watches on their own agent). */
  readonly host: string;
  readonly port: number;
  private readonly transport: typeof http | typeof https;

  constructor(
    base: URL,
    /** http.Agent or https.Agent, matching the URL's scheme. */
    readonly agent: http.Agent,
    /** Headers of every request, read per request (a token may be set later). */
    private readonly commonHeaders: () => Record<string, string> = () => ({}),
  ) {
    this.host = base.hostname;
    this.port = Number(base.port);
    this.transport = base.protocol === 'https:' ? https : http;
  }

  request(method: string, urlPath: string, options: RawRequestOptions = {}): Promise<RawResponse> {
    const headers: Record<string, string | number> = { 'User-Agent': 'capo-bench/1', ...this.commonHeaders(), ...options.headers };
    if (options.accept) headers.Accept = options.accept;
    if (options.body !== undefined) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = Buffer.byteLength(options.body);
    }
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const req = this.transport.request({ host: this.host, port: this.port, path: urlPath, method, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks),
            ms: performance.now() - started,
          }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(options.body);
    });
  }

  /** Like request, but a status other than `expected` aborts the benchmark: figures for failing requests mean nothing. */
  async expect(expected: number, method: string, urlPath: string, options: RawRequestOptions = {}): Promise<RawResponse> {
    return expectStatus(expected, method, urlPath, await this.request(method, urlPath, options));
  }

  /**
   * A request held open on a connection of `agent`'s (a watch), whose chunks go to `onChunk` as
   * they arrive; resolves once the server answered 200. `destroy` on the answer ends it.
   */
  stream(urlPath: string, agent: http.Agent, onChunk: (chunk: string) => void): Promise<http.ClientRequest> {
    return new Promise((resolve, reject) => {
      const req = this.transport.request(
        { host: this.host, port: this.port, path: urlPath, agent, headers: { 'User-Agent': 'capo-bench/1', ...this.commonHeaders() } },
        (res) => {
          if (res.statusCode !== 200) return reject(new Error(`${urlPath}: status ${res.statusCode}`));
          res.setEncoding('utf8');
          res.on('data', onChunk);
          res.on('error', () => undefined);
          resolve(req);
        },
      );
      req.on('error', (error) => {
        if (!req.destroyed) reject(error);
      });
      req.end();
    });
  }
}

/** The response when its status is `expected`; otherwise an error naming the request and what came back. */
export function expectStatus(expected: number, method: string, urlPath: string, response: RawResponse): RawResponse {
  if (response.status !== expected) {
    throw new Error(`${method} ${urlPath}: expected ${expected}, got ${response.status}: ${response.body.toString('utf8').slice(0, 500)}`);
  }
  return response;
}
