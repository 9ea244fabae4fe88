/** The simulated Glance's image routes: list (filters, sorting, markers), create, show, JSON-patch update, delete, tags. */
import type { Router } from 'express';
import { z } from 'zod';
import { fail } from './errors.js';
import {
  auth,
  canSee,
  containerFormats,
  coreKeys,
  diskFormats,
  isAdmin,
  memberStatus,
  ownedImage,
  readOnlyKeys,
  view,
  visibleImage,
  type GlanceStore,
  type Image,
  type Visibility,
} from './model.js';

const createSchema = z
  .object({
    id: z.uuid().optional(),
    name: z.string().max(255).nullable().optional(),
    visibility: z.enum(['public', 'private', 'shared', 'community']).optional(),
    protected: z.boolean().optional(),
    os_hidden: z.boolean().optional(),
    min_ram: z.number().int().min(0).optional(),
    min_disk: z.number().int().min(0).optional(),
    disk_format: z.enum(diskFormats).nullable().optional(),
    container_format: z.enum(containerFormats).nullable().optional(),
    tags: z.array(z.string().max(255)).optional(),
  })
  .catchall(z.string().max(65535));

const patchSchema = z.array(
  z.object({
    op: z.enum(['add', 'replace', 'remove']),
    path: z.string().regex(/^\/[^/]+$/),
    value: z.unknown().optional(),
  }),
);

export function imageRoutes(router: Router, store: GlanceStore): void {
  router.get('/v2/images', (req, res) => {
    const caller = auth(res);
    const query = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
    const one = (key: string) => query.get(key) ?? undefined;
    const bad = (detail: string) => fail(res, 400, detail);

    let limit = 25;
    if (one('limit') !== undefined) {
      limit = Number(one('limit'));
      if (!Number.isInteger(limit) || limit < 0) return bad('limit param must be positive');
      limit = Math.min(limit, 1000);
    }
    const visibility = one('visibility');
    if (visibility && !['public', 'private', 'shared', 'community', 'all'].includes(visibility)) return bad(`Invalid visibility value: ${visibility}`);
    const memberFilter = one('member_status') ?? 'accepted';
    if (!['pending', 'accepted', 'rejected', 'all'].includes(memberFilter)) return bad(`Invalid status value: ${memberFilter}`);

    let sortKeys: { key: string; dir: 'asc' | 'desc' }[];
    const sort = one('sort');
    if (sort) {
      if (query.has('sort_key') || query.has('sort_dir')) return bad('The "sort" parameter cannot be combined with "sort_key" or "sort_dir".');
      sortKeys = sort.split(',').map((part) => {
        const [key = '', dir = 'desc'] = part.split(':');
        return { key, dir: dir === 'asc' ? 'asc' : 'desc' };
      });
    } else {
      const dirs = query.getAll('sort_dir');
      sortKeys = query.getAll('sort_key').map((key, i) => ({ key, dir: (dirs[i] ?? dirs[0] ?? 'desc') === 'asc' ? 'asc' : 'desc' }));
    }
    const sortable = new Set([
      'name',
      'status',
      'container_format',
      'disk_format',
      'size',
      'id',
      'created_at',
      'updated_at',
      'visibility',
      'owner',
      'min_disk',
      'min_ram',
    ]);
    for (const { key } of sortKeys)
      if (!sortable.has(key)) return bad(`Invalid sort key: ${key}. It must be one of the following: ${[...sortable].join(', ')}.`);
    if (!sortKeys.some((s) => s.key === 'created_at')) sortKeys.push({ key: 'created_at', dir: 'desc' });
    if (!sortKeys.some((s) => s.key === 'id')) sortKeys.push({ key: 'id', dir: 'desc' });

    /** `in:"a","b"` lists and `gt:`-style operators are Glance's filter syntax; plain values match exactly. */
    const valueMatches = (actual: string | number | null, filter: string): boolean => {
      if (filter.startsWith('in:')) {
        const options = filter
          .slice(3)
          .split(',')
          .map((v) => v.trim().replace(/^"(.*)"$/, '$1'));
        return options.includes(String(actual));
      }
      return String(actual) === filter;
    };
    const reserved = new Set(['limit', 'marker', 'sort', 'sort_key', 'sort_dir', 'visibility', 'member_status', 'tag', 'size_min', 'size_max', 'os_hidden']);

    const candidates = [...store.images.values()].filter((image) => {
      const ownerOrAdmin = isAdmin(caller) || image.owner === caller.projectId;
      const member = memberStatus(image, caller.projectId);
      switch (visibility) {
        case undefined:
          if (image.visibility === 'community') return false;
          if (image.visibility === 'shared' && !ownerOrAdmin && (memberFilter === 'all' ? !member : member !== memberFilter)) return false;
          if (image.visibility === 'private' && !ownerOrAdmin) return false;
          break;
        case 'all':
          if (!canSee(image, caller)) return false;
          break;
        case 'shared':
          if (image.visibility !== 'shared') return false;
          if (!ownerOrAdmin && (memberFilter === 'all' ? !member : member !== memberFilter)) return false;
          break;
        default:
          if (image.visibility !== visibility || !canSee(image, caller)) return false;
      }
      const hidden = one('os_hidden');
      if ((hidden === 'true') !== image.os_hidden) return false;
      for (const tag of query.getAll('tag')) if (!image.tags.has(tag)) return false;
      const sizeMin = one('size_min');
      if (sizeMin !== undefined && (image.size === null || image.size < Number(sizeMin))) return false;
      const sizeMax = one('size_max');
      if (sizeMax !== undefined && (image.size === null || image.size > Number(sizeMax))) return false;
      for (const key of new Set(query.keys())) {
        if (reserved.has(key)) continue;
        const filter = query.get(key)!;
        const core = view(image)[key];
        const actual = coreKeys.has(key) ? (core as string | number | null) : (image.properties.get(key) ?? undefined);
        if (actual === undefined || !valueMatches(actual, filter)) return false;
      }
      return true;
    });

    const compareBy = (a: Image, b: Image): number => {
      for (const { key, dir } of sortKeys) {
        const va = key === 'created_at' ? a.createdAt : key === 'updated_at' ? a.updatedAt : (a as unknown as Record<string, unknown>)[key];
        const vb = key === 'created_at' ? b.createdAt : key === 'updated_at' ? b.updatedAt : (b as unknown as Record<string, unknown>)[key];
        if (va === vb) continue;
        // Glance (SQL) orders NULLs first ascending.
        const order = va === null || va === undefined ? -1 : vb === null || vb === undefined ? 1 : (va as string | number) < (vb as string | number) ? -1 : 1;
        return dir === 'asc' ? order : -order;
      }
      return 0;
    };
    candidates.sort(compareBy);

    let start = 0;
    const marker = one('marker');
    if (marker !== undefined) {
      const index = candidates.findIndex((image) => image.id === marker);
      if (index < 0) return fail(res, 400, `marker ${marker} could not be found.`);
      start = index + 1;
    }
    const page = candidates.slice(start, start + limit);
    const body: Record<string, unknown> = { images: page.map(view), first: '/v2/images', schema: '/v2/schemas/images' };
    if (page.length === limit && limit > 0) {
      const next = new URLSearchParams(query);
      next.set('marker', page[page.length - 1]!.id);
      body.next = `/v2/images?${next.toString()}`;
    }
    res.json(body);
  });

  router.post('/v2/images', (req, res) => {
    const caller = auth(res);
    const parsed = createSchema.safeParse(req.body ?? {});
    if (!parsed.success) return fail(res, 400, parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    const spec = parsed.data;
    for (const key of Object.keys(spec)) if (readOnlyKeys.has(key) && key !== 'id') return fail(res, 403, `Attribute '${key}' is read-only.`);
    if (spec.visibility === 'public' && !isAdmin(caller)) return fail(res, 403, 'You are not authorized to complete publicize_image action.');
    const id = spec.id ?? store.ctx.newId();
    if (store.images.has(id)) return fail(res, 409, `Image with identifier ${id} already exists!`);
    const properties = new Map<string, string>();
    for (const [key, value] of Object.entries(spec)) if (!coreKeys.has(key) && typeof value === 'string') properties.set(key, value);
    const created = store.ctx.clock.now();
    const image: Image = {
      id,
      name: spec.name ?? null,
      status: 'queued',
      visibility: spec.visibility ?? 'shared',
      protected: spec.protected ?? false,
      os_hidden: spec.os_hidden ?? false,
      owner: caller.projectId,
      size: null,
      checksum: null,
      os_hash_value: null,
      min_ram: spec.min_ram ?? 0,
      min_disk: spec.min_disk ?? 0,
      disk_format: spec.disk_format ?? null,
      container_format: spec.container_format ?? null,
      tags: new Set(spec.tags ?? []),
      properties,
      members: new Map(),
      createdAt: created,
      updatedAt: created,
    };
    store.images.set(id, image);
    res.status(201).location(`/v2/images/${id}`).json(view(image));
  });

  router.get('/v2/images/:id', (req, res) => {
    const image = visibleImage(store, res, req.params.id);
    if (image) res.json(view(image));
  });

  router.patch('/v2/images/:id', (req, res) => {
    const image = ownedImage(store, res, req.params.id);
    if (!image) return;
    const contentType = req.headers['content-type'] ?? '';
    if (!contentType.startsWith('application/openstack-images-v2.1-json-patch') && !contentType.startsWith('application/openstack-images-v2.0-json-patch')) {
      return fail(res, 415, `Invalid media type '${contentType}' for PATCH. Expected 'application/openstack-images-v2.1-json-patch'.`);
    }
    const parsed = patchSchema.safeParse(req.body);
    if (!parsed.success) return fail(res, 400, 'Unable to parse the JSON-patch request body.');
    const changed = { ...image, tags: new Set(image.tags), properties: new Map(image.properties) };
    for (const { op, path, value } of parsed.data) {
      const key = path.slice(1);
      if (readOnlyKeys.has(key)) return fail(res, 403, `Attribute '${key}' is read-only.`);
      if (op === 'remove') {
        if (coreKeys.has(key)) return fail(res, 403, `Attribute '${key}' is reserved.`);
        if (!changed.properties.delete(key)) return fail(res, 409, `Property ${key} does not exist.`);
        continue;
      }
      const partial = createSchema.safeParse({ [key]: value });
      if (!partial.success) return fail(res, 400, `Invalid value for '${key}'.`);
      const v = partial.data as Record<string, unknown>;
      switch (key) {
        case 'name':
          changed.name = v.name as string | null;
          break;
        case 'visibility':
          if (v.visibility === 'public' && !isAdmin(auth(res))) return fail(res, 403, 'You are not authorized to complete publicize_image action.');
          changed.visibility = v.visibility as Visibility;
          break;
        case 'protected':
          changed.protected = v.protected as boolean;
          break;
        case 'os_hidden':
          changed.os_hidden = v.os_hidden as boolean;
          break;
        case 'min_ram':
          changed.min_ram = v.min_ram as number;
          break;
        case 'min_disk':
          changed.min_disk = v.min_disk as number;
          break;
        case 'disk_format':
        case 'container_format':
          if (image.status !== 'queued') return fail(res, 403, `Attribute ${key} can be only replaced for a queued image.`);
          changed[key] = v[key] as string | null;
          break;
        case 'tags':
          changed.tags = new Set(v.tags as string[]);
          break;
        default:
          if (op === 'replace' && !changed.properties.has(key)) return fail(res, 409, `Property ${key} does not exist.`);
          changed.properties.set(key, v[key] as string);
      }
    }
    Object.assign(image, changed);
    store.touch(image);
    res.json(view(image));
  });

  router.delete('/v2/images/:id', (req, res) => {
    const image = ownedImage(store, res, req.params.id);
    if (!image) return;
    if (image.protected) return fail(res, 403, `Image ${image.id} is protected and cannot be deleted.`);
    store.remove(image);
    res.status(204).end();
  });

  router.put('/v2/images/:id/tags/:tag', (req, res) => {
    const image = ownedImage(store, res, req.params.id);
    if (!image) return;
    if (image.tags.size >= 128 && !image.tags.has(req.params.tag)) return fail(res, 413, 'Maximum number of tags exceeded.');
    image.tags.add(req.params.tag);
    store.touch(image);
    res.status(204).end();
  });
  router.delete('/v2/images/:id/tags/:tag', (req, res) => {
    const image = ownedImage(store, res, req.params.id);
    if (!image) return;
    if (!image.tags.delete(req.params.tag)) return fail(res, 404, `Tag ${req.params.tag} not found.`);
    store.touch(image);
    res.status(204).end();
  });
}
