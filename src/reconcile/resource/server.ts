/**
 * The Nova server actuator: one machine. Its ports and volumes are made
 * beforehand by their own actuators and only referenced here, so a server
 * that fails to build leaves nothing behind that the caller does not know of.
 */
import type { BlockDeviceMapping, CreateServer, NovaClient, SchedulerHints, Server } from '../../openstack/index.js';
import { TerminalError } from '../runtime/controller.js';
import { absentOn404, carriesOwnerTag, ownOrAdoptable, ownerTag, ownerTagOf, ownerTags, readGroup, type ResourceActuator } from './actuator.js';

/** Nova's create fields where they map one to one; the references are resolved to IDs by the caller. */
export interface ServerDesired {
  name: string;
  /** Flavor ID. */
  flavorRef: string;
  /** Omitted when booting from a root volume. */
  imageRef?: string;
  /** Ports created beforehand by the caller, in order; none gives a server without networking. */
  portIds: string[];
  key_name?: string;
  /** Already base64-encoded. */
  user_data?: string;
  metadata?: Record<string, string>;
  /** User tags besides the owner tags. */
  tags?: string[];
  config_drive?: boolean;
  availability_zone?: string;
  /**
   * Volumes created beforehand by the caller: the root volume (bootIndex 0)
   * and data volumes. Nova never deletes them: the volume actuator does.
   */
  volumes?: { id: string; bootIndex?: number; deleteOnTermination?: false; tag?: string }[];
  /** Local (ephemeral) extra disks; the name becomes the device tag. */
  ephemeral?: { sizeGiB: number; name: string }[];
  serverGroupId?: string;
  schedulerHints?: Record<string, string | number | boolean>;
}

/**
 * The longest a boot whose length this process has not learned yet goes unlooked at (CAPO
 * requeues every 10 s). A boot takes from seconds to minutes, so a late look costs the machine's
 * Ready up to this much plus the read's own time, while a look is one GET: 4 s finds a public
 * cloud's one-minute boot at most 5 s after it ended (under a tenth of it), for a read or two more
 * per machine than 5 s.
 */
const buildRequeueMs = 4_000;
/** Nova deletes a server within seconds once its compute host acts. */
const deleteRequeueMs = 5_000;

/** States Nova leaves on its own; every other state holds until someone acts, so the caller reads it. */
const transitional = new Set(['', 'BUILD', 'REBUILD', 'REBOOT', 'HARD_REBOOT', 'RESIZE', 'REVERT_RESIZE', 'MIGRATING', 'PASSWORD']);
/** Someone deleted the server; a soft-deleted one could still be restored by them. */
const deleted = new Set(['DELETED', 'SOFT_DELETED']);

export function serverActuator(nova: NovaClient): ResourceActuator<ServerDesired, Server> {
  return {
    kind: 'server',
    getById: (id) => absentOn404(nova.getServer(id)),
    // Nova lists by ID for admins only; each server carries its owner's tag, so a list of any of those tags finds them all.
    readMany: { group: readGroup(nova, 'server'), read: (targets) => nova.listServers({ 'tags-any': targets.map((target) => ownerTagOf(target.ownerUid)) }) },
    findAdoptable: async (name, owner) =>
      ownOrAdoptable(
        await nova.findServersByName(name, owner.adopt ? {} : { tags: [ownerTag(owner)] }),
        owner,
        (server) => (server.tags ?? []).includes(ownerTag(owner)),
        (server) => carriesOwnerTag(server.tags ?? []),
      ),
    async create(desired, owner) {
      const tags = [...new Set([...ownerTags(owner), ...(desired.tags ?? [])])];
      const created = await nova.createServer(createBody(desired, tags), schedulerHints(desired));
      return building(created.id, desired, tags);
    },
    // An adopted server (CAPO's) gets the owner tags, kept beside the ones it has.
    async postCreate(server, _desired, owner) {
      const tags = server.tags ?? [];
      if (!tags.includes(ownerTag(owner))) server.tags = await nova.replaceServerTags(server.id, [...new Set([...tags, ...ownerTags(owner)])]);
      return { done: true };
    },
    readiness(server) {
      if (server.status === 'ACTIVE') return { ready: true };
      if (server.status === 'ERROR') return { failed: server.fault?.message ?? 'Nova reports status ERROR without a fault' };
      if (deleted.has(server.status)) return { failed: `Nova reports status ${server.status}: the server was deleted outside this object` };
      if (transitional.has(server.status)) {
        const task = server['OS-EXT-STS:task_state'];
        return {
          waitingFor: `server ${server.id} to become ACTIVE (now ${server.status || 'no status'}${task ? `, ${task}` : ''})`,
          requeueAfterMs: buildRequeueMs,
          transition: { kind: `server ${server.status || 'no status'}`, id: server.id },
        };
      }
      return { ready: true };
    },
    async delete(server) {
      // A second DELETE would be accepted but does nothing new; the first is still running.
      if (server['OS-EXT-STS:task_state'] !== 'deleting' && server.status !== 'DELETED') await nova.deleteServer(server.id);
      // Timed, so that the schedule learns how long a delete takes here and looks once near its end.
      return { waitingFor: `server ${server.id} to be deleted`, requeueAfterMs: deleteRequeueMs, transition: { kind: 'server deletion', id: server.id } };
    },
    describe: (server) => ({
      id: server.id,
      name: server.name,
      status: server.status,
      task_state: server['OS-EXT-STS:task_state'] ?? null,
      availability_zone: server['OS-EXT-AZ:availability_zone'],
      flavor: server.flavor.original_name,
      image: server.image === '' ? null : server.image.id,
      key_name: server.key_name ?? null,
      volumes_attached: (server['os-extended-volumes:volumes_attached'] ?? []).map((volume) => volume.id),
      fault: server.fault?.message,
    }),
  };
}

function createBody(desired: ServerDesired, tags: string[]): CreateServer {
  const rootVolumes = (desired.volumes ?? []).filter((volume) => volume.bootIndex === 0);
  if (desired.imageRef === undefined && rootVolumes.length === 0) {
    throw new TerminalError(`server "${desired.name}": give either an image or a root volume (bootIndex 0) to boot from`);
  }
  if (desired.imageRef !== undefined && rootVolumes.length > 0) {
    throw new TerminalError(`server "${desired.name}": give either an image or a root volume (bootIndex 0), not both`);
  }
  const devices = blockDevices(desired);
  return {
    name: desired.name,
    flavorRef: desired.flavorRef,
    ...(desired.imageRef === undefined ? {} : { imageRef: desired.imageRef }),
    networks: desired.portIds.length === 0 ? 'none' : desired.portIds.map((port) => ({ port })),
    ...(desired.key_name === undefined ? {} : { key_name: desired.key_name }),
    ...(desired.user_data === undefined ? {} : { user_data: desired.user_data }),
    ...(desired.metadata === undefined ? {} : { metadata: desired.metadata }),
    ...(desired.config_drive === undefined ? {} : { config_drive: desired.config_drive }),
    ...(desired.availability_zone === undefined ? {} : { availability_zone: desired.availability_zone }),
    ...(devices.length === 0 ? {} : { block_device_mapping_v2: devices }),
    tags,
  };
}

function blockDevices(desired: ServerDesired): BlockDeviceMapping[] {
  const volumes = (desired.volumes ?? []).map(
    (volume): BlockDeviceMapping => ({
      boot_index: volume.bootIndex ?? -1,
      source_type: 'volume',
      destination_type: 'volume',
      uuid: volume.id,
      delete_on_termination: false,
      ...(volume.tag === undefined ? {} : { tag: volume.tag }),
    }),
  );
  const disks = (desired.ephemeral ?? []).map(
    (disk): BlockDeviceMapping => ({ boot_index: -1, source_type: 'blank', destination_type: 'local', volume_size: disk.sizeGiB, tag: disk.name }),
  );
  const extra = [...volumes, ...disks];
  if (extra.length === 0 || desired.imageRef === undefined) return extra;
  // With other devices listed, the image is listed too, as the root disk, so the boot sequence does not rest on Nova adding it.
  return [{ boot_index: 0, source_type: 'image', destination_type: 'local', uuid: desired.imageRef, delete_on_termination: true }, ...extra];
}

function schedulerHints(desired: ServerDesired): SchedulerHints | undefined {
  const hints: SchedulerHints = { ...desired.schedulerHints };
  if (desired.serverGroupId !== undefined) {
    if (hints.group !== undefined && hints.group !== desired.serverGroupId) {
      throw new TerminalError(`server "${desired.name}": the scheduler hint group ${String(hints.group)} contradicts server group ${desired.serverGroupId}`);
    }
    hints.group = desired.serverGroupId;
  }
  return Object.keys(hints).length === 0 ? undefined : hints;
}

/**
 * Nova answers a create with the ID alone, and create must not send a
 * second request, so the server is described from what was asked for, in
 * BUILD as Nova reports it; the next read replaces it.
 */
function building(id: string, desired: ServerDesired, tags: string[]): Server {
  return {
    id,
    name: desired.name,
    status: 'BUILD',
    addresses: {},
    metadata: desired.metadata ?? {},
    image: desired.imageRef === undefined ? '' : { id: desired.imageRef },
    flavor: {},
    tags,
    ...(desired.key_name === undefined ? {} : { key_name: desired.key_name }),
  };
}

export type MachineAddressType = 'InternalIP' | 'ExternalIP' | 'InternalDNS';

export interface MachineAddress {
  type: MachineAddressType;
  address: string;
}

const addressTypes: Record<string, MachineAddressType> = { fixed: 'InternalIP', floating: 'ExternalIP' };

/**
 * The machine addresses CAPO reports for a server, in an order that only
 * changes when the addresses do: networks by name, IPv4 before IPv6 within
 * each (otherwise Nova's order), then the server name as InternalDNS.
 * Addresses of a type other than fixed or floating are left out.
 */
export function serverAddresses(server: Server): MachineAddress[] {
  const addresses: MachineAddress[] = [];
  for (const network of Object.keys(server.addresses).sort()) {
    const byVersion = [...(server.addresses[network] ?? [])].sort((a, b) => a.version - b.version);
    for (const entry of byVersion) {
      const type = addressTypes[entry['OS-EXT-IPS:type'] ?? ''];
      if (type !== undefined) addresses.push({ type, address: entry.addr });
    }
  }
  addresses.push({ type: 'InternalDNS', address: server.name });
  return addresses;
}
