/**
 * Cinder v3 (block-storage): volumes with their asynchronous status
 * transitions, volume types, availability zones, quotas and limits, and
 * microversion negotiation; attach/detach reach it from Nova through
 * `ctx.peers.blockStorage`, as Nova calls Cinder's attachment API.
 */
import express from 'express';
import type { SimulatedService, SimulatorContext } from '../framework.js';
import { cinderError } from './errors.js';
import { CinderStore } from './model.js';
import { servePeers } from './peers.js';
import { quotaRoutes } from './quotas.js';
import { restoreStore, snapshotStore } from './snapshot.js';
import { typeRoutes } from './types.js';
import { negotiate, sameProject, versionDoc } from './versions.js';
import { volumeRoutes } from './volumes.js';

export function createCinderSimulator(ctx: SimulatorContext): SimulatedService {
  const store = new CinderStore(ctx);
  const router = express.Router();
  router.get('/', (_req, res) => {
    res.status(300).json({ versions: [versionDoc(ctx)] });
  });
  router.get('/v3', (_req, res) => {
    res.json({ versions: [versionDoc(ctx)] });
  });
  const api = express.Router({ mergeParams: true });
  router.use('/v3/:projectId', negotiate, sameProject, api);
  volumeRoutes(api, store, ctx);
  typeRoutes(api, store);
  quotaRoutes(api, store);
  servePeers(store);

  return {
    type: 'block-storage',
    name: 'cinderv3',
    prefix: '/volume',
    publicPaths: [/^\/?$/, /^\/v3\/?$/],
    router: () => router,
    formatError: cinderError,
    state: { snapshot: () => snapshotStore(store), restore: (snapshot) => restoreStore(store, snapshot), resume: () => store.resume() },
    inventory: () => ({ volumes: store.volumes.size, volume_types: store.types.size }),
  };
}
