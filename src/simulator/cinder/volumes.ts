/** The simulated Cinder's volume routes: list (filters, sorting, markers), create, show, update, delete, metadata. */
import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import type { SimulatorContext } from '../framework.js';
import { fail } from './errors.js';
import { atLeast, auth, createSchema, isAdmin, type CinderStore, type Volume } from './model.js';
import { urlProject, version } from './versions.js';
import { detailView, summaryView } from './views.js';

const updateSchema = z.object({
  volume: z.object({
    name: z.string().max(255).nullable().optional(),
    description: z.string().max(255).nullable().optional(),
    display_name: z.string().max(255).nullable().optional(),
    display_description: z.string().max(255).nullable().optional(),
    metadata: z.record(z.string().max(255), z.string().max(255)).nullable().optional(),
  }),
});

const metadataSchema = z.object({ metadata: z.record(z.string().max(255), z.string().max(255)) });

const findVolume = (store: CinderStore, res: Response, id: string): Volume | undefined => {
  const volume = store.volumes.get(id);
  const scope = auth(res);
  if (!volume || (volume.projectId !== scope.projectId && !isAdmin(scope))) {
    fail(res, 404, `Volume ${id} could not be found.`);
    return undefined;
  }
  return volume;
};

export function volumeRoutes(api: Router, store: CinderStore, ctx: SimulatorContext): void {
  const listVolumes = (detail: boolean) => (req: Request, res: Response) => {
    const scope = auth(res);
    const v = version(res);
    const query = z.record(z.string(), z.union([z.string(), z.array(z.string())])).parse(req.query);
    const one = (key: string) => {
      const value = query[key];
      return Array.isArray(value) ? value[value.length - 1] : value;
    };
    const allTenants = isAdmin(scope) && ['1', 'true', 'True'].includes(one('all_tenants') ?? '');
    const projectFilter = allTenants ? one('project_id') : urlProject(res);
    let metadataFilter: Record<string, string> = {};
    const metadataParam = one('metadata');
    if (metadataParam) {
      // python-cinderclient sends a Python dict repr; the API accepts either.
      const parsed = z.record(z.string(), z.string()).safeParse(
        (() => {
          try {
            return JSON.parse(metadataParam.replace(/'/g, '"'));
          } catch {
            return undefined;
          }
        })(),
      );
      if (!parsed.success) return fail(res, 400, `Invalid input received: Invalid filter keys: metadata`);
      metadataFilter = parsed.data;
    }
    const name = one('name');
    const status = one('status');
    const zone = one('availability_zone');
    const bootable = one('bootable');
    let items = [...store.volumes.values()].filter(
      (vol) =>
        (projectFilter === undefined || vol.projectId === projectFilter) &&
        (name === undefined || vol.name === name) &&
        (status === undefined || vol.status === status) &&
        (zone === undefined || vol.availabilityZone === zone) &&
        (bootable === undefined || (vol.imageMetadata ? 'true' : 'false') === bootable.toLowerCase()) &&
        Object.entries(metadataFilter).every(([k, val]) => vol.metadata[k] === val),
    );
    const sortKeys = (one('sort') ?? `${one('sort_key') ?? 'created_at'}:${one('sort_dir') ?? 'desc'}`).split(',').map((s) => {
      const [key = 'created_at', dir = 'desc'] = s.split(':');
      return { key, dir };
    });
    const keyOf = (vol: Volume, key: string): string | number | null => {
      switch (key) {
        case 'created_at':
          return vol.createdAt;
        case 'updated_at':
          return vol.updatedAt;
        case 'name':
          return vol.name;
        case 'size':
          return vol.size;
        case 'status':
          return vol.status;
        case 'id':
          return vol.id;
        default:
          return null;
      }
    };
    const sortable = new Set(['created_at', 'updated_at', 'name', 'size', 'status', 'id']);
    for (const { key, dir } of sortKeys) {
      if (!sortable.has(key)) return fail(res, 400, `Invalid input received: Invalid sort key: ${key}`);
      if (dir !== 'asc' && dir !== 'desc') return fail(res, 400, `Invalid input received: Unknown sort direction, must be 'desc' or 'asc'`);
    }
    items.sort((a, b) => {
      for (const { key, dir } of [...sortKeys, { key: 'id', dir: 'desc' }]) {
        const va = keyOf(a, key);
        const vb = keyOf(b, key);
        if (va === vb) continue;
        const order = va === null ? -1 : vb === null ? 1 : va < vb ? -1 : 1;
        return dir === 'asc' ? order : -order;
      }
      return 0;
    });
    const count = items.length;
    const marker = one('marker');
    if (marker !== undefined) {
      const index = items.findIndex((vol) => vol.id === marker);
      if (index < 0) return fail(res, 404, `Marker ${marker} could not be found.`);
      items = items.slice(index + 1);
    }
    const limitParam = one('limit');
    let pageSize = 1000;
    if (limitParam !== undefined) {
      pageSize = Number(limitParam);
      if (!Number.isInteger(pageSize) || pageSize < 0) return fail(res, 400, 'Invalid input received: limit must be a non-negative integer.');
      pageSize = Math.min(pageSize, 1000);
    }
    const page = items.slice(0, pageSize);
    const body: Record<string, unknown> = { volumes: page.map((vol) => (detail ? detailView(store, vol, v, scope) : summaryView(ctx, vol))) };
    if (items.length > pageSize && page.length > 0) {
      const next = new URLSearchParams();
      for (const [k, val] of Object.entries(query)) if (k !== 'marker') next.set(k, Array.isArray(val) ? val[val.length - 1]! : val);
      next.set('marker', page[page.length - 1]!.id);
      body.volumes_links = [{ href: `${ctx.baseUrl()}/volume/v3/${urlProject(res)}/volumes${detail ? '/detail' : ''}?${next.toString()}`, rel: 'next' }];
    }
    if (atLeast(v, 45) && ['1', 'true', 'True'].includes(one('with_count') ?? '')) body.count = count;
    res.json(body);
  };
  api.get('/volumes', listVolumes(false));
  api.get('/volumes/detail', listVolumes(true));

  api.post('/volumes', (req, res) => {
    const parsed = createSchema.safeParse(req.body);
    if (!parsed.success) return fail(res, 400, `Invalid input received: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    const scope = auth(res);
    const volume = store.createVolume({ projectId: urlProject(res), userId: scope.userId }, parsed.data.volume);
    // Cinder's create response lacks the tenant attribute its GET shows.
    const { 'os-vol-tenant-attr:tenant_id': _tenant, ...created } = detailView(store, volume, version(res), scope);
    res.status(202).json({ volume: created });
  });

  api.get('/volumes/:id', (req, res) => {
    const volume = findVolume(store, res, req.params.id as string);
    if (volume) res.json({ volume: detailView(store, volume, version(res), auth(res)) });
  });

  api.put('/volumes/:id', (req, res) => {
    const volume = findVolume(store, res, req.params.id as string);
    if (!volume) return;
    const parsed = updateSchema.safeParse(req.body);
    if (!parsed.success) return fail(res, 400, `Invalid input received: ${parsed.error.issues[0]?.message ?? 'malformed'}`);
    const spec = parsed.data.volume;
    const name = spec.name !== undefined ? spec.name : spec.display_name;
    const description = spec.description !== undefined ? spec.description : spec.display_description;
    if (name !== undefined) volume.name = name;
    if (description !== undefined) volume.description = description;
    if (spec.metadata) volume.metadata = spec.metadata;
    volume.updatedAt = ctx.clock.now();
    res.json({ volume: detailView(store, volume, version(res), auth(res)) });
  });

  api.delete('/volumes/:id', (req, res) => {
    const volume = findVolume(store, res, req.params.id as string);
    if (!volume) return;
    store.deleteVolume(volume);
    res.status(202).end();
  });

  api.get('/volumes/:id/metadata', (req, res) => {
    const volume = findVolume(store, res, req.params.id as string);
    if (volume) res.json({ metadata: volume.metadata });
  });
  const writeMetadata = (replace: boolean) => (req: Request, res: Response) => {
    const volume = findVolume(store, res, req.params.id as string);
    if (!volume) return;
    const parsed = metadataSchema.safeParse(req.body);
    if (!parsed.success) return fail(res, 400, 'Malformed request body');
    volume.metadata = replace ? parsed.data.metadata : { ...volume.metadata, ...parsed.data.metadata };
    volume.updatedAt = ctx.clock.now();
    res.json({ metadata: volume.metadata });
  };
  api.post('/volumes/:id/metadata', writeMetadata(false));
  api.put('/volumes/:id/metadata', writeMetadata(true));
  api.delete('/volumes/:id/metadata/:key', (req, res) => {
    const volume = findVolume(store, res, req.params.id as string);
    if (!volume) return;
    if (!((req.params.key as string) in volume.metadata)) return fail(res, 404, `Metadata item was not found`);
    delete volume.metadata[req.params.key as string];
    res.status(200).end();
  });
}
