/**
 * OpenStackMachine v1beta2, the storage version: the Cluster API
 * infrastructure machine. Its spec also describes the cluster bastion and the
 * machines of an OpenStackMachineTemplate.
 */
import { z } from 'zod';
import type { KindVersion } from '../../../apiserver/registry/kind.js';
import { machineSpecExtensions, machineStatusExtensions } from '../extensions.js';
import {
  additionalBlockDevice,
  atomicListOf,
  condition,
  flavorParam,
  identityReference,
  imageParam,
  initializationStatus,
  instanceState,
  mapListOf,
  nodeAddress,
  portOpts,
  resourceStatuses,
  rootVolume,
  schedulerHintAdditionalProperty,
  securityGroupParam,
  serverGroupParam,
  serverMetadata,
  setOf,
  typedLocalObjectReference,
} from './common.js';

const { resolvedMachineSpec, machineResources } = resourceStatuses;

export const openStackMachineSpec = z
  .object({
    providerID: z.string().optional().describe('Provider ID of the machine, set by CAPO: openstack://[<region>]/<server ID>.'),
    flavor: flavorParam.describe('Flavor of the server.'),
    image: imageParam.describe('Image to boot; with rootVolume, the image the root volume is created from.'),
    sshKeyName: z.string().optional().describe('Nova key pair to inject into the server.'),
    ports: atomicListOf(portOpts)
      .optional()
      .describe('Ports of the server, created unless a port of the same name exists. One port on the cluster network when omitted.'),
    securityGroups: atomicListOf(securityGroupParam).optional().describe('Security groups of the server.'),
    trunk: z.boolean().optional().describe('Whether the server is attached through trunk ports.'),
    tags: setOf(z.string())
      .optional()
      .describe('Tags of the server and of the resources created for it, besides the cluster tags. Needs Nova API 2.52 or later.'),
    serverMetadata: mapListOf(serverMetadata, 'key').optional().describe('Metadata of the Nova server.'),
    configDrive: z.boolean().optional().describe('Whether the server gets a config drive.'),
    rootVolume: rootVolume.optional().describe('Boots from a Cinder volume instead of a local disk.'),
    additionalBlockDevices: mapListOf(additionalBlockDevice, 'name').optional().describe('Block devices attached besides the root disk.'),
    serverGroup: serverGroupParam.optional().describe('Server group the server joins.'),
    identityRef: identityReference.optional().describe('Credentials for this machine. Those of the cluster when omitted.'),
    floatingIPPoolRef: typedLocalObjectReference
      .optional()
      .describe('An IP pool (such as an OpenStackFloatingIPPool) to claim a floating IP from; the IP is attached to the machine.'),
    schedulerHintAdditionalProperties: mapListOf(schedulerHintAdditionalProperty, 'name')
      .optional()
      .describe('Extra Nova scheduler hints, e.g. to place the server in a host aggregate or zone.'),
    extensions: machineSpecExtensions.optional(),
  })
  .describe('The server CAPO creates for a machine.');

const status = z
  .object({
    initialization: initializationStatus('machine').optional(),
    instanceID: z.string().optional().describe('ID of the Nova server.'),
    instanceState: instanceState.optional().describe('Nova state of the server, as the OpenStackServer reports it.'),
    addresses: atomicListOf(nodeAddress).optional().describe('Addresses of the server.'),
    resolved: resolvedMachineSpec.optional().describe('The spec with references resolved to IDs.'),
    resources: machineResources.optional().describe('OpenStack resources created for the machine.'),
    conditions: mapListOf(condition, 'type').optional().describe('State of the machine; Ready surfaces in the Machine InfrastructureReady condition.'),
    extensions: machineStatusExtensions.optional(),
  })
  .describe('Observed state of the machine.');

export const openStackMachineV1beta2: KindVersion = {
  name: 'v1beta2',
  served: true,
  storage: true,
  schema: z
    .object({
      spec: openStackMachineSpec.optional(),
      status: status.optional(),
    })
    .describe('An OpenStack server backing a Cluster API Machine.'),
  printerColumns: [
    {
      name: 'Cluster',
      type: 'string',
      jsonPath: '.metadata.labels.cluster\\.x-k8s\\.io/cluster-name',
      description: 'Cluster to which this OpenStackMachine belongs',
    },
    { name: 'ProviderID', type: 'string', jsonPath: '.spec.providerID', description: 'OpenStack instance ID' },
    {
      name: 'Machine',
      type: 'string',
      jsonPath: '.metadata.ownerReferences[?(@.kind=="Machine")].name',
      description: 'Machine object which owns with this OpenStackMachine',
    },
    {
      name: 'Age',
      type: 'date',
      jsonPath: '.metadata.creationTimestamp',
      description: 'Time duration since creation of OpenStackMachine',
    },
  ],
};
