/**
 * The v1beta1 shapes of the CAPO types, where they differ from v1beta2: older
 * names (flavorID, disablePortSecurity, apiServerLoadBalancer, ...), plain
 * integers where v1beta2 declares int32, no minLength on names, fewer list
 * types, and the Cluster API v1beta1 condition. Everything identical on the
 * wire is imported from v1beta2, so both versions share one definition:
 * nodes that differ only in that spelling come from v1beta2's builders, nodes
 * that differ in a field or two are variants of the v1beta2 node.
 */
import { z } from 'zod';
import type { PrinterColumn } from '../../../apiserver/registry/kind.js';
import {
  addressPair as addressPairV1beta2,
  additionalBlockDevice as additionalBlockDeviceV1beta2,
  apiServerLoadBalancer as apiServerLoadBalancerV1beta2,
  apiServerLoadBalancerMonitorOf,
  atomicListOf,
  condition as conditionV1beta2,
  externalRouterIPParamOf,
  failureDomain as failureDomainV1beta2,
  fixedIPOf,
  identityReference as identityReferenceV1beta2,
  imageParam as imageParamV1beta2,
  managedSecurityGroups as managedSecurityGroupsV1beta2,
  mapListOf,
  portOpts as portOptsV1beta2,
  resolvedPortSpec as resolvedPortSpecV1beta2,
  resourceStatusesOf,
  rootVolume as rootVolumeV1beta2,
  schedulerHintAdditionalPropertyOf,
  securityGroupRuleSpecOf,
  serverMetadata as serverMetadataV1beta2,
  setOf,
  subnetParamOf,
  subnetSpecOf,
  valueSpec as valueSpecV1beta2,
  variant,
  type Spelling,
} from '../v1beta2/common.js';

const v1beta1: Spelling = {
  requiredString: () => z.string(),
  int: () => z.int(),
  boundedInt: (minimum, maximum) => (maximum === undefined ? z.int().min(minimum) : z.int().min(minimum).max(maximum)),
  setOf: z.array,
  atomicListOf: z.array,
};

// ---------------------------------------------------------------- references

export const subnetParam = subnetParamOf(v1beta1);

export const imageParam = variant(imageParamV1beta2, (param) =>
  param.extend({
    imageRef: z
      .object({ name: z.string().describe('Name of the ORC Image.') })
      .optional()
      .describe('An ORC Image object in the same namespace; the server waits until the image is available.'),
  }),
);

/** v1beta1 lists `type` as required; its default fills it in before validation. */
export const identityReference = variant(identityReferenceV1beta2, (reference) =>
  reference.extend({
    type: reference.shape.type
      .unwrap()
      .meta({ default: 'Secret' })
      .describe('What name refers to: a Secret in this namespace, or a cluster-scoped OpenStackClusterIdentity.'),
  }),
);

// ---------------------------------------------------------------- volumes

const sizeGiB = v1beta1.boundedInt(1).describe('Size in GiB.');

export const rootVolume = variant(rootVolumeV1beta2, (volume) => volume.extend({ sizeGiB }));

export const additionalBlockDevice = variant(additionalBlockDeviceV1beta2, (device) =>
  device.extend({
    name: z
      .string()
      .describe(
        "Name of the device, unique in the machine and not 'root'. It names the Cinder volume (after the machine " +
          'name) and tags the device, so the guest can find it in the metadata service.',
      ),
    sizeGiB,
    storage: variant(device.shape.storage, (storage) =>
      storage.extend({ type: z.string().describe('Local: ephemeral disk on the hypervisor. Volume: a Cinder volume.') }),
    ),
  }),
);

// ---------------------------------------------------------------- ports

const addressPair = variant(addressPairV1beta2, (pair) =>
  pair.extend({ ipAddress: z.string().describe('Extra IP address (or, where Neutron allows it, CIDR) the port may send from.') }),
);

const valueSpec = variant(valueSpecV1beta2, (spec) =>
  spec.extend({
    name: z.string().describe('Identifies the pair in the list; not sent to OpenStack.'),
    key: z.string().describe('Key sent to Neutron.'),
    value: z.string().describe('Value sent to Neutron.'),
  }),
);

/** The port settings whose v1beta1 shape differs, for requested and resolved ports alike. */
const portSettings = {
  allowedAddressPairs: z.array(addressPair).optional().describe('Addresses the port may send from besides its own, e.g. a virtual IP.'),
  disablePortSecurity: z.boolean().optional().describe('Turns port security off (true) or on (false). The network setting applies when omitted.'),
  valueSpecs: mapListOf(valueSpec, 'name').optional().describe('Extra parameters for the Neutron port request. What they do depends on the cloud.'),
};

export const portOpts = variant(portOptsV1beta2, (port) =>
  port.omit({ enablePortSecurity: true }).extend({
    fixedIPs: atomicListOf(fixedIPOf(subnetParam)).optional().describe('Fixed IPs of the port. Subnets must belong to the port network.'),
    ...portSettings,
  }),
);

const resolvedPortSpec = variant(resolvedPortSpecV1beta2, (port) =>
  port.omit({ enablePortSecurity: true }).extend({
    name: z.string().describe('Name of the port.'),
    description: z.string().describe('Description of the port.'),
    networkID: z.string().describe('ID of the network of the port.'),
    ...portSettings,
  }),
);

// ---------------------------------------------------------------- server

export const schedulerHintAdditionalProperty = schedulerHintAdditionalPropertyOf(v1beta1);

export const serverMetadata = variant(serverMetadataV1beta2, (metadata) =>
  metadata.extend({
    key: z.string().max(255).describe('Metadata key.'),
    value: z.string().max(255).describe('Metadata value.'),
  }),
);

// ---------------------------------------------------------------- status

/** The Cluster API v1beta1 condition, with severity and without observedGeneration. */
export const condition = z
  .object({
    type: z.string().min(1).max(256).describe('Type of the condition, in CamelCase, optionally prefixed by a DNS domain and a slash.'),
    status: z.string().describe('Status of the condition: True, False or Unknown.'),
    severity: z.string().max(32).optional().describe('How serious a False condition is (Error, Warning or Info); set only when status is False.'),
    lastTransitionTime: conditionV1beta2.shape.lastTransitionTime,
    reason: z.string().min(1).max(256).optional().describe('Why the condition last changed, in CamelCase.'),
    message: z.string().min(1).max(10240).optional().describe('Details of the last change for humans.'),
  })
  .describe('An observation of one aspect of the object state.');

/** The terminal-failure fields v1beta1 still carries; conditions replace them in v1beta2. */
export function failureFields(kind: string) {
  return {
    failureReason: z
      .string()
      .optional()
      .describe(`Short machine-readable cause of a terminal failure of the ${kind}, one that needs a human to fix. Deprecated: read the conditions.`),
    failureMessage: z
      .string()
      .optional()
      .describe(`Readable account of a terminal failure of the ${kind}, one that needs a human to fix. Deprecated: read the conditions.`),
  };
}

export const resourceStatuses = resourceStatusesOf(v1beta1, resolvedPortSpec);

export const failureDomains = z
  .record(
    z.string(),
    variant(failureDomainV1beta2, (domain) => domain.omit({ name: true })),
  )
  .describe('Nova availability zones usable by machines, by name.');

/** v1beta1 kinds show the deprecated status.ready right after the cluster; their other columns are v1beta2's. */
export function withReadyColumn(columns: PrinterColumn[], description: string): PrinterColumn[] {
  const [cluster, ...rest] = columns;
  return [cluster, { name: 'Ready', type: 'string', jsonPath: '.status.ready', description }, ...rest];
}

// ---------------------------------------------------------------- cluster networking

const securityGroupRules = (nodes: string) => mapListOf(securityGroupRuleSpecOf(v1beta1), 'name').optional().describe(`Extra rules for ${nodes}.`);

/**
 * v1beta1 lists allowAllInClusterTraffic as required (its default fills it
 * in before validation) and names the rules for all nodes differently.
 */
export const managedSecurityGroups = variant(managedSecurityGroupsV1beta2, () =>
  z.object({
    allowAllInClusterTraffic: z.boolean().meta({ default: false }).describe('Allows all traffic, in and out, between the nodes of the cluster.'),
    allNodesSecurityGroupRules: securityGroupRules('control plane and worker nodes alike'),
    controlPlaneNodesSecurityGroupRules: securityGroupRules('control plane nodes'),
    workerNodesSecurityGroupRules: securityGroupRules('worker nodes'),
  }),
);

export const subnetSpec = subnetSpecOf(v1beta1);

export const externalRouterIPParam = externalRouterIPParamOf(subnetParam);

/** v1beta1 lists enabled as required; its default fills it in before validation. */
export const apiServerLoadBalancer = apiServerLoadBalancerV1beta2
  .extend({
    enabled: z.boolean().meta({ default: true }).describe('Whether the load balancer is created. To go without one, omit apiServerLoadBalancer instead.'),
    additionalPorts: setOf(z.int()).optional().describe('TCP ports the load balancer listens on besides the API server port.'),
    subnets: atomicListOf(subnetParam).optional().describe('Subnets of the VIP, in the network above. Only the first is used.'),
    monitor: apiServerLoadBalancerMonitorOf(v1beta1).optional(),
  })
  .describe('The Octavia load balancer in front of the API servers. None when omitted.');
