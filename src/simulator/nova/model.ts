/**
 * Nova's state in the simulator: servers, flavors, keypairs and server
 * groups, plus what every route needs to know about its caller.
 */
import type { Response } from 'express';
import { SimulatorError, type SimulatorContext, type TokenScope } from '../framework.js';
import { notFound } from './errors.js';
import { minorOf } from './microversion.js';

/** A fake compute host (FakeDriver) and the availability zone it is in. */
export interface ComputeHost {
  name: string;
  zone: string;
}

/** One host per zone: ministack's own `ministack` in the first, `ministack-2`, `ministack-3`, ... in the others. */
function hostsOf(zones: readonly string[]): ComputeHost[] {
  return zones.map((zone, index) => ({ name: index === 0 ? 'ministack' : `ministack-${index + 1}`, zone }));
}

/** nova.conf's default quotas, for projects whose limits nobody set (ministack raises only demo's instances/cores/ram). */
const defaultQuotas: Record<string, number> = {
  instances: 10,
  cores: 20,
  ram: 51200,
  metadata_items: 128,
  key_pairs: 100,
  server_groups: 10,
  server_group_members: 10,
  injected_files: 5,
  injected_file_content_bytes: 10240,
  security_groups: 10,
  security_group_rules: 20,
  floating_ips: 10,
};

export const quotaOf = (ctx: SimulatorContext, projectId: string, resource: string) => ctx.quota(projectId, resource, defaultQuotas[resource]);

export interface Flavor {
  id: string;
  name: string;
  vcpus: number;
  ram: number;
  disk: number;
  ephemeral: number;
  swap: number;
  isPublic: boolean;
  description: string | null;
  extraSpecs: Record<string, string>;
}

export interface Keypair {
  /** Nova's database id, shown by GET /os-keypairs/{name}. */
  id: number;
  name: string;
  userId: string;
  publicKey: string;
  fingerprint: string;
  type: 'ssh' | 'x509';
  createdAt: number;
}

export interface ServerGroup {
  id: string;
  name: string;
  policy: string;
  rules: Record<string, number>;
  projectId: string;
  userId: string;
  members: string[];
}

export type RequestedNetwork = { kind: 'port'; portId: string; tag?: string } | { kind: 'network'; networkId: string; fixedIp?: string; tag?: string };

/** A NIC the server has: a user's port is unbound on delete, a port Nova created is deleted. */
export interface Nic {
  portId: string;
  createdByNova: boolean;
  tag?: string;
}

export interface BlockDevice {
  sourceType: 'image' | 'volume' | 'blank' | 'snapshot';
  destinationType: 'local' | 'volume';
  /** Image, volume or snapshot id, per sourceType. */
  uuid?: string;
  volumeSize?: number;
  bootIndex: number | null;
  deleteOnTermination: boolean;
  tag?: string;
  /** The Cinder volume once there is one (given, or created by Nova at spawn). */
  volumeId?: string;
  createdByNova: boolean;
  device: string | null;
  attachmentId?: string;
  bdmId: string;
}

export interface Fault {
  code: number;
  message: string;
  created: number;
}

export interface Server {
  id: string;
  name: string;
  projectId: string;
  userId: string;
  flavor: Flavor;
  /** '' when booted from volume, as Nova shows it. */
  imageId: string;
  keyName: string | null;
  metadata: Record<string, string>;
  tags: string[];
  description: string | null;
  /** What was asked for, until the scheduler sets its host's (as Nova records instance.availability_zone). */
  availabilityZone: string | null;
  /** The host an admin asked for (`zone:host` or `host`); the scheduler places the server there. */
  requestedHost?: string;
  host: string | null;
  vmState: string;
  taskState: string | null;
  powerState: number;
  createdAt: number;
  updatedAt: number;
  launchedAt: number | null;
  terminatedAt: number | null;
  fault?: Fault;
  requestedNetworks: RequestedNetwork[];
  nics: Nic[];
  blockDevices: BlockDevice[];
  securityGroups: string[];
  userData: string | null;
  configDrive: boolean;
  groupId?: string;
  instanceName: string;
  reservationId: string;
  launchIndex: number;
  hostname: string;
  accessIPv4: string;
  accessIPv6: string;
  diskConfig: 'AUTO' | 'MANUAL';
}

export interface NovaStore {
  servers: Map<string, Server>;
  hosts: ComputeHost[];
  /** Deleted servers, which `changes-since` listings still report (as DELETED). */
  deleted: Map<string, Server>;
  flavors: Map<string, Flavor>;
  keypairs: Keypair[];
  groups: Map<string, ServerGroup>;
  /** Volumes of deleted servers that delete_on_termination deletes once Cinder has detached them. */
  volumesToDelete: Set<string>;
  nextKeypairId: number;
  nextInstanceNumber: number;
}

const seedFlavor = (id: string, name: string, vcpus: number, ram: number, disk: number): Flavor => ({
  id,
  name,
  vcpus,
  ram,
  disk,
  ephemeral: 0,
  swap: 0,
  isPublic: true,
  description: null,
  extraSpecs: {},
});

export function createStore(zones: readonly string[]): NovaStore {
  // ministack's flavors (ids 1-3), plus devstack's m1.large for tests that need a bigger one.
  const flavors = [
    seedFlavor('1', 'm1.tiny', 1, 512, 1),
    seedFlavor('2', 'm1.small', 1, 2048, 20),
    seedFlavor('3', 'm1.medium', 2, 4096, 40),
    seedFlavor('4', 'm1.large', 4, 8192, 80),
  ];
  return {
    servers: new Map(),
    hosts: hostsOf(zones),
    deleted: new Map(),
    flavors: new Map(flavors.map((f) => [f.id, f])),
    keypairs: [],
    groups: new Map(),
    volumesToDelete: new Set(),
    nextKeypairId: 1,
    nextInstanceNumber: 1,
  };
}

export interface Caller {
  projectId: string;
  userId: string;
  admin: boolean;
  /** Negotiated microversion minor (2.x). */
  minor: number;
}

export function callerOf(res: Response): Caller {
  const auth = res.locals.auth as TokenScope;
  return { projectId: auth.projectId, userId: auth.userId, admin: auth.roles.includes('admin'), minor: minorOf(res) };
}

/** A server the caller may act on; another project's is reported as missing, not forbidden. */
export function visibleServer(store: NovaStore, id: string, caller: Caller): Server {
  const server = store.servers.get(id);
  if (!server || (server.projectId !== caller.projectId && !caller.admin)) throw notFound(`Instance ${id} could not be found.`);
  return server;
}

/** Nova's `isotime`: seconds precision, Zulu. */
export const isoTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Timestamps Nova prints from naive datetimes (launched_at, keypair created_at): microseconds, no zone. */
export const naiveTime = (ms: number) => new Date(ms).toISOString().replace(/Z$/, '000');

/** Link builders; the base URL is read per call because the host learns its port after creating the services. */
export function computeUrls(ctx: SimulatorContext) {
  const root = () => `${ctx.baseUrl()}/compute`;
  return {
    root,
    links: (collection: string, id: string) => [
      { rel: 'self', href: `${root()}/v2.1/${collection}/${id}` },
      { rel: 'bookmark', href: `${root()}/${collection}/${id}` },
    ],
  };
}

/** Query values as a list, whether the parameter was given once or repeated. */
export function queryAll(query: Record<string, unknown>, key: string): string[] {
  const value = query[key];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

export function queryOne(query: Record<string, unknown>, key: string): string | undefined {
  return queryAll(query, key).at(-1);
}

/** Nova's limit/marker paging: limit must be a non-negative integer, the marker must exist. */
export function pageOf<T>(items: T[], query: Record<string, unknown>, idOf: (item: T) => string, maxLimit = 1000): { page: T[]; limit: number } {
  const limitText = queryOne(query, 'limit');
  let limit = maxLimit;
  if (limitText !== undefined) {
    if (!/^-?\d+$/.test(limitText)) throw new SimulatorError(400, 'limit param must be an integer');
    limit = Number(limitText);
    if (limit < 0) throw new SimulatorError(400, 'limit param must be positive');
    limit = Math.min(limit, maxLimit);
  }
  let start = 0;
  const marker = queryOne(query, 'marker');
  if (marker !== undefined) {
    const index = items.findIndex((item) => idOf(item) === marker);
    if (index < 0) throw new SimulatorError(400, `marker [${marker}] not found`);
    start = index + 1;
  }
  return { page: items.slice(start, start + limit), limit };
}
