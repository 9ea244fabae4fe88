/**
 * What the Neutron actuators share: tags in the create or right after it
 * (releases before 2024.1, and the simulator modelling Zed, refuse them in
 * the create body, or drop a port's),
 * naming the ports that keep a resource in use, and comparing addresses in
 * the form Neutron answers with.
 */
import { isIPv6 } from 'node:net';
import type { IdFilters, NeutronClient, Port, TaggableResource } from '../../openstack/index.js';
import { carriesOwnerTag, ownOrAdoptable, ownerTag, ownerTags, readGroup, type Owner, type Progress, type ReadMany } from './actuator.js';

interface Tagged {
  id: string;
  tags?: string[] | undefined;
}

/**
 * Creates a resource carrying its tags: in the create body where the cloud
 * says it takes them there (one call, and the resource is never untagged),
 * else by a PUT right after the POST, before its ID is recorded, so that if
 * recording fails the resource can still be adopted by its tag. A failed
 * PUT is dropped because create must not throw once the resource exists;
 * ensureOwnerTags, which runs right after recording, retries it and reports
 * the error (and tags what a cloud took in the create but dropped).
 */
export async function createTagged<R extends Tagged>(
  neutron: NeutronClient,
  collection: TaggableResource,
  tags: readonly string[],
  create: (tagged: { tags?: readonly string[] }) => Promise<R>,
): Promise<R> {
  if (await neutron.createTakesTags()) return create({ tags });
  const resource = await create({});
  try {
    return { ...resource, tags: await neutron.replaceTags(collection, resource.id, tags) };
  } catch {
    return resource;
  }
}

/** Adds whichever owner tags, and `extra` tags the desired state asks for, are missing, keeping tags others set. */
export async function ensureOwnerTags(
  neutron: NeutronClient,
  collection: TaggableResource,
  resource: Tagged,
  owner: Owner,
  extra: readonly string[] = [],
): Promise<Progress> {
  const current = resource.tags ?? [];
  const missing = [...new Set([...ownerTags(owner), ...extra])].filter((tag) => !current.includes(tag));
  if (missing.length > 0) await neutron.replaceTags(collection, resource.id, [...current, ...missing]);
  return { done: true };
}

/** DHCP ports belong to the network and go with it, so they never block a delete. */
/** Neutron resources of one kind by ID, many in one list (`?id=a&id=b`), which answers exactly: missing means gone. */
export function readById<Resource>(neutron: NeutronClient, kind: string, list: (filters: IdFilters) => Promise<Resource[]>): ReadMany<Resource> {
  return { group: readGroup(neutron, kind), read: (targets) => list({ id: targets.map((target) => target.id) }) };
}

export function portHolders(ports: readonly Port[]): string[] {
  return ports
    .filter((port) => port.device_owner !== 'network:dhcp')
    .map((port) => {
      const attached = port.device_owner === '' ? 'unattached' : `${port.device_owner} ${port.device_id}`.trimEnd();
      return `port ${port.id}${port.name === '' ? '' : ` "${port.name}"`} (${attached})`;
    });
}

/**
 * An address as Neutron prints it (through netaddr), so that a desired
 * address compares equal to the one Neutron answers with: IPv6 lower-case
 * and compressed as RFC 5952 says, which is how WHATWG URLs print an IPv6
 * host. IPv4 and anything unparsable are returned as given.
 */
export function canonicalAddress(address: string): string {
  return isIPv6(address) ? new URL(`http://[${address}]`).hostname.slice(1, -1) : address;
}

/** Neutron's limit on descriptions. */
const maxDescriptionLength = 255;

/**
 * `[owner <uid>]`, ending the description of everything created here.
 * Unlike the tags (a second request on older Neutron), the description is
 * part of the create request itself, so a resource whose tagging never
 * happened (a crash, a lost response) is still recognisably ours.
 */
export function ownerMark(owner: Owner): string {
  return `[owner ${owner.uid}]`;
}

/** The description with the owner mark at its end, shortened to fit. */
export function withOwnerMark(description: string | undefined, owner: Owner): string {
  const mark = ownerMark(owner);
  if (description === undefined || description === '') return mark;
  return `${description.slice(0, maxDescriptionLength - mark.length - 1)} ${mark}`;
}

/** The description as the caller gave it, for display (floating IPs keep their name there). */
export function withoutOwnerMark(description: string): string {
  return description.replace(/ ?\[owner [^\]]+\]$/, '');
}

/** Ours: it carries this owner's tag, or its tagging was interrupted and the description carries the owner mark. */
export function ownedBy(resource: { tags?: string[] | null | undefined; description?: string | null | undefined }, owner: Owner): boolean {
  const tags = resource.tags ?? [];
  if (tags.includes(ownerTag(owner))) return true;
  return !carriesOwnerTag(tags) && (resource.description ?? '').endsWith(ownerMark(owner));
}

/** Some capo-apiserver object's: an owner tag, or the owner mark of an interrupted tagging. */
export function ownedByAnyone(resource: { tags?: string[] | null | undefined; description?: string | null | undefined }): boolean {
  return carriesOwnerTag(resource.tags ?? []) || /\[owner [^\]]+\]$/.test(resource.description ?? '');
}

/** The resources of a name lookup that are ours, or CAPO's while the owner adopts them (ensureOwnerTags then marks them ours). */
export async function adoptableOf<R extends { tags?: string[] | null | undefined; description?: string | null | undefined }>(
  listed: Promise<R[]>,
  owner: Owner,
): Promise<R[]> {
  return ownOrAdoptable(await listed, owner, (resource) => ownedBy(resource, owner), ownedByAnyone);
}
