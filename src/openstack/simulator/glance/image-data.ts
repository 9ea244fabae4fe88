/** The simulated Glance's image data: upload (queued → active, checksums computed) and download. */
import { createHash } from 'node:crypto';
import express, { type Router } from 'express';
import { fail } from './errors.js';
import { ownedImage, visibleImage, type GlanceStore } from './model.js';

export function imageDataRoutes(router: Router, store: GlanceStore): void {
  router.put('/v2/images/:id/file', express.raw({ type: () => true, limit: '1gb' }), (req, res) => {
    const image = ownedImage(store, res, req.params.id);
    if (!image) return;
    if (image.status !== 'queued') return fail(res, 409, `Image status transition from ${image.status} to saving is not allowed`);
    const data = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    image.data = data;
    image.size = data.length;
    image.checksum = createHash('md5').update(data).digest('hex');
    image.os_hash_value = createHash('sha512').update(data).digest('hex');
    image.status = 'active';
    store.touch(image);
    res.status(204).end();
  });
  router.get('/v2/images/:id/file', (req, res) => {
    const image = visibleImage(store, res, req.params.id);
    if (!image) return;
    if (!image.data) return void res.status(204).end();
    res.setHeader('Content-Type', 'application/octet-stream');
    if (image.checksum) res.setHeader('Content-MD5', image.checksum);
    res.send(image.data);
  });
}
