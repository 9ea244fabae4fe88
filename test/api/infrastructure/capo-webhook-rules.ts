/**
 * Every rule CAPO v0.14.2's validating webhooks enforce (pkg/webhooks/*_webhook.go), as facts,
 * each with the request that shows it, per served version: v1beta1 objects as v0.14 clients
 * write them, v1beta2 objects as v0.15's. capo-contract.test.ts sends each one to the server.
 *
 * A case creates `object`; with `update`, it then replaces the created object with that change
 * (PUT, with the resourceVersion the create returned). `refused` is what kube renders for the
 * rule: the cause's field and message; undefined where the rule lets the request through.
 * Deletes: no webhook of v0.14.2 validates one (every ValidateDelete returns nil), so none here.
 * Where v0.15 differs, the rule says so and what we do.
 */
import { expect } from 'vitest';
import type { JsonObject } from '../../../src/storage/interface.js';

export type ServedVersion = 'v1alpha1' | 'v1beta1' | 'v1beta2';

export interface RuleCase {
  /** The rule, in the words of CAPO's webhook. */
  rule: string;
  version: ServedVersion;
  plural: string;
  object: JsonObject;
  update?: (object: Record<string, any>) => void;
  /** Sent as a server-side dry run (`?dryRun=All`). */
  dryRun?: boolean;
  /** The causes of the 422, in order; a message may be a matcher where it quotes the object. */
  refused?: { field: string; message: unknown }[];
}

const group = 'infrastructure.cluster.x-k8s.io';
const networkID = '3d5d6b5e-4a46-4d7b-9c2c-1f1b0d6c9a31';
const providerID = 'openstack:///5f3c1a0e-8c1d-4a7b-9e2f-0d6b4c3a2e10';

const kinds: Record<string, string> = {
  openstackclusters: 'OpenStackCluster',
  openstackclustertemplates: 'OpenStackClusterTemplate',
  openstackmachines: 'OpenStackMachine',
  openstackmachinetemplates: 'OpenStackMachineTemplate',
  openstackservers: 'OpenStackServer',
};

function object(plural: string, version: ServedVersion, spec: JsonObject, metadata: JsonObject = {}): JsonObject {
  return { apiVersion: `${group}/${version}`, kind: kinds[plural], metadata, spec };
}

const identityRef = (): JsonObject => ({ type: 'Secret', name: 'cloud-config', cloudName: 'openstack' });

/** A rule of the security groups CAPO manages: `remote` is its remote part. */
const rule = (remote: JsonObject): JsonObject => ({
  name: 'bgp',
  direction: 'ingress',
  etherType: 'IPv4',
  protocol: 'tcp',
  portRangeMin: 179,
  portRangeMax: 179,
  ...remote,
});

function clusterSpec(version: 'v1beta1' | 'v1beta2', extra: JsonObject = {}): JsonObject {
  const common = { identityRef: identityRef(), externalNetwork: { id: networkID }, managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['8.8.8.8'] }] };
  return version === 'v1beta1'
    ? {
        ...common,
        apiServerLoadBalancer: { enabled: true },
        managedSecurityGroups: { allowAllInClusterTraffic: false, allNodesSecurityGroupRules: [rule({ remoteManagedGroups: ['controlplane', 'worker'] })] },
        ...extra,
      }
    : {
        ...common,
        apiServer: { managedLoadBalancer: { enabled: true } },
        managedSecurityGroups: { allowAllInClusterTraffic: false, clusterNodesSecurityGroupRules: [rule({ remoteManagedGroups: ['controlplane', 'worker'] })] },
        ...extra,
      };
}

/** The list of rules for every node, by its name in the version. */
const nodeRules = (version: 'v1beta1' | 'v1beta2') => (version === 'v1beta1' ? 'allNodesSecurityGroupRules' : 'clusterNodesSecurityGroupRules');

function machineSpec(version: 'v1beta1' | 'v1beta2', extra: JsonObject = {}): JsonObject {
  const flavor = version === 'v1beta1' ? 'm1.medium' : { filter: { name: 'm1.medium' } };
  return { flavor, image: { filter: { name: 'ubuntu-2204-kube-v1.33.1' } }, sshKeyName: 'capi-key', ...extra };
}

/** A port without port security, in the version's spelling. */
const insecurePort = (version: ServedVersion): JsonObject =>
  version === 'v1beta2' ? { network: { id: networkID }, enablePortSecurity: false } : { network: { id: networkID }, disablePortSecurity: true };

const serverSpec = (extra: JsonObject = {}): JsonObject => ({
  flavor: 'm1.small',
  identityRef: identityRef(),
  image: { filter: { name: 'ubuntu-2204-kube-v1.33.1' } },
  ports: [{ network: { id: networkID } }],
  sshKeyName: 'capi-key',
  ...extra,
});

/** An Invalid cause whose value is an object (rendered as JSON) and whose detail is `detail`. */
const quoting = (detail: string) => expect.stringMatching(new RegExp(`^Invalid value: \\{.*: ${detail.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));

const rootDevice = { field: 'spec.additionalBlockDevices', message: 'Forbidden: cannot contain a device named "root" when rootVolume is set' };
const cannotBeModified = { field: 'spec', message: 'Forbidden: cannot be modified' };

function clusterRules(version: 'v1beta1' | 'v1beta2'): RuleCase[] {
  const plural = 'openstackclusters';
  const cluster = (extra: JsonObject = {}) => object(plural, version, clusterSpec(version, extra));
  return [
    {
      // v0.14 checks allNodesSecurityGroupRules on create with this message; v0.15 checks all three lists on create and
      // update, naming the rule. We enforce v0.15's, which refuses what v0.14 refuses and more.
      rule: 'a managed security group rule has only one of remoteManagedGroups, remoteGroupID, remoteIPPrefix',
      version,
      plural,
      object: object(plural, version, {
        ...clusterSpec(version),
        managedSecurityGroups: { [nodeRules(version)]: [rule({ remoteManagedGroups: ['worker'], remoteIPPrefix: '10.0.0.0/8' })] },
      }),
      refused: [
        {
          field: 'spec.managedSecurityGroups.clusterNodesSecurityGroupRules[0]',
          message: 'Forbidden: only one of remoteManagedGroups, remoteGroupID, or remoteIPPrefix can be set',
        },
      ],
    },
    {
      rule: 'the spec cannot be modified',
      version,
      plural,
      object: cluster(),
      update: (o) => (o.spec.externalNetwork = { id: '00000000-0000-4000-8000-000000000000' }),
      refused: [cannotBeModified],
    },
    { rule: 'identityRef may change', version, plural, object: cluster(), update: (o) => (o.spec.identityRef.name = 'rotated') },
    {
      rule: 'managed security group rules may change',
      version,
      plural,
      object: cluster(),
      update: (o) => (o.spec.managedSecurityGroups[nodeRules(version)] = []),
    },
    {
      rule: 'allowAllInClusterTraffic may change',
      version,
      plural,
      object: cluster(),
      update: (o) => (o.spec.managedSecurityGroups.allowAllInClusterTraffic = true),
    },
    {
      rule: "managed subnets' DNS name servers may change",
      version,
      plural,
      object: cluster(),
      update: (o) => (o.spec.managedSubnets[0].dnsNameservers = ['1.1.1.1']),
    },
    {
      rule: 'managed subnets cannot be added or removed',
      version,
      plural,
      object: cluster(),
      update: (o) => o.spec.managedSubnets.push({ cidr: '10.7.0.0/24' }),
      // The schema's maxItems 1 answers first: kube-apiserver calls no webhook for an object its schema refuses.
      refused: [
        { field: 'spec.managedSubnets', message: 'Too many: 2: must have at most 1 item' },
        {
          field: '<nil>',
          message:
            'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
        },
      ],
    },
    {
      rule: "a managed subnet's CIDR cannot change",
      version,
      plural,
      object: cluster(),
      update: (o) => (o.spec.managedSubnets[0].cidr = '10.9.0.0/24'),
      // CAPO goes on comparing after naming the subnet, and the CIDR still differs.
      refused: [{ field: 'spec.managedSubnets', message: 'Forbidden: cannot change subnet CIDR from existing value to 10.9.0.0/24' }, cannotBeModified],
    },
    {
      rule: 'controlPlaneAvailabilityZones and controlPlaneOmitAvailabilityZone may change',
      version,
      plural,
      object: cluster(),
      update: (o) => {
        o.spec.controlPlaneAvailabilityZones = ['az-2'];
        o.spec.controlPlaneOmitAvailabilityZone = true;
      },
    },
    {
      rule: "the API load balancer's allowedCIDRs may change",
      version,
      plural,
      object: cluster(),
      update: (o) => {
        const loadBalancer = version === 'v1beta1' ? o.spec.apiServerLoadBalancer : o.spec.apiServer.managedLoadBalancer;
        loadBalancer.allowedCIDRs = ['192.0.2.0/24'];
      },
    },
    {
      rule: 'controlPlaneEndpoint may be set while unset',
      version,
      plural,
      object: cluster(),
      update: (o) => (o.spec.controlPlaneEndpoint = { host: '192.0.2.10', port: 6443 }),
    },
    {
      rule: 'controlPlaneEndpoint cannot change once it has a host',
      version,
      plural,
      object: cluster({ controlPlaneEndpoint: { host: '192.0.2.10', port: 6443 } }),
      update: (o) => (o.spec.controlPlaneEndpoint.host = '192.0.2.11'),
      refused: [cannotBeModified],
    },
    {
      rule: 'the bastion may change',
      version,
      plural,
      object: cluster({
        bastion: {
          enabled: true,
          spec: {
            flavor: version === 'v1beta1' ? 'm1.small' : { filter: { name: 'm1.small' } },
            image: { filter: { name: 'ubuntu' } },
            sshKeyName: 'capi-key',
          },
        },
      }),
      update: (o) => (o.spec.bastion.enabled = false),
    },
    {
      rule: 'an enabled bastion cannot be removed',
      version,
      plural,
      object: cluster({
        bastion: {
          enabled: true,
          spec: {
            flavor: version === 'v1beta1' ? 'm1.small' : { filter: { name: 'm1.small' } },
            image: { filter: { name: 'ubuntu' } },
            sshKeyName: 'capi-key',
          },
        },
      }),
      update: (o) => delete o.spec.bastion,
      refused: [{ field: 'spec.bastion', message: 'Forbidden: cannot be removed before disabling it' }],
    },
    { rule: 'a disabled bastion may be removed', version, plural, object: cluster({ bastion: { enabled: false } }), update: (o) => delete o.spec.bastion },
  ];
}

function clusterTemplateRules(version: 'v1beta1' | 'v1beta2'): RuleCase[] {
  const plural = 'openstackclustertemplates';
  const template = object(plural, version, { template: { spec: clusterSpec(version) } });
  return [
    {
      rule: 'spec.template.spec is immutable',
      version,
      plural,
      object: template,
      update: (o) => (o.spec.template.spec.identityRef.name = 'rotated'),
      // field.Invalid with the whole object as its value, which kube renders as JSON, shortened.
      refused: [
        {
          field: 'OpenStackClusterTemplate.spec.template.spec',
          message: quoting('OpenStackClusterTemplate spec.template.spec field is immutable. Please create new resource instead.'),
        },
      ],
    },
    { rule: 'the template metadata may change', version, plural, object: template, update: (o) => (o.metadata.labels = { team: 'a' }) },
  ];
}

function machineRules(version: 'v1beta1' | 'v1beta2'): RuleCase[] {
  const plural = 'openstackmachines';
  const machine = (extra: JsonObject = {}) => object(plural, version, machineSpec(version, extra));
  // Rules run on the stored version (v1beta2), as v0.15's webhook runs on its hub version after kube-apiserver
  // converted the request: a v1beta1 request reads v1beta2's spelling, where v0.14 wrote "DisablePortSecurity is set to true".
  const portSecurity = 'Forbidden: cannot have security groups when EnablePortSecurity is set to false';
  return [
    {
      rule: 'no additional block device is named root when rootVolume is set',
      version,
      plural,
      object: machine({ rootVolume: { sizeGiB: 50 }, additionalBlockDevices: [{ name: 'root', sizeGiB: 10, storage: { type: 'Local' } }] }),
      refused: [rootDevice],
    },
    {
      rule: 'a port without port security has no security groups',
      version,
      plural,
      object: machine({ ports: [{ ...insecurePort(version), securityGroups: [{ id: networkID }] }] }),
      refused: [{ field: 'spec.ports', message: portSecurity }],
    },
    { rule: 'the spec cannot be modified', version, plural, object: machine(), update: (o) => (o.spec.sshKeyName = 'other'), refused: [cannotBeModified] },
    { rule: 'providerID may be set while unset', version, plural, object: machine(), update: (o) => (o.spec.providerID = providerID) },
    {
      rule: 'providerID cannot change once set',
      version,
      plural,
      object: machine({ providerID }),
      update: (o) => (o.spec.providerID = 'openstack:///other'),
      refused: [cannotBeModified],
    },
    {
      rule: 'providerID cannot be removed once set',
      version,
      plural,
      object: machine({ providerID }),
      update: (o) => delete o.spec.providerID,
      refused: [cannotBeModified],
    },
    { rule: 'identityRef may change', version, plural, object: machine({ identityRef: identityRef() }), update: (o) => (o.spec.identityRef.name = 'rotated') },
  ];
}

function machineTemplateRules(version: 'v1beta1' | 'v1beta2'): RuleCase[] {
  const plural = 'openstackmachinetemplates';
  const template = (extra: JsonObject = {}) => object(plural, version, { template: { spec: machineSpec(version, extra) } });
  const immutable = {
    field: 'spec.template.spec',
    message: quoting(
      'OpenStackMachineTemplate spec.template.spec field is immutable. Please create a new resource instead. Ref doc: https://cluster-api.sigs.k8s.io/tasks/change-machine-template.html',
    ),
  };
  return [
    {
      rule: 'a template has no providerID',
      version,
      plural,
      object: template({ providerID }),
      refused: [{ field: 'spec.template.spec.providerID', message: 'Forbidden: cannot be set in templates' }],
    },
    {
      rule: 'spec.template.spec is immutable',
      version,
      plural,
      object: template(),
      update: (o) => (o.spec.template.spec.sshKeyName = 'other'),
      refused: [immutable],
    },
    {
      rule: "spec.template.spec may differ in the topology controller's dry run",
      version,
      plural,
      object: { ...template(), metadata: { annotations: { 'topology.cluster.x-k8s.io/dry-run': '' } } },
      update: (o) => (o.spec.template.spec.sshKeyName = 'other'),
      dryRun: true,
    },
  ];
}

function serverRules(): RuleCase[] {
  const plural = 'openstackservers';
  const version = 'v1alpha1';
  const server = (extra: JsonObject = {}) => object(plural, version, serverSpec(extra));
  const immutable = { field: 'spec', message: 'Forbidden: OpenStackServer spec field is immutable. Please create a new resource instead.' };
  return [
    {
      rule: 'no additional block device is named root when rootVolume is set',
      version,
      plural,
      object: server({ rootVolume: { sizeGiB: 50 }, additionalBlockDevices: [{ name: 'root', sizeGiB: 10, storage: { type: 'Local' } }] }),
      refused: [rootDevice],
    },
    {
      rule: 'a port with DisablePortSecurity has no security groups',
      version,
      plural,
      object: server({ ports: [{ ...insecurePort(version), securityGroups: [{ id: networkID }] }] }),
      refused: [{ field: 'spec.ports', message: 'Forbidden: cannot have security groups when DisablePortSecurity is set to true' }],
    },
    {
      rule: "a block device's storage type is any string (v0.14's schema; the controller judges it)",
      version,
      plural,
      object: server({ additionalBlockDevices: [{ name: 'data', sizeGiB: 10, storage: { type: '' } }] }),
    },
    { rule: 'the spec is immutable', version, plural, object: server(), update: (o) => (o.spec.sshKeyName = 'other'), refused: [immutable] },
    {
      // CAPO deletes identityRef from an unstructured copy but compares the typed specs, so it refuses this too.
      rule: 'the spec is immutable, identityRef included',
      version,
      plural,
      object: server(),
      update: (o) => (o.spec.identityRef.name = 'rotated'),
      refused: [immutable],
    },
    {
      rule: "the spec may differ in the topology controller's dry run",
      version,
      plural,
      object: { ...server(), metadata: { annotations: { 'topology.cluster.x-k8s.io/dry-run': '' } } },
      update: (o) => (o.spec.sshKeyName = 'other'),
      dryRun: true,
    },
  ];
}

export const webhookRules: RuleCase[] = [
  ...(['v1beta1', 'v1beta2'] as const).flatMap((version) => [
    ...clusterRules(version),
    ...clusterTemplateRules(version),
    ...machineRules(version),
    ...machineTemplateRules(version),
  ]),
  ...serverRules(),
];
