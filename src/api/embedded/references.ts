/**
 * Building blocks Cluster API v1beta2 shares between Cluster and Machine,
 * with the bounds and patterns of its CRDs.
 */
import { z } from 'zod';

const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const kindName = /^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/;
const conditionType = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;

/** v1beta2's ContractVersionedObjectReference: the version comes from the contract, so only the group is named. */
export function contractReference(description: string) {
  return z
    .object({
      apiGroup: z.string().min(1).max(253).regex(dns1123Subdomain).describe('API group of the referenced object, e.g. infrastructure.cluster.x-k8s.io.'),
      kind: z.string().min(1).max(63).regex(kindName).describe('Kind of the referenced object, e.g. OpenStackCluster.'),
      name: z.string().min(1).max(253).regex(dns1123Subdomain).describe('Name of the referenced object, in the same namespace.'),
    })
    .describe(description);
}

/** Extra conditions that must hold before the object counts as Available (Cluster) or Ready (Machine). */
export function conditionGates(description: string) {
  return z
    .array(
      z.object({
        conditionType: z
          .string()
          .min(1)
          .max(316)
          .regex(conditionType)
          .describe('Type of a condition in the status; the object must carry it for the gate to pass.'),
        polarity: z
          .enum(['Positive', 'Negative'])
          .optional()
          .describe('Positive (the default): the gate passes when the condition is True; Negative: when it is False.'),
      }),
    )
    .min(1)
    .max(32)
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['conditionType'] })
    .describe(description);
}

/** An object kept as written: sections owned by controllers or features this server does not run. */
export function preserved(description: string) {
  return z.object({}).meta({ 'x-kubernetes-preserve-unknown-fields': true }).describe(description);
}

/** Status is written by Cluster API's controllers, whose fields change between releases. */
export const preservedStatus = preserved('Observed state, written by Cluster API controllers and kept as they write it.');
