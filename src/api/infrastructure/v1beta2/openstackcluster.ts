/**
 * OpenStackCluster v1beta2, the storage version: the Cluster API
 * infrastructure cluster (network, router, security groups, API server load
 * balancer and bastion). Its spec is also the template of an
 * OpenStackClusterTemplate.
 */
import { z } from 'zod';
import type { KindVersion } from '../../../apiserver/registry/kind.js';
import { clusterSpecExtensions, clusterStatusExtensions } from '../extensions.js';
import {
  apiServerLoadBalancer,
  atomicListOf,
  boundedInt32,
  condition,
  externalRouterIPParam,
  failureDomain,
  identityReference,
  initializationStatus,
  managedSecurityGroups,
  mapListOf,
  networkParam,
  resourceStatuses,
  routerParam,
  setOf,
  subnetParam,
  subnetSpec,
  withRules,
} from './common.js';
import { openStackMachineSpec } from './openstackmachine.js';

const { networkStatus, networkStatusWithSubnets, routerStatus, loadBalancerStatus, securityGroupStatus, bastionStatus } = resourceStatuses;

const apiServer = z
  .object({
    enableFloatingIP: z.boolean().optional().describe('Whether the API server gets a floating IP.'),
    floatingIP: z
      .string()
      .optional()
      .describe('Floating IP of the API server, created if missing. A new one is allocated when omitted. Unused without enableFloatingIP.'),
    fixedIP: z
      .string()
      .optional()
      .describe(
        'Fixed IP of the API server: the VIP of the managed load balancer (allocated when omitted). Unused with a ' +
          'floating IP but no managed load balancer.',
      ),
    port: z.int().min(0).max(65535).optional().describe('Port of the API server listener, 0 to 65535.'),
    managedLoadBalancer: apiServerLoadBalancer.optional().describe('The load balancer CAPO creates for the API server. None when omitted.'),
  })
  .describe('How the API server is exposed: load balancer, floating IP and port.');

/** Each version's bastion runs that version's machine spec. */
export function bastionOf<S extends z.ZodType>(machineSpec: S) {
  return withRules(
    z.object({
      enabled: z.boolean().default(true).describe('Whether the bastion exists. To remove the bastion, set false first and wait for it to be deleted.'),
      spec: machineSpec.optional().describe('The bastion server. Required while the bastion is enabled.'),
      availabilityZone: z.string().optional().describe('Failure domain of the bastion.'),
      floatingIP: z
        .ipv4()
        .optional()
        .describe(
          'Floating IP address (not ID) of the bastion. It should exist and be unassociated; otherwise CAPO tries to ' +
            'create it, which usually needs admin rights.',
        ),
    }),
    [
      {
        rule: '!self.enabled || has(self.spec)',
        message: 'spec is required if bastion is enabled',
        holds: (self) => !self.enabled || self.spec !== undefined,
      },
    ],
  ).describe('A server to log in to the nodes through. Changes to a running bastion are refused; disable it, wait, then change it.');
}

const managedNetwork = withRules(
  z.object({
    mtu: z.int32().optional().describe('MTU of the network. The Neutron default when omitted; needs the net-mtu extension.'),
    enablePortSecurity: z.boolean().optional().describe('Port security of the network, which security groups need. Enabled when omitted.'),
  }),
  [
    {
      rule: 'self == null || has(self.mtu) || has(self.enablePortSecurity)',
      message: 'managedNetwork must not be empty if set',
      holds: (self) => self.mtu !== undefined || self.enablePortSecurity !== undefined,
    },
  ],
).describe('Settings of the network CAPO creates; ignored for an existing network.');

const managedRouter = withRules(
  z.object({
    externalIPs: atomicListOf(externalRouterIPParam).min(1).optional().describe('Fixed gateway addresses of the router, each in a given external subnet.'),
  }),
  [
    {
      rule: 'has(self.externalIPs)',
      message: 'managedRouter must not be empty if set',
      holds: (self) => self.externalIPs !== undefined,
    },
  ],
).describe('Settings of the router CAPO creates; ignored for an existing router.');

/**
 * Where the cluster network comes from: subnets to create, or an existing
 * network, subnets and router. Both versions have these fields, each around
 * its own subnet nodes.
 */
export function networkFieldsOf<S extends z.ZodType, P extends z.ZodType>(subnetSpec: S, subnetParam: P) {
  return {
    managedSubnets: atomicListOf(subnetSpec)
      .max(1)
      .optional()
      .describe('Subnets to create, along with a network and a router. Only one IPv4 subnet is supported. Without it, no ' + 'network is created.'),
    network: networkParam.optional().describe('An existing network, used when managedSubnets is empty.'),
    subnets: atomicListOf(subnetParam)
      .optional()
      .describe(
        'Existing subnets of network, used when managedSubnets is empty. All subnets of network when omitted. Several ' +
          'subnets of one IP version need primarySubnet.',
      ),
    primarySubnet: subnetParam.optional().describe('Among several subnets, the one for the load balancer VIP and node registration. The first when omitted.'),
    router: routerParam.optional().describe('An existing router for managedSubnets; then no router is created.'),
  };
}

export const openStackClusterSpec = withRules(
  z.object({
    identityRef: identityReference.describe('Credentials for the cluster, also used by its machines unless they name their own.'),
    ...networkFieldsOf(subnetSpec, subnetParam),
    managedNetwork: managedNetwork.optional(),
    managedRouter: managedRouter.optional(),
    enableExternalNetwork: z
      .boolean()
      .optional()
      .describe('Whether the cluster connects to an external network. False for, e.g., provider networks without one.'),
    externalNetwork: networkParam
      .optional()
      .describe(
        'The external network for internet access, ignored when enableExternalNetwork is false. When omitted, the ' +
          'only external network is used; with several, none is.',
      ),
    apiServer: apiServer.optional(),
    controlPlaneEndpoint: z
      .object({
        host: z.string().min(1).max(512).optional().describe('Host name or address of the API server.'),
        port: boundedInt32(1, 65535).optional().describe('Port of the API server.'),
      })
      .meta({ minProperties: 1 })
      .optional()
      .describe('Endpoint of the control plane. Filled in by CAPO; a value set at creation takes precedence.'),
    controlPlaneAvailabilityZones: setOf(z.string()).optional().describe('Availability zones control plane machines may use.'),
    controlPlaneOmitAvailabilityZone: z
      .boolean()
      .optional()
      .describe('Creates control plane servers without an availability zone, leaving the choice to the Nova scheduler.'),
    managedSecurityGroups: managedSecurityGroups
      .optional()
      .describe('Security groups CAPO manages. Without it, the security groups named in the machine specs are used.'),
    bastion: bastionOf(openStackMachineSpec).optional(),
    tags: setOf(z.string()).optional().describe('Tags of every resource of the cluster that supports tags.'),
    extensions: clusterSpecExtensions.optional(),
  }),
  [
    {
      rule: 'has(self.enableExternalNetwork) && !self.enableExternalNetwork ? !has(self.bastion) || !has(self.bastion.floatingIP) : true',
      message: 'bastion floating IP cannot be set when enableExternalNetwork is false',
      holds: (self) => self.enableExternalNetwork !== false || self.bastion?.floatingIP === undefined,
    },
    {
      rule: 'has(self.enableExternalNetwork) && !self.enableExternalNetwork ? has(self.apiServer) && has(self.apiServer.enableFloatingIP) && !self.apiServer.enableFloatingIP : true',
      message: 'apiServer.enableFloatingIP cannot be true when enableExternalNetwork is false',
      holds: (self) => self.enableExternalNetwork !== false || self.apiServer?.enableFloatingIP === false,
    },
  ],
).describe('The OpenStack infrastructure of a cluster.');

const status = z
  .object({
    initialization: initializationStatus('cluster').optional(),
    network: networkStatusWithSubnets.optional().describe('The cluster network.'),
    externalNetwork: networkStatus.optional().describe('The external network for default ingress and egress.'),
    router: routerStatus.optional().describe('The cluster router.'),
    apiServerManagedLoadBalancer: loadBalancerStatus.optional().describe('The API server load balancer, if any.'),
    failureDomains: mapListOf(failureDomain, 'name').optional().describe('Nova availability zones usable by machines.'),
    controlPlaneSecurityGroup: securityGroupStatus.optional().describe('Managed security group of control plane nodes.'),
    workerSecurityGroup: securityGroupStatus.optional().describe('Managed security group of worker nodes.'),
    bastionSecurityGroup: securityGroupStatus.optional().describe('Managed security group of the bastion.'),
    bastion: bastionStatus.optional(),
    conditions: mapListOf(condition, 'type').optional().describe('State of the cluster; Ready surfaces in the Cluster InfrastructureReady condition.'),
    extensions: clusterStatusExtensions.optional(),
  })
  .describe('Observed state of the cluster infrastructure.');

export const openStackClusterV1beta2: KindVersion = {
  name: 'v1beta2',
  served: true,
  storage: true,
  schema: z
    .object({
      spec: openStackClusterSpec.optional(),
      status: status.optional(),
    })
    .describe('The OpenStack infrastructure of a Cluster API Cluster.'),
  printerColumns: [
    {
      name: 'Cluster',
      type: 'string',
      jsonPath: '.metadata.labels.cluster\\.x-k8s\\.io/cluster-name',
      description: 'Cluster to which this OpenStackCluster belongs',
    },
    { name: 'Network', type: 'string', jsonPath: '.status.network.id', description: 'Network the cluster is using' },
    { name: 'Endpoint', type: 'string', jsonPath: '.spec.controlPlaneEndpoint.host', description: 'API Endpoint', priority: 1 },
    {
      name: 'Bastion IP',
      type: 'string',
      jsonPath: '.status.bastion.floatingIP',
      description: 'Bastion address for breakglass access',
    },
    {
      name: 'Age',
      type: 'date',
      jsonPath: '.metadata.creationTimestamp',
      description: 'Time duration since creation of OpenStackCluster',
    },
  ],
};
