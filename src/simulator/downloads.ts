/**
 * Image files over plain HTTP, the way an image mirror serves them, for ORC
 * Images to download from the simulated cloud: `node.qcow2` (a small
 * stand-in for a node's disk image, the same bytes in every run), its gzip
 * compression `node.qcow2.gz`, and `SHA256SUMS` listing both, as
 * distributions publish beside their cloud images.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import express, { type Router } from 'express';
import { seededRandom } from './seeded-random.js';

/** Big enough to take several chunks through a stream, small enough for every test. */
const imageBytes = 256 * 1024;

function imageFiles(): Map<string, Buffer> {
  const random = seededRandom(20261126);
  const image = Buffer.alloc(imageBytes);
  // Mostly zeros with some noise: compresses, as real disk images do.
  for (let offset = 0; offset < imageBytes; offset += 64) image[offset] = Math.floor(random() * 256);
  const files = new Map([
    ['node.qcow2', image],
    ['node.qcow2.gz', gzipSync(image)],
  ]);
  const sums = [...files].map(([name, data]) => `${createHash('sha256').update(data).digest('hex')}  ${name}\n`).join('');
  files.set('SHA256SUMS', Buffer.from(sums));
  return files;
}

export function downloadsRouter(): Router {
  const files = imageFiles();
  const router = express.Router();
  router.get('/:file', (req, res) => {
    const data = files.get(req.params.file);
    if (!data) return void res.status(404).type('text/plain').send(`no file ${req.params.file}\n`);
    res.type(req.params.file === 'SHA256SUMS' ? 'text/plain' : 'application/octet-stream').send(data);
  });
  return router;
}
