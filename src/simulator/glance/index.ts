/**
 * Glance v2: images with Glance's visibility rules, list filters, sorting
 * and marker paging, tags, members, JSON-patch updates, data upload, and
 * the schemas and version documents clients read. Seeded with ministack's
 * public `ubuntu-22.04` image.
 */
import express from 'express';
import type { SimulatedService, SimulatorContext } from '../framework.js';
import { glanceError } from './errors.js';
import { imageDataRoutes } from './image-data.js';
import { imageRoutes } from './images.js';
import { memberRoutes } from './members.js';
import { GlanceStore } from './model.js';
import { servePeers } from './peers.js';
import { schemaRoutes } from './schemas.js';
import { restoreStore, snapshotStore } from './snapshot.js';

export function createGlanceSimulator(ctx: SimulatorContext): SimulatedService {
  const store = new GlanceStore(ctx);
  const router = express.Router();
  schemaRoutes(router, ctx);
  imageRoutes(router, store);
  imageDataRoutes(router, store);
  memberRoutes(router, store);
  servePeers(store);
  return {
    type: 'image',
    name: 'glance',
    prefix: '/image',
    publicPaths: [/^\/?$/, /^\/versions\/?$/],
    router: () => router,
    formatError: glanceError,
    state: { snapshot: (blobs) => snapshotStore(store, blobs), restore: (snapshot, blobs) => restoreStore(store, snapshot, blobs) },
    inventory: () => ({ images: store.images.size }),
  };
}
