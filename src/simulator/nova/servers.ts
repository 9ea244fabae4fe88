/**
 * /servers: create (with nova-api's validation order and messages), list
 * with filters and paging, show, update, delete, the power actions and an
 * admin's os-resetState.
 */
import { randomBytes } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import type { SimulatorContext } from '../framework.js';
import { badRequest, conflict, forbidden, invalidState, parseBody, policyForbidden } from './errors.js';
import type { ServerLifecycle } from './lifecycle.js';
import {
  callerOf,
  computeUrls,
  pageOf,
  queryAll,
  queryOne,
  quotaOf,
  visibleServer,
  type BlockDevice,
  type Caller,
  type Flavor,
  type NovaStore,
  type RequestedNetwork,
  type Server,
} from './model.js';
import { rebootSchema, resetStateSchema, serverCreateSchema, serverUpdateSchema, type ServerCreateBody } from './schemas.js';
import { addressesOf, serverDetail, serverSummary, statesByStatus } from './views.js';

type ServerSpec = ServerCreateBody['server'];

const passwordChars = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const randomText = (length: number, alphabet: string) => [...randomBytes(length)].map((b) => alphabet[b % alphabet.length]).join('');

/** nova.utils.sanitize_hostname. */
function sanitizeHostname(name: string, id: string): string {
  const hostname = name
    .toLowerCase()
    .replace(/[ _.]/g, '-')
    .replace(/[^\w.-]+/g, '')
    .slice(0, 63)
    .replace(/^[.-]+|[.-]+$/g, '');
  return hostname || `server-${id}`;
}

const isTrue = (value: string | undefined) => value !== undefined && !['false', '0', 'off', 'no', 'f', 'n'].includes(value.toLowerCase());

/** block_device_mapping (legacy) and block_device_mapping_v2 in one shape, as nova.block_device.from_api does. */
function blockDevicesOf(spec: ServerSpec, imageGiven: boolean, newId: () => string): BlockDevice[] {
  const devices: BlockDevice[] = [];
  for (const legacy of spec.block_device_mapping ?? []) {
    const uuid = legacy.volume_id ?? legacy.snapshot_id;
    if (!uuid) continue;
    devices.push({
      sourceType: legacy.volume_id ? 'volume' : 'snapshot',
      destinationType: 'volume',
      uuid,
      ...(legacy.volume_size !== undefined ? { volumeSize: legacy.volume_size } : {}),
      bootIndex: devices.length === 0 && !imageGiven ? 0 : null,
      deleteOnTermination: legacy.delete_on_termination ?? false,
      createdByNova: false,
      device: legacy.device_name ?? null,
      bdmId: newId(),
    });
  }
  for (const bdm of spec.block_device_mapping_v2 ?? []) {
    const source = bdm.source_type ?? (bdm.volume_id ? 'volume' : bdm.snapshot_id ? 'snapshot' : bdm.image_id ? 'image' : 'blank');
    const uuid = bdm.uuid ?? bdm.volume_id ?? bdm.snapshot_id ?? bdm.image_id;
    if (source === 'blank' && uuid) throw badRequest('Block Device Mapping is Invalid: Invalid device UUID.');
    if (source !== 'blank' && !uuid) throw badRequest('Block Device Mapping is Invalid: Missing device UUID.');
    const destination = bdm.destination_type ?? (source === 'volume' || source === 'snapshot' ? 'volume' : 'local');
    const bootIndex = bdm.boot_index === undefined || bdm.boot_index === null || bdm.boot_index < 0 ? null : bdm.boot_index;
    if (source === 'image' && destination === 'local' && !(imageGiven && bootIndex === 0)) {
      throw badRequest('Block Device Mapping is Invalid: Mapping image to local is not supported.');
    }
    devices.push({
      sourceType: source,
      destinationType: destination,
      ...(uuid ? { uuid } : {}),
      ...(bdm.volume_size !== undefined ? { volumeSize: bdm.volume_size } : {}),
      bootIndex,
      deleteOnTermination: bdm.delete_on_termination ?? false,
      ...(bdm.tag ? { tag: bdm.tag } : {}),
      ...(source === 'volume' ? { volumeId: uuid } : {}),
      createdByNova: false,
      device: bdm.device_name ?? null,
      bdmId: newId(),
    });
  }
  return devices;
}

export function serverRoutes(api: Router, store: NovaStore, ctx: SimulatorContext, lifecycle: ServerLifecycle): void {
  const urls = computeUrls(ctx);

  const findFlavor = (ref: string): Flavor => {
    const id = ref.split('/').at(-1)!;
    const flavor = store.flavors.get(id);
    if (!flavor) throw badRequest(`Flavor ${id} could not be found.`);
    return flavor;
  };

  function requestedNetworksOf(spec: ServerSpec, caller: Caller): RequestedNetwork[] {
    const networks = spec.networks;
    if (networks === undefined || networks === 'none') return [];
    // Neutron's auto-allocated topology is not simulated, as in a cloud without it.
    if (networks === 'auto') throw badRequest(`Unable to automatically allocate a network for project ${caller.projectId}`);
    const requested: RequestedNetwork[] = [];
    for (const item of networks) {
      const tag = item.tag ? { tag: item.tag } : {};
      if (item.port) {
        requested.push({ kind: 'port', portId: item.port, ...tag });
      } else if (item.uuid !== undefined) {
        if (!z.guid().safeParse(item.uuid).success) throw badRequest(`Bad networks format: network uuid is not in proper format (${item.uuid})`);
        requested.push({ kind: 'network', networkId: item.uuid, ...(item.fixed_ip ? { fixedIp: item.fixed_ip } : {}), ...tag });
      } else {
        throw badRequest("Bad network format: missing 'uuid'");
      }
    }
    return requested;
  }

  function validateNetworks(requested: RequestedNetwork[], caller: Caller): void {
    const network = ctx.peers.network;
    for (const item of requested) {
      if (item.kind === 'port') {
        const port = network?.getPort(item.portId);
        if (!port) throw badRequest(`Port id ${item.portId} could not be found.`);
        if (port.device_id || lifecycle.portClaimed(port.id)) throw conflict(`Port ${item.portId} is still in use.`);
        continue;
      }
      const net = network?.getNetwork(item.networkId);
      if (!net) throw badRequest(`Network ${item.networkId} could not be found.`);
      if (net['router:external'] && !net.shared && !caller.admin) throw forbidden(`It is not allowed to create an interface on external network ${net.id}`);
      if (net.subnets.length === 0) throw badRequest(`Network ${net.id} requires a subnet in order to boot instances on.`);
    }
  }

  function validateBlockDevices(devices: BlockDevice[], imageId: string, caller: Caller): void {
    const bootIndexes = devices
      .map((d) => d.bootIndex)
      .filter((i): i is number => i !== null)
      .sort((a, b) => a - b);
    if (!imageId && bootIndexes[0] !== 0) {
      throw badRequest('Block Device Mapping is Invalid: Boot sequence for the instance and image/block device mapping combination is not valid.');
    }
    if (bootIndexes.some((index, position) => index !== position)) {
      throw badRequest('Block Device Mapping is Invalid: Boot sequence for the instance and image/block device mapping combination is not valid.');
    }
    for (const device of devices) {
      if (device.sourceType === 'image') {
        if (!ctx.peers.image?.getImage(device.uuid!, caller.projectId))
          throw badRequest(`Block Device Mapping is Invalid: failed to get image ${device.uuid}.`);
        if (device.destinationType === 'volume' && !device.volumeSize) {
          throw badRequest("Images with destination_type 'volume' need to have a non-zero size specified");
        }
      } else if (device.sourceType === 'volume') {
        const volume = ctx.peers.blockStorage?.getVolume(device.uuid!);
        if (!volume) throw badRequest(`Block Device Mapping is Invalid: failed to get volume ${device.uuid}.`);
        if (volume.status !== 'available')
          throw badRequest(`Invalid volume: volume '${volume.id}' status must be 'available'. Currently in '${volume.status}'`);
      } else if (device.sourceType === 'snapshot') {
        // Cinder snapshots are not simulated, so no snapshot can be found.
        throw badRequest(`Block Device Mapping is Invalid: failed to get snapshot ${device.uuid}.`);
      } else if (device.destinationType === 'volume' && !device.volumeSize) {
        throw badRequest("Blank volumes (source: 'blank', dest: 'volume') need to have non-zero size");
      }
    }
  }

  /** nova.compute.utils.check_num_instances_quota: how many of min..max fit, or 403 with Nova's message. */
  function instancesAllowed(caller: Caller, flavor: Flavor, minCount: number, maxCount: number): number {
    const owned = [...store.servers.values()].filter((s) => s.projectId === caller.projectId);
    const used = { cores: 0, instances: owned.length, ram: 0 };
    for (const s of owned) {
      used.cores += s.flavor.vcpus;
      used.ram += s.flavor.ram;
    }
    const limits = {
      cores: quotaOf(ctx, caller.projectId, 'cores'),
      instances: quotaOf(ctx, caller.projectId, 'instances'),
      ram: quotaOf(ctx, caller.projectId, 'ram'),
    };
    const headroom = Math.min(
      limits.instances - used.instances,
      flavor.vcpus ? Math.floor((limits.cores - used.cores) / flavor.vcpus) : Infinity,
      flavor.ram ? Math.floor((limits.ram - used.ram) / flavor.ram) : Infinity,
    );
    if (headroom >= minCount) return Math.min(headroom, maxCount);
    const requested = { cores: maxCount * flavor.vcpus, instances: maxCount, ram: maxCount * flavor.ram };
    const overs = (['cores', 'instances', 'ram'] as const).filter((r) => used[r] + requested[r] > limits[r]);
    const shownRequest = { ...requested, instances: minCount === maxCount ? String(minCount) : `${minCount}-${maxCount}` };
    const list = (values: (string | number)[]) => values.join(', ');
    throw forbidden(
      `Quota exceeded for ${list(overs)}: Requested ${list(overs.map((r) => shownRequest[r]))}, but already used ${list(overs.map((r) => used[r]))} of ${list(overs.map((r) => limits[r]))} ${list(overs)}`,
    );
  }

  api.post('/servers', (req, res) => {
    const caller = callerOf(res);
    const body = parseBody(serverCreateSchema(caller.minor), req.body);
    const spec = body.server;
    const hints = body['os:scheduler_hints'] ?? body['OS-SCH-HNT:scheduler_hints'] ?? {};
    const minCount = spec.min_count ?? 1;
    const maxCount = spec.max_count ?? minCount;
    if (minCount > maxCount) throw badRequest('min_count must be <= max_count');

    const knownHost = (name: string) => {
      if (!store.hosts.some((host) => host.name === name)) throw badRequest(`Compute host ${name} could not be found.`);
      return name;
    };
    let availabilityZone: string | null = null;
    let requestedHost: string | undefined;
    if (spec.availability_zone) {
      const [zone, forcedHost] = spec.availability_zone.split(':');
      if (forcedHost !== undefined && !caller.admin) throw policyForbidden('os_compute_api:servers:create:forced_host');
      if (forcedHost) requestedHost = knownHost(forcedHost);
      if (zone && !store.hosts.some((host) => host.zone === zone)) throw badRequest('The requested availability zone is not available');
      availabilityZone = zone || null;
    }
    if (spec.host || spec.hypervisor_hostname) {
      if (!caller.admin) throw policyForbidden('compute:servers:create:requested_destination');
      if (spec.hypervisor_hostname) requestedHost = knownHost(spec.hypervisor_hostname);
      if (spec.host) requestedHost = knownHost(spec.host);
    }

    const imageRef = spec.imageRef ?? '';
    const blockDevices = blockDevicesOf(spec, imageRef !== '', ctx.newId);
    if (!imageRef && blockDevices.length === 0) throw badRequest('Missing imageRef attribute');
    const requestedNetworks = requestedNetworksOf(spec, caller);
    const flavor = findFlavor(spec.flavorRef);

    if (imageRef) {
      const image = ctx.peers.image?.getImage(imageRef, caller.projectId);
      if (!image) throw badRequest('Can not find requested image');
      if (image.status !== 'active') throw badRequest(`Image ${imageRef} is not active.`);
      if (image.min_ram > flavor.ram) throw badRequest("Flavor's memory is too small for requested image.");
      if (image.min_disk > flavor.disk) throw badRequest("Flavor's disk is too small for requested image.");
    }
    if (spec.key_name !== undefined && !store.keypairs.some((k) => k.userId === caller.userId && k.name === spec.key_name)) {
      throw badRequest('Invalid key_name provided.');
    }
    validateNetworks(requestedNetworks, caller);
    const metadata = spec.metadata ?? {};
    const metadataLimit = quotaOf(ctx, caller.projectId, 'metadata_items');
    if (Object.keys(metadata).length > metadataLimit) throw forbidden(`Maximum number of metadata items exceeds ${metadataLimit}`);

    const count = instancesAllowed(caller, flavor, minCount, maxCount);
    const group = hints.group ? store.groups.get(hints.group) : undefined;
    if (hints.group && (!group || (group.projectId !== caller.projectId && !caller.admin))) {
      throw badRequest(`Instance group ${hints.group} could not be found.`);
    }
    if (group) {
      const members = group.members.filter((id) => store.servers.has(id)).length;
      if (members + count > quotaOf(ctx, caller.projectId, 'server_group_members')) throw forbidden('Quota exceeded, too many servers in group');
    }
    validateBlockDevices(blockDevices, imageRef, caller);

    const securityGroups = [...new Set((spec.security_groups ?? []).map((g) => g.name))];
    const adminPass = spec.adminPass ?? randomText(12, passwordChars);
    const reservationId = `r-${randomText(8, 'abcdefghijklmnopqrstuvwxyz0123456789')}`;
    const now = ctx.clock.now();
    const created: Server[] = [];
    for (let index = 0; index < count; index += 1) {
      const id = ctx.newId();
      const name = count > 1 ? `${spec.name}-${index + 1}` : spec.name;
      const server: Server = {
        id,
        name,
        projectId: caller.projectId,
        userId: caller.userId,
        flavor: { ...flavor, extraSpecs: { ...flavor.extraSpecs } },
        imageId: imageRef,
        keyName: spec.key_name ?? null,
        metadata: { ...metadata },
        tags: [...new Set(spec.tags ?? [])],
        description: spec.description ?? null,
        availabilityZone,
        ...(requestedHost === undefined ? {} : { requestedHost }),
        host: null,
        vmState: 'building',
        taskState: 'scheduling',
        powerState: 0,
        createdAt: now,
        updatedAt: now,
        launchedAt: null,
        terminatedAt: null,
        requestedNetworks,
        nics: [],
        blockDevices: blockDevices.map((bd) => ({ ...bd, bdmId: ctx.newId() })),
        securityGroups: securityGroups.length > 0 ? securityGroups : ['default'],
        userData: spec.user_data ?? null,
        configDrive: spec.config_drive ?? false,
        ...(group ? { groupId: group.id } : {}),
        instanceName: `instance-${(store.nextInstanceNumber++).toString(16).padStart(8, '0')}`,
        reservationId,
        launchIndex: index,
        hostname: spec.hostname ?? sanitizeHostname(name, id),
        accessIPv4: spec.accessIPv4 ?? '',
        accessIPv6: spec.accessIPv6 ?? '',
        diskConfig: spec['OS-DCF:diskConfig'] ?? 'MANUAL',
      };
      // nova-api reserves given volumes at once (Cinder attachment in `reserved`).
      for (const bd of server.blockDevices) if (bd.sourceType === 'volume') lifecycle.attachBlockDevice(server, bd);
      group?.members.push(id);
      store.servers.set(id, server);
      lifecycle.build(server);
      created.push(server);
    }

    const first = created[0]!;
    if (spec.return_reservation_id) {
      res.status(202).json({ reservation_id: reservationId });
      return;
    }
    const links = urls.links('servers', first.id);
    res
      .status(202)
      .location(links[0]!.href)
      .json({
        server: {
          id: first.id,
          links,
          'OS-DCF:diskConfig': first.diskConfig,
          security_groups: first.securityGroups.map((name) => ({ name })),
          adminPass,
        },
      });
  });

  function listServers(req: Request, res: Response, detail: boolean): void {
    const caller = callerOf(res);
    const query = req.query as Record<string, unknown>;
    const one = (key: string) => queryOne(query, key);
    const allTenants = query.all_tenants !== undefined && (one('all_tenants') === '' || isTrue(one('all_tenants')));
    if (allTenants && !caller.admin) throw policyForbidden(`os_compute_api:servers:${detail ? 'detail' : 'index'}:get_all_tenants`);
    const extendedFilters = caller.admin || caller.minor >= 83;

    const instant = (key: string) => {
      const text = one(key);
      if (text === undefined) return undefined;
      const ms = Date.parse(text);
      if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(text) || Number.isNaN(ms)) {
        throw badRequest(`Invalid input for query parameters ${key}. Value: ${text}. '${text}' is not a 'date-time'`);
      }
      return ms;
    };
    const changesSince = instant('changes-since');
    const changesBefore = caller.minor >= 66 ? instant('changes-before') : undefined;
    if (changesSince !== undefined && changesBefore !== undefined && changesBefore < changesSince) {
      throw badRequest('The value of changes-since must be less than or equal to changes-before.');
    }

    let vmStates: Set<string> | undefined;
    let taskStates: Set<string | null> | undefined;
    const statuses = queryAll(query, 'status');
    if (statuses.length > 0) {
      const matched = statuses.map((s) => statesByStatus[s.toUpperCase()]).filter((s) => s !== undefined);
      if (matched.length === 0) {
        if (caller.minor >= 38) throw badRequest('Invalid status value');
        res.json({ servers: [] });
        return;
      }
      vmStates = new Set(matched.map((m) => m.vmState));
      if (matched.every((m) => m.taskStates)) taskStates = new Set(matched.flatMap((m) => m.taskStates!));
      if (vmStates.size === 1 && vmStates.has('deleted') && !caller.admin) throw forbidden('Only administrators may list deleted instances');
    }

    let nameFilter: RegExp | undefined;
    const name = one('name');
    if (name !== undefined) {
      try {
        nameFilter = new RegExp(name);
      } catch {
        nameFilter = /(?!)/;
      }
    }
    const tagList = (key: string) => (caller.minor >= 26 && one(key) !== undefined ? one(key)!.split(',') : undefined);
    const [tags, tagsAny, notTags, notTagsAny] = [tagList('tags'), tagList('tags-any'), tagList('not-tags'), tagList('not-tags-any')];
    const image = one('image')?.split('/').at(-1);
    const flavor = one('flavor')?.split('/').at(-1);
    const ipFilter = (key: string) => {
      const text = one(key);
      if (text === undefined) return undefined;
      try {
        return new RegExp(text);
      } catch {
        return /(?!)/;
      }
    };
    const [ip, ip6] = [ipFilter('ip'), ipFilter('ip6')];
    const projectFilter = allTenants ? (one('project_id') ?? one('tenant_id')) : caller.projectId;

    const candidates = [...store.servers.values()];
    if (changesSince !== undefined || changesBefore !== undefined) candidates.push(...store.deleted.values());
    const selected = candidates.filter((s) => {
      if (projectFilter !== undefined && s.projectId !== projectFilter) return false;
      if (nameFilter && !nameFilter.test(s.name)) return false;
      if (vmStates && !vmStates.has(s.vmState)) return false;
      if (taskStates && !taskStates.has(s.taskState)) return false;
      if (changesSince !== undefined && s.updatedAt < changesSince) return false;
      if (changesBefore !== undefined && s.updatedAt > changesBefore) return false;
      if (tags && !tags.every((t) => s.tags.includes(t))) return false;
      if (tagsAny && !tagsAny.some((t) => s.tags.includes(t))) return false;
      if (notTags?.every((t) => s.tags.includes(t))) return false;
      if (notTagsAny?.some((t) => s.tags.includes(t))) return false;
      if (image !== undefined && s.imageId !== image) return false;
      if (flavor !== undefined && s.flavor.id !== flavor) return false;
      if (one('reservation_id') !== undefined && s.reservationId !== one('reservation_id')) return false;
      if (ip || ip6) {
        const addresses = Object.values(addressesOf(s, ctx)).flat();
        if (ip && !addresses.some((a) => a.version === 4 && ip.test(a.addr))) return false;
        if (ip6 && !addresses.some((a) => a.version === 6 && ip6.test(a.addr))) return false;
      }
      if (extendedFilters) {
        if (one('availability_zone') !== undefined && (s.availabilityZone ?? '') !== one('availability_zone')) return false;
        if (one('key_name') !== undefined && s.keyName !== one('key_name')) return false;
        if (one('user_id') !== undefined && s.userId !== one('user_id')) return false;
        if (one('vm_state') !== undefined && s.vmState !== one('vm_state')) return false;
      }
      if (caller.admin && one('host') !== undefined && s.host !== one('host')) return false;
      return true;
    });

    const sortKey = one('sort_key') ?? 'created_at';
    const direction = (one('sort_dir') ?? 'desc') === 'asc' ? 1 : -1;
    const sortValue = (s: Server): string | number =>
      sortKey === 'display_name'
        ? s.name
        : sortKey === 'updated_at'
          ? s.updatedAt
          : sortKey === 'uuid'
            ? s.id
            : sortKey === 'launched_at'
              ? (s.launchedAt ?? 0)
              : s.createdAt;
    selected.sort((a, b) => {
      const [x, y] = [sortValue(a), sortValue(b)];
      if (x !== y) return x < y ? -direction : direction;
      return a.id < b.id ? -direction : direction;
    });

    const { page, limit } = pageOf(selected, query, (s) => s.id);
    const body: Record<string, unknown> = {
      servers: page.map((s) => (detail ? serverDetail(s, caller, ctx, { single: false }) : serverSummary(s, ctx))),
    };
    if (page.length > 0 && page.length === limit) {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) {
        if (key === 'marker') continue;
        for (const v of Array.isArray(value) ? value : [value]) params.append(key, String(v));
      }
      params.set('limit', String(limit));
      params.set('marker', page.at(-1)!.id);
      body.servers_links = [{ rel: 'next', href: `${urls.root()}/v2.1/servers${detail ? '/detail' : ''}?${params.toString()}` }];
    }
    res.json(body);
  }

  api.get('/servers', (req, res) => listServers(req, res, false));
  api.get('/servers/detail', (req, res) => listServers(req, res, true));

  api.get('/servers/:id', (req, res) => {
    const caller = callerOf(res);
    res.json({ server: serverDetail(visibleServer(store, req.params.id, caller), caller, ctx, { single: true }) });
  });

  api.put('/servers/:id', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    const changes = parseBody(serverUpdateSchema(caller.minor), req.body).server;
    if (changes.name !== undefined) server.name = changes.name;
    if (changes.description !== undefined) server.description = changes.description;
    if (changes.accessIPv4 !== undefined) server.accessIPv4 = changes.accessIPv4;
    if (changes.accessIPv6 !== undefined) server.accessIPv6 = changes.accessIPv6;
    if (changes['OS-DCF:diskConfig'] !== undefined) server.diskConfig = changes['OS-DCF:diskConfig'];
    if (changes.hostname !== undefined) server.hostname = changes.hostname;
    server.updatedAt = ctx.clock.now();
    res.json({ server: serverDetail(server, caller, ctx, { single: true }) });
  });

  api.delete('/servers/:id', (req, res) => {
    lifecycle.delete(visibleServer(store, req.params.id, callerOf(res)));
    res.status(204).end();
  });

  api.post('/servers/:id/action', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    const body = z.record(z.string(), z.unknown()).safeParse(req.body);
    const action = body.success ? Object.keys(body.data)[0] : undefined;
    switch (action) {
      case 'os-stop':
        lifecycle.powerAction(server, 'stop');
        break;
      case 'os-start':
        lifecycle.powerAction(server, 'start');
        break;
      case 'reboot': {
        const type = parseBody(rebootSchema, req.body).reboot.type.toUpperCase();
        lifecycle.powerAction(server, 'reboot', type === 'HARD');
        break;
      }
      case 'os-resetState':
        if (!caller.admin) throw policyForbidden('os_compute_api:os-admin-actions:reset_state');
        lifecycle.resetState(server, parseBody(resetStateSchema, req.body)['os-resetState'].state);
        break;
      case 'os-getConsoleOutput':
        if (server.vmState !== 'active') throw invalidState('get_console_output', server.id, server.vmState);
        // What nova's FakeDriver returns.
        res.json({ output: 'FAKE CONSOLE OUTPUT\nANOTHER\nLAST LINE' });
        return;
      default:
        throw badRequest(`There is no such action: ${action ?? ''}`);
    }
    res.status(202).end();
  });
}
