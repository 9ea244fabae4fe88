/**
 * An ORC Image's content on its way to Glance, as ORC moves it: downloaded
 * from its URL, the hash checked on the bytes as downloaded (before any
 * decompression), decompressed, and streamed into Glance without being held
 * in memory or on disk. A hash that does not match fails the stream before
 * it ends, so the upload breaks off and Glance never activates the data.
 */
import { createHash, type Hash } from 'node:crypto';
import { Duplex, PassThrough, Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import unbzip2 from 'unbzip2-stream';
import xz from 'xz-decompress';
import type { GlanceClient } from '../../openstack/index.js';

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

/** Downloads `download.url` into the queued Glance image `imageId`. */
export async function uploadContent(glance: GlanceClient, imageId: string, download: Download): Promise<void> {
  const decompress = decompressor(download.decompress);
  // Loaded here and not at start, as the OpenStack session loads it: most replicas never download.
  const { got } = await import('got');
  // An HTTP error status fails the stream, so the pipeline reports it.
  const source = got.stream(download.url, { timeout: { connect: 10_000, socket: 60_000 }, retry: { limit: 0 } });
  const stages: Duplex[] = [];
  if (download.hash) stages.push(new HashCheck(download.hash));
  if (decompress) stages.push(decompress);
  const body = new PassThrough();
  // A failing stage (the download, the hash, the decompression) destroys the body too, which breaks the upload off.
  const moved = pipeline([source, ...stages, body]);
  // An upload Glance refuses ends the download too, which would otherwise stall on a body nobody reads.
  const upload = glance.uploadImageData(imageId, body).catch((error: unknown) => {
    body.destroy(error instanceof Error ? error : new Error(String(error)));
    throw error;
  });
  const [movedResult, uploadResult] = await Promise.allSettled([moved, upload]);
  // The stage's own error says more than the upload's "aborted".
  if (movedResult.status === 'rejected') throw movedResult.reason;
  if (uploadResult.status === 'rejected') throw uploadResult.reason;
}
