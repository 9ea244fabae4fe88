/**
 * The simulated Glance's image data: upload (queued → saving → active, checksums computed as the bytes
 * arrive, the data streamed to a file as Glance's file store does) and download.
 */
import type { Router } from 'express';
import { BlobTooLargeError } from '../blob-files.js';
import { fail } from './errors.js';
import { ownedImage, visibleImage, type GlanceStore } from './model.js';

export function imageDataRoutes(router: Router, store: GlanceStore): void {
  router.put('/v2/images/:id/file', async (req, res) => {
    const image = ownedImage(store, res, req.params.id);
    if (!image) return;
    if (image.status !== 'queued') return fail(res, 409, `Image status transition from ${image.status} to saving is not allowed`);
    image.status = 'saving';
    store.touch(image);
    try {
      const stored = await store.ctx.blobs.receive(req, store.ctx.imageSizeCap);
      Object.assign(image, { data: stored.key, size: stored.size, checksum: stored.md5, os_hash_value: stored.sha512, status: 'active' });
      store.touch(image);
      res.status(204).end();
    } catch (error) {
      // As Glance: a failed upload leaves the image queued, to be uploaded again.
      image.status = 'queued';
      store.touch(image);
      if (error instanceof BlobTooLargeError) fail(res, 413, `Denying attempt to upload image larger than ${store.ctx.imageSizeCap} bytes.`);
      else if (!req.destroyed) fail(res, 500, 'The image data could not be stored.');
    }
  });
  router.get('/v2/images/:id/file', (req, res) => {
    const image = visibleImage(store, res, req.params.id);
    if (!image) return;
    if (!image.data) return void res.status(204).end();
    res.setHeader('Content-Type', 'application/octet-stream');
    if (image.checksum) res.setHeader('Content-MD5', image.checksum);
    if (image.size !== null) res.setHeader('Content-Length', image.size);
    store.ctx.blobs
      .open(image.data)
      .on('error', () => res.destroy())
      .pipe(res);
  });
}
