/**
 * Metadata of computed objects. They are never stored, so everything that
 * kube would assign on create is derived from the object they stand for:
 * a stable uid, its creation time and labels, an owner reference to it, and
 * as resourceVersion the newest revision among the objects they read.
 */
import { createHash } from 'node:crypto';
import { openStackClusterKind, openStackMachineKind } from '../api/infrastructure/kinds.js';
import { storageVersionOf } from '../apiserver/registry/registry.js';
import type { KindDefinition } from '../apiserver/registry/kind.js';
import type { ClusterView, MachineView, ServerView } from './model.js';

type Source = ClusterView | MachineView | ServerView;

const ownerKinds = { OpenStackCluster: openStackClusterKind, OpenStackMachine: openStackMachineKind } as const;

export function computedMetadata(
  kind: string,
  owner: { kind: keyof typeof ownerKinds; object: ClusterView | MachineView },
  inputs: (Source | undefined)[],
): Record<string, unknown> {
  const { metadata } = owner.object;
  const definition: KindDefinition = ownerKinds[owner.kind];
  const meta: Record<string, unknown> = {
    name: metadata.name,
    namespace: metadata.namespace,
    uid: derivedUid(kind, metadata.uid ?? `${metadata.namespace}/${metadata.name}`),
    resourceVersion: String(newestRevision(inputs)),
  };
  if (metadata.creationTimestamp) meta.creationTimestamp = metadata.creationTimestamp;
  if (metadata.labels && Object.keys(metadata.labels).length > 0) meta.labels = { ...metadata.labels };
  const reference: Record<string, unknown> = {
    apiVersion: `${definition.group}/${storageVersionOf(definition).name}`,
    kind: owner.kind,
    name: metadata.name,
  };
  if (metadata.uid) reference.uid = metadata.uid;
  reference.controller = true;
  meta.ownerReferences = [reference];
  return meta;
}

function newestRevision(inputs: (Source | undefined)[]): number {
  let newest = 0;
  for (const input of inputs) if (input) newest = Math.max(newest, Number(input.metadata.resourceVersion));
  return newest;
}

/** A UUID-shaped name-based id, stable for as long as the source object lives. */
function derivedUid(kind: string, sourceUid: string): string {
  const hex = createHash('sha256').update(`${kind}/${sourceUid}`).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
