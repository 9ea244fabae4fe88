/**
 * OpenStackServer v1alpha1: one Nova server with its ports, volumes and
 * trunks. OpenStackMachines and the cluster bastion are realised through it.
 * Unlike the v1beta2 kinds, several of its lists declare no list type.
 */
import { z } from 'zod';
import type { KindVersion } from '../../../apiserver/registry/kind.js';
import {
  additionalBlockDevice,
  condition,
  identityReference,
  imageParam,
  instanceState,
  mapListOf,
  nodeAddress,
  portOpts,
  portStatus,
  resolvedPortSpec,
  rootVolume,
  schedulerHintAdditionalProperty,
  securityGroupParam,
  serverGroupParam,
  serverMetadata,
  setOf,
  typedLocalObjectReference,
  withRules,
} from '../v1beta2/common.js';

const spec = withRules(
  z.object({
    flavor: z.string().min(1).optional().describe('Name of the Nova flavor.'),
    flavorID: z.string().min(1).optional().describe('ID of the Nova flavor; wins over flavor.'),
    image: imageParam.describe('Image to boot; with rootVolume, the image the root volume is created from.'),
    sshKeyName: z.string().describe('Nova key pair to inject into the server.'),
    ports: z.array(portOpts).describe('Ports of the server.'),
    securityGroups: z.array(securityGroupParam).optional().describe('Security groups of the server.'),
    trunk: z.boolean().optional().describe('Whether the server is attached through trunk ports.'),
    tags: setOf(z.string())
      .optional()
      .describe(
        'Tags of the server and of the resources created for it, besides the cluster tags. Needs Nova API 2.52 or later.',
      ),
    serverMetadata: mapListOf(serverMetadata, 'key').optional().describe('Metadata of the Nova server.'),
    configDrive: z.boolean().optional().describe('Whether the server gets a config drive.'),
    rootVolume: rootVolume.optional().describe('Boots from a Cinder volume instead of a local disk.'),
    additionalBlockDevices: mapListOf(additionalBlockDevice, 'name')
      .optional()
      .describe('Block devices attached besides the root disk.'),
    availabilityZone: z.string().optional().describe('Nova availability zone of the server.'),
    serverGroup: serverGroupParam.optional().describe('Server group the server joins.'),
    identityRef: identityReference.describe('Credentials to create the server with.'),
    floatingIPPoolRef: typedLocalObjectReference
      .optional()
      .describe('An OpenStackFloatingIPPool to take a floating IP for the server from.'),
    userDataRef: z
      .object({
        name: z
          .string()
          .default('')
          .describe('Name of the Secret. Empty is accepted for compatibility but is almost certainly a mistake.'),
      })
      .meta({ 'x-kubernetes-map-type': 'atomic' })
      .optional()
      .describe('A Secret in this namespace whose `value` key holds the user data passed to the server.'),
    schedulerHintAdditionalProperties: mapListOf(schedulerHintAdditionalProperty, 'name')
      .optional()
      .describe('Extra Nova scheduler hints, e.g. to place the server in a host aggregate or zone.'),
  }),
  [
    {
      rule: '(has(self.flavor) || has(self.flavorID))',
      message: 'at least one of flavor or flavorID must be set',
      holds: (self) => self.flavor !== undefined || self.flavorID !== undefined,
    },
  ],
).describe('The server to create.');

const status = z
  .object({
    ready: z.boolean().default(false).describe('Whether the server is up and ready.'),
    instanceID: z.string().optional().describe('ID of the Nova server.'),
    instanceState: instanceState.optional(),
    addresses: z.array(nodeAddress).optional().describe('Addresses of the server.'),
    resolved: z
      .object({
        serverGroupID: z.string().optional().describe('ID of the server group to join.'),
        imageID: z.string().optional().describe('ID of the image to boot.'),
        flavorID: z.string().optional().describe('ID of the flavor.'),
        ports: z.array(resolvedPortSpec).optional().describe('The ports to create, fully resolved.'),
      })
      .optional()
      .describe('The spec with references resolved to IDs.'),
    resources: z
      .object({ ports: z.array(portStatus).optional().describe('Ports created for the server.') })
      .optional()
      .describe('OpenStack resources created for the server.'),
    conditions: z.array(condition).optional().describe('State of the server.'),
  })
  // ready is both defaulted and required; zod drops defaulted fields from `required`.
  .meta({ required: ['ready'] })
  .describe('Observed state of the server.');

export const openStackServerV1alpha1: KindVersion = {
  name: 'v1alpha1',
  served: true,
  storage: true,
  schema: z
    .object({ spec: spec.optional(), status: status.optional() })
    .describe('A Nova server with its ports and volumes, managed for a machine or a bastion.'),
  printerColumns: [
    { name: 'InstanceState', type: 'string', jsonPath: '.status.instanceState', description: 'OpenStack instance state' },
    { name: 'Ready', type: 'string', jsonPath: '.status.ready', description: 'OpenStack instance ready status' },
    { name: 'InstanceID', type: 'string', jsonPath: '.status.instanceID', description: 'OpenStack instance ID' },
    {
      name: 'Age',
      type: 'date',
      jsonPath: '.metadata.creationTimestamp',
      description: 'Time duration since creation of OpenStack instance',
    },
  ],
};
