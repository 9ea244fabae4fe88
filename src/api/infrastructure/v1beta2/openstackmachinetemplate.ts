/**
 * OpenStackMachineTemplate v1beta2, the storage version: the OpenStackMachine
 * that KubeadmControlPlane and MachineDeployments stamp out. Its status
 * reports the capacity of such a machine, for autoscaling from zero.
 */
import { z } from 'zod';
import type { KindVersion } from '../../../apiserver/registry/kind.js';
import { condition, mapListOf, templateSpecOf } from './common.js';
import { openStackMachineSpec } from './openstackmachine.js';

/** The spelling of a Kubernetes resource.Quantity. */
const QUANTITY = '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

// The pattern sits on the int-or-string node, where kube checks it against strings only.
const quantity = z.union([z.int(), z.string().regex(new RegExp(QUANTITY))]).meta({ pattern: QUANTITY });

/** v1beta1 reports the same status but for its conditions. */
export const openStackMachineTemplateStatus = z
  .object({
    capacity: z
      .record(z.string(), quantity)
      .optional()
      .describe('Resources of one machine (cpu, memory, nvidia.com/gpu, ...), for the cluster autoscaler to scale from zero.'),
    nodeInfo: z
      .object({
        operatingSystem: z.string().optional().describe('Operating system of the node, such as linux or windows.'),
      })
      .meta({ minProperties: 1 })
      .optional()
      .describe('The node a machine of this template runs, for the autoscaler.'),
    conditions: mapListOf(condition, 'type').optional().describe('State of the template.'),
  })
  .describe('Observed state of the template.');

export const openStackMachineTemplateSpec = templateSpecOf('OpenStackMachine', openStackMachineSpec);

export const openStackMachineTemplateV1beta2: KindVersion = {
  name: 'v1beta2',
  served: true,
  storage: true,
  schema: z
    .object({
      spec: openStackMachineTemplateSpec.optional(),
      status: openStackMachineTemplateStatus.optional(),
    })
    .describe('A template of OpenStackMachine, for control planes and machine deployments.'),
  printerColumns: [],
};
