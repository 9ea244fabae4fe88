/**
 * POST /servers: the request checked in nova-api's order and with its
 * messages, then min_count..max_count servers made (each handed to the
 * lifecycle to build) and the first one answered.
 */
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { SimulatorContext } from '../framework.js';
import { badRequest, parseBody } from './errors.js';
import type { ServerLifecycle } from './lifecycle.js';
import {
  callerOf,
  computeUrls,
  type BlockDevice,
  type Caller,
  type Flavor,
  type NovaStore,
  type RequestedNetwork,
  type Server,
  type ServerGroup,
} from './model.js';
import { serverCreateSchema, type ServerCreateBody } from './schemas.js';
import { blockDevicesOf, validateBlockDevices } from './server-block-devices.js';
import {
  findFlavor,
  instancesAllowed,
  placementOf,
  serverGroupFor,
  validateImage,
  validateKeyName,
  validateMetadataQuota,
  type Placement,
} from './server-create-checks.js';
import { requestedNetworksOf, validateNetworks } from './server-networks.js';

type ServerSpec = ServerCreateBody['server'];

/** A create that passed every check: what each of its servers is made from. */
interface AcceptedCreate {
  spec: ServerSpec;
  caller: Caller;
  placement: Placement;
  flavor: Flavor;
  imageRef: string;
  blockDevices: BlockDevice[];
  requestedNetworks: RequestedNetwork[];
  metadata: Record<string, string>;
  /** How many of min_count..max_count the quota admits. */
  count: number;
  group: ServerGroup | undefined;
}

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

export function createServers(req: Request, res: Response, store: NovaStore, ctx: SimulatorContext, lifecycle: ServerLifecycle): void {
  const accepted = acceptCreate(req, res, store, ctx, lifecycle);
  const adminPass = accepted.spec.adminPass ?? randomText(12, passwordChars);
  const reservationId = `r-${randomText(8, 'abcdefghijklmnopqrstuvwxyz0123456789')}`;
  const first = makeServers(accepted, reservationId, store, ctx, lifecycle)[0]!;
  if (accepted.spec.return_reservation_id) {
    res.status(202).json({ reservation_id: reservationId });
    return;
  }
  const links = computeUrls(ctx).links('servers', first.id);
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
}

/** The request parsed and checked, in nova-api's order: its first failing check is the one answered. */
function acceptCreate(req: Request, res: Response, store: NovaStore, ctx: SimulatorContext, lifecycle: ServerLifecycle): AcceptedCreate {
  const caller = callerOf(res);
  const body = parseBody(serverCreateSchema(caller.minor), req.body);
  const spec = body.server;
  const hints = body['os:scheduler_hints'] ?? body['OS-SCH-HNT:scheduler_hints'] ?? {};
  const minCount = spec.min_count ?? 1;
  const maxCount = spec.max_count ?? minCount;
  if (minCount > maxCount) throw badRequest('min_count must be <= max_count');
  const placement = placementOf(spec, caller, store);

  const imageRef = spec.imageRef ?? '';
  const blockDevices = blockDevicesOf(spec, imageRef !== '', ctx.newId);
  if (!imageRef && blockDevices.length === 0) throw badRequest('Missing imageRef attribute');
  const requestedNetworks = requestedNetworksOf(spec, caller);
  const flavor = findFlavor(store, spec.flavorRef);
  if (imageRef) validateImage(imageRef, flavor, caller, ctx);
  validateKeyName(spec.key_name, caller, store);
  validateNetworks(requestedNetworks, caller, ctx, lifecycle);
  const metadata = spec.metadata ?? {};
  validateMetadataQuota(metadata, caller, ctx);

  const count = instancesAllowed(store, ctx, caller, flavor, minCount, maxCount);
  const group = serverGroupFor(hints.group, count, caller, store, ctx);
  validateBlockDevices(blockDevices, imageRef, caller, ctx);
  return { spec, caller, placement, flavor, imageRef, blockDevices, requestedNetworks, metadata, count, group };
}

/** The accepted create's servers, stored and building; the volumes they boot from reserved at once, as nova-api does. */
function makeServers(accepted: AcceptedCreate, reservationId: string, store: NovaStore, ctx: SimulatorContext, lifecycle: ServerLifecycle): Server[] {
  const now = ctx.clock.now();
  const created: Server[] = [];
  for (let index = 0; index < accepted.count; index += 1) {
    const server = newServer(accepted, index, reservationId, now, store, ctx);
    // nova-api reserves given volumes at once (Cinder attachment in `reserved`).
    for (const bd of server.blockDevices) if (bd.sourceType === 'volume') lifecycle.attachBlockDevice(server, bd);
    accepted.group?.members.push(server.id);
    store.servers.set(server.id, server);
    lifecycle.build(server);
    created.push(server);
  }
  return created;
}

/** The `index`th server of a create, as it starts: building, scheduling, on no host yet. */
function newServer(accepted: AcceptedCreate, index: number, reservationId: string, now: number, store: NovaStore, ctx: SimulatorContext): Server {
  const { spec, caller, placement, flavor, group } = accepted;
  const securityGroups = [...new Set((spec.security_groups ?? []).map((g) => g.name))];
  const id = ctx.newId();
  const name = accepted.count > 1 ? `${spec.name}-${index + 1}` : spec.name;
  return {
    id,
    name,
    projectId: caller.projectId,
    userId: caller.userId,
    flavor: { ...flavor, extraSpecs: { ...flavor.extraSpecs } },
    imageId: accepted.imageRef,
    keyName: spec.key_name ?? null,
    metadata: { ...accepted.metadata },
    tags: [...new Set(spec.tags ?? [])],
    description: spec.description ?? null,
    availabilityZone: placement.availabilityZone,
    ...(placement.requestedHost === undefined ? {} : { requestedHost: placement.requestedHost }),
    host: null,
    vmState: 'building',
    taskState: 'scheduling',
    powerState: 0,
    createdAt: now,
    updatedAt: now,
    launchedAt: null,
    terminatedAt: null,
    requestedNetworks: accepted.requestedNetworks,
    nics: [],
    blockDevices: accepted.blockDevices.map((bd) => ({ ...bd, bdmId: ctx.newId() })),
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
}
