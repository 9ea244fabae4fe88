/**
 * OpenStackCluster v1beta1, served for clients of the older API: flat
 * apiServer* and disable* fields instead of v1beta2's apiServer,
 * managedNetwork and managedRouter, and the Cluster API v1beta1 status
 * (ready, failure fields, failure domains as a map). Its spec is also the
 * template of a v1beta1 OpenStackClusterTemplate.
 */
import { z } from 'zod';
import type { KindVersion } from '../../../apiserver/registry/kind.js';
import { clusterSpecExtensions, clusterStatusExtensions } from '../extensions.js';
import { atomicListOf, networkParam, withRules } from '../v1beta2/common.js';
import { openStackClusterSpec as openStackClusterSpecV1beta2 } from '../v1beta2/openstackcluster.js';
import {
  apiServerLoadBalancer,
  bastionStatus,
  condition,
  externalRouterIPParam,
  failureDomains,
  failureFields,
  identityReference,
  loadBalancerStatus,
  managedSecurityGroups,
  networkStatus,
  networkStatusWithSubnets,
  routerStatus,
  securityGroupStatus,
  subnetParam,
  subnetSpec,
} from './common.js';
import { openStackMachineSpec } from './openstackmachine.js';

const { network, router, controlPlaneAvailabilityZones, controlPlaneOmitAvailabilityZone, tags } = openStackClusterSpecV1beta2.shape;

const bastion = withRules(
  z.object({
    ...openStackClusterSpecV1beta2.shape.bastion.unwrap().shape,
    spec: openStackMachineSpec.optional().describe('The bastion server. Required while the bastion is enabled.'),
  }),
  [
    {
      rule: '!self.enabled || has(self.spec)',
      message: 'spec is required if bastion is enabled',
      holds: (self) => !self.enabled || self.spec !== undefined,
    },
  ],
).describe(
  'A server to log in to the nodes through. Changes to a running bastion are refused; disable it, wait, then change it.',
);

export const openStackClusterSpec = withRules(
  z.object({
    identityRef: identityReference.describe('Credentials for the cluster, also used by its machines unless they name their own.'),
    managedSubnets: atomicListOf(subnetSpec)
      .max(1)
      .optional()
      .describe(
        'Subnets to create, along with a network and a router. Only one IPv4 subnet is supported. Without it, no ' +
          'network is created.',
      ),
    network,
    subnets: atomicListOf(subnetParam)
      .optional()
      .describe(
        'Existing subnets of network, used when managedSubnets is empty. All subnets of network when omitted. Several ' +
          'subnets of one IP version need primarySubnet.',
      ),
    primarySubnet: subnetParam
      .optional()
      .describe('Among several subnets, the one for the load balancer VIP and node registration. The first when omitted.'),
    router,
    networkMTU: z
      .int()
      .optional()
      .describe('MTU of the network CAPO creates. The Neutron default when omitted; needs the net-mtu extension.'),
    disablePortSecurity: z
      .boolean()
      .optional()
      .describe('Turns off port security, and with it security groups, on the network CAPO creates.'),
    externalRouterIPs: atomicListOf(externalRouterIPParam)
      .optional()
      .describe('Fixed gateway addresses of the router, each in a given external subnet.'),
    disableExternalNetwork: z
      .boolean()
      .optional()
      .describe('Keeps the cluster off any external network, e.g. on provider networks without one.'),
    externalNetwork: networkParam
      .optional()
      .describe(
        'The external network for internet access, ignored when disableExternalNetwork is true. When omitted, the ' +
          'only external network is used; with several, none is.',
      ),
    disableAPIServerFloatingIP: z
      .boolean()
      .optional()
      .describe('Leaves the API server without a floating IP, e.g. when management and workload clusters share a network.'),
    apiServerFloatingIP: z
      .string()
      .optional()
      .describe('Floating IP of the API server, created if missing. A new one is allocated when omitted. Unused with disableAPIServerFloatingIP.'),
    apiServerFixedIP: z
      .string()
      .optional()
      .describe(
        'Fixed IP of the API server: the VIP of the load balancer (allocated when omitted). Unused with a floating IP ' +
          'but no load balancer; required with neither (a pre-created port holding the address).',
      ),
    apiServerPort: z.int().min(0).max(65535).optional().describe('Port of the API server listener, 0 to 65535.'),
    apiServerLoadBalancer: apiServerLoadBalancer.optional(),
    controlPlaneEndpoint: z
      .object({
        host: z.string().max(512).optional().describe('Host name or address of the API server.'),
        port: z.int32().optional().describe('Port of the API server.'),
      })
      .optional()
      .describe('Endpoint of the control plane. Filled in by CAPO; a value set at creation takes precedence. Fixed once host is set.'),
    controlPlaneAvailabilityZones,
    controlPlaneOmitAvailabilityZone,
    managedSecurityGroups: managedSecurityGroups
      .optional()
      .describe('Security groups CAPO manages. Without it, the security groups named in the machine specs are used.'),
    bastion: bastion.optional(),
    tags,
    extensions: clusterSpecExtensions.optional(),
  }),
  [
    {
      rule: 'has(self.disableExternalNetwork) && self.disableExternalNetwork ? !has(self.bastion) || !has(self.bastion.floatingIP) : true',
      message: 'bastion floating IP cannot be set when disableExternalNetwork is true',
      holds: (self) => self.disableExternalNetwork !== true || self.bastion?.floatingIP === undefined,
    },
    {
      rule: 'has(self.disableExternalNetwork) && self.disableExternalNetwork ? has(self.disableAPIServerFloatingIP) && self.disableAPIServerFloatingIP : true',
      message: 'disableAPIServerFloatingIP cannot be false when disableExternalNetwork is true',
      holds: (self) => self.disableExternalNetwork !== true || self.disableAPIServerFloatingIP === true,
    },
  ],
).describe('The OpenStack infrastructure of a cluster.');

/** v1beta1 lists ready as required; its default fills it in before validation. */
const status = z
  .object({
    ready: z
      .boolean()
      .meta({ default: false })
      .describe('Whether the infrastructure of the cluster is ready. Deprecated: read the conditions.'),
    initialization: z
      .object({
        provisioned: z
          .boolean()
          .optional()
          .describe('Set once the infrastructure of the cluster is first provisioned; never reset afterwards.'),
      })
      .optional()
      .describe('Initial provisioning of the cluster, as the Cluster API contract reads it.'),
    network: networkStatusWithSubnets.optional().describe('The cluster network.'),
    externalNetwork: networkStatus.optional().describe('The external network for default ingress and egress.'),
    router: routerStatus.optional().describe('The cluster router.'),
    apiServerLoadBalancer: loadBalancerStatus.optional().describe('The API server load balancer, if any.'),
    failureDomains: failureDomains.optional(),
    controlPlaneSecurityGroup: securityGroupStatus.optional().describe('Managed security group of control plane nodes.'),
    workerSecurityGroup: securityGroupStatus.optional().describe('Managed security group of worker nodes.'),
    bastionSecurityGroup: securityGroupStatus.optional().describe('Managed security group of the bastion.'),
    bastion: bastionStatus.optional(),
    ...failureFields('cluster'),
    conditions: z
      .array(condition)
      .optional()
      .describe('State of the cluster; Ready surfaces in the Cluster InfrastructureReady condition.'),
    extensions: clusterStatusExtensions.optional(),
  })
  .describe('Observed state of the cluster infrastructure.');

export const openStackClusterV1beta1: KindVersion = {
  name: 'v1beta1',
  served: true,
  storage: false,
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
    { name: 'Ready', type: 'string', jsonPath: '.status.ready', description: 'Cluster infrastructure is ready for OpenStack instances' },
    { name: 'Network', type: 'string', jsonPath: '.status.network.id', description: 'Network the cluster is using' },
    { name: 'Endpoint', type: 'string', jsonPath: '.spec.controlPlaneEndpoint.host', description: 'API Endpoint', priority: 1 },
    { name: 'Bastion IP', type: 'string', jsonPath: '.status.bastion.floatingIP', description: 'Bastion address for breakglass access' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Time duration since creation of OpenStackCluster' },
  ],
};
