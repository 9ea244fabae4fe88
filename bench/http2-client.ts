/**
 * One HTTP/2 connection carrying every request as a stream, as client-go
 * sends them: the other shape of load, beside RawClient's keep-alive
 * HTTP/1.1 connections. Bytes in and out, nothing parsed. Its windows are
 * client-go's (4 MiB a stream, 1 GiB the connection), so a large LIST is
 * not held back by flow control the real client would not apply.
 */
import http2 from 'node:http2';
import { expectStatus, type RawRequestOptions, type RawResponse } from './raw-client.js';

export interface TlsCredentials {
  ca: string;
  cert: string;
  key: string;
}

export class Http2Client {
  private readonly session: http2.ClientHttp2Session;
  private failure: Error | undefined;
  /** Resolves with the server's SETTINGS_MAX_CONCURRENT_STREAMS once they arrived. */
  readonly ready: Promise<number>;

  constructor(base: URL, credentials: TlsCredentials) {
    this.session = http2.connect(base.origin, { ...credentials, settings: { initialWindowSize: 4 << 20 } });
    this.session.on('error', (error) => {
      this.failure = error;
    });
    this.ready = new Promise((resolve, reject) => {
      this.session.once('remoteSettings', (settings) => {
        this.session.setLocalWindowSize(1 << 30);
        resolve(settings.maxConcurrentStreams ?? 100);
      });
      this.session.once('error', reject);
    });
    // A connection nobody waited on that fails says so at its next request, not as an unhandled rejection.
    this.ready.catch(() => undefined);
  }

  request(method: string, urlPath: string, options: RawRequestOptions = {}): Promise<RawResponse> {
    if (this.failure) return Promise.reject(this.failure);
    const headers: http2.OutgoingHttpHeaders = { ':method': method, ':path': urlPath, 'user-agent': 'capo-bench/1', ...options.headers };
    if (options.accept) headers.accept = options.accept;
    if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const stream = this.session.request(headers, { endStream: options.body === undefined });
      const chunks: Buffer[] = [];
      let status = 0;
      let responseHeaders: http2.IncomingHttpHeaders = {};
      stream.once('response', (received) => {
        status = Number(received[':status']);
        responseHeaders = received;
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.once('end', () =>
        resolve({
          status,
          headers: responseHeaders as RawResponse['headers'],
          body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks),
          ms: performance.now() - started,
        }),
      );
      stream.once('error', reject);
      if (options.body !== undefined) stream.end(options.body);
    });
  }

  /** A stream whose chunks go to `onChunk` as they arrive (a watch); resolves once the server answered 200. */
  stream(urlPath: string, onChunk: (chunk: string) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const stream = this.session.request({ ':path': urlPath, 'user-agent': 'capo-bench/1' });
      stream.once('response', (received) => {
        if (received[':status'] !== 200) reject(new Error(`${urlPath}: status ${received[':status']}`));
        else resolve();
      });
      stream.setEncoding('utf8');
      stream.on('data', onChunk);
      stream.on('error', reject);
    });
  }

  /** Like request, but a status other than `expected` aborts the benchmark: figures for failing requests mean nothing. */
  async expect(expected: number, method: string, urlPath: string, options: RawRequestOptions = {}): Promise<RawResponse> {
    return expectStatus(expected, method, urlPath, await this.request(method, urlPath, options));
  }

  close(): void {
    this.session.destroy();
  }
}

/**
 * Streams over as many connections as the server's stream limit needs, as client-go's transport
 * opens them: each stream goes on the newest connection until that one holds the limit, then on a
 * new one. The first `reserved` streams of the first connection are left to its other requests.
 */
export class Http2Connections {
  private readonly open: { connection: Http2Client; streams: number }[];

  private constructor(
    private readonly base: URL,
    private readonly credentials: TlsCredentials,
    /** The first connection, for requests besides the streams. */
    readonly first: Http2Client,
    private readonly limit: number,
    reserved: number,
  ) {
    this.open = [{ connection: first, streams: reserved }];
  }

  static async connect(base: URL, credentials: TlsCredentials, reserved = 0): Promise<Http2Connections> {
    const first = new Http2Client(base, credentials);
    const limit = await first.ready;
    if (limit < reserved) {
      first.close();
      throw new Error(`${base.origin} allows ${limit} streams a connection, fewer than the ${reserved} its requests need`);
    }
    return new Http2Connections(base, credentials, first, limit, reserved);
  }

  /** Http2Client.stream on the newest connection with a stream free. */
  stream(urlPath: string, onChunk: (chunk: string) => void): Promise<void> {
    if (this.open.at(-1)!.streams >= this.limit) this.open.push({ connection: new Http2Client(this.base, this.credentials), streams: 0 });
    const current = this.open.at(-1)!;
    current.streams++;
    return current.connection.stream(urlPath, onChunk);
  }

  /** Closes every connection; answers how many there were. */
  close(): number {
    for (const { connection } of this.open) connection.close();
    return this.open.length;
  }
}
