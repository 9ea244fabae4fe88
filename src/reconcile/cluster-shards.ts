/**
 * The reconciler is sharded by cluster (runtime/shards.ts): an object's shard group is its namespace
 * and cluster name, which an OpenStackCluster, its machines and their servers all carry, so a
 * cluster, its machines and their servers are always in one shard and no reconcile needs a lease
 * another replica holds. Not the Cluster's uid, which a machine would have to look up; a cluster's
 * name is fixed for its life.
 */
import type { JsonObject } from '../storage/interface.js';
import { metaOf } from './objects.js';
import { ownerClusterName } from './paused.js';

/** The shard group of an object: its cluster's (its own name for an OpenStackCluster without an owner). */
export function clusterGroupOf(value: JsonObject): string {
  const meta = metaOf(value);
  return clusterGroup(meta.namespace, ownerClusterName(value) ?? meta.name);
}

/** The shard group of the objects of the Cluster API cluster `clusterName`. */
export function clusterGroup(namespace: string, clusterName: string): string {
  return `${namespace}/${clusterName}`;
}
