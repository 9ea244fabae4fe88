/** The simulated Cinder's volume types and availability zones. */
import type { Router } from 'express';
import { fail } from './errors.js';
import { auth, type CinderStore } from './model.js';
import { typeView } from './views.js';

export function typeRoutes(api: Router, store: CinderStore): void {
  api.get('/types', (_req, res) => {
    res.json({ volume_types: [...store.types.values()].map((t) => typeView(t, auth(res))) });
  });
  api.get('/types/default', (_req, res) => {
    res.json({ volume_type: typeView(store.defaultType, auth(res)) });
  });
  api.get('/types/:id', (req, res) => {
    const type = store.types.get(req.params.id as string);
    if (!type) return fail(res, 404, `Volume type ${req.params.id} could not be found.`);
    res.json({ volume_type: typeView(type, auth(res)) });
  });

  api.get('/os-availability-zone', (_req, res) => {
    res.json({ availabilityZoneInfo: store.zones.map((zoneName) => ({ zoneName, zoneState: { available: true } })) });
  });
}
