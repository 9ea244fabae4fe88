/**
 * OpenStackNode: one per OpenStackMachine. The spec is the node's desired
 * configuration (role, Kubespray groups, flavor, its Ansible host
 * variables); the status is the OpenStack server as the reconciler reported
 * it, with its ports and volumes.
 */
import type { JsonObject } from '../storage/interface.js';
import { computedApiVersion } from './computed-group.js';
import { indexOf, type ClusterView, type InventoryIndex, type InventorySnapshot, type MachineView, type ServerView, clusterNameLabel } from './model.js';
import { computedMetadata } from './objects.js';
import { readinessCondition } from './readiness.js';
import { blocking, describeObject, hostVars, machineRole, sshUserMissing, type MissingVariable } from './variables.js';

export const openStackNodeKind = 'OpenStackNode';

type NodePhase = 'Pending' | 'Provisioning' | 'Running' | 'Stopped' | 'Failed' | 'Deleting' | 'Unknown';

/** The Kubespray groups a host is in (stacked etcd on the control plane). */
export function kubesprayGroupsOf(role: 'control-plane' | 'worker'): string[] {
  return role === 'control-plane' ? ['kube_control_plane', 'etcd'] : ['kube_node'];
}

/** The nodes of a Cluster API cluster: the machines labelled with its name, control plane first. */
export function openStackNodesOf(snapshot: InventorySnapshot, namespace: string, clusterName: string): JsonObject[] {
  const index = indexOf(snapshot);
  return index.machinesOf(namespace, clusterName).map((machine) => nodeOf(index, machine));
}

/** The node of one OpenStackMachine, also when it belongs to no known cluster. */
export function openStackNodeOf(snapshot: InventorySnapshot, namespace: string, machineName: string): JsonObject | undefined {
  const index = indexOf(snapshot);
  const machine = index.machine(namespace, machineName);
  return machine && nodeOf(index, machine);
}

/** The OpenStackCluster a machine belongs to, or why it has none. */
function clusterOfMachine(index: InventoryIndex, machine: MachineView): { cluster?: ClusterView; missing?: MissingVariable } {
  const clusterName = machine.metadata.labels?.[clusterNameLabel];
  const subject = describeObject('OpenStackMachine', machine);
  if (clusterName === undefined) {
    return { missing: { variable: 'cluster', path: 'spec.clusterName', reason: 'NotSet', message: `${subject} has no ${clusterNameLabel} label` } };
  }
  const [cluster] = index.clustersNamed(machine.metadata.namespace, clusterName);
  if (cluster) return { cluster };
  return {
    missing: {
      variable: 'cluster',
      path: 'spec.openStackCluster',
      reason: 'NotFound',
      message: `no OpenStackCluster of cluster ${clusterName} in namespace ${machine.metadata.namespace}, so the host has no bastion, SSH user or cluster variables`,
    },
  };
}

function nodeOf(index: InventoryIndex, machine: MachineView): JsonObject {
  const server = index.serverOf(machine);
  const { cluster, missing: clusterMissing } = clusterOfMachine(index, machine);
  const role = machineRole(machine);
  const { vars, missing } = hostVars(machine, { cluster, server });
  if (clusterMissing) missing.unshift(clusterMissing);
  const userMissing = cluster && sshUserMissing(cluster);
  if (userMissing) missing.push(userMissing);
  const nodeResources = machine.status?.extensions?.nodeResources;
  const reserved = nodeResources?.reserved;
  if (!reserved) {
    missing.push({
      variable: 'node_resources',
      path: 'spec.nodeResources.reserved',
      reason: 'NotReported',
      message: `${describeObject('OpenStackMachine', machine)} has no status.extensions.nodeResources.reserved yet: the reconciler computes it once the flavor is resolved`,
      machine: machine.metadata.name,
    });
  }

  const spec: JsonObject = {};
  const clusterName = machine.metadata.labels?.[clusterNameLabel];
  if (clusterName !== undefined) spec.clusterName = clusterName;
  if (cluster) spec.openStackCluster = cluster.metadata.name;
  spec.role = role;
  spec.groups = kubesprayGroupsOf(role);
  const profile = flavorOf(machine, server);
  if (profile) spec.profile = profile;
  const image = imageOf(machine);
  if (image) spec.image = image;
  spec.vars = vars;
  if (reserved) spec.nodeResources = nodeResources?.policy ? { reserved, policy: nodeResources.policy } : { reserved };

  const phase = phaseOf(machine, server);
  const status: JsonObject = { phase, ready: phase === 'Running' };
  if (server) status.server = serverSummary(server);
  status.ports = portsOf(machine, server);
  status.volumes = volumesOf(server);
  status.missing = missing;
  status.conditions = [nodeCondition(phase, blocking(missing))];

  return {
    apiVersion: computedApiVersion,
    kind: openStackNodeKind,
    metadata: computedMetadata(openStackNodeKind, { kind: 'OpenStackMachine', object: machine }, [machine, server, cluster]),
    spec,
    status,
  };
}

function nodeCondition(phase: NodePhase, blockingMissing: MissingVariable[]) {
  if (phase !== 'Running') {
    return { type: 'Ready', status: 'False' as const, reason: phase, message: `the server is ${phase.toLowerCase()}` };
  }
  return readinessCondition(blockingMissing, 'Running', 'the server is running and every host variable has a value');
}

const provisioningStates = new Set(['BUILD', 'REBUILD', 'RESIZE', 'VERIFY_RESIZE', 'MIGRATING', 'REBOOT', 'HARD_REBOOT', 'PASSWORD']);
const stoppedStates = new Set(['SHUTOFF', 'STOPPED', 'SUSPENDED', 'PAUSED', 'SHELVED', 'SHELVED_OFFLOADED', 'RESCUE']);
const deletedStates = new Set(['DELETED', 'SOFT_DELETED']);

function phaseOf(machine: MachineView, server: ServerView | undefined): NodePhase {
  if (machine.metadata.deletionTimestamp || server?.metadata.deletionTimestamp) return 'Deleting';
  const state = (server?.status?.instanceState ?? machine.status?.instanceState)?.toUpperCase();
  if (!state) return server?.status?.instanceID || machine.status?.instanceID ? 'Provisioning' : 'Pending';
  if (state === 'ACTIVE') return isProvisioned(machine, server) ? 'Running' : 'Provisioning';
  if (state === 'ERROR') return 'Failed';
  if (provisioningStates.has(state)) return 'Provisioning';
  if (stoppedStates.has(state)) return 'Stopped';
  if (deletedStates.has(state)) return 'Deleting';
  return 'Unknown';
}

function isProvisioned(machine: MachineView, server: ServerView | undefined): boolean {
  return (
    machine.status?.initialization?.provisioned === true ||
    machine.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true ||
    server?.status?.ready === true
  );
}

function flavorOf(machine: MachineView, server: ServerView | undefined): string | undefined {
  const flavor = machine.spec?.flavor;
  return flavor?.filter?.name ?? flavor?.id ?? server?.spec?.flavor ?? server?.spec?.flavorID;
}

function imageOf(machine: MachineView): string | undefined {
  const image = machine.spec?.image;
  return image?.filter?.name ?? image?.id ?? image?.imageRef?.name;
}

function serverSummary(server: ServerView): JsonObject {
  const summary: JsonObject = { name: server.metadata.name, ready: server.status?.ready === true };
  const status = server.status;
  if (status?.instanceID) summary.instanceID = status.instanceID;
  if (status?.instanceState) summary.instanceState = status.instanceState;
  if (status?.resolved?.flavorID) summary.flavorID = status.resolved.flavorID;
  if (status?.resolved?.imageID) summary.imageID = status.resolved.imageID;
  if (status?.addresses?.length) summary.addresses = status.addresses.map(({ type, address }) => ({ type, address }));
  return summary;
}

/** Created ports (IDs from status.resources), with what the resolved spec at the same position says of them. */
function portsOf(machine: MachineView, server: ServerView | undefined): JsonObject[] {
  const created = server?.status?.resources?.ports ?? machine.status?.resources?.ports ?? [];
  const resolved = server?.status?.resolved?.ports ?? [];
  return created.map((port, i) => {
    const spec = resolved[i];
    const entry: JsonObject = { id: port.id };
    if (spec?.name) entry.name = spec.name;
    if (spec?.networkID) entry.networkID = spec.networkID;
    const addresses = (spec?.fixedIPs ?? []).map((f) => f.ipAddress).filter((a): a is string => Boolean(a));
    if (addresses.length > 0) entry.fixedIPs = addresses;
    return entry;
  });
}

/**
 * Cinder volumes of the server: the root volume and the additional block
 * devices backed by volumes, named as CAPO names them (server name, then
 * `root` or the device name), with their IDs once the reconciler has
 * recorded them (status.extensions.ownedResources, `volume/<device>`).
 */
function volumesOf(server: ServerView | undefined): JsonObject[] {
  if (!server) return [];
  const owned = server.status?.extensions?.ownedResources ?? {};
  const volumes: JsonObject[] = [];
  const add = (device: string, sizeGiB: number | undefined, type: string | undefined) => {
    const volume: JsonObject = { name: `${server.metadata.name}-${device}` };
    if (sizeGiB !== undefined) volume.sizeGiB = sizeGiB;
    if (type) volume.type = type;
    const id = owned[`volume/${device}`];
    if (id) volume.id = id;
    volumes.push(volume);
  };
  const root = server.spec?.rootVolume;
  if (root) add('root', root.sizeGiB, root.type);
  for (const device of server.spec?.additionalBlockDevices ?? []) {
    if (device.storage?.type === 'Volume') add(device.name, device.sizeGiB, device.storage.volume?.type);
  }
  return volumes;
}
