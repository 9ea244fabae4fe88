/**
 * ClusterExtension: everything the Ansible bootstrap reads about one
 * OpenStackCluster, gathered from the cluster, its machines and their
 * servers. Inputs keep their paths (spec.extensions from users,
 * status.extensions from the reconciler); per-machine values become maps
 * keyed by machine name; status.vars holds the same values under their
 * Ansible names, and status.missing says why any of them has no value.
 */
import type { JsonObject } from '../storage/interface.js';
import { computedApiVersion } from './computed-group.js';
import { clusterNameOf, indexOf, isControlPlane, type ClusterView, type InventorySnapshot, type MachineView } from './model.js';
import { computedMetadata } from './objects.js';
import { readinessCondition } from './readiness.js';
import { blocking, clusterVars, keepalivedMissing, sshUserMissing } from './variables.js';

export const clusterExtensionKind = 'ClusterExtension';

export function clusterExtensionsOf(snapshot: InventorySnapshot, namespace: string, name: string): JsonObject | undefined {
  const index = indexOf(snapshot);
  const cluster = index.cluster(namespace, name);
  if (!cluster) return undefined;
  const clusterName = clusterNameOf(cluster);
  const machines = index.machinesOf(namespace, clusterName);
  const servers = machines.map((m) => index.serverOf(m));

  const { vars, missing } = clusterVars(cluster, machines);
  const keepalived: Record<string, string> = {};
  for (const machine of machines) {
    const iface = machine.spec?.extensions?.networkInterfaces?.keepalived;
    if (iface) keepalived[machine.metadata.name] = iface;
    else missing.push(keepalivedMissing(machine));
  }
  const user = sshUserMissing(cluster);
  if (user) missing.push(user);
  if (machines.length === 0) {
    missing.push({
      variable: 'hosts',
      path: 'status.summary',
      reason: 'NotFound',
      message: `no OpenStackMachine in namespace ${namespace} carries the label cluster.x-k8s.io/cluster-name=${clusterName}`,
    });
  }

  const controlPlane = machines.filter(isControlPlane).length;
  return {
    apiVersion: computedApiVersion,
    kind: clusterExtensionKind,
    metadata: computedMetadata(clusterExtensionKind, { kind: 'OpenStackCluster', object: cluster }, [cluster, ...machines, ...servers]),
    spec: { clusterName, extensions: specExtensions(cluster, keepalived) },
    status: {
      extensions: statusExtensions(cluster, machines),
      vars,
      missing,
      summary: { controlPlaneMachines: controlPlane, workerMachines: machines.length - controlPlane, missingVariables: blocking(missing).length },
      conditions: [readinessCondition(blocking(missing), 'AllVariablesSet', 'every variable of the bootstrap has a value')],
    },
  };
}

/**
 * The extensions without the SSH key Secret's name, for readers not known to be allowed to get
 * that Secret: the name tells where the key of every node is.
 */
export function withoutSshKeyReference<T extends Record<string, unknown>>(extensions: T): T {
  const ssh = extensions.ssh;
  if (typeof ssh !== 'object' || ssh === null || !('privateKeySecretRef' in ssh)) return extensions;
  const { privateKeySecretRef: _hidden, ...rest } = ssh as Record<string, unknown>;
  return { ...extensions, ssh: rest };
}

/**
 * The ClusterExtension as served to kubectl: one object for every reader, so that a watch and a
 * resourceVersion mean the same to all of them. Since not every reader may get the SSH key
 * Secret, its name is left out here; GraphQL names it to those who may (see README).
 */
export function servedClusterExtensionOf(snapshot: InventorySnapshot, namespace: string, name: string): JsonObject | undefined {
  const object = clusterExtensionsOf(snapshot, namespace, name);
  if (!object) return undefined;
  const spec = object.spec as { extensions: JsonObject };
  return { ...object, spec: { ...spec, extensions: withoutSshKeyReference(spec.extensions) } };
}

function specExtensions(cluster: ClusterView, keepalived: Record<string, string>): JsonObject {
  const extensions: JsonObject = { ...cluster.spec?.extensions };
  const interfaces: JsonObject = { ...cluster.spec?.extensions?.networkInterfaces };
  if (Object.keys(keepalived).length > 0) interfaces.keepalived = keepalived;
  if (Object.keys(interfaces).length > 0) extensions.networkInterfaces = interfaces;
  return extensions;
}

function statusExtensions(cluster: ClusterView, machines: MachineView[]): JsonObject {
  // The IDs the reconciler keeps for deleting what it created are no bootstrap input.
  const { ownedResources: _owned, ...extensions }: JsonObject = { ...cluster.status?.extensions };
  const nodeResources: JsonObject = {};
  for (const machine of machines) {
    const reserved = machine.status?.extensions?.nodeResources?.reserved;
    if (reserved) nodeResources[machine.metadata.name] = { reserved };
  }
  if (Object.keys(nodeResources).length > 0) extensions.nodeResources = nodeResources;
  return extensions;
}
