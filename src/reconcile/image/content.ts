/**
 * An ORC Image's content on its way to Glance, as ORC moves it: downloaded
 * from its URL, the hash checked on the bytes as downloaded (before any
 * decompression), decompressed, and streamed into Glance without being held
 * in memory or on disk. A hash that does not match fails the stream before
 * it ends, so the upload breaks off and Glance never activates the data.
 *
 * Bounded (downloads.ts): each connection passes the destination rule
 * (destinations.ts), the bytes as downloaded and again after decompression
 * are capped, as is what a decompressor makes of each downloaded byte, and
 * the whole attempt has a deadline. What the source's errors say reaches a
 * condition and the log without the URL's credentials or query.
 */
import { createHash, type Hash } from 'node:crypto';
import { Duplex, PassThrough, Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import unbzip2 from 'unbzip2-stream';
import xz from 'xz-decompress';
import type { GlanceClient } from '../../openstack/index.js';
import { TerminalError } from '../runtime/controller.js';
import { redactUrl, redactUrls } from './destinations.js';
import { ratioFloorBytes, type DownloadLimits } from './downloads.js';

export interface Download {
  url: string;
  decompress?: 'xz' | 'gz' | 'bz2';
  hash?: { algorithm: 'md5' | 'sha1' | 'sha256' | 'sha512'; value: string };
}

/** Passes bytes through, and fails at the end when their digest is not the expected one. */
class HashCheck extends Transform {
  private readonly hash: Hash;

  constructor(private readonly expected: NonNullable<Download['hash']>) {
    super();
    this.hash = createHash(expected.algorithm);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.hash.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const actual = this.hash.digest('hex');
    if (actual === this.expected.value) callback();
    else callback(new Error(`the downloaded data has ${this.expected.algorithm} ${actual}, not the ${this.expected.value} the Image expects`));
  }
}

/**
 * The decompressors ORC offers. Node has gzip; xz comes from xz-decompress
 * (xz-embedded compiled to WebAssembly, so no native addon) and bzip2 from
 * unbzip2-stream (pure JavaScript); both stream.
 */
function decompressor(decompress: Download['decompress']): Duplex | undefined {
  if (decompress === undefined) return undefined;
  if (decompress === 'gz') return createGunzip();
  if (decompress === 'xz') {
    const compressed = new PassThrough();
    const decompressed = new xz.XzReadableStream(Readable.toWeb(compressed) as ReadableStream<Uint8Array>);
    return Duplex.from({ writable: compressed, readable: Readable.fromWeb(decompressed as unknown as import('node:stream/web').ReadableStream<Uint8Array>) });
  }
  return bunzip2();
}

/** unbzip2-stream is a classic through stream, which pipeline cannot drive: a Transform feeds it and forwards what it gives. */
function bunzip2(): Transform {
  const inner = unbzip2();
  let flushed: TransformCallback | undefined;
  const outer = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      inner.write(chunk);
      callback();
    },
    flush(callback) {
      flushed = callback;
      inner.end();
    },
  });
  inner.on('data', (chunk: Buffer) => outer.push(chunk));
  inner.on('end', () => flushed?.());
  inner.on('error', (error: Error) => (flushed ? flushed(error) : outer.destroy(error)));
  return outer;
}

/** Content refused for what it is (too large, a decompression bomb): the same URL would give the same again. */
class ContentRefusedError extends TerminalError {
  override name = 'ContentRefusedError';
}

/** An attempt that failed for a reason a later one may not meet (the deadline, the source's answer); its message is safe to show. */
class DownloadError extends Error {
  override name = 'DownloadError';
}

/** Counts the bytes through it, and fails as soon as `refuse` finds fault with the count. */
class ByteCount extends Transform {
  count = 0;

  constructor(private readonly refuse: (count: number) => Error | undefined) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.count += chunk.length;
    const refused = this.refuse(this.count);
    if (refused) callback(refused);
    else callback(null, chunk);
  }
}

/** Bytes as people read them: 16 GiB, 256 MiB, 512 KiB. */
function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1 && Number.isInteger(value / 1024)) {
    value /= 1024;
    unit++;
  }
  return `${value} ${units[unit]}`;
}

/** A duration as the flags take it: 30m0s, 1m30s, 45s. */
function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  const [hours, minutes, rest] = [Math.floor(seconds / 3600), Math.floor((seconds % 3600) / 60), seconds % 60];
  return `${hours > 0 ? `${hours}h` : ''}${hours > 0 || minutes > 0 ? `${minutes}m` : ''}${rest}s`;
}

/** What a failed attempt says: the stages' own errors as they are, the source's without the URL's secrets. */
async function describeFailure(error: unknown, url: string, deadline: AbortSignal, downloaded: ByteCount, limits: DownloadLimits): Promise<unknown> {
  if (deadline.aborted) {
    return new DownloadError(
      `downloading ${url} did not finish within its deadline of ${formatDuration(limits.timeoutMs)} (--image-download-timeout); ${formatBytes(downloaded.count)} had arrived`,
    );
  }
  const { RequestError, HTTPError } = await import('got');
  if (!(error instanceof RequestError)) return error;
  // Ours, raised inside the request (the destination rule): its message names no URL.
  if (error.cause instanceof TerminalError) return error.cause;
  if (error instanceof HTTPError)
    return new DownloadError(`downloading ${url}: the server answered ${error.response.statusCode} ${error.response.statusMessage ?? ''}`.trimEnd());
  return new DownloadError(`downloading ${url}: ${redactUrls(error.message)}`);
}

/** Downloads `download.url` into the queued Glance image `imageId`, within `limits`. */
export async function uploadContent(glance: GlanceClient, imageId: string, download: Download, limits: DownloadLimits): Promise<void> {
  const url = redactUrl(download.url);
  const decompress = decompressor(download.decompress);
  // Loaded here and not at start, as the OpenStack session loads it: most replicas never download.
  const { got } = await import('got');
  const cap = formatBytes(limits.maxBytes);
  const tooLarge = (what: string) => new ContentRefusedError(`${what} is larger than the ${cap} allowed (--image-download-max-bytes)`);
  // An HTTP error status fails the stream, so the pipeline reports it.
  const source = got.stream(download.url, { agent: limits.agents, timeout: { connect: 10_000, socket: 60_000 }, retry: { limit: 0 } });
  // A source that says its size up front is refused before its body is read.
  source.once('response', (response: { headers: Record<string, string | string[] | undefined> }) => {
    const length = Number(response.headers['content-length']);
    if (length > limits.maxBytes) source.destroy(tooLarge(`${url} (${formatBytes(length)})`));
  });
  const downloaded = new ByteCount((count) => (count > limits.maxBytes ? tooLarge(url) : undefined));
  const stages: Duplex[] = [downloaded];
  if (download.hash) stages.push(new HashCheck(download.hash));
  if (decompress) {
    stages.push(
      decompress,
      new ByteCount((count) => {
        if (count > limits.maxBytes) return tooLarge(`the image decompressed from ${url}`);
        if (count > ratioFloorBytes && count > limits.maxRatio * downloaded.count) {
          return new ContentRefusedError(
            `${url} decompresses to more than ${limits.maxRatio} times its size (${formatBytes(count)} from ${formatBytes(downloaded.count)} so far; --image-download-max-ratio): a decompression bomb, or an image to compress less`,
          );
        }
        return undefined;
      }),
    );
  }
  const body = new PassThrough();
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  // A failing stage (the download, a cap, the hash, the decompression) or the deadline destroys the body too, which breaks the upload off.
  const moved = pipeline([source, ...stages, body], { signal: deadline });
  // An upload Glance refuses ends the download too, which would otherwise stall on a body nobody reads.
  const upload = glance.uploadImageData(imageId, body).catch((error: unknown) => {
    body.destroy(error instanceof Error ? error : new Error(String(error)));
    throw error;
  });
  const [movedResult, uploadResult] = await Promise.allSettled([moved, upload]);
  // The stage's own error says more than the upload's "aborted".
  if (movedResult.status === 'rejected') throw await describeFailure(movedResult.reason, url, deadline, downloaded, limits);
  if (uploadResult.status === 'rejected') throw uploadResult.reason;
}
