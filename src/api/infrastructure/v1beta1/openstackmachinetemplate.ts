/**
 * OpenStackMachineTemplate v1beta1, served for clients of the older API: the
 * v1beta1 OpenStackMachine spec that KubeadmControlPlane and
 * MachineDeployments stamp out. Its status reports the capacity of such a
 * machine, for autoscaling from zero, with Cluster API v1beta1 conditions.
 */
import { z } from 'zod';
import type { KindVersion } from '../../../apiserver/registry/kind.js';
import { condition } from './common.js';
import { openStackMachineSpec } from './openstackmachine.js';

/**
 * Identical to v1beta2, which keeps these nodes private to its kind file;
 * they move to an import once v1beta2 exports them.
 */
const QUANTITY = '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

// The pattern sits on the int-or-string node, where kube checks it against strings only.
const quantity = z.union([z.int(), z.string().regex(new RegExp(QUANTITY))]).meta({ pattern: QUANTITY });

const capacity = z
  .record(z.string(), quantity)
  .describe('Resources of one machine (cpu, memory, nvidia.com/gpu, ...), for the cluster autoscaler to scale from zero.');

const nodeInfo = z
  .object({ operatingSystem: z.string().optional().describe('Operating system of the node, such as linux or windows.') })
  .meta({ minProperties: 1 })
  .describe('The node a machine of this template runs, for the autoscaler.');

const status = z
  .object({
    capacity: capacity.optional(),
    nodeInfo: nodeInfo.optional(),
    conditions: z.array(condition).optional().describe('State of the template.'),
  })
  .describe('Observed state of the template.');

export const openStackMachineTemplateV1beta1: KindVersion = {
  name: 'v1beta1',
  served: true,
  storage: false,
  schema: z
    .object({
      spec: z
        .object({
          template: z
            .object({ spec: openStackMachineSpec.describe('The spec of each OpenStackMachine created from the template.') })
            .describe('The OpenStackMachine to create.'),
        })
        .optional()
        .describe('The template.'),
      status: status.optional(),
    })
    .describe('A template of OpenStackMachine, for control planes and machine deployments.'),
  printerColumns: [],
};
