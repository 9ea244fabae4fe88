/**
 * Minimal Secret, Cluster and Machine kinds holding the fields the sources
 * read, standing in for the embedded API's definitions in storage tests. The
 * Secret lives in a test group rather than the core group: the source depends
 * only on the storage keys its ResourceStore gives it, whatever the group.
 */
import { z } from 'zod';
import type { KindDefinition } from '../../../src/apiserver/registry/kind.js';

function kind(group: string, kindName: string, plural: string, version: string, schema: z.ZodObject): KindDefinition {
  return {
    group,
    kind: kindName,
    plural,
    singular: kindName.toLowerCase(),
    namespaced: true,
    versions: [{ name: version, served: true, storage: true, schema, printerColumns: [] }],
    subresources: { status: false },
  };
}

const ref = z.object({ apiGroup: z.string(), kind: z.string(), name: z.string() });

export const secretKind = kind(
  'testing.capo.dev',
  'Secret',
  'secrets',
  'v1',
  z.object({ type: z.string().optional(), data: z.record(z.string(), z.string()).optional() }),
);

export const clusterKind = kind(
  'cluster.x-k8s.io',
  'Cluster',
  'clusters',
  'v1beta2',
  z.object({
    spec: z
      .object({
        paused: z.boolean().optional(),
        infrastructureRef: ref.optional(),
        controlPlaneEndpoint: z.object({ host: z.string().optional(), port: z.number().int().optional() }).optional(),
      })
      .optional(),
  }),
);

export const machineKind = kind(
  'cluster.x-k8s.io',
  'Machine',
  'machines',
  'v1beta2',
  z.object({
    spec: z
      .object({
        clusterName: z.string().optional(),
        bootstrap: z.object({ dataSecretName: z.string().optional() }).optional(),
        failureDomain: z.string().optional(),
        version: z.string().optional(),
        infrastructureRef: ref.optional(),
      })
      .optional(),
  }),
);

export const sourceKinds = { secret: secretKind, cluster: clusterKind, machine: machineKind };
