/**
 * Cluster API's Cluster, v1beta2, as its CRD shapes the spec. The network
 * and topology sections belong to Cluster API's controllers and ClusterClass,
 * which this server does not run, so they are kept as written.
 */
import { z } from 'zod';
import type { KindVersion } from '../../apiserver/registry/kind.js';
import { boundedInt32 } from '../infrastructure/v1beta2/common.js';
import { conditionGates, contractReference, preserved, preservedStatus } from './references.js';

const spec = z
  .object({
    paused: z.boolean().optional().describe('Stops reconciliation of the cluster and of the objects that belong to it while true.'),
    availabilityGates: conditionGates('Conditions, beyond the built-in ones, that must be true before the cluster counts as Available.').optional(),
    clusterNetwork: preserved('Networking of the workload cluster: pod and service CIDR blocks, service domain, API server port.').optional(),
    controlPlaneEndpoint: z
      .object({
        host: z.string().min(1).max(512).optional().describe('Host name or IP address of the API endpoint.'),
        port: boundedInt32(1, 65535).optional().describe('Port of the API endpoint.'),
      })
      .meta({ minProperties: 1 })
      .optional()
      .describe('Where the workload cluster API server is reached; usually set by the infrastructure provider.'),
    controlPlaneRef: contractReference('The control plane provider object, e.g. a KubeadmControlPlane.').optional(),
    infrastructureRef: contractReference('The infrastructure provider object, e.g. an OpenStackCluster.').optional(),
    topology: preserved('The cluster described through a ClusterClass: class, Kubernetes version, control plane and workers.').optional(),
  })
  .meta({ minProperties: 1 })
  .describe('Desired state of the cluster.');

export const clusterV1beta2: KindVersion = {
  name: 'v1beta2',
  served: true,
  storage: true,
  schema: z.object({ spec, status: preservedStatus.optional() }).describe('A workload cluster as Cluster API manages it.'),
  printerColumns: [
    { name: 'ClusterClass', type: 'string', jsonPath: '.spec.topology.classRef.name', description: 'The ClusterClass the cluster is built from, if any.' },
    {
      name: 'Available',
      type: 'string',
      jsonPath: '.status.conditions[?(@.type=="Available")].status',
      description: 'Whether the cluster passes all availability checks.',
    },
    { name: 'CP Desired', type: 'integer', jsonPath: '.status.controlPlane.desiredReplicas', description: 'Control plane machines wanted.' },
    { name: 'CP Current', type: 'integer', priority: 10, jsonPath: '.status.controlPlane.replicas', description: 'Control plane machines that exist.' },
    { name: 'CP Ready', type: 'integer', priority: 10, jsonPath: '.status.controlPlane.readyReplicas', description: 'Control plane machines that are Ready.' },
    { name: 'CP Available', type: 'integer', jsonPath: '.status.controlPlane.availableReplicas', description: 'Control plane machines that are Available.' },
    { name: 'CP Up-to-date', type: 'integer', jsonPath: '.status.controlPlane.upToDateReplicas', description: 'Control plane machines that are UpToDate.' },
    { name: 'W Desired', type: 'integer', jsonPath: '.status.workers.desiredReplicas', description: 'Worker machines wanted.' },
    { name: 'W Current', type: 'integer', priority: 10, jsonPath: '.status.workers.replicas', description: 'Worker machines that exist.' },
    { name: 'W Ready', type: 'integer', priority: 10, jsonPath: '.status.workers.readyReplicas', description: 'Worker machines that are Ready.' },
    { name: 'W Available', type: 'integer', jsonPath: '.status.workers.availableReplicas', description: 'Worker machines that are Available.' },
    { name: 'W Up-to-date', type: 'integer', jsonPath: '.status.workers.upToDateReplicas', description: 'Worker machines that are UpToDate.' },
    {
      name: 'Paused',
      type: 'string',
      priority: 10,
      jsonPath: '.status.conditions[?(@.type=="Paused")].status',
      description: 'Whether reconciliation is paused.',
    },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Pending, Provisioning, Provisioned, Deleting, Failed or Unknown.' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time since the cluster was created.' },
    { name: 'Version', type: 'string', jsonPath: '.spec.topology.version', description: 'Kubernetes version of a ClusterClass-based cluster.' },
  ],
};
