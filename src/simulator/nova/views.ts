/** How Nova shows a server, per microversion and per caller (admins see OS-EXT-SRV-ATTR:*). */
import { createHash } from 'node:crypto';
import type { SimulatorContext } from '../framework.js';
import { computeUrls, isoTime, naiveTime, type Caller, type Server } from './model.js';

/** nova.api.openstack.common._STATE_MAP, for the states the simulator reaches. */
function statusOf(server: Pick<Server, 'vmState' | 'taskState'>): string {
  const task = server.taskState;
  switch (server.vmState) {
    case 'active':
      if (task === 'rebooting') return 'REBOOT';
      if (task === 'rebooting_hard') return 'HARD_REBOOT';
      return 'ACTIVE';
    case 'building':
      return 'BUILD';
    case 'stopped':
      return 'SHUTOFF';
    case 'error':
      return 'ERROR';
    case 'deleted':
      return 'DELETED';
    default:
      return 'UNKNOWN';
  }
}

/** vm_state/task_state pairs per status, for the `status` list filter (Nova maps it the same way). */
export const statesByStatus: Record<string, { vmState: string; taskStates?: (string | null)[] }> = {
  ACTIVE: { vmState: 'active' },
  REBOOT: { vmState: 'active', taskStates: ['rebooting'] },
  HARD_REBOOT: { vmState: 'active', taskStates: ['rebooting_hard'] },
  BUILD: { vmState: 'building' },
  SHUTOFF: { vmState: 'stopped' },
  ERROR: { vmState: 'error' },
  DELETED: { vmState: 'deleted' },
  PAUSED: { vmState: 'paused' },
  SUSPENDED: { vmState: 'suspended' },
  RESCUE: { vmState: 'rescued' },
  SHELVED: { vmState: 'shelved' },
  SHELVED_OFFLOADED: { vmState: 'shelved_offloaded' },
  SOFT_DELETED: { vmState: 'soft-delete' },
  VERIFY_RESIZE: { vmState: 'resized' },
  RESIZE: { vmState: 'active', taskStates: ['resize_prep'] },
  MIGRATING: { vmState: 'active', taskStates: ['migrating'] },
  REBUILD: { vmState: 'active', taskStates: ['rebuilding'] },
  PASSWORD: { vmState: 'active', taskStates: ['updating_password'] },
};

const progressStatuses = new Set(['ACTIVE', 'BUILD', 'REBUILD', 'RESIZE', 'VERIFY_RESIZE', 'MIGRATING']);

interface AddressEntry {
  version: 4 | 6;
  addr: string;
  'OS-EXT-IPS:type': 'fixed' | 'floating';
  'OS-EXT-IPS-MAC:mac_addr': string;
}

/** `addresses`, keyed by network name, read from Neutron as Nova's network info cache would hold it. */
export function addressesOf(server: Server, ctx: SimulatorContext): Record<string, AddressEntry[]> {
  const network = ctx.peers.network;
  const addresses: Record<string, AddressEntry[]> = {};
  if (!network) return addresses;
  for (const nic of server.nics) {
    const port = network.getPort(nic.portId);
    if (!port) continue;
    const label = network.getNetwork(port.network_id)?.name ?? port.network_id;
    addresses[label] ??= [];
    const entries = addresses[label];
    for (const ip of port.fixed_ips) {
      entries.push({
        version: ip.ip_address.includes(':') ? 6 : 4,
        addr: ip.ip_address,
        'OS-EXT-IPS:type': 'fixed',
        'OS-EXT-IPS-MAC:mac_addr': port.mac_address,
      });
    }
    for (const fip of network.floatingIpsOfPort(port.id)) {
      entries.push({ version: 4, addr: fip.floating_ip_address, 'OS-EXT-IPS:type': 'floating', 'OS-EXT-IPS-MAC:mac_addr': port.mac_address });
    }
  }
  return addresses;
}

export function serverSummary(server: Server, ctx: SimulatorContext) {
  return { id: server.id, name: server.name, links: computeUrls(ctx).links('servers', server.id) };
}

interface ViewOptions {
  /** GET /servers/{id}, PUT and actions show `server_groups` (2.71+); list details do not. */
  single: boolean;
}

export function serverDetail(server: Server, caller: Caller, ctx: SimulatorContext, options: ViewOptions): Record<string, unknown> {
  const { minor, admin } = caller;
  const urls = computeUrls(ctx);
  const status = statusOf(server);
  const flavor = server.flavor;
  const view: Record<string, unknown> = {
    id: server.id,
    name: server.name,
    status,
    tenant_id: server.projectId,
    user_id: server.userId,
    metadata: { ...server.metadata },
    hostId: server.host
      ? createHash('sha224')
          .update(server.projectId + server.host)
          .digest('hex')
      : '',
    image: server.imageId ? { id: server.imageId, links: [{ rel: 'bookmark', href: `${urls.root()}/images/${server.imageId}` }] } : '',
    flavor:
      minor >= 47
        ? {
            vcpus: flavor.vcpus,
            ram: flavor.ram,
            disk: flavor.disk,
            ephemeral: flavor.ephemeral,
            swap: flavor.swap,
            original_name: flavor.name,
            extra_specs: { ...flavor.extraSpecs },
          }
        : { id: flavor.id, links: [{ rel: 'bookmark', href: `${urls.root()}/flavors/${flavor.id}` }] },
    created: isoTime(server.createdAt),
    updated: isoTime(server.updatedAt),
    addresses: addressesOf(server, ctx),
    accessIPv4: server.accessIPv4,
    accessIPv6: server.accessIPv6,
    links: urls.links('servers', server.id),
    'OS-DCF:diskConfig': server.diskConfig,
  };
  if ((status === 'ERROR' || status === 'DELETED') && server.fault) {
    view.fault = { code: server.fault.code, created: isoTime(server.fault.created), message: server.fault.message };
  }
  if (progressStatuses.has(status)) view.progress = 0;
  view['OS-EXT-AZ:availability_zone'] = server.availabilityZone ?? '';
  view.config_drive = server.configDrive ? 'True' : '';
  view.key_name = server.keyName;
  view['OS-SRV-USG:launched_at'] = server.launchedAt === null ? null : naiveTime(server.launchedAt);
  view['OS-SRV-USG:terminated_at'] = server.terminatedAt === null ? null : naiveTime(server.terminatedAt);
  // Nova reads these from the server's ports, so a server without NICs has none.
  if (server.nics.length > 0) view.security_groups = server.securityGroups.map((name) => ({ name }));
  if (admin) {
    view['OS-EXT-SRV-ATTR:host'] = server.host;
    view['OS-EXT-SRV-ATTR:instance_name'] = server.instanceName;
    view['OS-EXT-SRV-ATTR:hypervisor_hostname'] = server.host;
    if (minor >= 3) {
      view['OS-EXT-SRV-ATTR:reservation_id'] = server.reservationId;
      view['OS-EXT-SRV-ATTR:launch_index'] = server.launchIndex;
      view['OS-EXT-SRV-ATTR:hostname'] = server.hostname;
      view['OS-EXT-SRV-ATTR:kernel_id'] = '';
      view['OS-EXT-SRV-ATTR:ramdisk_id'] = '';
      view['OS-EXT-SRV-ATTR:root_device_name'] = server.launchedAt === null ? null : '/dev/vda';
      view['OS-EXT-SRV-ATTR:user_data'] = server.userData;
    }
  }
  view['OS-EXT-STS:task_state'] = server.taskState;
  view['OS-EXT-STS:vm_state'] = server.vmState;
  view['OS-EXT-STS:power_state'] = server.powerState;
  view['os-extended-volumes:volumes_attached'] = server.blockDevices
    .filter((bd) => bd.volumeId && bd.attachmentId)
    .map((bd) => (minor >= 3 ? { id: bd.volumeId, delete_on_termination: bd.deleteOnTermination } : { id: bd.volumeId }));
  if (minor >= 16 && admin) view.host_status = server.host ? 'UP' : '';
  if (minor >= 9) view.locked = false;
  if (minor >= 73) view.locked_reason = null;
  if (minor >= 19) view.description = server.description;
  if (minor >= 26) view.tags = [...server.tags];
  if (minor >= 63) view.trusted_image_certificates = null;
  if (minor >= 90 && !admin) view['OS-EXT-SRV-ATTR:hostname'] = server.hostname;
  if (minor >= 71 && options.single) view.server_groups = server.groupId ? [server.groupId] : [];
  return view;
}
