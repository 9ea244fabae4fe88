/**
 * Cluster API's Machine, v1beta2, as its CRD shapes the spec: the machine a
 * node runs on, tied to its cluster, its bootstrap data and its
 * infrastructure object (an OpenStackMachine here).
 */
import { z } from 'zod';
import type { KindVersion } from '../../apiserver/registry/kind.js';
import { boundedInt32 } from '../infrastructure/v1beta2/common.js';
import { conditionGates, contractReference, preservedStatus } from './references.js';

const taintKey = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const taintValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const seconds = (description: string) => boundedInt32(0).optional().describe(description);

const spec = z
  .object({
    clusterName: z.string().min(1).max(63).describe('Name of the Cluster the machine belongs to, in the same namespace.'),
    bootstrap: z
      .object({
        configRef: contractReference('The bootstrap provider object that produces the data, e.g. a KubeadmConfig.').optional(),
        dataSecretName: z
          .string()
          .min(0)
          .max(253)
          .optional()
          .describe('Name of the Secret holding the bootstrap data (cloud-init or Ignition); set by the bootstrap provider or by hand.'),
      })
      .describe('Where the data that turns the machine into a node comes from.'),
    infrastructureRef: contractReference('The infrastructure provider object, e.g. an OpenStackMachine.'),
    version: z.string().min(1).max(256).optional().describe('Kubernetes version the node runs, e.g. v1.33.0.'),
    providerID: z
      .string()
      .min(1)
      .max(512)
      .optional()
      .describe('Identifier of the machine at the infrastructure provider, as the Node object reports it (openstack:///<server id>).'),
    failureDomain: z.string().min(1).max(256).optional().describe('Failure domain (an availability zone on OpenStack) the machine is placed in.'),
    minReadySeconds: seconds('Seconds the node must be Ready before the machine counts as Available.'),
    readinessGates: conditionGates('Conditions, beyond the built-in ones, that must be true before the machine counts as Ready.').optional(),
    deletion: z
      .object({
        nodeDrainTimeoutSeconds: seconds('How long draining the node may take; unset or 0 waits forever.'),
        nodeVolumeDetachTimeoutSeconds: seconds('How long to wait for volumes to detach; unset or 0 waits forever.'),
        nodeDeletionTimeoutSeconds: seconds('How long to retry deleting the Node object once the infrastructure is gone.'),
      })
      .meta({ minProperties: 1 })
      .optional()
      .describe('Timeouts that apply when the machine is deleted.'),
    taints: z
      .array(
        z.object({
          key: z.string().min(1).max(317).regex(taintKey).describe('Taint key.'),
          value: z.string().min(1).max(63).regex(taintValue).optional().describe('Taint value.'),
          effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).describe('What the taint does to pods that do not tolerate it.'),
          propagation: z
            .enum(['Always', 'OnInitialization'])
            .describe('Always keeps the taint on the node; OnInitialization sets it once, when the node joins.'),
        }),
      )
      .min(1)
      .max(64)
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['key', 'effect'] })
      .optional()
      .describe('Taints Cluster API keeps on the node.'),
  })
  .describe('Desired state of the machine.');

export const machineV1beta2: KindVersion = {
  name: 'v1beta2',
  served: true,
  storage: true,
  schema: z.object({ spec, status: preservedStatus.optional() }).describe('A machine of a workload cluster, as Cluster API manages it.'),
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'The cluster the machine belongs to.' },
    { name: 'Node Name', type: 'string', jsonPath: '.status.nodeRef.name', description: 'The Node the machine became.' },
    { name: 'Provider ID', type: 'string', priority: 10, jsonPath: '.spec.providerID', description: 'Identifier at the infrastructure provider.' },
    { name: 'Failure domain', type: 'string', jsonPath: '.status.failureDomain', description: 'Failure domain the machine runs in.' },
    {
      name: 'Ready',
      type: 'string',
      jsonPath: '.status.conditions[?(@.type=="Ready")].status',
      description: 'Whether the machine passes all readiness checks.',
    },
    {
      name: 'Available',
      type: 'string',
      jsonPath: '.status.conditions[?(@.type=="Available")].status',
      description: 'Whether the machine has been Ready for minReadySeconds.',
    },
    {
      name: 'Up-to-date',
      type: 'string',
      jsonPath: '.status.conditions[?(@.type=="UpToDate")].status',
      description: 'Whether the machine matches the spec of its owner.',
    },
    { name: 'Internal-IP', type: 'string', priority: 10, jsonPath: '.status.addresses[?(@.type=="InternalIP")].address', description: 'Internal IP address.' },
    { name: 'External-IP', type: 'string', priority: 10, jsonPath: '.status.addresses[?(@.type=="ExternalIP")].address', description: 'External IP address.' },
    { name: 'OS-Image', type: 'string', priority: 10, jsonPath: '.status.nodeInfo.osImage', description: 'OS image the node reports.' },
    {
      name: 'Paused',
      type: 'string',
      priority: 10,
      jsonPath: '.status.conditions[?(@.type=="Paused")].status',
      description: 'Whether reconciliation is paused.',
    },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Pending, Provisioning, Provisioned, Running, Deleting, Failed or Unknown.' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the machine was created.' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version', description: 'Kubernetes version of the node.' },
  ],
};
