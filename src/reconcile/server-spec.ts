/**
 * The OpenStackServer spec a machine (or the bastion) is realised as, as
 * CAPO derives it: the machine spec, plus the cluster's identity, network,
 * managed security group and tags. The server's spec is immutable, so it is
 * computed once, at creation.
 */
import { createHash } from 'node:crypto';
import type { JsonObject } from '../storage/interface.js';
import { TerminalError } from './runtime/controller.js';
import type { ClusterSpec, MachineSpec } from './kinds.js';
import { flavorReference } from './lookups.js';

export interface ServerSpecInput {
  machineSpec: MachineSpec;
  /** The OpenStackCluster's spec and status (storage version). */
  clusterSpec: ClusterSpec;
  clusterStatus: JsonObject;
  role: 'controlplane' | 'worker' | 'bastion';
  availabilityZone?: string;
  /** The Secret holding the user data (bootstrap data for machines). */
  userDataSecretName?: string;
}

const managedGroupField = { controlplane: 'controlPlaneSecurityGroup', worker: 'workerSecurityGroup', bastion: 'bastionSecurityGroup' } as const;

/** What of a cluster's status its servers' specs take: the network and the managed security groups. */
export function clusterReferencesOf(clusterStatus: JsonObject): unknown[] {
  const idOf = (field: string) => (clusterStatus[field] as { id?: string } | undefined)?.id;
  return [idOf('network'), ...Object.values(managedGroupField).map(idOf)];
}

/**
 * Whether an existing server's spec names the cluster references a server made now would not:
 * the cluster made its network or security groups again after they were deleted behind its back.
 */
export function clusterReferencesMoved(serverSpec: JsonObject, input: ServerSpecInput): boolean {
  const now = serverSpecFor(input);
  return canonicalJson([serverSpec.ports, serverSpec.securityGroups]) !== canonicalJson([now.ports, now.securityGroups]);
}

export function serverSpecFor(input: ServerSpecInput): JsonObject {
  const { machineSpec, clusterSpec, clusterStatus, role } = input;
  const clusterNetwork = clusterStatus.network as { id?: string } | undefined;
  const ports = (machineSpec.ports && machineSpec.ports.length > 0 ? machineSpec.ports : [{}]).map((port) => {
    if (port.network !== undefined) return port;
    if (!clusterNetwork?.id) throw new TerminalError('a port has no network and the cluster has no network to default to (InvalidMachineSpec)');
    return { ...port, network: { id: clusterNetwork.id } };
  });
  const managedGroup = (clusterStatus[managedGroupField[role]] as { id?: string } | undefined)?.id;
  const securityGroups = [...(managedGroup ? [{ id: managedGroup }] : []), ...(machineSpec.securityGroups ?? [])];
  const tags = [...new Set([...(clusterSpec.tags ?? []), ...(machineSpec.tags ?? [])])];
  const identityRef = machineSpec.identityRef ?? clusterSpec.identityRef;
  return dropUndefined({
    ...flavorReference(machineSpec.flavor),
    image: machineSpec.image,
    sshKeyName: machineSpec.sshKeyName ?? '',
    ports,
    securityGroups: securityGroups.length > 0 ? securityGroups : undefined,
    trunk: machineSpec.trunk,
    tags: tags.length > 0 ? tags : undefined,
    serverMetadata: machineSpec.serverMetadata,
    configDrive: machineSpec.configDrive,
    rootVolume: machineSpec.rootVolume,
    additionalBlockDevices: machineSpec.additionalBlockDevices,
    availabilityZone: input.availabilityZone,
    serverGroup: machineSpec.serverGroup,
    identityRef,
    floatingIPPoolRef: machineSpec.floatingIPPoolRef,
    userDataRef: input.userDataSecretName === undefined ? undefined : { name: input.userDataSecretName },
    schedulerHintAdditionalProperties: machineSpec.schedulerHintAdditionalProperties,
  });
}

/** Identifies a computed spec, to tell whether an existing server still matches it (defaults applied by the API server aside). */
export function specHash(spec: JsonObject): string {
  return createHash('sha256').update(canonicalJson(spec)).digest('hex').slice(0, 32);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function dropUndefined(object: Record<string, unknown>): JsonObject {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as JsonObject;
}
