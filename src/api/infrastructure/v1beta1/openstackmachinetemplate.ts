/**
 * OpenStackMachineTemplate v1beta1, served for clients of the older API: the
 * v1beta1 OpenStackMachine spec that KubeadmControlPlane and
 * MachineDeployments stamp out. Its status reports the capacity of such a
 * machine, for autoscaling from zero, with Cluster API v1beta1 conditions.
 */
import { z } from 'zod';
import type { KindVersion } from '../../../apiserver/registry/kind.js';
import { templateSpecOf, variant } from '../v1beta2/common.js';
import { openStackMachineTemplateStatus, openStackMachineTemplateV1beta2 } from '../v1beta2/openstackmachinetemplate.js';
import { condition } from './common.js';
import { openStackMachineSpec } from './openstackmachine.js';

const status = variant(openStackMachineTemplateStatus, (status) =>
  status.extend({ conditions: z.array(condition).optional().describe('State of the template.') }),
);

export const openStackMachineTemplateV1beta1: KindVersion = {
  name: 'v1beta1',
  served: true,
  storage: false,
  schema: variant(openStackMachineTemplateV1beta2.schema, (schema) =>
    schema.extend({
      spec: templateSpecOf('OpenStackMachine', openStackMachineSpec).optional(),
      status: status.optional(),
    }),
  ),
  printerColumns: [],
};
