/**
 * OpenStackNode (extensions.capo-apiserver.io/v1alpha1): one per
 * OpenStackMachine, same namespace and name. The spec is the node's desired
 * configuration with its Ansible host variables; the status is its
 * OpenStack server with ports and volumes. Computed on every read; read-only.
 */
import { z } from 'zod';
import type { KindDefinition } from '../../apiserver/registry/kind.js';
import { openStackNodesAffectedBy } from '../affected.js';
import { indexOf } from '../model.js';
import { openStackNodeKind, openStackNodeOf } from '../nodes.js';
import { atomicListOf } from '../../api/infrastructure/v1beta2/common.js';
import { computedConditions, interfaceName, missingVariables, reservedResources } from './common.js';
import { inventoryKind } from './inventory-kind.js';

const hostVars = z
  .object({
    ansible_host: z.string().optional().describe('Address Ansible connects to: the InternalIP behind a bastion, else the ExternalIP (floating IP) if any.'),
    ip: z.string().optional().describe('Address Kubernetes services bind to: the InternalIP.'),
    access_ip: z.string().optional().describe('Address other nodes reach this one on: the InternalIP.'),
    ansible_user: z.string().optional().describe('SSH user, from the OpenStackCluster spec.extensions.ssh.user.'),
    ansible_ssh_common_args: z.string().optional().describe('ProxyJump through the floating IP of the cluster bastion, when the cluster has one.'),
    keepalived_interface: interfaceName.optional().describe('From the OpenStackMachine spec.extensions.networkInterfaces.keepalived.'),
  })
  .describe('The Ansible host variables of the node. A variable without a value is absent here and listed in status.missing.');

const spec = z
  .object({
    clusterName: z.string().optional().describe('The Cluster API cluster: the cluster.x-k8s.io/cluster-name label of the machine.'),
    openStackCluster: z.string().optional().describe('The OpenStackCluster of that cluster, when it exists.'),
    role: z.enum(['control-plane', 'worker']).describe('control-plane when the machine carries the cluster.x-k8s.io/control-plane label.'),
    groups: atomicListOf(z.string()).describe('Kubespray groups of the host: kube_control_plane and etcd (stacked), or kube_node.'),
    profile: z.string().optional().describe('The Nova flavor, by name or ID.'),
    image: z.string().optional().describe('The Glance image, by name, ID or ORC image reference.'),
    vars: hostVars,
    nodeResources: z
      .object({ reserved: reservedResources, policy: z.string().optional().describe('The reservation policy that computed reserved.') })
      .optional()
      .describe('Resources reserved on the node (node_resources of this host).'),
  })
  .describe('The desired configuration of the node.');

const address = z.object({ type: z.string().describe('Hostname, InternalIP or ExternalIP.'), address: z.string().describe('The address.') });

const status = z
  .object({
    phase: z
      .enum(['Pending', 'Provisioning', 'Running', 'Stopped', 'Failed', 'Deleting', 'Unknown'])
      .describe(
        'Pending: no server yet. Provisioning: being built, or active but not yet provisioned. Running: active and provisioned. Stopped: shut off, suspended, paused or shelved. Failed: in ERROR. Deleting: being deleted.',
      ),
    ready: z.boolean().describe('Whether the phase is Running.'),
    server: z
      .object({
        name: z.string().describe('Name of the OpenStackServer.'),
        ready: z.boolean().describe('Whether the OpenStackServer reports ready.'),
        instanceID: z.string().optional().describe('ID of the Nova server.'),
        instanceState: z.string().optional().describe('Nova state of the server.'),
        flavorID: z.string().optional().describe('ID of the resolved flavor.'),
        imageID: z.string().optional().describe('ID of the resolved image.'),
        addresses: atomicListOf(address).optional().describe('Addresses of the server.'),
      })
      .optional()
      .describe('The OpenStackServer realising the machine.'),
    ports: atomicListOf(
      z
        .object({
          id: z.string().describe('ID of the Neutron port.'),
          name: z.string().optional().describe('Name of the port.'),
          networkID: z.string().optional().describe('ID of its network.'),
          fixedIPs: atomicListOf(z.string()).optional().describe('Its requested fixed addresses.'),
        })
        .describe('A port created for the server.'),
    ).describe('Ports created for the server.'),
    volumes: atomicListOf(
      z
        .object({
          name: z.string().describe('Name of the Cinder volume.'),
          sizeGiB: z.int().optional().describe('Size in GiB.'),
          type: z.string().optional().describe('Volume type.'),
          id: z.string().optional().describe('ID of the volume, once created.'),
        })
        .describe('A Cinder volume of the server.'),
    ).describe('The root volume and the volume-backed block devices of the server.'),
    missing: missingVariables,
    conditions: computedConditions,
  })
  .describe('The node as OpenStack runs it.');

export const openStackNodeResource: KindDefinition = inventoryKind({
  kind: openStackNodeKind,
  plural: 'openstacknodes',
  singular: 'openstacknode',
  shortNames: ['osknode', 'osknodes'],
  description: 'A node of a cluster, computed from its OpenStackMachine, OpenStackServer and OpenStackCluster. Read-only.',
  spec,
  status,
  printerColumns: [
    { name: 'Status', type: 'string', jsonPath: '.status.phase', description: 'Phase of the server' },
    { name: 'Roles', type: 'string', jsonPath: '.spec.role', description: 'control-plane or worker' },
    { name: 'Profile', type: 'string', jsonPath: '.spec.profile', description: 'Nova flavor' },
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster API cluster name', priority: 1 },
    { name: 'Address', type: 'string', jsonPath: '.spec.vars.ip', description: 'InternalIP of the node', priority: 1 },
    { name: 'Instance ID', type: 'string', jsonPath: '.status.server.instanceID', description: 'Nova server ID', priority: 1 },
    { name: 'Image', type: 'string', jsonPath: '.spec.image', description: 'Glance image', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Age of the OpenStackMachine' },
  ],
  namesIn: (snapshot) => indexOf(snapshot).machines.map(({ metadata }) => ({ namespace: metadata.namespace, name: metadata.name })),
  compute: openStackNodeOf,
  affectedBy: openStackNodesAffectedBy,
});
