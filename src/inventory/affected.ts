/**
 * Which computed objects a stored input contributes to, so that a watch
 * recomputes only those when the input changes.
 */
import type { JsonObject, ObjectName } from '../storage/interface.js';
import { clusterNameOf, indexOf, parseCluster, parseMachine, parseServer, clusterNameLabel, type InventorySnapshot, type MachineView } from './model.js';

/** ClusterExtensions: the cluster itself; for a machine or its server, the clusters of its cluster name. */
export function clusterExtensionsAffectedBy(snapshot: InventorySnapshot, input: JsonObject): ObjectName[] {
  const index = indexOf(snapshot);
  const clustersOf = (machine: MachineView | undefined): ObjectName[] => {
    const clusterName = machine?.metadata.labels?.[clusterNameLabel];
    if (!machine || clusterName === undefined) return [];
    return index.clustersNamed(machine.metadata.namespace, clusterName).map((c) => nameOf(c.metadata));
  };
  switch (input.kind) {
    case 'OpenStackCluster':
      return [nameOf(parseCluster(input).metadata)];
    case 'OpenStackMachine':
      return clustersOf(parseMachine(input));
    case 'OpenStackServer':
      return clustersOf(index.machineOfServer(parseServer(input)));
    default:
      return [];
  }
}

/** OpenStackNodes: the machine itself, the machine a server realises, or every machine of a cluster. */
export function openStackNodesAffectedBy(snapshot: InventorySnapshot, input: JsonObject): ObjectName[] {
  const index = indexOf(snapshot);
  switch (input.kind) {
    case 'OpenStackCluster': {
      const cluster = parseCluster(input);
      return index.machinesOf(cluster.metadata.namespace, clusterNameOf(cluster)).map((m) => nameOf(m.metadata));
    }
    case 'OpenStackMachine':
      return [nameOf(parseMachine(input).metadata)];
    case 'OpenStackServer': {
      const machine = index.machineOfServer(parseServer(input));
      return machine ? [nameOf(machine.metadata)] : [];
    }
    default:
      return [];
  }
}

function nameOf(metadata: ObjectName): ObjectName {
  return { namespace: metadata.namespace, name: metadata.name };
}
