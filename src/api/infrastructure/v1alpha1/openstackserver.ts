/**
 * OpenStackServer v1alpha1: one Nova server with its ports, volumes and
 * trunks. OpenStackMachines and the cluster bastion are realised through it.
 * Unlike the v1beta2 kinds, several of its lists declare no list type.
 *
 * CAPO changed this version in place between releases: v0.14 builds its spec
 * from the v1beta1 types, v0.15 from the v1beta2 ones. The spec is v0.14's,
 * the released one (a block device's storage type any string, no minLength on
 * names, `disablePortSecurity`), plus v0.15's `enablePortSecurity` so that a
 * server written by either release keeps its ports' setting; admission
 * refuses the two together. The status is v0.15's, metav1 conditions as
 * Cluster API v1beta2 asks: only the controller writes it.
 * (test/api/infrastructure/crd-differences.ts lists each difference.)
 */
import { z } from 'zod';
import type { KindVersion } from '../../../apiserver/registry/kind.js';
import {
  condition,
  flavorOrFlavorID,
  instanceState,
  nodeAddress,
  portOpts as portOptsV1beta2,
  resolvedPortSpec,
  resourceStatusesOf,
  securityGroupParam,
  typedLocalObjectReference,
  v1beta2Spelling,
  variant,
  withRules,
} from '../v1beta2/common.js';
import { serverStatusExtensions } from '../extensions.js';
import { identityReference, portOpts as portOptsV1beta1 } from '../v1beta1/common.js';
import { openStackMachineSpec } from '../v1beta1/openstackmachine.js';

// An OpenStackMachine is realised as an OpenStackServer, and these fields pass through unchanged (v0.14 shapes: v1beta1's).
const machine = openStackMachineSpec.shape;

/** v0.14's port, with v0.15's spelling of its port security beside the old one. */
const portOpts = variant(portOptsV1beta1, (port) => port.extend({ enablePortSecurity: portOptsV1beta2.shape.enablePortSecurity }));

export const openStackServerSpec = withRules(
  z.object({
    flavor: z.string().min(1).optional().describe('Name of the Nova flavor.'),
    flavorID: z.string().min(1).optional().describe('ID of the Nova flavor; wins over flavor.'),
    image: machine.image,
    sshKeyName: z.string().describe('Nova key pair to inject into the server.'),
    ports: z.array(portOpts).describe('Ports of the server.'),
    securityGroups: z.array(securityGroupParam).optional().describe('Security groups of the server.'),
    trunk: machine.trunk,
    tags: machine.tags,
    serverMetadata: machine.serverMetadata,
    configDrive: machine.configDrive,
    rootVolume: machine.rootVolume,
    additionalBlockDevices: machine.additionalBlockDevices,
    availabilityZone: z.string().optional().describe('Nova availability zone of the server.'),
    serverGroup: machine.serverGroup,
    identityRef: identityReference.describe('Credentials to create the server with.'),
    floatingIPPoolRef: typedLocalObjectReference.optional().describe('An OpenStackFloatingIPPool to take a floating IP for the server from.'),
    userDataRef: z
      .object({
        name: z.string().default('').describe('Name of the Secret. Empty is accepted for compatibility but is almost certainly a mistake.'),
      })
      .meta({ 'x-kubernetes-map-type': 'atomic' })
      .optional()
      .describe('A Secret in this namespace whose `value` key holds the user data passed to the server.'),
    schedulerHintAdditionalProperties: machine.schedulerHintAdditionalProperties,
  }),
  [flavorOrFlavorID],
).describe('The server to create.');

/** The machine's resolved spec and resources, with v1beta2's nodes but lists without a type. */
const { resolvedMachineSpec, machineResources } = resourceStatusesOf({ ...v1beta2Spelling, setOf: z.array, atomicListOf: z.array }, resolvedPortSpec);

const status = z
  .object({
    ready: z.boolean().default(false).describe('Whether the server is up and ready.'),
    instanceID: z.string().optional().describe('ID of the Nova server.'),
    instanceState: instanceState.optional(),
    addresses: z.array(nodeAddress).optional().describe('Addresses of the server.'),
    resolved: resolvedMachineSpec.optional().describe('The spec with references resolved to IDs.'),
    resources: machineResources.optional(),
    conditions: z.array(condition).optional().describe('State of the server.'),
    extensions: serverStatusExtensions.optional(),
  })
  // ready is both defaulted and required; zod drops defaulted fields from `required`.
  .meta({ required: ['ready'] })
  .describe('Observed state of the server.');

export const openStackServerV1alpha1: KindVersion = {
  name: 'v1alpha1',
  served: true,
  storage: true,
  schema: z
    .object({ spec: openStackServerSpec.optional(), status: status.optional() })
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
