/**
 * Glance v2: images with Glance's visibility rules, list filters, sorting
 * and marker paging, tags, members, JSON-patch updates, data upload, and
 * the schemas and version documents clients read. Seeded with ministack's
 * public `ubuntu-22.04` image.
 */
import { createHash, randomBytes } from 'node:crypto';
import express, { type Response } from 'express';
import { z } from 'zod';
import type { PeerImage, SimulatedService, SimulatorContext, TokenScope } from './framework.js';

type Visibility = 'public' | 'private' | 'shared' | 'community';
type MemberStatus = 'pending' | 'accepted' | 'rejected';

interface Image {
  id: string;
  name: string | null;
  status: 'queued' | 'saving' | 'active' | 'deactivated' | 'killed' | 'deleted' | 'pending_delete' | 'importing' | 'uploading';
  visibility: Visibility;
  protected: boolean;
  os_hidden: boolean;
  owner: string | null;
  size: number | null;
  checksum: string | null;
  os_hash_value: string | null;
  min_ram: number;
  min_disk: number;
  disk_format: string | null;
  container_format: string | null;
  tags: Set<string>;
  properties: Map<string, string>;
  members: Map<string, { status: MemberStatus; createdAt: number; updatedAt: number }>;
  data?: Buffer;
  createdAt: number;
  updatedAt: number;
}

/** webob's explanation texts, which Glance's error bodies start with. */
const explanations: Record<number, [string, string]> = {
  400: ['Bad Request', 'The server could not comply with the request since it is either malformed or otherwise incorrect.'],
  401: ['Unauthorized', 'This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.'],
  403: ['Forbidden', 'Access was denied to this resource.'],
  404: ['Not Found', 'The resource could not be found.'],
  405: ['Method Not Allowed', 'The method is not allowed for this resource.'],
  409: ['Conflict', 'There was a conflict when trying to complete your request.'],
  413: ['Request Entity Too Large', 'The body of your request was too large for this server.'],
  415: ['Unsupported Media Type', 'The request media type is not supported by this server.'],
  429: ['Too Many Requests', 'The client has sent too many requests in a given amount of time.'],
  500: ['Internal Server Error', 'The server has either erred or is incapable of performing the requested operation.'],
  503: ['Service Unavailable', 'The server is currently unavailable. Please try again at a later time.'],
};

/**
 * webob's JSON rendering of an HTTP exception (Glance raises webob exceptions
 * with its message as the explanation; clients send Accept: application/json).
 */
export function glanceError(status: number, message?: string) {
  const [title, explanation] = explanations[status] ?? ['Error', ''];
  return { message: `${message ?? explanation}<br /><br />\n\n\n`, code: `${status} ${title}`, title };
}

/** Glance's timestamps have no fraction. */
const timestamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const coreKeys = new Set([
  'id', 'name', 'status', 'visibility', 'protected', 'os_hidden', 'owner', 'size', 'virtual_size', 'checksum', 'os_hash_algo', 'os_hash_value',
  'min_ram', 'min_disk', 'disk_format', 'container_format', 'tags', 'created_at', 'updated_at', 'self', 'file', 'schema', 'locations', 'direct_url', 'stores',
]);
const readOnlyKeys = new Set(['id', 'status', 'owner', 'size', 'virtual_size', 'checksum', 'os_hash_algo', 'os_hash_value', 'created_at', 'updated_at', 'self', 'file', 'schema', 'locations', 'direct_url', 'stores']);
const diskFormats = ['ami', 'ari', 'aki', 'vhd', 'vhdx', 'vmdk', 'raw', 'qcow2', 'vdi', 'iso', 'ploop'];
const containerFormats = ['ami', 'ari', 'aki', 'bare', 'ovf', 'ova', 'docker', 'compressed'];

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

const memberStatusSchema = z.object({ status: z.enum(['pending', 'accepted', 'rejected']) });

const schemaProperties = {
  id: { type: 'string', pattern: '^([0-9a-fA-F]){8}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){4}-([0-9a-fA-F]){12}$', description: 'An identifier for the image' },
  name: { type: ['null', 'string'], maxLength: 255, description: 'Descriptive name for the image' },
  status: { type: 'string', readOnly: true, enum: ['queued', 'saving', 'active', 'killed', 'deleted', 'uploading', 'importing', 'pending_delete', 'deactivated'], description: 'Status of the image' },
  visibility: { type: 'string', enum: ['community', 'public', 'private', 'shared'], description: 'Scope of image accessibility' },
  protected: { type: 'boolean', description: 'If true, image will not be deletable.' },
  os_hidden: { type: 'boolean', description: 'If true, image will not appear in default image list response.' },
  checksum: { type: ['null', 'string'], readOnly: true, maxLength: 32, description: 'md5 hash of image contents.' },
  os_hash_algo: { type: ['null', 'string'], readOnly: true, maxLength: 64, description: 'Algorithm to calculate the os_hash_value' },
  os_hash_value: { type: ['null', 'string'], readOnly: true, maxLength: 128, description: 'Hexdigest of the image contents using the algorithm specified by the os_hash_algo' },
  owner: { type: ['null', 'string'], maxLength: 255, description: 'Owner of the image' },
  size: { type: ['null', 'integer'], readOnly: true, description: 'Size of image file in bytes' },
  virtual_size: { type: ['null', 'integer'], readOnly: true, description: 'Virtual size of image in bytes' },
  container_format: { type: ['null', 'string'], enum: [null, ...containerFormats], description: 'Format of the container' },
  disk_format: { type: ['null', 'string'], enum: [null, ...diskFormats], description: 'Format of the disk' },
  created_at: { type: 'string', readOnly: true, description: 'Date and time of image registration' },
  updated_at: { type: 'string', readOnly: true, description: 'Date and time of the last image modification' },
  tags: { type: 'array', items: { type: 'string', maxLength: 255 }, description: 'List of strings related to the image' },
  direct_url: { type: 'string', readOnly: true, description: 'URL to access the image file kept in external store' },
  min_ram: { type: 'integer', description: 'Amount of ram (in MB) required to boot image.' },
  min_disk: { type: 'integer', description: 'Amount of disk space (in GB) required to boot image.' },
  self: { type: 'string', readOnly: true, description: 'An image self url' },
  file: { type: 'string', readOnly: true, description: 'An image file url' },
  stores: { type: 'string', readOnly: true, description: 'Store in which image data resides.  Only present when the operator has enabled multiple stores.' },
  schema: { type: 'string', readOnly: true, description: 'An image schema url' },
  locations: { type: 'array', items: { type: 'object', properties: { url: { type: 'string', maxLength: 255 }, metadata: { type: 'object' } }, required: ['url', 'metadata'] }, description: 'A set of URLs to access the image file kept in external store' },
  os_distro: { type: 'string', is_base: false, description: 'Common name of operating system distribution as specified in https://docs.openstack.org/python-glanceclient/latest/cli/property-keys.html' },
  os_version: { type: 'string', is_base: false, description: 'Operating system version as specified by the distributor' },
};
const imageSchema = {
  name: 'image',
  properties: schemaProperties,
  additionalProperties: { type: 'string' },
  links: [
    { rel: 'self', href: '{self}' },
    { rel: 'enclosure', href: '{file}' },
    { rel: 'describedby', href: '{schema}' },
  ],
};

export function createGlanceSimulator(ctx: SimulatorContext): SimulatedService {
  const images = new Map<string, Image>();

  const adminProject = ctx.projectIdByName('admin') ?? null;
  const seedData = randomBytes(1024 * 1024);
  const now = ctx.clock.now();
  const seedId = ctx.newId();
  images.set(seedId, {
    id: seedId,
    name: 'ubuntu-22.04',
    status: 'active',
    visibility: 'public',
    protected: false,
    os_hidden: false,
    owner: adminProject,
    size: seedData.length,
    checksum: createHash('md5').update(seedData).digest('hex'),
    os_hash_value: createHash('sha512').update(seedData).digest('hex'),
    min_ram: 0,
    min_disk: 0,
    disk_format: 'qcow2',
    container_format: 'bare',
    tags: new Set(),
    properties: new Map([
      ['os_distro', 'ubuntu'],
      ['os_version', '22.04'],
    ]),
    members: new Map(),
    data: seedData,
    createdAt: now,
    updatedAt: now,
  });

  const isAdmin = (auth: TokenScope) => auth.roles.includes('admin');
  const memberStatus = (image: Image, projectId: string) => image.members.get(projectId)?.status;
  /** Glance's visibility rule for a single image (GET by id). */
  const canSee = (image: Image, auth: TokenScope) =>
    isAdmin(auth) || image.owner === auth.projectId || image.visibility === 'public' || image.visibility === 'community' || (image.visibility === 'shared' && image.members.has(auth.projectId));

  const view = (image: Image) => {
    const body: Record<string, unknown> = {
      name: image.name,
      disk_format: image.disk_format,
      container_format: image.container_format,
      visibility: image.visibility,
      size: image.size,
      virtual_size: null,
      status: image.status,
      checksum: image.checksum,
      protected: image.protected,
      min_ram: image.min_ram,
      min_disk: image.min_disk,
      owner: image.owner,
      os_hidden: image.os_hidden,
      os_hash_algo: image.os_hash_value ? 'sha512' : null,
      os_hash_value: image.os_hash_value,
      id: image.id,
      created_at: timestamp(image.createdAt),
      updated_at: timestamp(image.updatedAt),
      tags: [...image.tags],
      self: `/v2/images/${image.id}`,
      file: `/v2/images/${image.id}/file`,
      schema: '/v2/schemas/image',
    };
    for (const [key, value] of image.properties) body[key] = value;
    if (image.data) body.stores = 'fs';
    return body;
  };

  const fail = (res: Response, status: number, detail?: string) => {
    res.status(status).json(glanceError(status, detail));
  };
  const auth = (res: Response) => res.locals.auth as TokenScope;
  const visibleImage = (res: Response, id: string): Image | undefined => {
    const image = images.get(id);
    if (!image || !canSee(image, auth(res))) {
      fail(res, 404, `No image found with ID ${id}`);
      return undefined;
    }
    return image;
  };
  const ownedImage = (res: Response, id: string): Image | undefined => {
    const image = visibleImage(res, id);
    if (!image) return undefined;
    if (!isAdmin(auth(res)) && image.owner !== auth(res).projectId) {
      fail(res, 403, `You are not permitted to modify this image.`);
      return undefined;
    }
    return image;
  };
  const touch = (image: Image) => {
    image.updatedAt = ctx.clock.now();
  };

  const versions = () => {
    const href = `${ctx.baseUrl()}/image/v2/`;
    const ids: [string, string][] = [['v2.16', 'CURRENT'], ...['2.15', '2.14', '2.13', '2.12', '2.11', '2.10', '2.9', '2.8', '2.7', '2.6', '2.5', '2.4', '2.3', '2.2', '2.1', '2.0'].map((v): [string, string] => [`v${v}`, 'SUPPORTED'])];
    return { versions: ids.map(([id, status]) => ({ id, status, links: [{ rel: 'self', href }] })) };
  };

  const router = express.Router();
  router.get('/', (_req, res) => {
    res.status(300).json(versions());
  });
  router.get('/versions', (_req, res) => {
    res.json(versions());
  });
  router.get('/v2/schemas/image', (_req, res) => {
    res.json(imageSchema);
  });
  router.get('/v2/schemas/images', (_req, res) => {
    res.json({
      name: 'images',
      properties: {
        images: { type: 'array', items: imageSchema },
        schema: { type: 'string' },
        first: { type: 'string' },
        next: { type: 'string' },
      },
      links: [
        { rel: 'first', href: '{first}' },
        { rel: 'next', href: '{next}' },
        { rel: 'describedby', href: '{schema}' },
      ],
    });
  });
  router.get('/v2/schemas/member', (_req, res) => {
    res.json({
      name: 'member',
      properties: {
        created_at: { type: 'string', description: 'Date and time of image member creation' },
        image_id: { type: 'string', description: 'An identifier for the image' },
        member_id: { type: 'string', description: 'An identifier for the image member (tenantId)' },
        schema: { type: 'string', readOnly: true },
        status: { type: 'string', enum: ['pending', 'accepted', 'rejected'], description: 'The status of this image member' },
        updated_at: { type: 'string', description: 'Date and time of last modification of image member' },
      },
    });
  });

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
    const sortable = new Set(['name', 'status', 'container_format', 'disk_format', 'size', 'id', 'created_at', 'updated_at', 'visibility', 'owner', 'min_disk', 'min_ram']);
    for (const { key } of sortKeys) if (!sortable.has(key)) return bad(`Invalid sort key: ${key}. It must be one of the following: ${[...sortable].join(', ')}.`);
    if (!sortKeys.some((s) => s.key === 'created_at')) sortKeys.push({ key: 'created_at', dir: 'desc' });
    if (!sortKeys.some((s) => s.key === 'id')) sortKeys.push({ key: 'id', dir: 'desc' });

    /** `in:"a","b"` lists and `gt:`-style operators are Glance's filter syntax; plain values match exactly. */
    const valueMatches = (actual: string | number | null, filter: string): boolean => {
      if (filter.startsWith('in:')) {
        const options = filter.slice(3).split(',').map((v) => v.trim().replace(/^"(.*)"$/, '$1'));
        return options.includes(String(actual));
      }
      return String(actual) === filter;
    };
    const reserved = new Set(['limit', 'marker', 'sort', 'sort_key', 'sort_dir', 'visibility', 'member_status', 'tag', 'size_min', 'size_max', 'os_hidden']);

    const candidates = [...images.values()].filter((image) => {
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
    const id = spec.id ?? ctx.newId();
    if (images.has(id)) return fail(res, 409, `Image with identifier ${id} already exists!`);
    const properties = new Map<string, string>();
    for (const [key, value] of Object.entries(spec)) if (!coreKeys.has(key) && typeof value === 'string') properties.set(key, value);
    const created = ctx.clock.now();
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
    images.set(id, image);
    res.status(201).location(`/v2/images/${id}`).json(view(image));
  });

  router.get('/v2/images/:id', (req, res) => {
    const image = visibleImage(res, req.params.id);
    if (image) res.json(view(image));
  });

  router.patch('/v2/images/:id', (req, res) => {
    const image = ownedImage(res, req.params.id);
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
        case 'name': changed.name = v.name as string | null; break;
        case 'visibility':
          if (v.visibility === 'public' && !isAdmin(auth(res))) return fail(res, 403, 'You are not authorized to complete publicize_image action.');
          changed.visibility = v.visibility as Visibility;
          break;
        case 'protected': changed.protected = v.protected as boolean; break;
        case 'os_hidden': changed.os_hidden = v.os_hidden as boolean; break;
        case 'min_ram': changed.min_ram = v.min_ram as number; break;
        case 'min_disk': changed.min_disk = v.min_disk as number; break;
        case 'disk_format':
        case 'container_format':
          if (image.status !== 'queued') return fail(res, 403, `Attribute ${key} can be only replaced for a queued image.`);
          changed[key] = v[key] as string | null;
          break;
        case 'tags': changed.tags = new Set(v.tags as string[]); break;
        default:
          if (op === 'replace' && !changed.properties.has(key)) return fail(res, 409, `Property ${key} does not exist.`);
          changed.properties.set(key, v[key] as string);
      }
    }
    Object.assign(image, changed);
    touch(image);
    res.json(view(image));
  });

  router.delete('/v2/images/:id', (req, res) => {
    const image = ownedImage(res, req.params.id);
    if (!image) return;
    if (image.protected) return fail(res, 403, `Image ${image.id} is protected and cannot be deleted.`);
    images.delete(image.id);
    res.status(204).end();
  });

  router.put('/v2/images/:id/file', express.raw({ type: () => true, limit: '1gb' }), (req, res) => {
    const image = ownedImage(res, req.params.id);
    if (!image) return;
    if (image.status !== 'queued') return fail(res, 409, `Image status transition from ${image.status} to saving is not allowed`);
    const data = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    image.data = data;
    image.size = data.length;
    image.checksum = createHash('md5').update(data).digest('hex');
    image.os_hash_value = createHash('sha512').update(data).digest('hex');
    image.status = 'active';
    touch(image);
    res.status(204).end();
  });
  router.get('/v2/images/:id/file', (req, res) => {
    const image = visibleImage(res, req.params.id);
    if (!image) return;
    if (!image.data) return void res.status(204).end();
    res.setHeader('Content-Type', 'application/octet-stream');
    if (image.checksum) res.setHeader('Content-MD5', image.checksum);
    res.send(image.data);
  });

  router.put('/v2/images/:id/tags/:tag', (req, res) => {
    const image = ownedImage(res, req.params.id);
    if (!image) return;
    if (image.tags.size >= 128 && !image.tags.has(req.params.tag)) return fail(res, 413, 'Maximum number of tags exceeded.');
    image.tags.add(req.params.tag);
    touch(image);
    res.status(204).end();
  });
  router.delete('/v2/images/:id/tags/:tag', (req, res) => {
    const image = ownedImage(res, req.params.id);
    if (!image) return;
    if (!image.tags.delete(req.params.tag)) return fail(res, 404, `Tag ${req.params.tag} not found.`);
    touch(image);
    res.status(204).end();
  });

  const memberView = (image: Image, memberId: string) => {
    const m = image.members.get(memberId)!;
    return { created_at: timestamp(m.createdAt), image_id: image.id, member_id: memberId, schema: '/v2/schemas/member', status: m.status, updated_at: timestamp(m.updatedAt) };
  };
  router.get('/v2/images/:id/members', (req, res) => {
    const image = visibleImage(res, req.params.id);
    if (!image) return;
    const caller = auth(res);
    const members = isAdmin(caller) || image.owner === caller.projectId ? [...image.members.keys()] : image.members.has(caller.projectId) ? [caller.projectId] : [];
    res.json({ members: members.map((m) => memberView(image, m)), schema: '/v2/schemas/members' });
  });
  router.post('/v2/images/:id/members', (req, res) => {
    const image = ownedImage(res, req.params.id);
    if (!image) return;
    const parsed = z.object({ member: z.string().min(1) }).safeParse(req.body);
    if (!parsed.success) return fail(res, 400, 'Member to be added not specified');
    if (image.visibility !== 'shared') return fail(res, 403, `Only shared images have members.`);
    if (image.members.has(parsed.data.member)) return fail(res, 409, `Member ${parsed.data.member} already associated with image ${image.id}`);
    const t = ctx.clock.now();
    image.members.set(parsed.data.member, { status: 'pending', createdAt: t, updatedAt: t });
    res.json(memberView(image, parsed.data.member));
  });
  router.put('/v2/images/:id/members/:member', (req, res) => {
    const image = visibleImage(res, req.params.id);
    if (!image) return;
    const member = image.members.get(req.params.member);
    if (!member) return fail(res, 404, `${req.params.member} is not a member of image ${image.id}`);
    if (auth(res).projectId !== req.params.member && !isAdmin(auth(res))) return fail(res, 403, 'You are not permitted to modify this image member.');
    const parsed = memberStatusSchema.safeParse(req.body);
    if (!parsed.success) return fail(res, 400, 'Status not specified');
    member.status = parsed.data.status;
    member.updatedAt = ctx.clock.now();
    res.json(memberView(image, req.params.member));
  });
  router.delete('/v2/images/:id/members/:member', (req, res) => {
    const image = ownedImage(res, req.params.id);
    if (!image) return;
    if (!image.members.delete(req.params.member)) return fail(res, 404, `${req.params.member} is not a member of image ${image.id}`);
    res.status(204).end();
  });

  ctx.peers.image = {
    getImage(id, projectId): PeerImage | undefined {
      const image = images.get(id);
      const visible = image && (image.owner === projectId || image.visibility === 'public' || image.visibility === 'community' || (image.visibility === 'shared' && image.members.has(projectId)));
      if (!image || !visible) return undefined;
      return {
        id: image.id,
        name: image.name,
        status: image.status,
        visibility: image.visibility,
        owner: image.owner,
        min_disk: image.min_disk,
        min_ram: image.min_ram,
        size: image.size,
        disk_format: image.disk_format,
        container_format: image.container_format,
      };
    },
  };

  return {
    type: 'image',
    name: 'glance',
    prefix: '/image',
    publicPaths: [/^\/?$/, /^\/versions\/?$/],
    router: () => router,
    formatError: glanceError,
    inventory: () => ({ images: images.size }),
  };
}
