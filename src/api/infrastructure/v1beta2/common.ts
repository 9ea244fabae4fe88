/**
 * Schemas shared by the v1beta2 CAPO kinds (and by the v1alpha1 kinds, whose
 * Go types embed the v1beta2 ones): resource references and filters, ports,
 * volumes, identity, conditions and the status types that report resolved
 * OpenStack resources.
 *
 * Each export describes one node of the CRDs exactly, list semantics
 * included; a list's x-kubernetes-list-type belongs to the field holding it,
 * so item schemas are exported apart from the lists that use them.
 */
import { z } from 'zod';

// ---------------------------------------------------------------- building blocks

export const setOf = <T extends z.ZodType>(item: T) => z.array(item).meta({ 'x-kubernetes-list-type': 'set' });

export const atomicListOf = <T extends z.ZodType>(item: T) => z.array(item).meta({ 'x-kubernetes-list-type': 'atomic' });

export const mapListOf = <T extends z.ZodType>(item: T, ...keys: string[]) =>
  z.array(item).meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys });

/** How a node builder makes a list: setOf, atomicListOf, or a plain z.array where a version declares no list type. */
export type ListOf = <T extends z.ZodType>(item: T) => z.ZodArray<T>;

/** A Param names one OpenStack resource through exactly one of its fields: an ID or a query. */
const exactlyOneField = { minProperties: 1, maxProperties: 1 };

/** An empty filter would match everything, which is never what the user meant. */
const nonEmpty = { minProperties: 1 };

/**
 * A Go int32 with bounds of its own. Explicit bounds replace zod's int32
 * range, from which the structural schema infers `format: int32`, so the
 * format is declared (structural.ts does not publish it yet).
 */
export function boundedInt32(minimum: number, maximum?: number) {
  const atLeast = z.int().min(minimum);
  return (maximum === undefined ? atLeast : atLeast.max(maximum)).meta({ format: 'int32' });
}

/**
 * What the node builders below take from a version. v1beta1 spells many
 * nodes as v1beta2 does but for these: v1beta2 requires some strings to be
 * non-empty, declares int32 where v1beta1 has plain integers, and gives lists
 * a type where v1beta1 leaves it out. Builders destructure what they use, so
 * inside them setOf and atomicListOf are the version's.
 */
export interface Spelling {
  /** A string the field requires, which v1beta2 also requires to be non-empty. */
  requiredString: () => z.ZodString;
  int: () => z.ZodNumberFormat;
  boundedInt: (minimum: number, maximum?: number) => z.ZodNumberFormat;
  /** For the fields v1beta2 declares as sets. */
  setOf: ListOf;
  /** For the fields v1beta2 declares as atomic lists. */
  atomicListOf: ListOf;
}

export const v1beta2Spelling: Spelling = {
  requiredString: () => z.string().min(1),
  int: () => z.int32(),
  boundedInt: boundedInt32,
  setOf,
  atomicListOf,
};

/**
 * Another version's variant of a v1beta2 node: `derive` changes a field or
 * two (extend, omit), and the variant keeps the node's description and meta,
 * which zod's extend and omit start without.
 */
export function variant<S extends z.ZodType, T extends z.ZodType>(node: S, derive: (node: S) => T): T {
  return derive(node).meta({ ...z.globalRegistry.get(node) });
}

/** OpenStack IDs are UUIDs; `guid` accepts any version, as kube's `uuid` format does. */
const uuid = () => z.guid();

/**
 * A CEL rule of the CRD. `holds` is its TypeScript port; rules on transitions
 * (those reading `oldSelf`) have none, since one object cannot show a
 * transition: update-time admission enforces them.
 */
export interface CelRule<T> {
  rule: string;
  message: string;
  holds?: (self: T) => boolean;
}

/**
 * Publishes the rules on the node (x-kubernetes-validations) and enforces the
 * ported ones, failing with the rule's message at the node, as kube does.
 */
export function withRules<S extends z.ZodObject>(schema: S, rules: CelRule<z.output<S>>[]): S {
  let checked = schema;
  for (const { message, holds } of rules) if (holds) checked = checked.refine(holds, { message });
  return checked.meta({ 'x-kubernetes-validations': rules.map(({ rule, message }) => ({ rule, message })) });
}

// ---------------------------------------------------------------- Neutron queries

export const neutronTag = z
  .string()
  .min(1)
  .regex(/^[^,]+$/)
  .describe('A Neutron tag. Neutron joins tags with commas in queries, so a tag cannot be empty or contain one.');

/** The tag clauses every Neutron filter shares. */
function tagClauses(resources: string) {
  return {
    tags: setOf(neutronTag).optional().describe(`Only ${resources} carrying all of these tags match.`),
    tagsAny: setOf(neutronTag).optional().describe(`Only ${resources} carrying at least one of these tags match.`),
    notTags: setOf(neutronTag).optional().describe(`Leaves out ${resources} carrying all of these tags.`),
    notTagsAny: setOf(neutronTag).optional().describe(`Leaves out ${resources} carrying any of these tags.`),
  };
}

/** The clauses of a Neutron filter: name, description, project and tags. */
function neutronClauses(resources: string) {
  return {
    name: z.string().optional().describe(`Only ${resources} with this name match.`),
    description: z.string().optional().describe(`Only ${resources} with this description match.`),
    projectID: z.string().optional().describe(`Only ${resources} owned by this project match.`),
    ...tagClauses(resources),
  };
}

/** A query for Neutron resources by the clauses they all share. */
function neutronFilter(resource: string) {
  return z
    .object(neutronClauses(`${resource}s`))
    .meta(nonEmpty)
    .describe(`A query for Neutron ${resource}s; every clause given must hold.`);
}

/**
 * A Param for a Neutron resource: by UUID, or by a query that must match
 * exactly one. Subnets have a query of their own and say more of their UUID.
 */
function neutronParam<F extends z.ZodType = ReturnType<typeof neutronFilter>>(
  resource: string,
  filter: F = neutronFilter(resource) as unknown as F,
  idDescription = `UUID of the ${resource}. Excludes filter.`,
) {
  return z
    .object({
      id: uuid().optional().describe(idDescription),
      filter: filter.optional().describe(`A query that must match exactly one ${resource}. Excludes id.`),
    })
    .meta(exactlyOneField)
    .describe(`A Neutron ${resource}, by UUID or by query.`);
}

export const networkParam = neutronParam('network');

/** v1beta1 types ipVersion as a plain int; the rest of the subnet query is shared. */
export function subnetParamOf({ int }: Spelling) {
  const subnetFilter = z
    .object({
      ...neutronClauses('subnets'),
      ipVersion: int().optional().describe('Only subnets of this IP version (4 or 6) match.'),
      gatewayIP: z.string().optional().describe('Only subnets with this gateway address match.'),
      cidr: z.string().optional().describe('Only subnets with this CIDR match.'),
      ipv6AddressMode: z.string().optional().describe('Only subnets with this IPv6 address mode match.'),
      ipv6RAMode: z.string().optional().describe('Only subnets with this IPv6 router advertisement mode match.'),
    })
    .meta(nonEmpty)
    .describe('A query for Neutron subnets; every clause given must hold, and exactly one subnet must match.');
  return neutronParam('subnet', subnetFilter, 'UUID of the subnet, used as given. Excludes filter.');
}

export const subnetParam = subnetParamOf(v1beta2Spelling);

export const routerParam = neutronParam('router');

export const securityGroupParam = neutronParam('security group');

// ---------------------------------------------------------------- Nova and Glance references

export const imageFilter = z
  .object({
    name: z.string().optional().describe('Name of the image. Together with tags it must select exactly one image.'),
    tags: setOf(z.string()).optional().describe('Tags the image carries, all of them. Together with name it must select exactly one image.'),
  })
  .meta(nonEmpty)
  .describe('A Glance query that must match exactly one image.');

export const resourceReference = z
  .object({ name: z.string().min(1).describe('Name of the referenced object.') })
  .describe('A reference to an object in the same namespace.');

export const imageParam = z
  .object({
    id: uuid().optional().describe('UUID of the Glance image, used without a lookup.'),
    filter: imageFilter.optional().describe('A query for the image.'),
    imageRef: resourceReference.optional().describe('An ORC Image object in the same namespace; the server waits until the image is available.'),
  })
  .meta(exactlyOneField)
  .describe('The image to boot, given by exactly one of id, filter or imageRef.');

export const flavorParam = z
  .object({
    id: z.string().optional().describe('ID of the Nova flavor, used without a lookup.'),
    filter: z
      .object({ name: z.string().optional().describe('Name of the flavor.') })
      .meta(nonEmpty)
      .optional()
      .describe('A query for the flavor.'),
  })
  .meta(exactlyOneField)
  .describe('The Nova flavor, by ID or by name.');

/**
 * v1beta2 machines name the flavor with flavorParam; v1beta1 machines and
 * v1alpha1 servers still take a name, an ID or both, under this rule.
 */
export const flavorOrFlavorID: CelRule<{ flavor?: string; flavorID?: string }> = {
  rule: '(has(self.flavor) || has(self.flavorID))',
  message: 'at least one of flavor or flavorID must be set',
  holds: (self) => self.flavor !== undefined || self.flavorID !== undefined,
};

export const serverGroupParam = z
  .object({
    id: uuid().optional().describe('UUID of the server group.'),
    filter: z
      .object({ name: z.string().optional().describe('Name of the server group.') })
      .meta(nonEmpty)
      .optional()
      .describe('A query for the server group.'),
  })
  .meta(exactlyOneField)
  .describe('A Nova server group, by UUID or by name.');

export const typedLocalObjectReference = z
  .object({
    apiGroup: z.string().optional().describe('API group of the referenced object; empty for the core group.'),
    kind: z.string().describe('Kind of the referenced object.'),
    name: z.string().describe('Name of the referenced object.'),
  })
  .meta({ 'x-kubernetes-map-type': 'atomic' })
  .describe('A typed reference to an object in the same namespace.');

// ---------------------------------------------------------------- credentials

export const identityReference = withRules(
  z.object({
    type: z
      .enum(['Secret', 'ClusterIdentity'])
      .default('Secret')
      .describe('What name refers to: a Secret in this namespace, or a cluster-scoped OpenStackClusterIdentity.'),
    name: z
      .string()
      .min(1)
      .describe(
        'Name of the Secret, or of the OpenStackClusterIdentity. The Secret holds a clouds.yaml under the key ' +
          '`clouds.yaml`, and optionally a PEM CA bundle under `cacert`.',
      ),
    cloudName: z.string().min(1).describe('The entry of clouds.yaml to use.'),
    region: z.string().optional().describe('OpenStack region, overriding clouds.yaml. For machines it becomes part of the providerID. Cannot change once set.'),
  }),
  [{ rule: '(!has(self.region) && !has(oldSelf.region)) || self.region == oldSelf.region', message: 'region is immutable' }],
).describe('The OpenStack credentials to act with.');

// ---------------------------------------------------------------- volumes

export const volumeAvailabilityZone = withRules(
  z.object({
    from: z
      .enum(['Name', 'Machine'])
      .default('Name')
      .describe("Where the zone comes from: 'Name' uses name; 'Machine' uses the failure domain of the Machine, if any."),
    name: z
      .string()
      .min(1)
      .regex(/^[^ ]+$/)
      .optional()
      .describe("Name of the Cinder availability zone (no spaces). Required when from is 'Name', forbidden otherwise."),
  }),
  [
    {
      rule: "!has(self.from) || self.from == 'Name' ? has(self.name) : !has(self.name)",
      message: "name is required when from is 'Name' or default",
      holds: (zone) => (zone.from === 'Name') === (zone.name !== undefined),
    },
  ],
).describe('The Cinder availability zone of a volume.');

const volumeOptions = {
  type: z.string().optional().describe('Cinder volume type. The cloud default when omitted.'),
  availabilityZone: volumeAvailabilityZone.optional().describe('Availability zone to create the volume in. Cinder picks one when omitted.'),
};

const sizeGiB = boundedInt32(1).describe('Size in GiB.');

export const blockDeviceVolume = z.object(volumeOptions).describe('Options of a Cinder volume.');

export const rootVolume = z.object({ sizeGiB, ...volumeOptions }).describe('A Cinder volume to boot from, created from the image.');

export const blockDeviceStorage = z
  .object({
    type: z.enum(['Local', 'Volume']).describe('Local: ephemeral disk on the hypervisor. Volume: a Cinder volume.'),
    volume: blockDeviceVolume.optional().describe('Options used when type is Volume.'),
  })
  .describe('How an additional block device is backed.');

export const additionalBlockDevice = z
  .object({
    name: z
      .string()
      .min(1)
      .describe(
        'Name of the device, unique in the machine. It names the Cinder volume (after the machine name) and tags ' +
          'the device, so the guest can find it in the metadata service.',
      ),
    sizeGiB,
    storage: blockDeviceStorage.describe('Backing of the device.'),
  })
  .describe('A block device attached to the server in addition to the root disk.');

// ---------------------------------------------------------------- ports

export const valueSpec = z
  .object({
    name: z.string().min(1).describe('Identifies the pair in the list; not sent to OpenStack.'),
    key: z.string().min(1).describe('Key sent to Neutron.'),
    value: z.string().min(1).describe('Value sent to Neutron.'),
  })
  .describe('An extra key/value sent with the Neutron port request.');

export const addressPair = z
  .object({
    ipAddress: z.string().min(1).describe('Extra IP address (or, where Neutron allows it, CIDR) the port may send from.'),
    macAddress: z.string().optional().describe('MAC address of the pair. The port MAC when omitted.'),
  })
  .describe('An address pair Neutron lets the port use besides its own addresses.');

export const bindingProfile = z
  .object({
    ovsHWOffload: z
      .boolean()
      .optional()
      .describe('Requests OVS hardware offload. Unneeded from OpenStack Yoga on, where Nova sets it when attaching the port.'),
    trustedVF: z.boolean().optional().describe('Puts the SR-IOV virtual function in trusted mode.'),
  })
  .describe('Port binding details, limited to the keys known to work with Neutron.');

/** Port settings that need no lookup, shared by requested and resolved ports. */
const portSettings = {
  adminStateUp: z.boolean().optional().describe('Whether the port starts administratively up. Up when omitted.'),
  macAddress: z.string().optional().describe('MAC address of the port. Neutron generates one when omitted.'),
  allowedAddressPairs: atomicListOf(addressPair).optional().describe('Addresses the port may send from besides its own, e.g. a virtual IP.'),
  hostID: z.string().optional().describe('ID of the host the port is bound to.'),
  vnicType: z
    .string()
    .optional()
    .describe(
      'vNIC type, which selects the Neutron mechanism driver: normal, macvtap, direct, baremetal, direct-physical, ' +
        'virtio-forwarder, smart-nic or remote-managed, as the cloud supports.',
    ),
  profile: bindingProfile.optional().describe('Binding profile of the port.'),
  enablePortSecurity: z.boolean().optional().describe('Turns port security on or off. The network setting applies when omitted.'),
  propagateUplinkStatus: z.boolean().optional().describe('Propagates the uplink status to the port.'),
  valueSpecs: mapListOf(valueSpec, 'name').optional().describe('Extra parameters for the Neutron port request. What they do depends on the cloud.'),
};

/** Each version's fixed IP holds its own subnet query. */
export function fixedIPOf<S extends z.ZodType>(subnetParam: S) {
  return z
    .object({
      subnet: subnetParam.optional().describe('Subnet of the address; the query must match at most one subnet of the port network.'),
      ipAddress: z.string().optional().describe('The address to assign. It must lie in the subnet if one is given, else in a subnet of the port network.'),
    })
    .describe('A fixed IP of a port: a subnet, an address, or both.');
}

export const fixedIP = fixedIPOf(subnetParam);

export const portOpts = z
  .object({
    network: networkParam.optional().describe('Network of the port; the query must match exactly one network. The cluster network when omitted.'),
    description: z.string().optional().describe('Description of the port.'),
    nameSuffix: z.string().optional().describe('Suffix of the port name, after the machine name. The index of the port in the list when omitted.'),
    fixedIPs: atomicListOf(fixedIP).optional().describe('Fixed IPs of the port. Subnets must belong to the port network.'),
    securityGroups: atomicListOf(securityGroupParam).optional().describe('Security groups of the port.'),
    tags: setOf(z.string()).optional().describe('Tags of the port and of its trunk, if any, added to the tags of the machine.'),
    trunk: z.boolean().optional().describe('Whether the port gets a trunk. Inherited from the machine when omitted; false for a bastion.'),
    ...portSettings,
  })
  .describe('A port to create for the server, or to adopt when a port of that name exists.');

export const resolvedFixedIP = z
  .object({
    subnet: z.string().optional().describe('ID of the subnet of the address.'),
    ipAddress: z.string().optional().describe('The address to assign.'),
  })
  .describe('A fixed IP whose subnet has been resolved to an ID.');

export const resolvedPortSpec = z
  .object({
    name: z.string().min(1).describe('Name of the port.'),
    description: z.string().optional().describe('Description of the port.'),
    networkID: z.string().min(1).describe('ID of the network of the port.'),
    tags: setOf(z.string()).optional().describe('Tags of the port and of its trunk, if any.'),
    trunk: z.boolean().optional().describe('Whether the port gets a trunk.'),
    fixedIPs: atomicListOf(resolvedFixedIP).optional().describe('Fixed IPs of the port.'),
    securityGroups: atomicListOf(z.string()).optional().describe('IDs of the security groups of the port.'),
    ...portSettings,
  })
  .describe('A requested port with every reference resolved to an ID.');

// ---------------------------------------------------------------- server

/** v1beta1 types a Number hint as a plain int; the rules and the rest are shared. */
export function schedulerHintAdditionalPropertyOf({ int }: Spelling) {
  const schedulerHintValue = withRules(
    z.object({
      type: z.enum(['Bool', 'String', 'Number']).describe('Which of bool, string and number carries the value.'),
      bool: z.boolean().optional().describe("The value when type is 'Bool'; forbidden otherwise."),
      number: int().optional().describe("The value when type is 'Number'; forbidden otherwise."),
      string: z.string().min(1).max(255).optional().describe("The value when type is 'String'; forbidden otherwise."),
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
  return z
    .object({
      name: z.string().min(1).describe('Name of the hint, unique in the list.'),
      value: schedulerHintValue.describe('Value of the hint.'),
    })
    .describe('A Nova scheduler hint beyond the server group, e.g. to steer the server to a host aggregate.');
}

export const schedulerHintAdditionalProperty = schedulerHintAdditionalPropertyOf(v1beta2Spelling);

export const serverMetadata = z
  .object({
    key: z.string().min(1).max(255).describe('Metadata key.'),
    value: z.string().min(1).max(255).describe('Metadata value.'),
  })
  .describe('A Nova server metadata item.');

export const instanceState = z.string().describe('Nova state of the server, such as BUILD, ACTIVE, ERROR, SHUTOFF or DELETED.');

// ---------------------------------------------------------------- status

const CONDITION_TYPE = '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$';

/** metav1.Condition, as Cluster API v1beta2 contracts use it. */
export const condition = z
  .object({
    type: z
      .string()
      .max(316)
      .regex(new RegExp(CONDITION_TYPE))
      // RegExp#source, which zod publishes, escapes the '/'; keep the CRD's spelling.
      .meta({ pattern: CONDITION_TYPE })
      .describe('Type of the condition, in CamelCase, optionally prefixed by a DNS domain and a slash.'),
    status: z.enum(['True', 'False', 'Unknown']).describe('Status of the condition.'),
    observedGeneration: z
      .int()
      .min(0)
      .meta({ format: 'int64' })
      .optional()
      .describe('metadata.generation the condition was computed from; older than the object means stale.'),
    lastTransitionTime: z.iso.datetime({ offset: true }).describe('When the status last changed (or, failing that, when the condition was last written).'),
    reason: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
      .describe('Why the condition last changed, as a CamelCase identifier.'),
    message: z.string().max(32768).describe('Details of the last change for humans; may be empty.'),
  })
  .describe('An observation of one aspect of the object state.');

export const nodeAddress = z
  .object({
    type: z.string().describe('Kind of address: Hostname, InternalIP or ExternalIP.'),
    address: z.string().describe('The address.'),
  })
  .describe('An address of the server.');

/**
 * The status nodes that report resolved and created OpenStack resources.
 * v1beta1 and the v1alpha1 OpenStackServer spell them differently (see
 * Spelling) and resolve ports to their own resolved port spec.
 */
export function resourceStatusesOf<P extends z.ZodType>({ requiredString, setOf, atomicListOf }: Spelling, resolvedPortSpec: P) {
  const identified = (resource: string) => ({
    name: requiredString().describe(`Name of the ${resource}.`),
    id: requiredString().describe(`ID of the ${resource}.`),
  });
  const tags = (resource: string) => setOf(z.string()).optional().describe(`Tags of the ${resource}.`);

  const portStatus = z.object({ id: requiredString().describe('ID of the port.') }).describe('A port created for the server.');

  const resolvedMachineSpec = z
    .object({
      serverGroupID: z.string().optional().describe('ID of the server group to join.'),
      imageID: z.string().optional().describe('ID of the image to boot.'),
      flavorID: z.string().optional().describe('ID of the flavor.'),
      ports: atomicListOf(resolvedPortSpec).optional().describe('The ports to create, fully resolved.'),
    })
    .describe('The machine spec with references resolved to IDs.');

  const machineResources = z
    .object({ ports: atomicListOf(portStatus).optional().describe('Ports created for the server.') })
    .describe('OpenStack resources created for the server.');

  const networkStatus = z.object({ ...identified('network'), tags: tags('network') }).describe('A Neutron network in use.');

  const subnetStatus = z
    .object({ ...identified('subnet'), cidr: requiredString().describe('CIDR of the subnet.'), tags: tags('subnet') })
    .describe('A Neutron subnet in use.');

  const networkStatusWithSubnets = networkStatus
    .extend({
      subnets: atomicListOf(subnetStatus).optional().describe('Subnets of the network in use; machines on this network get an address in each.'),
    })
    .describe('A Neutron network in use, with its subnets.');

  return {
    resolvedMachineSpec,
    machineResources,
    networkStatus,
    networkStatusWithSubnets,
    routerStatus: z
      .object({
        ...identified('router'),
        tags: tags('router'),
        ips: setOf(z.string()).optional().describe('IP addresses of the router.'),
      })
      .describe('A Neutron router in use.'),
    loadBalancerStatus: z
      .object({
        ...identified('load balancer'),
        ip: requiredString().describe('Address clients reach the load balancer on: its floating IP, or its VIP without one.'),
        internalIP: requiredString().describe('VIP address of the load balancer on the cluster network.'),
        allowedCIDRs: setOf(z.string()).optional().describe('CIDRs allowed to reach the listeners.'),
        tags: tags('load balancer'),
        loadBalancerNetwork: networkStatusWithSubnets.optional().describe('Network (and subnet: only the first counts) the VIP is allocated on.'),
      })
      .describe('An Octavia load balancer in use.'),
    securityGroupStatus: z.object(identified('security group')).describe('A Neutron security group in use.'),
    bastionStatus: z
      .object({
        id: z.string().optional().describe('ID of the bastion server.'),
        name: z.string().optional().describe('Name of the bastion server.'),
        sshKeyName: z.string().optional().describe('SSH key injected into the bastion.'),
        state: instanceState.optional(),
        ip: z.string().optional().describe('Fixed IP address of the bastion.'),
        floatingIP: z.string().optional().describe('Floating IP address of the bastion.'),
        resolved: resolvedMachineSpec.optional().describe('The bastion machine spec with references resolved to IDs.'),
        resources: machineResources.optional().describe('OpenStack resources created for the bastion.'),
      })
      .describe('The bastion server as deployed.'),
  };
}

export const resourceStatuses = resourceStatusesOf(v1beta2Spelling, resolvedPortSpec);

export const failureDomain = z
  .object({
    name: z.string().min(1).max(256).describe('Name of the failure domain: a Nova availability zone.'),
    controlPlane: z.boolean().optional().describe('Whether control plane machines may be placed in it.'),
    attributes: z.record(z.string(), z.string()).optional().describe('Free-form attributes for the infrastructure provider.'),
  })
  .describe('A Cluster API failure domain, which machines can be spread across.');

// ---------------------------------------------------------------- cluster networking

/** v1beta1 lets the name be empty, has plain int ports and no list type on remoteManagedGroups. */
export function securityGroupRuleSpecOf({ requiredString, int, setOf }: Spelling) {
  return z
    .object({
      name: requiredString().describe('Identifies the rule in the list, so that patches can address it; not sent to OpenStack.'),
      description: z.string().optional().describe('Description of the rule.'),
      direction: z.enum(['ingress', 'egress']).describe('Traffic the rule applies to: ingress reaches the instance, egress leaves it.'),
      etherType: z.enum(['IPv4', 'IPv6']).optional().describe('IP version of the rule; CIDRs in it must be of that version.'),
      portRangeMin: int().optional().describe('Lowest port matched. For TCP and UDP it must not exceed portRangeMax.'),
      portRangeMax: int().optional().describe('Highest port matched.'),
      protocol: z.string().optional().describe('IP protocol matched, such as tcp, udp or icmp.'),
      remoteGroupID: z
        .string()
        .optional()
        .describe('Security group whose members the rule admits. Use one of remoteGroupID, remoteIPPrefix, remoteManagedGroups.'),
      remoteIPPrefix: z.string().optional().describe('CIDR the rule admits. Use one of remoteGroupID, remoteIPPrefix, remoteManagedGroups.'),
      remoteManagedGroups: setOf(z.enum(['bastion', 'controlplane', 'worker']))
        .optional()
        .describe('Managed security groups whose members the rule admits. Use one of remoteGroupID, remoteIPPrefix, remoteManagedGroups.'),
    })
    .describe('A rule of a managed security group.');
}

export const securityGroupRuleSpec = securityGroupRuleSpecOf(v1beta2Spelling);

export const managedSecurityGroups = z
  .object({
    allowAllInClusterTraffic: z.boolean().default(false).describe('Allows all traffic, in and out, between the nodes of the cluster.'),
    clusterNodesSecurityGroupRules: mapListOf(securityGroupRuleSpec, 'name').optional().describe('Extra rules for every node except the bastion.'),
    controlPlaneNodesSecurityGroupRules: mapListOf(securityGroupRuleSpec, 'name').optional().describe('Extra rules for control plane nodes.'),
    workerNodesSecurityGroupRules: mapListOf(securityGroupRuleSpec, 'name').optional().describe('Extra rules for worker nodes.'),
  })
  .describe(
    'Security groups CAPO creates and maintains for the control plane, the workers and the bastion. Their base ' +
      'rules allow the kubelet, etcd and the API server; the lists here add to them.',
  );

/** v1beta1 lets the addresses be empty and gives the lists no type. */
export function subnetSpecOf({ requiredString, atomicListOf }: Spelling) {
  const allocationPool = z
    .object({
      start: requiredString().describe('First address of the pool.'),
      end: requiredString().describe('Last address of the pool.'),
    })
    .describe('A range of addresses Neutron allocates from.');
  return z
    .object({
      cidr: requiredString().describe('Address range of the subnet, e.g. 10.0.0.0/24.'),
      dnsNameservers: atomicListOf(z.string()).optional().describe('DNS servers handed out on the subnet, of the same IP version as cidr.'),
      allocationPools: atomicListOf(allocationPool)
        .optional()
        .describe('Ranges machines get addresses from. Ports can still be given other addresses by hand.'),
    })
    .describe('A subnet CAPO creates.');
}

export const subnetSpec = subnetSpecOf(v1beta2Spelling);

/** Each version's router address holds its own subnet query. */
export function externalRouterIPParamOf<S extends z.ZodType>(subnetParam: S) {
  return z
    .object({
      fixedIP: z.string().optional().describe('The address in the subnet.'),
      subnet: subnetParam.describe('Subnet of the external network the address belongs to.'),
    })
    .describe('A fixed gateway address of the router on the external network.');
}

export const externalRouterIPParam = externalRouterIPParamOf(subnetParam);

/** v1beta1 bounds plain integers, v1beta2 int32s. */
export function apiServerLoadBalancerMonitorOf({ boundedInt }: Spelling) {
  return z
    .object({
      delay: boundedInt(0).optional().describe('Seconds between health probes.'),
      timeout: boundedInt(0).optional().describe('Seconds a probe waits for a connection.'),
      maxRetries: boundedInt(0, 10).optional().describe('Successful probes that bring a member ONLINE.'),
      maxRetriesDown: boundedInt(1, 10).optional().describe('Failed probes that put a member in ERROR.'),
    })
    .describe('Health monitor of the API server load balancer.');
}

export const apiServerLoadBalancer = z
  .object({
    enabled: z.boolean().default(true).describe('Whether the load balancer is created. To go without one, omit managedLoadBalancer instead.'),
    additionalPorts: setOf(z.int32()).optional().describe('TCP ports the load balancer listens on besides the API server port.'),
    allowedCIDRs: setOf(z.string()).optional().describe('Only these CIDRs may reach the listeners.'),
    provider: z.string().optional().describe('Octavia provider. The cloud default when omitted.'),
    network: networkParam.optional().describe('Network of the VIP.'),
    subnets: atomicListOf(subnetParam).optional().describe('Subnets of the VIP, in the network above. Only the first is used.'),
    availabilityZone: z.string().optional().describe('Octavia availability zone.'),
    flavor: z.string().optional().describe('Octavia flavor name.'),
    monitor: apiServerLoadBalancerMonitorOf(v1beta2Spelling).optional(),
  })
  .describe('The Octavia load balancer in front of the API servers.');

// ---------------------------------------------------------------- kinds

/** The Cluster API contract's status.initialization, the same in every version. */
export function initializationStatus(subject: 'cluster' | 'machine') {
  return z
    .object({
      provisioned: z.boolean().optional().describe(`Set once the infrastructure of the ${subject} is first provisioned; never reset afterwards.`),
    })
    .describe(`Initial provisioning of the ${subject}, as the Cluster API contract reads it.`);
}

/**
 * The spec of a template kind, around the spec of the kind it stamps out:
 * the same in both template kinds and in every version. `templateFields`
 * come before the spec, as the CRDs list them.
 */
export function templateSpecOf<S extends z.ZodType>(kind: string, spec: S, templateFields: z.ZodRawShape = {}) {
  return z
    .object({
      template: z.object({ ...templateFields, spec: spec.describe(`The spec of each ${kind} created from the template.`) }).describe(`The ${kind} to create.`),
    })
    .describe('The template.');
}
