/**
 * Nova (compute service), API v2.1. Paths are below the versioned endpoint
 * (`/servers`, not `/v2.1/servers`).
 *
 * Every call pins microversion 2.60 (Queens, 2018), so response shapes never
 * vary between calls or clouds. 2.60 is the lowest version that covers all we
 * send: networks given as pre-made ports with device tags (2.42), tags on
 * create (2.52), multiattach volumes in block_device_mapping_v2 (2.60),
 * keypair paging (2.35). It is also below the versions that change shapes we
 * read: server groups' `policies` list becomes `policy` + `rules` at 2.64,
 * flavor `swap` turns from "" to 0 and unknown list filters start failing at
 * 2.75. Server-group calls alone use 2.64 (Rocky), because only that version
 * takes rules such as `max_server_per_host` with anti-affinity.
 *
 * Consequences at 2.60: a server's `flavor` is the embedded flavor
 * (`original_name`, `vcpus`, `ram`, …) without an `id` (2.47); `image` is
 * the empty string for a server booted from a volume.
 */
import { z } from 'zod';
import { OpenStackError } from '../errors.js';
import type { ServiceTransport } from '../transport.js';
import { anyBody, linkedList, segment, ServiceCalls, tagQuery, type Page, type Query, type TagFilters } from './common.js';

export const novaMicroversion = '2.60';
export const serverGroupMicroversion = '2.64';

const addressSchema = z.looseObject({
  addr: z.string(),
  version: z.number(),
  'OS-EXT-IPS:type': z.string().optional(),
  'OS-EXT-IPS-MAC:mac_addr': z.string().optional(),
});

const serverSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  status: z.string(),
  /** Network name → addresses; `OS-EXT-IPS:type` tells fixed from floating. */
  addresses: z.record(z.string(), z.array(addressSchema)),
  metadata: z.record(z.string(), z.string()),
  /** The image reference, or "" when the server booted from a volume. */
  image: z.union([z.literal(''), z.looseObject({ id: z.string() })]),
  flavor: z.looseObject({ original_name: z.string().optional(), vcpus: z.number().optional(), ram: z.number().optional(), disk: z.number().optional() }),
  tags: z.array(z.string()).optional(),
  key_name: z.string().nullish(),
  security_groups: z.array(z.looseObject({ name: z.string() })).optional(),
  'OS-EXT-AZ:availability_zone': z.string().optional(),
  'OS-EXT-STS:vm_state': z.string().optional(),
  'OS-EXT-STS:task_state': z.string().nullish(),
  'os-extended-volumes:volumes_attached': z.array(z.looseObject({ id: z.string() })).optional(),
  /** Why the server went to ERROR. */
  fault: z.looseObject({ code: z.number().optional(), message: z.string() }).optional(),
  tenant_id: z.string().optional(),
  created: z.string().optional(),
  updated: z.string().optional(),
});
export type Server = z.infer<typeof serverSchema>;

const createdServerSchema = z.looseObject({ id: z.string(), adminPass: z.string().optional() });
/** Nova answers a create with the id only; the server is BUILD until a later GET says otherwise. */
export type CreatedServer = z.infer<typeof createdServerSchema>;

const flavorSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  vcpus: z.number(),
  ram: z.number(),
  disk: z.number(),
  'OS-FLV-EXT-DATA:ephemeral': z.number().optional(),
  /** MiB of swap; "" (not 0) means none before microversion 2.75. */
  swap: z.union([z.number(), z.literal('')]).optional(),
  'os-flavor-access:is_public': z.boolean().optional(),
  description: z.string().nullish(),
});
export type Flavor = z.infer<typeof flavorSchema>;

const keypairSchema = z.looseObject({
  name: z.string(),
  public_key: z.string(),
  fingerprint: z.string(),
  type: z.string().optional(),
});
export type Keypair = z.infer<typeof keypairSchema>;

const serverGroupSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  policy: z.string(),
  rules: z.record(z.string(), z.unknown()).optional(),
  members: z.array(z.string()),
  project_id: z.string().optional(),
});
export type ServerGroup = z.infer<typeof serverGroupSchema>;

const interfaceSchema = z.looseObject({
  port_id: z.string(),
  net_id: z.string(),
  mac_addr: z.string(),
  port_state: z.string(),
  fixed_ips: z.array(z.looseObject({ subnet_id: z.string(), ip_address: z.string() })),
});
export type InterfaceAttachment = z.infer<typeof interfaceSchema>;

const volumeAttachmentSchema = z.looseObject({
  id: z.string(),
  serverId: z.string(),
  volumeId: z.string(),
  device: z.string().nullish(),
});
export type VolumeAttachment = z.infer<typeof volumeAttachmentSchema>;

const availabilityZoneSchema = z.looseObject({ zoneName: z.string(), zoneState: z.looseObject({ available: z.boolean() }) });
export type NovaAvailabilityZone = z.infer<typeof availabilityZoneSchema>;

const absoluteLimitsSchema = z.looseObject({
  maxTotalInstances: z.number().optional(),
  maxTotalCores: z.number().optional(),
  maxTotalRAMSize: z.number().optional(),
  maxServerGroups: z.number().optional(),
  maxServerGroupMembers: z.number().optional(),
  maxServerMeta: z.number().optional(),
  maxTotalKeypairs: z.number().optional(),
  totalInstancesUsed: z.number().optional(),
  totalCoresUsed: z.number().optional(),
  totalRAMUsed: z.number().optional(),
  totalServerGroupsUsed: z.number().optional(),
});
/** Project quota and use; -1 means unlimited. RAM is in MiB. */
export type NovaAbsoluteLimits = z.infer<typeof absoluteLimitsSchema>;

const versionSchema = z.looseObject({ id: z.string(), status: z.string(), version: z.string(), min_version: z.string() });
/** `version` is the highest microversion the endpoint serves, `min_version` the lowest ("" when it has none). */
export type NovaVersion = z.infer<typeof versionSchema>;

export type ServerNetwork = { port: string; tag?: string } | { uuid: string; fixed_ip?: string; tag?: string };

export interface BlockDeviceMapping {
  boot_index: number;
  source_type: 'image' | 'volume' | 'blank' | 'snapshot';
  destination_type: 'local' | 'volume';
  uuid?: string;
  volume_size?: number;
  delete_on_termination?: boolean;
  tag?: string;
  device_name?: string;
  disk_bus?: string;
  guest_format?: string;
}

export interface CreateServer {
  name: string;
  flavorRef: string;
  /** Omit (or "") when booting from a volume given in block_device_mapping_v2. */
  imageRef?: string;
  /** Pre-made ports; "none" or "auto" let Nova decide. */
  networks: readonly ServerNetwork[] | 'none' | 'auto';
  key_name?: string;
  /** Applied by Nova only to ports it creates itself, never to ports passed in `networks`. */
  security_groups?: readonly { name: string }[];
  /** Already base64-encoded, at most 65535 bytes after encoding. */
  user_data?: string;
  config_drive?: boolean;
  metadata?: Readonly<Record<string, string>>;
  availability_zone?: string;
  block_device_mapping_v2?: readonly BlockDeviceMapping[];
  tags?: readonly string[];
}

/** Sent beside the server as `os:scheduler_hints`; `group` places the server in a server group. */
export interface SchedulerHints {
  group?: string;
  [hint: string]: unknown;
}

export interface ServerFilters extends TagFilters {
  /** A regular expression matched anywhere in the name (see `findServersByName` for an exact match). */
  name?: string;
  status?: string;
}

export type AttachInterface = { port_id: string; tag?: string } | { net_id: string; fixed_ips?: readonly { ip_address: string }[]; tag?: string };

export interface AttachVolume {
  volumeId: string;
  device?: string;
  tag?: string;
}

export interface CreateServerGroup {
  name: string;
  policy: 'affinity' | 'anti-affinity' | 'soft-affinity' | 'soft-anti-affinity';
  /** Only with anti-affinity, e.g. `{max_server_per_host: 2}`. */
  rules?: Readonly<Record<string, unknown>>;
}

const serverBody = z.object({ server: serverSchema });
const createdServerBody = z.object({ server: createdServerSchema });
const serverList = linkedList('servers', serverSchema);
const flavorBody = z.object({ flavor: flavorSchema });
const flavorList = linkedList('flavors', flavorSchema);
const keypairBody = z.object({ keypair: keypairSchema });
// Each list entry wraps its keypair once more.
const keypairList: z.ZodType<Page<Keypair>> = linkedList('keypairs', z.object({ keypair: keypairSchema })).transform((body) => ({
  items: body.items.map((entry) => entry.keypair),
  next: body.next,
}));
const serverGroupBody = z.object({ server_group: serverGroupSchema });
const serverGroupList = z.object({ server_groups: z.array(serverGroupSchema) });
const tagsBody = z.object({ tags: z.array(z.string()) });
const metadataBody = z.object({ metadata: z.record(z.string(), z.string()) });
const interfaceBody = z.object({ interfaceAttachment: interfaceSchema });
const interfaceList = z.object({ interfaceAttachments: z.array(interfaceSchema) });
const volumeAttachmentBody = z.object({ volumeAttachment: volumeAttachmentSchema });
const volumeAttachmentList = z.object({ volumeAttachments: z.array(volumeAttachmentSchema) });
const availabilityZoneList = z.object({ availabilityZoneInfo: z.array(availabilityZoneSchema) });
const limitsBody = z.object({ limits: z.object({ absolute: absoluteLimitsSchema }) });
const versionBody = z.object({ version: versionSchema });

/** Server groups are paged by offset, without links; each page asks for this many. */
const serverGroupPageSize = 1000;
const maxServerGroupPages = 100;

export class NovaClient {
  private readonly calls: ServiceCalls;

  constructor(transport: ServiceTransport) {
    this.calls = new ServiceCalls(transport, 'compute', novaMicroversion);
  }

  /** The endpoint's microversion range, to refuse early on a cloud older than 2.60. */
  async getVersion(): Promise<NovaVersion> {
    return (await this.calls.get('/', versionBody)).version;
  }

  async createServer(server: CreateServer, schedulerHints?: SchedulerHints): Promise<CreatedServer> {
    const body = { server, ...(schedulerHints === undefined ? {} : { 'os:scheduler_hints': schedulerHints }) };
    return (await this.calls.post('/servers', body, createdServerBody)).server;
  }

  async getServer(id: string): Promise<Server> {
    return (await this.calls.get(`/servers/${segment(id)}`, serverBody)).server;
  }

  /** The detailed list, so one call gives status, addresses and tags (the plain list has only ids and names). */
  async listServers(filters: ServerFilters = {}): Promise<Server[]> {
    const query: Query = { ...tagQuery('compute', filters) };
    if (filters.name !== undefined) query.name = filters.name;
    if (filters.status !== undefined) query.status = filters.status;
    return this.calls.list('/servers/detail', serverList, { query });
  }

  /**
   * Servers named exactly `name`. Nova's name filter is a regular expression
   * matched anywhere in the name, so the name is escaped and anchored, and
   * the result is checked again here in case the database's regex dialect
   * reads the escapes differently.
   */
  async findServersByName(name: string, filters: Omit<ServerFilters, 'name'> = {}): Promise<Server[]> {
    const pattern = `^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
    return (await this.listServers({ ...filters, name: pattern })).filter((server) => server.name === name);
  }

  /** Accepted with 204; the server goes through DELETED and then answers 404. */
  async deleteServer(id: string): Promise<void> {
    return this.calls.delete(`/servers/${segment(id)}`);
  }

  async listServerTags(serverId: string): Promise<string[]> {
    return (await this.calls.get(`/servers/${segment(serverId)}/tags`, tagsBody)).tags;
  }

  async replaceServerTags(serverId: string, tags: readonly string[]): Promise<string[]> {
    return (await this.calls.put(`/servers/${segment(serverId)}/tags`, { tags }, tagsBody)).tags;
  }

  async addServerTag(serverId: string, tag: string): Promise<void> {
    await this.calls.put(`/servers/${segment(serverId)}/tags/${segment(tag)}`, undefined, anyBody);
  }

  async removeServerTag(serverId: string, tag: string): Promise<void> {
    return this.calls.delete(`/servers/${segment(serverId)}/tags/${segment(tag)}`);
  }

  async getServerMetadata(serverId: string): Promise<Record<string, string>> {
    return (await this.calls.get(`/servers/${segment(serverId)}/metadata`, metadataBody)).metadata;
  }

  /** Sets exactly these items, removing all others. */
  async replaceServerMetadata(serverId: string, metadata: Readonly<Record<string, string>>): Promise<Record<string, string>> {
    return (await this.calls.put(`/servers/${segment(serverId)}/metadata`, { metadata }, metadataBody)).metadata;
  }

  /** Adds or overwrites these items and keeps the others; answers the full resulting metadata. */
  async updateServerMetadata(serverId: string, metadata: Readonly<Record<string, string>>): Promise<Record<string, string>> {
    return (await this.calls.post(`/servers/${segment(serverId)}/metadata`, { metadata }, metadataBody)).metadata;
  }

  async deleteServerMetadataItem(serverId: string, key: string): Promise<void> {
    return this.calls.delete(`/servers/${segment(serverId)}/metadata/${segment(key)}`);
  }

  async listInterfaces(serverId: string): Promise<InterfaceAttachment[]> {
    return (await this.calls.get(`/servers/${segment(serverId)}/os-interface`, interfaceList)).interfaceAttachments;
  }

  async attachInterface(serverId: string, attachment: AttachInterface): Promise<InterfaceAttachment> {
    return (await this.calls.post(`/servers/${segment(serverId)}/os-interface`, { interfaceAttachment: attachment }, interfaceBody)).interfaceAttachment;
  }

  /** Asynchronous (202): the port leaves the server shortly after. */
  async detachInterface(serverId: string, portId: string): Promise<void> {
    return this.calls.delete(`/servers/${segment(serverId)}/os-interface/${segment(portId)}`);
  }

  async listVolumeAttachments(serverId: string): Promise<VolumeAttachment[]> {
    return (await this.calls.get(`/servers/${segment(serverId)}/os-volume_attachments`, volumeAttachmentList)).volumeAttachments;
  }

  /** The volume must be `available` (or multiattach); it turns `in-use` asynchronously. */
  async attachVolume(serverId: string, attachment: AttachVolume): Promise<VolumeAttachment> {
    return (await this.calls.post(`/servers/${segment(serverId)}/os-volume_attachments`, { volumeAttachment: attachment }, volumeAttachmentBody))
      .volumeAttachment;
  }

  async detachVolume(serverId: string, volumeId: string): Promise<void> {
    return this.calls.delete(`/servers/${segment(serverId)}/os-volume_attachments/${segment(volumeId)}`);
  }

  /** Public flavors and the private ones the project may use. */
  async listFlavors(): Promise<Flavor[]> {
    return this.calls.list('/flavors/detail', flavorList);
  }

  async getFlavor(id: string): Promise<Flavor> {
    return (await this.calls.get(`/flavors/${segment(id)}`, flavorBody)).flavor;
  }

  /** Nova cannot filter flavors by name, so this lists them all; names are unique in Nova. */
  async findFlavorByName(name: string): Promise<Flavor | undefined> {
    return (await this.listFlavors()).find((flavor) => flavor.name === name);
  }

  /** The user's keypairs (keypairs belong to users, not projects). */
  async listKeypairs(): Promise<Keypair[]> {
    return this.calls.list('/os-keypairs', keypairList);
  }

  async getKeypair(name: string): Promise<Keypair> {
    return (await this.calls.get(`/os-keypairs/${segment(name)}`, keypairBody)).keypair;
  }

  /**
   * The project's server groups. Nova pages them by offset with no next
   * link, and caps a page at its own maximum, which may be below what was
   * asked, so only an empty page proves the end.
   */
  async listServerGroups(): Promise<ServerGroup[]> {
    const groups: ServerGroup[] = [];
    for (let pages = 0; pages < maxServerGroupPages; pages++) {
      const query = { limit: serverGroupPageSize, offset: groups.length };
      const page = (await this.calls.get('/os-server-groups', serverGroupList, { query, microversion: serverGroupMicroversion })).server_groups;
      if (page.length === 0) return groups;
      groups.push(...page);
    }
    throw new OpenStackError({
      kind: 'Unexpected',
      detail: `the server group list did not end after ${maxServerGroupPages} pages`,
      service: 'compute',
      method: 'GET',
      path: '/os-server-groups',
    });
  }

  async getServerGroup(id: string): Promise<ServerGroup> {
    return (await this.calls.get(`/os-server-groups/${segment(id)}`, serverGroupBody, { microversion: serverGroupMicroversion })).server_group;
  }

  async createServerGroup(group: CreateServerGroup): Promise<ServerGroup> {
    return (await this.calls.post('/os-server-groups', { server_group: group }, serverGroupBody, { microversion: serverGroupMicroversion })).server_group;
  }

  async deleteServerGroup(id: string): Promise<void> {
    return this.calls.delete(`/os-server-groups/${segment(id)}`, { microversion: serverGroupMicroversion });
  }

  /** Compute availability zones; CAPO's failure domains are the ones with `zoneState.available`. */
  async listAvailabilityZones(): Promise<NovaAvailabilityZone[]> {
    return (await this.calls.get('/os-availability-zone', availabilityZoneList)).availabilityZoneInfo;
  }

  /** Absolute limits and use of the token's project, for quota headroom before creating servers. */
  async getLimits(): Promise<NovaAbsoluteLimits> {
    return (await this.calls.get('/limits', limitsBody)).limits.absolute;
  }
}
