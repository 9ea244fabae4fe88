/**
 * Cinder v3 (block-storage): volumes with their asynchronous status
 * transitions, volume types, availability zones, quotas and limits, and
 * microversion negotiation; attach/detach reach it from Nova through
 * `ctx.peers.blockStorage`, as Nova calls Cinder's attachment API.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import { wsgiFault } from './faults.js';
import { SimulatorError, type PeerVolume, type SimulatedService, type SimulatorContext, type TokenScope } from './framework.js';

const MIN_VERSION = { major: 3, minor: 0 };
const MAX_VERSION = { major: 3, minor: 70 };

type VolumeStatus = 'creating' | 'available' | 'reserved' | 'attaching' | 'in-use' | 'detaching' | 'deleting' | 'error' | 'error_deleting' | 'extending';

interface Attachment {
  id: string;
  serverId: string;
  device: string | null;
  hostName: string | null;
  attachedAt: number;
}

interface Volume {
  id: string;
  name: string | null;
  description: string | null;
  projectId: string;
  userId: string;
  status: VolumeStatus;
  size: number;
  availabilityZone: string;
  volumeTypeId: string;
  imageMetadata?: Record<string, string>;
  metadata: Record<string, string>;
  attachments: Attachment[];
  multiattach: boolean;
  createdAt: number;
  updatedAt: number;
}

interface VolumeType {
  id: string;
  name: string;
  description: string | null;
  extraSpecs: Record<string, string>;
}

const defaultMessages: Record<number, string> = {
  400: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  403: 'Policy does not allow this action to be performed.',
  404: 'The resource could not be found.',
  409: 'There was a conflict when trying to complete your request.',
  413: 'The request is larger than the server is willing or able to process.',
  429: 'The client has sent too many requests in a given amount of time.',
  500: 'The server has either erred or is incapable of performing the requested operation.',
  503: 'The server is currently unavailable. Please try again at a later time.',
};

/** Cinder's Fault rendering (cinder.api.openstack.wsgi.Fault). */
export const cinderError = wsgiFault(defaultMessages, 'An unknown error occurred.');

/** Cinder's timestamps: microseconds, no zone. */
const timestamp = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000');

/** Cinder's defaults from cinder.conf ([DEFAULT] quota_*). */
const quotaDefaults: Record<string, number> = {
  volumes: 10,
  gigabytes: 1000,
  snapshots: 10,
  backups: 10,
  backup_gigabytes: 1000,
  per_volume_gigabytes: Infinity,
  groups: 10,
};

const IN_USE_DELETE_MESSAGE =
  'Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.';

const createSchema = z.object({
  volume: z.object({
    size: z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]).nullable().optional(),
    name: z.string().max(255).nullable().optional(),
    description: z.string().max(255).nullable().optional(),
    display_name: z.string().max(255).nullable().optional(),
    display_description: z.string().max(255).nullable().optional(),
    volume_type: z.string().nullable().optional(),
    availability_zone: z.string().nullable().optional(),
    imageRef: z.string().nullable().optional(),
    image_id: z.string().nullable().optional(),
    snapshot_id: z.string().nullable().optional(),
    source_volid: z.string().nullable().optional(),
    metadata: z.record(z.string().max(255), z.string().max(255)).nullable().optional(),
    multiattach: z.boolean().optional(),
    consistencygroup_id: z.string().nullable().optional(),
    group_id: z.string().nullable().optional(),
    backup_id: z.string().nullable().optional(),
  }),
});

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
const quotaUpdateSchema = z.object({ quota_set: z.record(z.string(), z.union([z.number().int(), z.string().regex(/^-?\d+$/).transform(Number)])) });

interface Microversion {
  major: number;
  minor: number;
}
const atLeast = (v: Microversion, minor: number) => v.minor >= minor;

export function createCinderSimulator(ctx: SimulatorContext): SimulatedService {
  const volumes = new Map<string, Volume>();
  const types = new Map<string, VolumeType>();
  const defaultType: VolumeType = { id: ctx.newId(), name: '__DEFAULT__', description: 'Default Volume Type', extraSpecs: {} };
  types.set(defaultType.id, defaultType);
  const zones = ['nova'];

  const fail = (res: Response, status: number, message?: string) => {
    res.status(status).json(cinderError(status, message));
  };
  const auth = (res: Response) => res.locals.auth as TokenScope;
  const version = (res: Response) => res.locals.volumeVersion as Microversion;
  /** The project in the URL (mergeParams is invisible to express's types). */
  const urlProject = (res: Response) => res.locals.projectId as string;
  const isAdmin = (scope: TokenScope) => scope.roles.includes('admin');

  const usage = (projectId: string) => {
    let count = 0;
    let gigabytes = 0;
    for (const v of volumes.values()) {
      if (v.projectId !== projectId) continue;
      count += 1;
      gigabytes += v.size;
    }
    return { volumes: count, gigabytes };
  };
  const limit = (projectId: string, resource: string) => ctx.quota(projectId, resource, quotaDefaults[resource] ?? Infinity);
  /** Cinder's reservation check; the messages are those of VolumeSizeExceedsAvailableQuota and VolumeLimitExceeded. */
  const checkQuota = (projectId: string, size: number) => {
    const used = usage(projectId);
    const perVolume = limit(projectId, 'per_volume_gigabytes');
    if (size > perVolume) {
      throw new SimulatorError(413, `Volume size ${size}G exceeded the per volume gigabytes quota of ${perVolume}G.`, 'VolumeSizeExceedsLimit');
    }
    const gigabytes = limit(projectId, 'gigabytes');
    if (used.gigabytes + size > gigabytes) {
      throw new SimulatorError(413, `Requested volume or snapshot exceeds allowed gigabytes quota. Requested ${size}G, quota is ${gigabytes}G and ${used.gigabytes}G has been consumed.`, 'VolumeSizeExceedsAvailableQuota');
    }
    const count = limit(projectId, 'volumes');
    if (used.volumes + 1 > count) {
      throw new SimulatorError(413, `Maximum number of volumes allowed (${count}) exceeded for quota 'volumes'.`, 'VolumeLimitExceeded');
    }
  };

  const transition = (volume: Volume, to: VolumeStatus, when: VolumeStatus[]) => {
    ctx.clock.after(ctx.transitionDelayMs, () => {
      if (volumes.get(volume.id) !== volume || !when.includes(volume.status)) return;
      volume.status = to;
      volume.updatedAt = ctx.clock.now();
    });
  };

  const createVolume = (scope: { projectId: string; userId: string }, spec: z.infer<typeof createSchema>['volume']): Volume => {
    const imageRef = spec.imageRef ?? spec.image_id ?? undefined;
    if (spec.snapshot_id || spec.source_volid || spec.backup_id) throw new SimulatorError(400, 'Invalid input received: Creating volumes from snapshots, volumes or backups is not simulated.');
    let imageMetadata: Record<string, string> | undefined;
    let minSize = 1;
    if (imageRef) {
      const image = ctx.peers.image?.getImage(imageRef, scope.projectId);
      if (!image) throw new SimulatorError(400, 'Invalid input received: Invalid image identifier or unable to access requested image.');
      if (image.status !== 'active') throw new SimulatorError(400, `Invalid input received: Image ${image.id} is not active.`);
      imageMetadata = {
        image_id: image.id,
        image_name: image.name ?? '',
        min_disk: String(image.min_disk),
        min_ram: String(image.min_ram),
        size: String(image.size ?? 0),
        ...(image.disk_format ? { disk_format: image.disk_format } : {}),
        ...(image.container_format ? { container_format: image.container_format } : {}),
      };
      minSize = Math.max(1, image.min_disk, Math.ceil((image.size ?? 0) / 1024 ** 3));
    }
    const size = spec.size ?? undefined;
    if (size === undefined) throw new SimulatorError(400, 'Invalid input received: "size" is a required property');
    if (!Number.isInteger(size) || size < 1) throw new SimulatorError(400, `Invalid input for field/attribute size. Value: ${size}. ${size} is less than the minimum of 1`);
    if (imageMetadata && size < minSize) {
      const imageGb = Math.ceil(Number(imageMetadata.size) / 1024 ** 3);
      throw new SimulatorError(
        400,
        imageGb > size
          ? `Invalid input received: Size of specified image ${imageGb}GB is larger than volume size ${size}GB.`
          : `Invalid input received: Volume size ${size}GB cannot be smaller than the image minDisk size ${imageMetadata.min_disk}GB.`,
      );
    }
    let type = defaultType;
    if (spec.volume_type) {
      const found = types.get(spec.volume_type) ?? [...types.values()].find((t) => t.name === spec.volume_type);
      if (!found) throw new SimulatorError(404, `Volume type with name ${spec.volume_type} could not be found.`, 'VolumeTypeNotFoundByName');
      type = found;
    }
    const zone = spec.availability_zone ?? 'nova';
    if (!zones.includes(zone)) throw new SimulatorError(400, `Invalid input received: Availability zone '${zone}' is invalid.`);
    checkQuota(scope.projectId, size);
    const now = ctx.clock.now();
    const volume: Volume = {
      id: ctx.newId(),
      name: spec.name ?? spec.display_name ?? null,
      description: spec.description ?? spec.display_description ?? null,
      projectId: scope.projectId,
      userId: scope.userId,
      status: 'creating',
      size,
      availabilityZone: zone,
      volumeTypeId: type.id,
      imageMetadata,
      metadata: spec.metadata ?? {},
      attachments: [],
      multiattach: spec.multiattach ?? false,
      createdAt: now,
      updatedAt: now,
    };
    volumes.set(volume.id, volume);
    transition(volume, 'available', ['creating']);
    return volume;
  };

  const deletable = (volume: Volume) => ['available', 'error', 'error_restoring', 'error_extending', 'error_managing'].includes(volume.status) && volume.attachments.length === 0;
  const deleteVolume = (volume: Volume) => {
    if (!deletable(volume)) throw new SimulatorError(400, IN_USE_DELETE_MESSAGE, 'InvalidVolume');
    volume.status = 'deleting';
    volume.updatedAt = ctx.clock.now();
    ctx.clock.after(ctx.transitionDelayMs, () => {
      if (volumes.get(volume.id) === volume) volumes.delete(volume.id);
    });
  };

  const links = (volume: Volume) => [
    { href: `${ctx.baseUrl()}/volume/v3/${volume.projectId}/volumes/${volume.id}`, rel: 'self' },
    { href: `${ctx.baseUrl()}/volume/${volume.projectId}/volumes/${volume.id}`, rel: 'bookmark' },
  ];
  const attachmentView = (volume: Volume, a: Attachment) => ({
    id: volume.id,
    attachment_id: a.id,
    volume_id: volume.id,
    server_id: a.serverId,
    host_name: a.hostName,
    device: a.device,
    attached_at: timestamp(a.attachedAt),
  });
  const detailView = (volume: Volume, v: Microversion, scope: TokenScope) => {
    const type = types.get(volume.volumeTypeId);
    const body: Record<string, unknown> = {
      id: volume.id,
      name: volume.name,
      description: volume.description,
      status: volume.status,
      size: volume.size,
      availability_zone: volume.availabilityZone,
      created_at: timestamp(volume.createdAt),
      updated_at: timestamp(volume.updatedAt),
      attachments: volume.attachments.map((a) => attachmentView(volume, a)),
      bootable: volume.imageMetadata ? 'true' : 'false',
      encrypted: false,
      multiattach: volume.multiattach,
      replication_status: null,
      consistencygroup_id: null,
      snapshot_id: null,
      source_volid: null,
      volume_type: type?.name ?? null,
      metadata: volume.metadata,
      user_id: volume.userId,
      links: links(volume),
      'os-vol-tenant-attr:tenant_id': volume.projectId,
    };
    if (volume.imageMetadata) body.volume_image_metadata = volume.imageMetadata;
    if (isAdmin(scope)) {
      body['os-vol-host-attr:host'] = volume.status === 'creating' ? null : 'ministack@fake#fake';
      body['os-vol-mig-status-attr:migstat'] = null;
      body['os-vol-mig-status-attr:name_id'] = null;
      if (atLeast(v, 21)) body.provider_id = null;
      if (atLeast(v, 61)) body.cluster_name = null;
    }
    if (atLeast(v, 13)) body.group_id = null;
    if (atLeast(v, 48)) {
      body.service_uuid = volume.status === 'creating' ? null : 'b1c6f6d2-3f8e-4a8f-9c1b-5f0e1d2c3b4a';
      body.shared_targets = false;
    }
    if (atLeast(v, 63)) body.volume_type_id = volume.volumeTypeId;
    if (atLeast(v, 64)) body.encryption_key_id = null;
    if (atLeast(v, 65)) body.consumes_quota = true;
    return body;
  };
  const summaryView = (volume: Volume) => ({ id: volume.id, name: volume.name, links: links(volume) });

  const typeView = (t: VolumeType, scope: TokenScope) => ({
    id: t.id,
    name: t.name,
    description: t.description,
    is_public: true,
    'os-volume-type-access:is_public': true,
    qos_specs_id: null,
    ...(isAdmin(scope) ? { extra_specs: t.extraSpecs } : {}),
  });

  const versionDoc = () => ({
    id: 'v3.0',
    status: 'CURRENT',
    version: `${MAX_VERSION.major}.${MAX_VERSION.minor}`,
    min_version: `${MIN_VERSION.major}.${MIN_VERSION.minor}`,
    updated: '2022-08-31T00:00:00Z',
    links: [
      { rel: 'describedby', type: 'text/html', href: 'https://docs.openstack.org/' },
      { rel: 'self', href: `${ctx.baseUrl()}/volume/v3/` },
    ],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.volume+json;version=3' }],
  });

  /** OpenStack-API-Version negotiation as cinder.api.openstack.wsgi does it. */
  const negotiate = (req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Vary', 'OpenStack-API-Version');
    const header = req.get('openstack-api-version');
    let requested = `${MIN_VERSION.major}.${MIN_VERSION.minor}`;
    if (header) {
      const entry = header
        .split(',')
        .map((part) => part.trim().split(/\s+/))
        .find(([service]) => service?.toLowerCase() === 'volume');
      if (entry) requested = entry[1] ?? '';
    }
    let v: Microversion;
    if (requested === 'latest') v = MAX_VERSION;
    else {
      const match = /^(\d+)\.(\d+)$/.exec(requested);
      if (!match || match[1] === '0') return fail(res, 400, `API Version String ${requested} is of invalid format. Must be of format MajorNum.MinorNum.`);
      v = { major: Number(match[1]), minor: Number(match[2]) };
    }
    const tooLow = v.major < MIN_VERSION.major || (v.major === MIN_VERSION.major && v.minor < MIN_VERSION.minor);
    const tooHigh = v.major > MAX_VERSION.major || (v.major === MAX_VERSION.major && v.minor > MAX_VERSION.minor);
    if (tooLow || tooHigh) {
      return fail(res, 406, `Version ${v.major}.${v.minor} is not supported by the API. Minimum is ${MIN_VERSION.major}.${MIN_VERSION.minor} and maximum is ${MAX_VERSION.major}.${MAX_VERSION.minor}.`);
    }
    res.setHeader('OpenStack-API-Version', `volume ${v.major}.${v.minor}`);
    res.locals.volumeVersion = v;
    next();
  };

  /** Cinder answers a project id in the URL that is not the token's with 400 (admins may name any project). */
  const sameProject = (req: Request, res: Response, next: NextFunction) => {
    const scope = auth(res);
    if (req.params.projectId !== scope.projectId && !isAdmin(scope)) return fail(res, 400, 'Malformed request url');
    res.locals.projectId = req.params.projectId;
    next();
  };

  const findVolume = (res: Response, id: string): Volume | undefined => {
    const volume = volumes.get(id);
    const scope = auth(res);
    if (!volume || (volume.projectId !== scope.projectId && !isAdmin(scope))) {
      fail(res, 404, `Volume ${id} could not be found.`);
      return undefined;
    }
    return volume;
  };

  const router = express.Router();
  router.get('/', (_req, res) => {
    res.status(300).json({ versions: [versionDoc()] });
  });
  router.get('/v3', (_req, res) => {
    res.json({ versions: [versionDoc()] });
  });

  const api = express.Router({ mergeParams: true });
  router.use('/v3/:projectId', negotiate, sameProject, api);

  const listVolumes = (detail: boolean) => (req: Request, res: Response) => {
    const scope = auth(res);
    const v = version(res);
    const query = z.record(z.string(), z.union([z.string(), z.array(z.string())])).parse(req.query);
    const one = (key: string) => {
      const value = query[key];
      return Array.isArray(value) ? value[value.length - 1] : value;
    };
    const allTenants = isAdmin(scope) && ['1', 'true', 'True'].includes(one('all_tenants') ?? '');
    const projectFilter = allTenants ? one('project_id') : (urlProject(res));
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
    let items = [...volumes.values()].filter(
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
        case 'created_at': return vol.createdAt;
        case 'updated_at': return vol.updatedAt;
        case 'name': return vol.name;
        case 'size': return vol.size;
        case 'status': return vol.status;
        case 'id': return vol.id;
        default: return null;
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
    const body: Record<string, unknown> = { volumes: page.map((vol) => (detail ? detailView(vol, v, scope) : summaryView(vol))) };
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
    const volume = createVolume({ projectId: urlProject(res), userId: scope.userId }, parsed.data.volume);
    // Cinder's create response lacks the tenant attribute its GET shows.
    const { 'os-vol-tenant-attr:tenant_id': _tenant, ...created } = detailView(volume, version(res), scope);
    res.status(202).json({ volume: created });
  });

  api.get('/volumes/:id', (req, res) => {
    const volume = findVolume(res, req.params.id as string);
    if (volume) res.json({ volume: detailView(volume, version(res), auth(res)) });
  });

  api.put('/volumes/:id', (req, res) => {
    const volume = findVolume(res, req.params.id as string);
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
    res.json({ volume: detailView(volume, version(res), auth(res)) });
  });

  api.delete('/volumes/:id', (req, res) => {
    const volume = findVolume(res, req.params.id as string);
    if (!volume) return;
    deleteVolume(volume);
    res.status(202).end();
  });

  api.get('/volumes/:id/metadata', (req, res) => {
    const volume = findVolume(res, req.params.id as string);
    if (volume) res.json({ metadata: volume.metadata });
  });
  const writeMetadata = (replace: boolean) => (req: Request, res: Response) => {
    const volume = findVolume(res, req.params.id as string);
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
    const volume = findVolume(res, req.params.id as string);
    if (!volume) return;
    if (!(req.params.key as string in volume.metadata)) return fail(res, 404, `Metadata item was not found`);
    delete volume.metadata[req.params.key as string];
    res.status(200).end();
  });

  api.get('/types', (_req, res) => {
    res.json({ volume_types: [...types.values()].map((t) => typeView(t, auth(res))) });
  });
  api.get('/types/default', (_req, res) => {
    res.json({ volume_type: typeView(defaultType, auth(res)) });
  });
  api.get('/types/:id', (req, res) => {
    const type = types.get(req.params.id as string);
    if (!type) return fail(res, 404, `Volume type ${req.params.id} could not be found.`);
    res.json({ volume_type: typeView(type, auth(res)) });
  });

  api.get('/os-availability-zone', (_req, res) => {
    res.json({ availabilityZoneInfo: zones.map((zoneName) => ({ zoneName, zoneState: { available: true } })) });
  });

  const quotaValue = (n: number) => (n === Infinity ? -1 : n);
  const quotaSet = (projectId: string, withUsage: boolean) => {
    const used = usage(projectId);
    const inUse: Record<string, number> = { volumes: used.volumes, gigabytes: used.gigabytes };
    const set: Record<string, unknown> = { id: projectId };
    for (const resource of Object.keys(quotaDefaults)) {
      const value = quotaValue(limit(projectId, resource));
      set[resource] = withUsage ? { limit: value, in_use: inUse[resource] ?? 0, reserved: 0, allocated: 0 } : value;
    }
    for (const t of types.values()) {
      for (const resource of ['volumes', 'gigabytes', 'snapshots']) {
        const perType = [...volumes.values()].filter((vol) => vol.projectId === projectId && vol.volumeTypeId === t.id);
        const typeUse = resource === 'volumes' ? perType.length : resource === 'gigabytes' ? perType.reduce((s, vol) => s + vol.size, 0) : 0;
        set[`${resource}_${t.name}`] = withUsage ? { limit: -1, in_use: typeUse, reserved: 0, allocated: 0 } : -1;
      }
    }
    return set;
  };
  const quotaTarget = (req: Request, res: Response): string | undefined => {
    const scope = auth(res);
    const target = req.params.target as string;
    if (target !== scope.projectId && !isAdmin(scope)) {
      fail(res, 403, 'Policy does not allow volume_extension:quotas:show to be performed.');
      return undefined;
    }
    return target;
  };
  api.get('/os-quota-sets/:target/defaults', (req, res) => {
    const set: Record<string, unknown> = { id: req.params.target };
    for (const [resource, value] of Object.entries(quotaDefaults)) set[resource] = quotaValue(value);
    for (const t of types.values()) for (const resource of ['volumes', 'gigabytes', 'snapshots']) set[`${resource}_${t.name}`] = -1;
    res.json({ quota_set: set });
  });
  api.get('/os-quota-sets/:target', (req, res) => {
    const target = quotaTarget(req, res);
    if (target) res.json({ quota_set: quotaSet(target, ['true', 'True', '1'].includes(String(req.query.usage ?? ''))) });
  });
  api.put('/os-quota-sets/:target', (req, res) => {
    if (!isAdmin(auth(res))) return fail(res, 403, 'Policy does not allow volume_extension:quotas:update to be performed.');
    const parsed = quotaUpdateSchema.safeParse(req.body);
    if (!parsed.success) return fail(res, 400, 'Missing required element quota_set in request body.');
    const target = req.params.target as string;
    for (const [resource, value] of Object.entries(parsed.data.quota_set)) {
      if (!(resource in quotaDefaults)) {
        if (/^(volumes|gigabytes|snapshots)_/.test(resource)) continue;
        return fail(res, 400, `Invalid input received: Bad key(s) in quota set: ${resource}`);
      }
      if (value < -1) return fail(res, 400, `Invalid input received: Quota limit ${value} for ${resource} must be -1 or greater.`);
      ctx.setQuota(target, resource, value === -1 ? Infinity : value);
    }
    const set = quotaSet(target, false);
    delete set.id;
    res.json({ quota_set: set });
  });

  api.get('/limits', (_req, res) => {
    const projectId = urlProject(res);
    const used = usage(projectId);
    res.json({
      limits: {
        rate: [],
        absolute: {
          totalSnapshotsUsed: 0,
          maxTotalBackups: quotaValue(limit(projectId, 'backups')),
          maxTotalVolumeGigabytes: quotaValue(limit(projectId, 'gigabytes')),
          maxTotalSnapshots: quotaValue(limit(projectId, 'snapshots')),
          maxTotalBackupGigabytes: quotaValue(limit(projectId, 'backup_gigabytes')),
          totalBackupGigabytesUsed: 0,
          maxTotalVolumes: quotaValue(limit(projectId, 'volumes')),
          totalVolumesUsed: used.volumes,
          totalBackupsUsed: 0,
          totalGigabytesUsed: used.gigabytes,
        },
      },
    });
  });

  const peerView = (volume: Volume): PeerVolume => ({
    id: volume.id,
    name: volume.name,
    project_id: volume.projectId,
    status: volume.status,
    size: volume.size,
    bootable: volume.imageMetadata ? 'true' : 'false',
    availability_zone: volume.availabilityZone,
    multiattach: volume.multiattach,
    attachments: volume.attachments.map((a) => ({ ...attachmentView(volume, a) })),
  });
  const peerVolume = (id: string): Volume => {
    const volume = volumes.get(id);
    if (!volume) throw new SimulatorError(404, `Volume ${id} could not be found.`, 'VolumeNotFound');
    return volume;
  };

  ctx.peers.blockStorage = {
    getVolume: (id) => {
      const volume = volumes.get(id);
      return volume && peerView(volume);
    },
    createVolume(projectId, spec) {
      return peerView(createVolume({ projectId, userId: '' }, spec));
    },
    deleteVolume(id) {
      deleteVolume(peerVolume(id));
    },
    attachVolume(volumeId, attachment) {
      const volume = peerVolume(volumeId);
      const reattach = volume.multiattach && volume.status === 'in-use';
      if (volume.status !== 'available' && !reattach) {
        throw new SimulatorError(400, `Invalid volume: Volume ${volumeId} status must be available or downloading to reserve, but the current status is ${volume.status}.`, 'InvalidVolume');
      }
      if (volume.attachments.some((a) => a.serverId === attachment.serverId)) {
        throw new SimulatorError(400, `Invalid volume: volume ${volumeId} already attached to ${attachment.serverId}.`, 'InvalidVolume');
      }
      const record: Attachment = {
        id: ctx.newId(),
        serverId: attachment.serverId,
        device: attachment.device ?? null,
        hostName: attachment.hostName ?? null,
        attachedAt: ctx.clock.now(),
      };
      volume.attachments.push(record);
      if (!reattach) {
        volume.status = 'reserved';
        volume.updatedAt = ctx.clock.now();
        transition(volume, 'in-use', ['reserved']);
      }
      return record.id;
    },
    detachVolume(volumeId, serverId) {
      const volume = peerVolume(volumeId);
      const index = volume.attachments.findIndex((a) => a.serverId === serverId);
      if (index < 0) throw new SimulatorError(400, `Invalid volume: Volume ${volumeId} is not attached to ${serverId}.`, 'InvalidVolume');
      volume.attachments.splice(index, 1);
      if (volume.attachments.length > 0) return;
      volume.status = 'detaching';
      volume.updatedAt = ctx.clock.now();
      transition(volume, 'available', ['detaching']);
    },
  };

  return {
    type: 'block-storage',
    name: 'cinderv3',
    prefix: '/volume',
    publicPaths: [/^\/?$/, /^\/v3\/?$/],
    router: () => router,
    formatError: cinderError,
    inventory: () => ({ volumes: volumes.size, volume_types: types.size }),
  };
}
