/**
 * The contract between the simulator's HTTP host and each simulated service.
 * One HTTP server hosts every service under its own path prefix (as devstack
 * does behind one port); the Keystone catalog points at those prefixes.
 *
 * Every service module exports a factory `(ctx: SimulatorContext) => SimulatedService`
 * (Keystone's, which the host always creates first, also takes the catalog's services):
 *   - `createKeystoneSimulator`  from `./keystone.js`        prefix '/identity'      (catalog `<base>/identity`)
 *   - `createNeutronSimulator`   from `./neutron/index.js`   prefix '/network'       (catalog `<base>/network`; routes `/v2.0/...`)
 *   - `createNovaSimulator`      from `./nova/index.js`      prefix '/compute'       (catalog `<base>/compute/v2.1`; routes `/v2.1/...`)
 *   - `createOctaviaSimulator`   from `./octavia/index.js`   prefix '/load-balancer' (catalog `<base>/load-balancer`; routes `/v2/...`)
 *   - `createGlanceSimulator`    from `./glance.js`          prefix '/image'         (catalog `<base>/image`; routes `/v2/...`)
 *   - `createCinderSimulator`    from `./cinder.js`          prefix '/volume'        (catalog `<base>/volume/v3/<project_id>`)
 *
 * The host runs, for every request below a prefix: request id headers →
 * latency → fault injection → X-Auth-Token validation → JSON body parsing →
 * `router()`. A route therefore finds the caller in `res.locals.auth`
 * (a TokenScope) unless its path is one of the service's `publicPaths`.
 * Requests no route answers get `formatError(404)`; a thrown error becomes
 * `formatError(500)`, or `formatError(err.status, err.message)` for a SimulatorError.
 * Authentication failures are answered by the host in keystonemiddleware's
 * format (the same for every service, as in a real cloud), so services never
 * see a request without a valid project-scoped token.
 */
import type { Router } from 'express';
import type { BlobFiles } from './blob-files.js';

export type SimulatedServiceType = 'identity' | 'network' | 'compute' | 'load-balancer' | 'image' | 'block-storage';

/** Who a validated token belongs to; set on every authenticated request as `res.locals.auth`. */
export interface TokenScope {
  token: string;
  userId: string;
  userName: string;
  /** Services only see project-scoped tokens: the host answers 401 for unscoped ones. */
  projectId: string;
  projectName: string;
  /** Domain of the project. */
  domainId: string;
  /** Role names, e.g. ['member', 'reader', 'load-balancer_member']; admins have 'admin'. */
  roles: string[];
  /** Epoch ms. */
  expiresAt: number;
}

/** Faults and latency a test can inject, per service and operation. */
export interface FaultRule {
  /** Service type, or '*' for every service. */
  service: SimulatedServiceType | '*';
  /** HTTP method, or '*'. */
  method?: string;
  /** A RegExp source matched against the path below the service prefix; all paths when omitted. */
  path?: string;
  /** Fraction of matching requests to fail, 0..1 (default 1 = always). */
  rate?: number;
  /** Fail with this status (e.g. 500, 503, 409, 429); 429 carries Retry-After. Without it the rule only adds latency. */
  status?: number;
  /** Error message; the service's usual message for that status when omitted. */
  message?: string;
  /** Seconds in the Retry-After header of a 429 (default 1). */
  retryAfterSeconds?: number;
  /** Added latency in ms (applied whether or not the request fails). */
  latencyMs?: number;
  /** Match only this many requests, then stop matching. */
  times?: number;
}

export interface SimulatorClock {
  now(): number;
  /** Runs `fn` after `ms` (status transitions); the simulator's timers are cancelled on close. */
  after(ms: number, fn: () => void): void;
}

/** What the host gives every service. */
export interface SimulatorContext {
  clock: SimulatorClock;
  /** Base URL of the simulator, e.g. http://127.0.0.1:35357 (for links in responses). */
  baseUrl(): string;
  /** A fresh UUID (with dashes, as Neutron/Nova/Cinder ids are). */
  newId(): string;
  /**
   * The limit of `resource` in `projectId`: what `Simulator.setQuota` or the
   * service's own quota API stored, else `defaultLimit` (Infinity when omitted).
   * Resource names are the services' own quota keys: Neutron 'network',
   * 'subnet', 'port', 'router', 'floatingip', 'security_group',
   * 'security_group_rule'; Nova 'instances', 'cores', 'ram', 'key_pairs';
   * Cinder 'volumes', 'gigabytes', 'snapshots'; Octavia 'load_balancer',
   * 'listener', 'pool', 'member', 'health_monitor'. Unlimited (-1 in the APIs)
   * is Infinity here.
   */
  quota(projectId: string, resource: string, defaultLimit?: number): number;
  /** Stores a limit (a service's quota-update API calls this); Infinity = unlimited. */
  setQuota(projectId: string, resource: string, limit: number): void;
  /**
   * Id of a seeded project ('admin', 'demo', 'service'), for seed data such as
   * Neutron's `public` network (owned by 'admin'). Keystone is created before
   * the other services, so factories may call this.
   */
  projectIdByName(name: string): string | undefined;
  /** The cloud's availability zones, Nova's and Cinder's alike; the first is Cinder's default. */
  availabilityZones: readonly string[];
  /** Delay (ms) of asynchronous status transitions (BUILD -> ACTIVE, PENDING_CREATE -> ACTIVE, creating -> available). */
  transitionDelayMs: number;
  /**
   * Cross-service calls. Each factory installs its own entry (Neutron sets
   * `ctx.peers.network`, Glance `image`, Cinder `blockStorage`); callers look
   * it up when a request arrives, never in their factory, because factories
   * run in any order. A missing peer means that service is not hosted.
   */
  peers: SimulatorPeers;
  /** Bulk data (image files), kept on disk rather than in memory. */
  blobs: BlobFiles;
  /** Glance's image_size_cap: the largest image data it stores. */
  imageSizeCap: number;
}

/**
 * Thrown by peers (and by routes, if convenient) for a failure the caller
 * reports in its own error format, e.g. Nova turning Neutron's
 * IpAddressGenerationFailure into a 400/409 of its own.
 */
export class SimulatorError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The real service's exception name where it matters, e.g. 'IpAddressGenerationFailure', 'OverQuota', 'PortNotFound'. */
    readonly kind?: string,
  ) {
    super(message);
    this.name = 'SimulatorError';
  }
}

/** A port as an admin's GET /v2.0/ports/{id} shows it (a copy; changes go through updatePort). */
export interface PeerPort {
  id: string;
  name: string;
  network_id: string;
  project_id: string;
  mac_address: string;
  fixed_ips: { subnet_id: string; ip_address: string }[];
  device_id: string;
  device_owner: string;
  status: string;
  admin_state_up: boolean;
  security_groups: string[];
  'binding:host_id': string;
  'binding:vif_type': string;
}

export interface PeerPortSpec {
  network_id: string;
  name?: string;
  fixed_ips?: { subnet_id?: string; ip_address?: string }[];
  device_id?: string;
  device_owner?: string;
  admin_state_up?: boolean;
  /** Omitted: the project's default security group, as Neutron does. */
  security_groups?: string[];
}

export interface PeerNetwork {
  id: string;
  name: string;
  project_id: string;
  status: string;
  shared: boolean;
  'router:external': boolean;
  subnets: string[];
  mtu: number;
}

export interface PeerSubnet {
  id: string;
  name: string;
  network_id: string;
  project_id: string;
  cidr: string;
  ip_version: 4 | 6;
  gateway_ip: string | null;
}

export interface PeerFloatingIp {
  id: string;
  floating_ip_address: string;
  fixed_ip_address: string | null;
  port_id: string | null;
}

export interface PeerImage {
  id: string;
  name: string | null;
  status: string;
  visibility: string;
  owner: string | null;
  min_disk: number;
  min_ram: number;
  size: number | null;
  disk_format: string | null;
  container_format: string | null;
}

export interface PeerVolume {
  id: string;
  name: string | null;
  project_id: string;
  status: string;
  size: number;
  bootable: 'true' | 'false';
  availability_zone: string;
  multiattach: boolean;
  attachments: {
    id: string;
    attachment_id: string;
    server_id: string;
    volume_id: string;
    device: string | null;
    host_name: string | null;
    attached_at: string;
  }[];
}

/** Cross-service calls inside the simulator, as the real services make them. Failures throw SimulatorError. */
export interface SimulatorPeers {
  network?: {
    /** Creates a port in `projectId` (Nova for a server NIC, Octavia for a VIP), with quota and IPAM as POST /v2.0/ports. */
    createPort(projectId: string, spec: PeerPortSpec): PeerPort;
    getPort(id: string): PeerPort | undefined;
    /** Ports with all the given attribute values, e.g. { device_id: serverId }. */
    listPorts(filter: Partial<Pick<PeerPort, 'device_id' | 'network_id' | 'device_owner' | 'project_id'>>): PeerPort[];
    /** Binds/unbinds a port (device_id, device_owner, binding:host_id, ...); binding a port makes it ACTIVE. */
    updatePort(id: string, changes: Partial<Omit<PeerPort, 'id' | 'network_id' | 'project_id' | 'mac_address' | 'status'>>): PeerPort;
    deletePort(id: string): void;
    getNetwork(id: string): PeerNetwork | undefined;
    getSubnet(id: string): PeerSubnet | undefined;
    /** Floating IPs associated with a port (for Nova's `addresses`). */
    floatingIpsOfPort(portId: string): PeerFloatingIp[];
  };
  image?: {
    /** The image as its owner (or anyone, if public/shared) sees it; undefined when `projectId` may not see it. */
    getImage(id: string, projectId: string): PeerImage | undefined;
  };
  blockStorage?: {
    getVolume(id: string): PeerVolume | undefined;
    /** Boot from volume: a volume created by Nova on the user's behalf (quota applies; `creating` then `available`). */
    createVolume(projectId: string, spec: { size: number; name?: string; imageRef?: string; volume_type?: string; availability_zone?: string }): PeerVolume;
    /** Deletes an `available`/`error` volume (delete_on_termination). */
    deleteVolume(id: string): void;
    /** Reserves an `available` volume for `serverId`: `reserved` → `in-use` (after transitionDelayMs), with the attachment listed. Returns the attachment id. */
    attachVolume(volumeId: string, attachment: { serverId: string; device?: string; hostName?: string }): string;
    /** `detaching` → `available` (after transitionDelayMs), attachment removed. */
    detachVolume(volumeId: string, serverId: string): void;
  };
}

export interface SimulatedService {
  type: SimulatedServiceType;
  /** Catalog name, e.g. 'neutron'. */
  name: string;
  /** Path prefix on the host: the one listed for the service at the top of this file. */
  prefix: string;
  /**
   * Paths (below the prefix) served without a token, e.g. version documents:
   * Neutron `^/?$`, Nova `^/?$` and `^/v2\.1/?$`. GET and HEAD only.
   */
  publicPaths?: RegExp[];
  /** Routes below the prefix. Authentication and fault injection run before them. */
  router(): Router;
  /**
   * An error body in the service's own format, e.g. Nova
   * `{"itemNotFound":{"code":404,"message":...}}`, Neutron
   * `{"NeutronError":{"type":...,"message":...,"detail":""}}`, Octavia
   * `{"faultcode":"Client","faultstring":...,"debuginfo":null}`. Without a
   * message, the service's usual one for that status.
   */
  formatError(status: number, message?: string): unknown;
  /** Count of live resources by kind (for leak checks in tests), e.g. { networks: 2, ports: 5 }; seed data included. */
  inventory(): Record<string, number>;
  /** What a cloud kept across restarts (SimulatorOptions.stateFile) saves and restores of this service. */
  state?: ServiceState;
}

/** Where a snapshot keeps bulk data (image contents) beside the state file: `put` answers the key a snapshot records. */
/** How a snapshot names bulk data (SimulatorContext.blobs): by its key, which the state file then keeps on disk. */
export interface BlobSink {
  keep(key: string): string;
}

export interface BlobSource {
  /** The key, checked: throws when the state file names data that is not there. */
  existing(key: string): string;
}

/**
 * A service's state as plain JSON, and back. `restore` replaces what the factory seeded (the
 * snapshot holds the seed data too, with its ids), after validating the snapshot, and throws on one
 * that does not fit. `resume` runs once every service is restored: what was in transition when the
 * snapshot was taken (a server building, a load balancer PENDING_UPDATE, a volume creating) is
 * scheduled to end as it would have, one transition delay on.
 */
export interface ServiceState {
  snapshot(blobs: BlobSink): unknown;
  restore(snapshot: unknown, blobs: BlobSource): void;
  resume?(): void;
}

export type SimulatedServiceFactory = (ctx: SimulatorContext) => SimulatedService;
