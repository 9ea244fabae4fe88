/**
 * Cluster API's gates before a provider may act: the owner Cluster must
 * exist, and neither it (spec.paused) nor the object (the
 * `cluster.x-k8s.io/paused` annotation) may be paused. `clusterctl move`
 * pauses clusters so that two management clusters never act on one cloud.
 */
import type { JsonObject } from '../storage/interface.js';
import { setCondition } from './conditions.js';
import type { ReconcileResult } from './runtime/controller.js';
import { metaOf, type KindClient } from './objects.js';
import type { ClusterApiCluster, ClusterApiSource } from './sources/source.js';

export const clusterNameLabel = 'cluster.x-k8s.io/cluster-name';
export const pausedAnnotation = 'cluster.x-k8s.io/paused';

/** Why a pass may not act: no owner Cluster yet, or paused. */
export interface ClosedGate {
  open: false;
  reason: 'WaitingForCluster' | 'Paused';
  message: string;
}

export type Gate = { open: true; cluster: ClusterApiCluster } | ClosedGate;

/** The owner Cluster is named by the cluster-name label, or failing that by an owner reference of kind Cluster. */
export function ownerClusterName(object: JsonObject): string | undefined {
  const meta = metaOf(object);
  return meta.labels?.[clusterNameLabel] ?? meta.ownerReferences?.find((reference) => reference.kind === 'Cluster')?.name;
}

export async function clusterGate(source: ClusterApiSource, object: JsonObject): Promise<Gate> {
  const meta = metaOf(object);
  const name = ownerClusterName(object);
  if (name === undefined) {
    return { open: false, reason: 'WaitingForCluster', message: `no owner Cluster: set the label ${clusterNameLabel}` };
  }
  const cluster = await source.getCluster(meta.namespace, name);
  if (!cluster) return { open: false, reason: 'WaitingForCluster', message: `Cluster ${meta.namespace}/${name} does not exist yet` };
  if (cluster.paused) return { open: false, reason: 'Paused', message: `Cluster ${meta.namespace}/${name} is paused` };
  if (meta.annotations?.[pausedAnnotation] !== undefined)
    return { open: false, reason: 'Paused', message: `the object carries the ${pausedAnnotation} annotation` };
  return { open: true, cluster };
}

/** Cluster API v1beta2's Paused condition: True while paused, False otherwise. */
export function setPaused(status: JsonObject, generation: number, gate: Gate | ClosedGate): void {
  setPausedCondition(status, generation, !gate.open && gate.reason === 'Paused' ? gate.message : undefined);
}

/** `pausedBecause` undefined: not paused. */
export function setPausedCondition(status: JsonObject, generation: number, pausedBecause: string | undefined): void {
  if (pausedBecause !== undefined) setCondition(status, generation, { type: 'Paused', status: 'True', reason: 'Paused', message: pausedBecause });
  else setCondition(status, generation, { type: 'Paused', status: 'False', reason: 'NotPaused' });
}

/**
 * Nothing happens behind a closed gate. An object whose Cluster is not there yet is left exactly
 * as its author wrote it, as CAPO leaves it: no finalizer, no status, so a client that updates it
 * with the resourceVersion its create returned is not refused (Cluster API's topology controller
 * and clusterctl move do). A paused object says so in its Paused condition (Cluster API's v1beta2
 * contract), a write only when that changes. The source's change events bring the object back.
 */
export async function closedGate(client: KindClient, object: JsonObject, gate: ClosedGate): Promise<ReconcileResult> {
  if (gate.reason === 'WaitingForCluster') return {};
  const meta = metaOf(object);
  await client.updateStatus({ namespace: meta.namespace, name: meta.name, uid: meta.uid }, (status) => setPaused(status, meta.generation ?? 1, gate));
  return {};
}
