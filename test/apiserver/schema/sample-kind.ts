/**
 * A small kind exercising every schema feature the schema layer and the
 * OpenAPI documents deal with.
 */
import { z } from 'zod';
import type { KindDefinition, KindVersion } from '../../../src/apiserver/registry/kind.js';

export const GROUP = 'infrastructure.cluster.x-k8s.io';

const port = z.object({
  name: z.string().describe('Name of the port, unique in the list.'),
  port: z.int().min(1).max(65535).describe('Port number.'),
  protocol: z.enum(['TCP', 'UDP']).default('TCP').describe('Transport protocol.'),
});

const spec = z
  .object({
    mode: z.enum(['Fast', 'Slow']).describe('How the gadget spins.'),
    replicas: z.int().min(1).optional().describe('How many copies run.'),
    name: z
      .string()
      .max(10)
      .regex(/^[a-z][a-z0-9-]*$/)
      .optional()
      .describe('Short name.'),
    nickname: z.string().min(1).nullable().optional().describe('Optional nickname; null clears it.'),
    network: z
      .object({
        id: z.string().describe('Network ID.'),
        mtu: z.int().default(1500).describe('MTU of the network.'),
      })
      .default({ id: 'default', mtu: 1500 })
      .describe('Network to attach to.'),
    ports: z
      .array(port)
      .max(3)
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
      .optional()
      .describe('Ports the gadget listens on.'),
    tags: z.array(z.string()).meta({ 'x-kubernetes-list-type': 'set' }).optional().describe('Free-form tags.'),
    size: z.union([z.int(), z.string()]).optional().describe('Size, as a number or a quantity.'),
    labels: z.record(z.string(), z.string()).optional().describe('Labels for the gadget.'),
    volumes: z
      .record(z.string(), z.object({ sizeGiB: z.int().default(10).describe('Size in GiB.') }))
      .optional()
      .describe('Volumes by name.'),
    flavor: z.string().default('m1.small').describe('Flavor to boot.'),
    contact: z.email().optional().describe('Who to call.'),
    count32: z.int32().optional().describe('A 32-bit counter.'),
    motto: z
      .string()
      .refine((motto) => motto !== 'forbidden', { message: 'the motto must not be forbidden' })
      .optional()
      .describe('A motto.'),
    template: z
      .object({})
      .meta({ 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true })
      .optional()
      .describe('An object to create.'),
    extra: z.looseObject({ known: z.string().optional() }).optional().describe('Known and unknown fields.'),
  })
  .refine((s) => s.mode !== 'Slow' || s.replicas === undefined || s.replicas <= 1, {
    message: 'slow gadgets run a single replica',
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: "self.mode != 'Slow' || !has(self.replicas) || self.replicas <= 1",
        message: 'slow gadgets run a single replica',
      },
    ],
  })
  .describe('Desired state of the gadget.');

const status = z
  .object({
    ready: z.boolean().optional().describe('Whether the gadget is ready.'),
    conditions: z
      .array(z.object({ type: z.string(), status: z.enum(['True', 'False', 'Unknown']) }))
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
      .optional()
      .describe('Observations.'),
  })
  .describe('Observed state of the gadget.');

export const v1beta1: KindVersion = {
  name: 'v1beta1',
  served: true,
  storage: true,
  schema: z.object({ spec, status: status.optional() }).describe('Gadget is a sample kind for tests.'),
  printerColumns: [],
};

export const v1beta2: KindVersion = {
  name: 'v1beta2',
  served: true,
  storage: false,
  schema: z.object({ spec: z.object({ mode: z.string() }).optional() }).describe('Gadget, a newer shape.'),
  printerColumns: [],
};

export const v1alpha1: KindVersion = {
  name: 'v1alpha1',
  served: false,
  storage: false,
  schema: z.object({ spec: z.object({ old: z.string() }).optional() }),
  printerColumns: [],
};

export const gadget: KindDefinition = {
  group: GROUP,
  kind: 'Gadget',
  plural: 'gadgets',
  singular: 'gadget',
  namespaced: true,
  versions: [v1beta1, v1beta2, v1alpha1],
  subresources: { status: true },
  converter: { toStorage: (object) => object, fromStorage: (object) => object },
};

/** A read-only, cluster-scoped kind. */
export const inventory: KindDefinition = {
  group: GROUP,
  kind: 'Inventory',
  plural: 'inventories',
  singular: 'inventory',
  namespaced: false,
  versions: [
    {
      name: 'v1beta1',
      served: true,
      storage: true,
      schema: z.object({ items: z.array(z.string()).optional() }),
      printerColumns: [],
    },
  ],
  subresources: { status: false },
  verbs: ['get', 'list', 'watch'],
};

/** A minimal valid Gadget of v1beta1, as it would be stored. */
export function sampleGadget(spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: `${GROUP}/v1beta1`,
    kind: 'Gadget',
    metadata: { name: 'g', namespace: 'default' },
    spec: { mode: 'Fast', network: { id: 'net', mtu: 1500 }, flavor: 'm1.small', ...spec },
  };
}
