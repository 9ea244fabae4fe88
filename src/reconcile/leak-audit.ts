/**
 * The leak audit: resources in the clouds our objects use that carry our
 * owner mark (the owner tag; owner metadata on Cinder volumes) while no
 * stored object has that uid any more. That is what a deletion cut short by
 * hand (a finalizer removed), or a management plane replaced with its state
 * lost, leaves behind.
 *
 * The cloud is listed first and the objects second: an object that made a
 * resource existed before it, so it is in the second list, and a resource
 * made while the audit runs is never taken for a leak.
 *
 * Cleanup deletes leaks the caller names, through the actuators the
 * reconciler deletes with, dependents first (servers before their ports,
 * routers' interfaces before subnets), after auditing again: only what is
 * still a leak at that moment is deleted. One pass; what waits (a server
 * still going) or is blocked is reported, and running it again finishes.
 */
import { isNotFound, OpenStackError } from '../openstack/index.js';
import type { CloudConnection } from './cloud.js';
import { floatingIpActuator } from './resource/floating-ip.js';
import { imageActuator } from './resource/image.js';
import { loadBalancerActuator } from './resource/load-balancer.js';
import { networkActuator } from './resource/network.js';
import { portActuator } from './resource/port.js';
import { routerActuator } from './resource/router.js';
import { securityGroupActuator } from './resource/security-group.js';
import { serverActuator } from './resource/server.js';
import { subnetActuator } from './resource/subnet.js';
import { trunkActuator } from './resource/trunk.js';
import { installationMetadataKey, ownerMetadataKey, volumeActuator } from './resource/volume.js';
import { installationOfTags, ownerUidOfTags } from './resource/actuator.js';

/** In deletion order: what holds another goes first. */
export const leakKinds = [
  'servers',
  'loadBalancers',
  'floatingIps',
  'trunks',
  'ports',
  'routers',
  'subnets',
  'networks',
  'securityGroups',
  'volumes',
  'images',
] as const;
export type LeakKind = (typeof leakKinds)[number];

export interface LeakedResource {
  /** The credentials it was found with, as `<namespace>/<Secret>:<cloud>`. */
  cloud: string;
  kind: LeakKind;
  id: string;
  name: string;
  /** The uid of the object that made it, which no longer exists. */
  ownerUid: string;
}

export interface LeakAudit {
  /** The clouds audited, as `<namespace>/<Secret>:<cloud>`. */
  clouds: string[];
  leaks: LeakedResource[];
  /** Resources marked by another installation (installation.ts): their owners are not ours to know, so they are no leaks of ours. */
  otherInstallations: number;
  /** Clouds that could not be audited, and why: their leaks are unknown, not absent. */
  failed: { cloud: string; message: string }[];
}

export interface CleanupOutcome {
  kind: string;
  id: string;
  outcome: 'deleted' | 'deleting' | 'not a leak' | 'failed';
  message?: string;
}

/** A cloud our objects use, with the label the audit names it by; `connection` is the error when it could not be had. */
export interface AuditedCloud {
  label: string;
  connection: CloudConnection | Error;
}

interface Marked {
  id: string;
  name?: string | null;
  tags?: readonly string[] | null;
  metadata?: Readonly<Record<string, string>>;
  project_id?: string | null;
  tenant_id?: string | null;
  /** Glance's name for the project. */
  owner?: string | null;
}

type Listing = Record<LeakKind, readonly Marked[]>;

/**
 * Only the credentials' own project: admin credentials list every project's networks and load
 * balancers, and what another project holds is not ours to judge (nor is another project's public
 * image). Filtered by the API where it can, and again here for the lists that cannot.
 */
async function listMarked({ clients, session }: CloudConnection): Promise<Listing> {
  const { neutron, nova, octavia, glance, cinder } = clients;
  const { projectId } = await session.authenticate();
  const project_id = projectId;
  const [servers, loadBalancers, floatingIps, trunks, ports, routers, subnets, networks, securityGroups, volumes, images] = await Promise.all([
    nova.listServers(),
    octavia.listLoadBalancers({ project_id }),
    neutron.listFloatingIps({ project_id }),
    neutron.listTrunks(),
    neutron.listPorts({ project_id }),
    neutron.listRouters({ project_id }),
    neutron.listSubnets({ project_id }),
    neutron.listNetworks({ project_id }),
    neutron.listSecurityGroups({ project_id }),
    cinder.listVolumes(),
    glance.listImages({ owner: projectId }),
  ]);
  const listing: Listing = { servers, loadBalancers, floatingIps, trunks, ports, routers, subnets, networks, securityGroups, volumes, images };
  const inProject = (resource: Marked) => {
    const holder = resource.project_id ?? resource.tenant_id ?? resource.owner;
    return holder === undefined || holder === null || holder === projectId;
  };
  return Object.fromEntries(leakKinds.map((kind) => [kind, listing[kind].filter(inProject)])) as unknown as Listing;
}

function ownerOf(resource: Marked): string | undefined {
  return ownerUidOfTags(resource.tags) ?? resource.metadata?.[ownerMetadataKey];
}

/** The installation that made it; none for what was made before installations were tagged, which counts as this one's. */
function installationOf(resource: Marked): string | undefined {
  return installationOfTags(resource.tags) ?? resource.metadata?.[installationMetadataKey];
}

/**
 * `ownerUids` is read after the clouds are listed (see the module comment). With `installation`,
 * what another installation made is left out: its owners live in that installation's storage.
 */
export async function auditLeaks(clouds: readonly AuditedCloud[], ownerUids: () => Promise<Set<string>>, installation?: string): Promise<LeakAudit> {
  const failed: LeakAudit['failed'] = [];
  const listings = await Promise.all(
    clouds.map(async (cloud) => {
      try {
        if (cloud.connection instanceof Error) throw cloud.connection;
        return { cloud, listing: await listMarked(cloud.connection) };
      } catch (error) {
        failed.push({ cloud: cloud.label, message: error instanceof Error ? error.message : String(error) });
        return undefined;
      }
    }),
  );
  const known = await ownerUids();
  const seen = new Set<string>();
  const leaks: LeakedResource[] = [];
  const others = new Set<string>();
  for (const { cloud, listing } of listings.filter((entry) => entry !== undefined)) {
    for (const kind of leakKinds) {
      for (const resource of listing[kind]) {
        const ownerUid = ownerOf(resource);
        // Two Secrets for one project list the same resources: each leak once.
        if (ownerUid === undefined || known.has(ownerUid) || seen.has(`${kind}/${resource.id}`)) continue;
        const madeBy = installationOf(resource);
        if (installation !== undefined && madeBy !== undefined && madeBy !== installation) {
          others.add(`${kind}/${resource.id}`);
          continue;
        }
        seen.add(`${kind}/${resource.id}`);
        leaks.push({ cloud: cloud.label, kind, id: resource.id, name: resource.name ?? '', ownerUid });
      }
    }
  }
  return { clouds: clouds.map((cloud) => cloud.label), leaks, otherInstallations: others.size, failed };
}

/** Deletes the named resources that are still leaks, dependents first. */
/** Names of kinds the audit does not know are never leaks, so any target list is safe to pass. */
export async function cleanUpLeaks(
  clouds: readonly AuditedCloud[],
  ownerUids: () => Promise<Set<string>>,
  targets: readonly { kind: string; id: string }[],
  installation?: string,
): Promise<CleanupOutcome[]> {
  const audit = await auditLeaks(clouds, ownerUids, installation);
  const leaked = new Map(audit.leaks.map((leak) => [`${leak.kind}/${leak.id}`, leak]));
  const byLabel = new Map(clouds.map((cloud) => [cloud.label, cloud.connection]));
  const rank = (kind: string) => (leakKinds.includes(kind as LeakKind) ? leakKinds.indexOf(kind as LeakKind) : leakKinds.length);
  const ordered = [...targets].sort((a, b) => rank(a.kind) - rank(b.kind));
  const outcomes: CleanupOutcome[] = [];
  for (const target of ordered) {
    const leak = leaked.get(`${target.kind}/${target.id}`);
    if (!leak) {
      outcomes.push({ kind: target.kind, id: target.id, outcome: 'not a leak', message: 'gone already, or its owner exists' });
      continue;
    }
    outcomes.push(await deleteOne(byLabel.get(leak.cloud) as CloudConnection, leak));
  }
  return outcomes;
}

async function deleteOne(connection: CloudConnection, leak: LeakedResource): Promise<CleanupOutcome> {
  const { kind, id } = leak;
  const { neutron, nova, octavia, glance, cinder } = connection.clients;
  const actuators = {
    servers: () => serverActuator(nova),
    loadBalancers: () => loadBalancerActuator(octavia),
    floatingIps: () => floatingIpActuator(neutron),
    trunks: () => trunkActuator(neutron),
    ports: () => portActuator(neutron),
    routers: () => routerActuator(neutron),
    subnets: () => subnetActuator(neutron),
    networks: () => networkActuator(neutron),
    securityGroups: () => securityGroupActuator(neutron),
    volumes: () => volumeActuator(cinder),
    images: () => imageActuator(glance),
  } satisfies Record<LeakKind, () => unknown>;
  // Each actuator has its own resource type; the audit only hands one back what its getById returned.
  const actuator = actuators[kind]() as unknown as {
    getById(id: string): Promise<unknown>;
    delete(resource: unknown): Promise<{ done: true } | { waitingFor: string }>;
  };
  try {
    const resource = await actuator.getById(id);
    if (resource === undefined) return { kind, id, outcome: 'deleted' };
    const progress = await actuator.delete(resource);
    return 'done' in progress ? { kind, id, outcome: 'deleted' } : { kind, id, outcome: 'deleting', message: `waiting for ${progress.waitingFor}` };
  } catch (error) {
    if (isNotFound(error)) return { kind, id, outcome: 'deleted' };
    return { kind, id, outcome: 'failed', message: error instanceof OpenStackError ? error.message : String(error) };
  }
}
