/** Schema nodes the computed kinds share. */
import { z } from 'zod';
import { machineSpecExtensions, machineStatusExtensions } from '../../api/infrastructure/extensions.js';
import { atomicListOf, mapListOf } from '../../api/infrastructure/v1beta2/common.js';

export const missingVariables = atomicListOf(
  z
    .object({
      variable: z.string().describe('The Ansible variable.'),
      path: z.string().describe('Where its value would appear in this object.'),
      reason: z
        .enum(['NotSet', 'NotReported', 'NotFound', 'NotApplicable'])
        .describe(
          'NotSet: a user input (spec) is empty. NotReported: the reconciler has not written the value yet. ' +
            'NotFound: an object the value comes from does not exist. NotApplicable: the configuration does not use it.',
        ),
      message: z.string().describe('What is missing and where to set it, for humans.'),
      machine: z.string().optional().describe('The machine (Ansible host) of a per-host variable.'),
    })
    .describe('A variable without a value, and why.'),
).describe('Variables without a value, each with the reason; every reason but NotApplicable keeps the object from being Ready.');

export const computedConditions = mapListOf(
  z
    .object({
      type: z.string().describe('Type of the condition: Ready.'),
      status: z.enum(['True', 'False']).describe('Status of the condition.'),
      reason: z.string().describe('Why, as a CamelCase identifier.'),
      message: z.string().describe('Details for humans.'),
    })
    .describe('An observation computed on every read; computed objects keep no transition history.'),
  'type',
).describe('State of the object.');

/** The reservation of one node, as OpenStackMachine status.extensions.nodeResources.reserved declares it. */
export const reservedResources = machineStatusExtensions.shape.nodeResources.unwrap().shape.reserved.unwrap();

/** A node network interface name, as OpenStackMachine spec.extensions.networkInterfaces.keepalived declares it. */
export const interfaceName = machineSpecExtensions.shape.networkInterfaces.unwrap().shape.keepalived.unwrap();
