/**
 * ClusterExtension (extensions.capo-apiserver.io/v1alpha1): one per
 * OpenStackCluster, same namespace and name, computed on every read from the
 * cluster, its machines and their servers. Read-only.
 */
import { z } from 'zod';
import type { KindDefinition } from '../../apiserver/registry/kind.js';
import { clusterExtensionKind, servedClusterExtensionOf } from '../cluster-extensions.js';
import { clusterExtensionsAffectedBy } from '../affected.js';
import { indexOf } from '../model.js';
import { clusterVariables } from '../variables.js';
import { clusterSpecExtensions, clusterStatusExtensions } from '../../api/infrastructure/extensions.js';
import { computedConditions, interfaceName, missingVariables, reservedResources } from './common.js';
import { inventoryKind } from './inventory-kind.js';

const specNetworkInterfaces = clusterSpecExtensions.shape.networkInterfaces.unwrap();

const spec = z
  .object({
    clusterName: z
      .string()
      .describe(
        'The Cluster API cluster: the cluster.x-k8s.io/cluster-name label of the OpenStackCluster, else its name. Machines with this label are its hosts.',
      ),
    extensions: clusterSpecExtensions
      .extend({
        networkInterfaces: specNetworkInterfaces
          .extend({
            keepalived: z
              .record(z.string(), interfaceName)
              .optional()
              .describe('Interface keepalived announces virtual IPs on, per machine name (keepalived_interface of each host).'),
          })
          .optional()
          .describe(specNetworkInterfaces.description ?? ''),
      })
      .describe('The OpenStackCluster spec.extensions (user inputs), with the per-machine inputs of its machines keyed by machine name.'),
  })
  .describe('Inputs of the bootstrap, set by users or the ClusterClass.');

const varTypes: Record<string, z.ZodType> = {
  cilium_openstack_security_group_ids: z.array(z.string()).meta({ 'x-kubernetes-list-type': 'atomic' }),
  vpc_cni_webhook_enable: z.boolean(),
};

const vars = z
  .object({
    ...Object.fromEntries(clusterVariables.map(({ variable, path }) => [variable, (varTypes[variable] ?? z.string()).optional().describe(`From ${path}.`)])),
    node_resources: z
      .record(z.string(), reservedResources)
      .optional()
      .describe('Reserved resources per machine name, from status.extensions.nodeResources[machine].reserved.'),
  })
  .describe(
    'The cluster variables under their Ansible names (group variables of the cluster). A variable without a value is absent here and listed in missing.',
  );

const status = z
  .object({
    extensions: clusterStatusExtensions
      .omit({ ownedResources: true })
      .extend({
        nodeResources: z
          .record(z.string(), z.object({ reserved: reservedResources }).describe('Resource reservations of one node.'))
          .optional()
          .describe('Reserved resources per machine name, from each OpenStackMachine status.extensions.nodeResources (node_resources).'),
      })
      .describe('The OpenStackCluster status.extensions (values the reconciler computed), with the per-machine values keyed by machine name.'),
    vars,
    missing: missingVariables,
    summary: z
      .object({
        controlPlaneMachines: z.int().describe('Machines labelled cluster.x-k8s.io/control-plane.'),
        workerMachines: z.int().describe('The other machines of the cluster.'),
        missingVariables: z.int().describe('Entries of missing that keep the cluster from being Ready.'),
      })
      .describe('Counts for kubectl get.'),
    conditions: computedConditions,
  })
  .describe('Values computed for the bootstrap.');

export const clusterExtensionResource: KindDefinition = inventoryKind({
  kind: clusterExtensionKind,
  plural: 'clusterextensions',
  singular: 'clusterextension',
  shortNames: ['cext', 'cexts'],
  description:
    'Every infrastructure variable the Ansible bootstrap of one cluster reads, computed from its OpenStackCluster, OpenStackMachines and OpenStackServers. Read-only.',
  spec,
  status,
  printerColumns: [
    { name: 'Plugin', type: 'string', jsonPath: '.spec.extensions.networking.kubeNetworkPlugin', description: 'CNI plugin (kube_network_plugin)' },
    {
      name: 'API VIP',
      type: 'string',
      jsonPath: '.status.extensions.loadBalancers.controlPlane.vip',
      description: 'API server load balancer VIP (master_virtual_vip)',
    },
    { name: 'Control Plane', type: 'integer', jsonPath: '.status.summary.controlPlaneMachines', description: 'Control plane machines' },
    { name: 'Workers', type: 'integer', jsonPath: '.status.summary.workerMachines', description: 'Worker machines' },
    { name: 'Missing', type: 'integer', jsonPath: '.status.summary.missingVariables', description: 'Variables without a value that block the bootstrap' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status', description: 'Every variable has a value' },
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster API cluster name', priority: 1 },
    {
      name: 'Ingress VIP',
      type: 'string',
      jsonPath: '.status.extensions.loadBalancers.ingress.vip',
      description: 'Ingress load balancer VIP (ingress_virtual_vip)',
      priority: 1,
    },
    { name: 'Region', type: 'string', jsonPath: '.status.extensions.openStack.region', description: 'OpenStack region', priority: 1 },
    { name: 'Project', type: 'string', jsonPath: '.status.extensions.openStack.project', description: 'OpenStack project', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Age of the OpenStackCluster' },
  ],
  namesIn: (snapshot) => indexOf(snapshot).clusters.map(({ metadata }) => ({ namespace: metadata.namespace, name: metadata.name })),
  compute: servedClusterExtensionOf,
  affectedBy: clusterExtensionsAffectedBy,
});
