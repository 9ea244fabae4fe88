/**
 * OpenStackMachine v1beta1, served for clients of the older API: flavor by
 * name or flavorID, and the Cluster API v1beta1 status (ready, failure
 * fields, conditions with severity). Its spec also describes the cluster
 * bastion and the machines of a v1beta1 OpenStackMachineTemplate.
 */
import { z } from 'zod';
import type { KindVersion } from '../../../apiserver/registry/kind.js';
import { machineSpecExtensions, machineStatusExtensions } from '../extensions.js';
import { flavorOrFlavorID, initializationStatus, instanceState, mapListOf, nodeAddress, securityGroupParam, variant, withRules } from '../v1beta2/common.js';
import { openStackMachineSpec as openStackMachineSpecV1beta2, openStackMachineV1beta2 } from '../v1beta2/openstackmachine.js';
import {
  additionalBlockDevice,
  condition,
  failureFields,
  identityReference,
  imageParam,
  portOpts,
  resourceStatuses,
  rootVolume,
  schedulerHintAdditionalProperty,
  serverMetadata,
  withReadyColumn,
} from './common.js';

const { resolvedMachineSpec, machineResources } = resourceStatuses;

const { providerID, sshKeyName, trunk, tags, configDrive, serverGroup, floatingIPPoolRef } = openStackMachineSpecV1beta2.shape;

export const openStackMachineSpec = withRules(
  z.object({
    providerID,
    flavor: z.string().min(1).optional().describe('Name of the Nova flavor. flavorID takes precedence.'),
    flavorID: z.string().min(1).optional().describe('ID of the Nova flavor; takes precedence over flavor.'),
    image: imageParam.describe('Image to boot; with rootVolume, the image the root volume is created from.'),
    sshKeyName,
    ports: z
      .array(portOpts)
      .optional()
      .describe('Ports of the server, created unless a port of the same name exists. One port on the cluster network when omitted.'),
    securityGroups: z.array(securityGroupParam).optional().describe('Security groups of the server.'),
    trunk,
    tags,
    serverMetadata: mapListOf(serverMetadata, 'key').optional().describe('Metadata of the Nova server.'),
    configDrive,
    rootVolume: rootVolume.optional().describe('Boots from a Cinder volume instead of a local disk.'),
    additionalBlockDevices: mapListOf(additionalBlockDevice, 'name').optional().describe('Block devices attached besides the root disk.'),
    serverGroup,
    identityRef: identityReference.optional().describe('Credentials for this machine. Those of the cluster when omitted.'),
    floatingIPPoolRef,
    schedulerHintAdditionalProperties: mapListOf(schedulerHintAdditionalProperty, 'name')
      .optional()
      .describe('Extra Nova scheduler hints, e.g. to place the server in a host aggregate or zone.'),
    extensions: machineSpecExtensions.optional(),
  }),
  [flavorOrFlavorID],
).describe('The server CAPO creates for a machine.');

const status = z
  .object({
    ready: z.boolean().optional().describe('Whether the infrastructure of the machine is ready. Deprecated: read the conditions.'),
    initialization: initializationStatus('machine').optional(),
    instanceID: z.string().optional().describe('ID of the Nova server.'),
    instanceState: instanceState.optional().describe('Nova state of the server, as the OpenStackServer reports it.'),
    addresses: z.array(nodeAddress).optional().describe('Addresses of the server.'),
    resolved: resolvedMachineSpec.optional().describe('The spec with references resolved to IDs.'),
    resources: machineResources.optional().describe('OpenStack resources created for the machine.'),
    ...failureFields('machine'),
    conditions: z.array(condition).optional().describe('State of the machine; Ready surfaces in the Machine InfrastructureReady condition.'),
    extensions: machineStatusExtensions.optional(),
  })
  .describe('Observed state of the machine.');

export const openStackMachineV1beta1: KindVersion = {
  name: 'v1beta1',
  served: true,
  storage: false,
  schema: variant(openStackMachineV1beta2.schema, (schema) => schema.extend({ spec: openStackMachineSpec.optional(), status: status.optional() })),
  printerColumns: withReadyColumn(openStackMachineV1beta2.printerColumns, 'Machine ready status'),
};
