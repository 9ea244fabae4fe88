/**
 * The decompression ratio bound of ORC Image content (--image-download-max-ratio), below the size
 * cap: a gzip of zeros is refused once past the first 64 MiB it may make freely, before it reaches
 * the cap, while content that compresses as images do passes. Through uploadContent with a Glance
 * that reads and counts what it is sent; downloads.test.ts covers the rest through kubectl.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GlanceClient } from '../../../src/openstack/index.js';
import { uploadContent } from '../../../src/reconcile/image/content.js';
import { imageDownloads } from '../../../src/reconcile/image/downloads.js';

const mib = 1024 * 1024;
/** 100 MiB of zeros: about 100 KiB as gzip, 1,000 to 1. */
const bomb = gzipSync(Buffer.alloc(100 * mib));
/** 80 MiB that compress about 2 to 1: every other byte from a seeded generator, the rest zero. */
const image = (() => {
  const bytes = Buffer.alloc(80 * mib);
  let state = 0x1234_5678;
  for (let index = 0; index < bytes.length; index += 2) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[index] = state & 255;
  }
  return gzipSync(bytes, { level: 1 });
})();

let mirror: Server;
let base: string;
let limits: ReturnType<typeof imageDownloads>['limits'];

beforeAll(async () => {
  mirror = createServer((request, response) => {
    const body = request.url === '/bomb.gz' ? bomb : request.url === '/image.gz' ? image : undefined;
    if (!body) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => mirror.listen(0, '127.0.0.1', resolve));
  const address = `127.0.0.1:${(mirror.address() as AddressInfo).port}`;
  base = `http://${address}`;
  limits = imageDownloads({ allow: [address], maxBytes: 1024 * mib }).limits;
});

afterAll(() => mirror?.close());

/** A Glance that takes the upload, counting its bytes. */
function countingGlance(): { glance: GlanceClient; received: () => number } {
  let received = 0;
  const glance = {
    async uploadImageData(_id: string, body: AsyncIterable<Buffer>) {
      for await (const chunk of body) received += chunk.length;
    },
  } as unknown as GlanceClient;
  return { glance, received: () => received };
}

describe('the decompression ratio bound', () => {
  it('refuses a gzip of zeros past the first 64 MiB, far below the size cap', async () => {
    const { glance, received } = countingGlance();
    await expect(uploadContent(glance, 'image-id', { url: `${base}/bomb.gz`, decompress: 'gz' }, limits)).rejects.toThrow(
      new RegExp(
        `^${base}/bomb\\.gz decompresses to more than 100 times its size \\(.* so far; --image-download-max-ratio\\): a decompression bomb, or an image to compress less$`,
      ),
    );
    expect(received()).toBeLessThan(70 * mib);
  });

  it('passes content that compresses as images do', async () => {
    const { glance, received } = countingGlance();
    await uploadContent(glance, 'image-id', { url: `${base}/image.gz`, decompress: 'gz' }, limits);
    expect(received()).toBe(80 * mib);
  });
});
