/**
 * The clusters the GraphQL and admin tests read: c1 in team-a (reconciled,
 * bastion, SSH key Secret, env=prod) with a control plane machine and
 * `workers` workers, and c2 in team-b (one control plane machine, env=dev).
 */
import type { JsonObject } from '../src/storage/interface.js';
import { cluster, machine, server } from './inventory-objects.js';
import type { InventoryServer } from './inventory-server.js';

export function workerNames(workers: number): string[] {
  return Array.from({ length: workers }, (_, i) => `c1-md-${String(i).padStart(3, '0')}`);
}

export function teamAObjects(workers: number): JsonObject[] {
  const objects: JsonObject[] = [
    cluster((c) => (c.metadata.labels.env = 'prod')),
    machine('c1-cp-0', { controlPlane: true, address: '10.6.0.20' }),
    server('c1-cp-0'),
  ];
  workerNames(workers).forEach((name, i) => {
    objects.push(machine(name, { address: `10.6.1.${i + 1}` }), server(name));
  });
  return objects;
}

function inTeamB(object: Record<string, any>, name: string): void {
  object.metadata.namespace = 'team-b';
  object.metadata.name = name;
  object.metadata.labels['cluster.x-k8s.io/cluster-name'] = 'c2';
}

export function teamBObjects(): JsonObject[] {
  return [
    cluster((c) => {
      inTeamB(c, 'c2');
      c.metadata.labels.env = 'dev';
      c.status.bastion.name = 'c2-bastion';
    }),
    machine('c2-cp-0', { controlPlane: true, address: '10.7.0.20' }, (m) => inTeamB(m, 'c2-cp-0')),
    server('c2-cp-0', {}, (s) => {
      s.metadata.namespace = 'team-b';
      s.metadata.name = 'c2-cp-0';
      s.metadata.ownerReferences[0].name = 'c2-cp-0';
    }),
  ];
}

export async function seed(target: InventoryServer, objects: JsonObject[]): Promise<void> {
  for (const object of objects) await target.create(object);
}
