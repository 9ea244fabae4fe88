/**
 * What a create is checked against besides its block devices and networks:
 * where it may go (zone, forced host), its flavor and image, its key pair,
 * and the quotas (metadata items, instances, cores, RAM, server group
 * members), each with nova-api's message.
 */
import type { SimulatorContext } from '../framework.js';
import { badRequest, forbidden, policyForbidden } from './errors.js';
import { quotaOf, type Caller, type Flavor, type NovaStore, type ServerGroup } from './model.js';
import type { ServerCreateBody } from './schemas.js';

type ServerSpec = ServerCreateBody['server'];

/** Where a create asked to go: a zone, and (admins only) a host. */
export interface Placement {
  availabilityZone: string | null;
  requestedHost?: string;
}

/** `availability_zone` ("zone", "zone:host" or ":host"), then `hypervisor_hostname` and `host` (2.74), each host one of ours. */
export function placementOf(spec: ServerSpec, caller: Caller, store: NovaStore): Placement {
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
  return { availabilityZone, ...(requestedHost === undefined ? {} : { requestedHost }) };
}

/** flavorRef is an ID or a link whose last segment is one. */
export function findFlavor(store: NovaStore, ref: string): Flavor {
  const id = ref.split('/').at(-1)!;
  const flavor = store.flavors.get(id);
  if (!flavor) throw badRequest(`Flavor ${id} could not be found.`);
  return flavor;
}

/** The image to boot from: visible to the project, active, and no larger than the flavor allows. */
export function validateImage(imageRef: string, flavor: Flavor, caller: Caller, ctx: SimulatorContext): void {
  const image = ctx.peers.image?.getImage(imageRef, caller.projectId);
  if (!image) throw badRequest('Can not find requested image');
  if (image.status !== 'active') throw badRequest(`Image ${imageRef} is not active.`);
  if (image.min_ram > flavor.ram) throw badRequest("Flavor's memory is too small for requested image.");
  if (image.min_disk > flavor.disk) throw badRequest("Flavor's disk is too small for requested image.");
}

/** Key pairs belong to a user, not a project. */
export function validateKeyName(keyName: string | undefined, caller: Caller, store: NovaStore): void {
  if (keyName !== undefined && !store.keypairs.some((k) => k.userId === caller.userId && k.name === keyName)) {
    throw badRequest('Invalid key_name provided.');
  }
}

export function validateMetadataQuota(metadata: Record<string, string>, caller: Caller, ctx: SimulatorContext): void {
  const metadataLimit = quotaOf(ctx, caller.projectId, 'metadata_items');
  if (Object.keys(metadata).length > metadataLimit) throw forbidden(`Maximum number of metadata items exceeds ${metadataLimit}`);
}

/** nova.compute.utils.check_num_instances_quota: how many of min..max fit, or 403 with Nova's message. */
export function instancesAllowed(store: NovaStore, ctx: SimulatorContext, caller: Caller, flavor: Flavor, minCount: number, maxCount: number): number {
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

/** The server group a scheduler hint names (the project's own, or any for an admin), with room for `count` more live members. */
export function serverGroupFor(groupId: string | undefined, count: number, caller: Caller, store: NovaStore, ctx: SimulatorContext): ServerGroup | undefined {
  const group = groupId ? store.groups.get(groupId) : undefined;
  if (groupId && (!group || (group.projectId !== caller.projectId && !caller.admin))) {
    throw badRequest(`Instance group ${groupId} could not be found.`);
  }
  if (group) {
    const members = group.members.filter((id) => store.servers.has(id)).length;
    if (members + count > quotaOf(ctx, caller.projectId, 'server_group_members')) throw forbidden('Quota exceeded, too many servers in group');
  }
  return group;
}
