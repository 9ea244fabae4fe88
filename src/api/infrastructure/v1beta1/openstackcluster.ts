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
import { atomicListOf, initializationStatus, networkParam, variant, withRules } from '../v1beta2/common.js';
import { bastionOf, networkFieldsOf, openStackClusterSpec as openStackClusterSpecV1beta2, openStackClusterV1beta2 } from '../v1beta2/openstackcluster.js';
import {
  apiServerLoadBalancer,
  condition,
  externalRouterIPParam,
  failureDomains,
  failureFields,
  identityReference,
  managedSecurityGroups,
  resourceStatuses,
  subnetParam,
  subnetSpec,
  withReadyColumn,
} from './common.js';
import { openStackMachineSpec } from './openstackmachine.js';

const { networkStatus, networkStatusWithSubnets, routerStatus, loadBalancerStatus, securityGroupStatus, bastionStatus } = resourceStatuses;

const { controlPlaneAvailabilityZones, controlPlaneOmitAvailabilityZone, tags } = openStackClusterSpecV1beta2.shape;

export const openStackClusterSpec = withRules(
  z.object({
    identityRef: identityReference.describe('Credentials for the cluster, also used by its machines unless they name their own.'),
    ...networkFieldsOf(subnetSpec, subnetParam),
    // v0.14 takes at most one subnet of each IP version; v0.15 adds primarySubnet for more. Released v1beta1 keeps the bound.
    subnets: atomicListOf(subnetParam)
      .max(2)
      .optional()
      .describe('Existing subnets of network, at most one IPv4 and one IPv6, used when managedSubnets is empty. All subnets of network when omitted.'),
    networkMTU: z.int().optional().describe('MTU of the network CAPO creates. The Neutron default when omitted; needs the net-mtu extension.'),
    disablePortSecurity: z.boolean().optional().describe('Turns off port security, and with it security groups, on the network CAPO creates.'),
    externalRouterIPs: atomicListOf(externalRouterIPParam).optional().describe('Fixed gateway addresses of the router, each in a given external subnet.'),
    disableExternalNetwork: z.boolean().optional().describe('Keeps the cluster off any external network, e.g. on provider networks without one.'),
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
    bastion: bastionOf(openStackMachineSpec).optional(),
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
    ready: z.boolean().meta({ default: false }).describe('Whether the infrastructure of the cluster is ready. Deprecated: read the conditions.'),
    initialization: initializationStatus('cluster').optional(),
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
    conditions: z.array(condition).optional().describe('State of the cluster; Ready surfaces in the Cluster InfrastructureReady condition.'),
    extensions: clusterStatusExtensions.optional(),
  })
  .describe('Observed state of the cluster infrastructure.');

export const openStackClusterV1beta1: KindVersion = {
  name: 'v1beta1',
  served: true,
  storage: false,
  schema: variant(openStackClusterV1beta2.schema, (schema) => schema.extend({ spec: openStackClusterSpec.optional(), status: status.optional() })),
  printerColumns: withReadyColumn(openStackClusterV1beta2.printerColumns, 'Cluster infrastructure is ready for OpenStack instances'),
};
