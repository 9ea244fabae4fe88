/**
 * The v1beta1 shapes of the CAPO types, where they differ from v1beta2: older
 * names (flavorID, disablePortSecurity, apiServerLoadBalancer, ...), plain
 * integers where v1beta2 declares int32, no minLength on names, fewer list
 * types, and the Cluster API v1beta1 condition. Everything identical on the
 * wire is imported from v1beta2, so both versions share one definition.
 */
import { z } from 'zod';
import {
  addressPair as addressPairV1beta2,
  additionalBlockDevice as additionalBlockDeviceV1beta2,
  apiServerLoadBalancer as apiServerLoadBalancerV1beta2,
  atomicListOf,
  bastionStatus as bastionStatusV1beta2,
  blockDeviceStorage as blockDeviceStorageV1beta2,
  blockDeviceVolume,
  condition as conditionV1beta2,
  failureDomain as failureDomainV1beta2,
  identityReference as identityReferenceV1beta2,
  imageParam as imageParamV1beta2,
  mapListOf,
  portOpts as portOptsV1beta2,
  resolvedMachineSpec as resolvedMachineSpecV1beta2,
  resolvedPortSpec as resolvedPortSpecV1beta2,
  schedulerHintValue as schedulerHintValueV1beta2,
  securityGroupRuleSpec as securityGroupRuleSpecV1beta2,
  serverMetadata as serverMetadataV1beta2,
  setOf,
  subnetFilter as subnetFilterV1beta2,
  subnetParam as subnetParamV1beta2,
  valueSpec as valueSpecV1beta2,
  withRules,
} from '../v1beta2/common.js';

/** The Params select one OpenStack resource either by ID or by a query, never both. */
const exactlyOneField = { minProperties: 1, maxProperties: 1 };

// ---------------------------------------------------------------- references

const subnetFilter = subnetFilterV1beta2
  .extend({ ipVersion: z.int().optional().describe('Only subnets of this IP version (4 or 6) match.') })
  .meta({ minProperties: 1 })
  .describe('A query for Neutron subnets; every clause given must hold, and exactly one subnet must match.');

export const subnetParam = subnetParamV1beta2
  .extend({ filter: subnetFilter.optional().describe('A query that must match exactly one subnet. Excludes id.') })
  .meta(exactlyOneField)
  .describe('A Neutron subnet, by UUID or by query.');

export const imageParam = imageParamV1beta2
  .extend({
    imageRef: z
      .object({ name: z.string().describe('Name of the ORC Image.') })
      .optional()
      .describe('An ORC Image object in the same namespace; the server waits until the image is available.'),
  })
  .meta(exactlyOneField)
  .describe('The image to boot, given by exactly one of id, filter or imageRef.');

/** v1beta1 lists `type` as required; its default fills it in before validation. */
export const identityReference = withRules(
  z.object({
    ...identityReferenceV1beta2.shape,
    type: identityReferenceV1beta2.shape.type
      .unwrap()
      .meta({ default: 'Secret' })
      .describe('What name refers to: a Secret in this namespace, or a cluster-scoped OpenStackClusterIdentity.'),
  }),
  [{ rule: '(!has(self.region) && !has(oldSelf.region)) || self.region == oldSelf.region', message: 'region is immutable' }],
).describe('The OpenStack credentials to act with.');

// ---------------------------------------------------------------- volumes

const sizeGiB = z.int().min(1).describe('Size in GiB.');

export const rootVolume = z
  .object({ sizeGiB, ...blockDeviceVolume.shape })
  .describe('A Cinder volume to boot from, created from the image.');

export const additionalBlockDevice = additionalBlockDeviceV1beta2
  .extend({
    name: z
      .string()
      .describe(
        "Name of the device, unique in the machine and not 'root'. It names the Cinder volume (after the machine " +
          'name) and tags the device, so the guest can find it in the metadata service.',
      ),
    sizeGiB,
    storage: blockDeviceStorageV1beta2
      .extend({ type: z.string().describe('Local: ephemeral disk on the hypervisor. Volume: a Cinder volume.') })
      .describe('Backing of the device.'),
  })
  .describe('A block device attached to the server in addition to the root disk.');

// ---------------------------------------------------------------- ports

const addressPair = addressPairV1beta2
  .extend({ ipAddress: z.string().describe('Extra IP address (or, where Neutron allows it, CIDR) the port may send from.') })
  .describe('An address pair Neutron lets the port use besides its own addresses.');

const valueSpec = valueSpecV1beta2
  .extend({
    name: z.string().describe('Identifies the pair in the list; not sent to OpenStack.'),
    key: z.string().describe('Key sent to Neutron.'),
    value: z.string().describe('Value sent to Neutron.'),
  })
  .describe('An extra key/value sent with the Neutron port request.');

/** The port settings whose v1beta1 shape differs, for requested and resolved ports alike. */
const portSettings = {
  allowedAddressPairs: z
    .array(addressPair)
    .optional()
    .describe('Addresses the port may send from besides its own, e.g. a virtual IP.'),
  disablePortSecurity: z
    .boolean()
    .optional()
    .describe('Turns port security off (true) or on (false). The network setting applies when omitted.'),
  valueSpecs: mapListOf(valueSpec, 'name')
    .optional()
    .describe('Extra parameters for the Neutron port request. What they do depends on the cloud.'),
};

const fixedIP = z
  .object({
    subnet: subnetParam.optional().describe('Subnet of the address; the query must match at most one subnet of the port network.'),
    ipAddress: z
      .string()
      .optional()
      .describe('The address to assign. It must lie in the subnet if one is given, else in a subnet of the port network.'),
  })
  .describe('A fixed IP of a port: a subnet, an address, or both.');

export const portOpts = portOptsV1beta2
  .omit({ enablePortSecurity: true })
  .extend({
    fixedIPs: atomicListOf(fixedIP).optional().describe('Fixed IPs of the port. Subnets must belong to the port network.'),
    ...portSettings,
  })
  .describe('A port to create for the server, or to adopt when a port of that name exists.');

const resolvedPortSpec = resolvedPortSpecV1beta2
  .omit({ enablePortSecurity: true })
  .extend({
    name: z.string().describe('Name of the port.'),
    description: z.string().describe('Description of the port.'),
    networkID: z.string().describe('ID of the network of the port.'),
    ...portSettings,
  })
  .describe('A requested port with every reference resolved to an ID.');

// ---------------------------------------------------------------- server

const schedulerHintValue = withRules(
  z.object({
    ...schedulerHintValueV1beta2.shape,
    number: z.int().optional().describe("The value when type is 'Number'; forbidden otherwise."),
  }),
  [
    {
      rule: "has(self.type) && self.type == 'Bool' ? has(self.bool) : !has(self.bool)",
      message: 'bool is required when type is Bool, and forbidden otherwise',
      holds: (value) => (value.type === 'Bool') === (value.bool !== undefined),
    },
    {
      rule: "has(self.type) && self.type == 'Number' ? has(self.number) : !has(self.number)",
      message: 'number is required when type is Number, and forbidden otherwise',
      holds: (value) => (value.type === 'Number') === (value.number !== undefined),
    },
    {
      rule: "has(self.type) && self.type == 'String' ? has(self.string) : !has(self.string)",
      message: 'string is required when type is String, and forbidden otherwise',
      holds: (value) => (value.type === 'String') === (value.string !== undefined),
    },
  ],
).describe('A typed scheduler hint value: exactly the field named by type is set.');

export const schedulerHintAdditionalProperty = z
  .object({
    name: z.string().min(1).describe('Name of the hint, unique in the list.'),
    value: schedulerHintValue.describe('Value of the hint.'),
  })
  .describe('A Nova scheduler hint beyond the server group, e.g. to steer the server to a host aggregate.');

export const serverMetadata = serverMetadataV1beta2
  .extend({
    key: z.string().max(255).describe('Metadata key.'),
    value: z.string().max(255).describe('Metadata value.'),
  })
  .describe('A Nova server metadata item.');

// ---------------------------------------------------------------- status

/** The Cluster API v1beta1 condition, with severity and without observedGeneration. */
export const condition = z
  .object({
    type: z.string().min(1).max(256).describe('Type of the condition, in CamelCase, optionally prefixed by a DNS domain and a slash.'),
    status: z.string().describe('Status of the condition: True, False or Unknown.'),
    severity: z
      .string()
      .max(32)
      .optional()
      .describe('How serious a False condition is (Error, Warning or Info); set only when status is False.'),
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

const portStatus = z.object({ id: z.string().describe('ID of the port.') }).describe('A port created for the server.');

export const resolvedMachineSpec = resolvedMachineSpecV1beta2
  .extend({ ports: z.array(resolvedPortSpec).optional().describe('The ports to create, fully resolved.') })
  .describe('The machine spec with references resolved to IDs.');

export const machineResources = z
  .object({ ports: z.array(portStatus).optional().describe('Ports created for the server.') })
  .describe('OpenStack resources created for the server.');

const namedResource = (resource: string) => ({
  name: z.string().describe(`Name of the ${resource}.`),
  id: z.string().describe(`ID of the ${resource}.`),
});

const tags = (resource: string) => z.array(z.string()).optional().describe(`Tags of the ${resource}.`);

export const networkStatus = z
  .object({ ...namedResource('network'), tags: tags('network') })
  .describe('A Neutron network in use.');

const subnetStatus = z
  .object({ ...namedResource('subnet'), cidr: z.string().describe('CIDR of the subnet.'), tags: tags('subnet') })
  .describe('A Neutron subnet in use.');

export const networkStatusWithSubnets = networkStatus
  .extend({
    subnets: z
      .array(subnetStatus)
      .optional()
      .describe('Subnets of the network in use; machines on this network get an address in each.'),
  })
  .describe('A Neutron network in use, with its subnets.');

export const routerStatus = z
  .object({
    ...namedResource('router'),
    tags: tags('router'),
    ips: z.array(z.string()).optional().describe('IP addresses of the router.'),
  })
  .describe('A Neutron router in use.');

export const loadBalancerStatus = z
  .object({
    ...namedResource('load balancer'),
    ip: z.string().describe('Address clients reach the load balancer on: its floating IP, or its VIP without one.'),
    internalIP: z.string().describe('VIP address of the load balancer on the cluster network.'),
    allowedCIDRs: z.array(z.string()).optional().describe('CIDRs allowed to reach the listeners.'),
    tags: tags('load balancer'),
    loadBalancerNetwork: networkStatusWithSubnets
      .optional()
      .describe('Network (and subnet: only the first counts) the VIP is allocated on.'),
  })
  .describe('An Octavia load balancer in use.');

export const securityGroupStatus = z.object(namedResource('security group')).describe('A Neutron security group in use.');

export const bastionStatus = bastionStatusV1beta2
  .extend({
    resolved: resolvedMachineSpec.optional().describe('The bastion machine spec with references resolved to IDs.'),
    resources: machineResources.optional().describe('OpenStack resources created for the bastion.'),
  })
  .describe('The bastion server as deployed.');

export const failureDomains = z
  .record(
    z.string(),
    failureDomainV1beta2
      .omit({ name: true })
      .describe('A Cluster API failure domain, which machines can be spread across.'),
  )
  .describe('Nova availability zones usable by machines, by name.');

// ---------------------------------------------------------------- cluster networking

const securityGroupRuleSpec = securityGroupRuleSpecV1beta2
  .extend({
    name: z.string().describe('Identifies the rule in the list, so that patches can address it; not sent to OpenStack.'),
    portRangeMin: z.int().optional().describe('Lowest port matched. For TCP and UDP it must not exceed portRangeMax.'),
    portRangeMax: z.int().optional().describe('Highest port matched.'),
    remoteManagedGroups: z
      .array(securityGroupRuleSpecV1beta2.shape.remoteManagedGroups.unwrap().element)
      .optional()
      .describe(
        'Managed security groups whose members the rule admits. Use one of remoteGroupID, remoteIPPrefix, remoteManagedGroups.',
      ),
  })
  .describe('A rule of a managed security group.');

const securityGroupRules = (nodes: string) =>
  mapListOf(securityGroupRuleSpec, 'name').optional().describe(`Extra rules for ${nodes}.`);

/** v1beta1 lists allowAllInClusterTraffic as required; its default fills it in before validation. */
export const managedSecurityGroups = z
  .object({
    allowAllInClusterTraffic: z
      .boolean()
      .meta({ default: false })
      .describe('Allows all traffic, in and out, between the nodes of the cluster.'),
    allNodesSecurityGroupRules: securityGroupRules('control plane and worker nodes alike'),
    controlPlaneNodesSecurityGroupRules: securityGroupRules('control plane nodes'),
    workerNodesSecurityGroupRules: securityGroupRules('worker nodes'),
  })
  .describe(
    'Security groups CAPO creates and maintains for the control plane, the workers and the bastion. Their base ' +
      'rules allow the kubelet, etcd and the API server; the lists here add to them.',
  );

const allocationPool = z
  .object({
    start: z.string().describe('First address of the pool.'),
    end: z.string().describe('Last address of the pool.'),
  })
  .describe('A range of addresses Neutron allocates from.');

export const subnetSpec = z
  .object({
    cidr: z.string().describe('Address range of the subnet, e.g. 10.0.0.0/24.'),
    dnsNameservers: z
      .array(z.string())
      .optional()
      .describe('DNS servers handed out on the subnet, of the same IP version as cidr.'),
    allocationPools: z
      .array(allocationPool)
      .optional()
      .describe('Ranges machines get addresses from. Ports can still be given other addresses by hand.'),
  })
  .describe('A subnet CAPO creates.');

export const externalRouterIPParam = z
  .object({
    fixedIP: z.string().optional().describe('The address in the subnet.'),
    subnet: subnetParam.describe('Subnet of the external network the address belongs to.'),
  })
  .describe('A fixed gateway address of the router on the external network.');

const apiServerLoadBalancerMonitor = z
  .object({
    delay: z.int().min(0).optional().describe('Seconds between health probes.'),
    timeout: z.int().min(0).optional().describe('Seconds a probe waits for a connection.'),
    maxRetries: z.int().min(0).max(10).optional().describe('Successful probes that bring a member ONLINE.'),
    maxRetriesDown: z.int().min(1).max(10).optional().describe('Failed probes that put a member in ERROR.'),
  })
  .describe('Health monitor of the API server load balancer.');

/** v1beta1 lists enabled as required; its default fills it in before validation. */
export const apiServerLoadBalancer = apiServerLoadBalancerV1beta2
  .extend({
    enabled: z
      .boolean()
      .meta({ default: true })
      .describe('Whether the load balancer is created. To go without one, omit apiServerLoadBalancer instead.'),
    additionalPorts: setOf(z.int()).optional().describe('TCP ports the load balancer listens on besides the API server port.'),
    subnets: atomicListOf(subnetParam)
      .optional()
      .describe('Subnets of the VIP, in the network above. Only the first is used.'),
    monitor: apiServerLoadBalancerMonitor.optional(),
  })
  .describe('The Octavia load balancer in front of the API servers. None when omitted.');
