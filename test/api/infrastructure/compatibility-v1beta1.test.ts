import { describe, expect, it } from 'vitest';
import type { KindVersion } from '../../../src/apiserver/registry/kind.js';
import { applyDefaults } from '../../../src/apiserver/schema/defaults.js';
import { structuralSchemaOf } from '../../../src/apiserver/schema/structural.js';
import { validateAgainstSchema } from '../../../src/apiserver/schema/validate.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import * as v1beta1 from '../../../src/api/infrastructure/v1beta1/index.js';
import { securityGroupRules } from './admission/objects.js';
import { itCarriesTheExtensions, itMatchesTheCrds, type Kinds } from './crd-compat.js';

const kinds: Kinds = [
  ['openstackclusters', v1beta1.openStackClusterV1beta1],
  ['openstackclustertemplates', v1beta1.openStackClusterTemplateV1beta1],
  ['openstackmachines', v1beta1.openStackMachineV1beta1],
  ['openstackmachinetemplates', v1beta1.openStackMachineTemplateV1beta1],
];

describe('CAPO CRD compatibility, v1beta1', () => {
  itMatchesTheCrds(kinds);

  it.each(kinds)('%s is served but not stored', (_, version) => {
    expect(version).toMatchObject({ name: 'v1beta1', served: true, storage: false });
  });
});

describe('extension fields, v1beta1', () => {
  itCarriesTheExtensions(kinds);
});

// Objects as CAPO's v1beta1 templates (cluster-template.yaml, v0.12) write them.

const externalNetworkID = '3d5d6b5e-4a46-4d7b-9c2c-1f1b0d6c9a31';

function clusterSpec(): JsonObject {
  return {
    apiServerLoadBalancer: { enabled: true },
    externalNetwork: { id: externalNetworkID },
    identityRef: { name: 'capi-quickstart-cloud-config', cloudName: 'openstack' },
    managedSecurityGroups: { allNodesSecurityGroupRules: securityGroupRules() },
    managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['8.8.8.8'] }],
  };
}

function machineSpec(): JsonObject {
  return { flavor: 'm1.medium', image: { filter: { name: 'ubuntu-2204-kube-v1.33.1' } }, sshKeyName: 'capi-key' };
}

const template = (spec: JsonObject): JsonObject => ({ template: { spec } });

/** kube's `field: message` lines for an object of this version, after defaulting. */
function check(version: KindVersion, object: JsonObject): string[] {
  const defaulted = applyDefaults(object, structuralSchemaOf(version));
  return validateAgainstSchema(version, defaulted).map(String);
}

describe('v1beta1 objects', () => {
  it('accepts what CAPO v1beta1 templates write', () => {
    expect(check(v1beta1.openStackClusterV1beta1, { spec: clusterSpec() })).toEqual([]);
    expect(check(v1beta1.openStackClusterTemplateV1beta1, { spec: template(clusterSpec()) })).toEqual([]);
    expect(check(v1beta1.openStackMachineV1beta1, { spec: machineSpec() })).toEqual([]);
    expect(check(v1beta1.openStackMachineTemplateV1beta1, { spec: template(machineSpec()) })).toEqual([]);
  });

  it('fills in the defaults v1beta1 lists as required', () => {
    const object = applyDefaults({ spec: clusterSpec(), status: {} }, structuralSchemaOf(v1beta1.openStackClusterV1beta1)) as {
      spec: Record<string, Record<string, unknown>>;
      status: Record<string, unknown>;
    };
    expect(object.spec.identityRef.type).toBe('Secret');
    expect(object.spec.managedSecurityGroups.allowAllInClusterTraffic).toBe(false);
    expect(object.spec.apiServerLoadBalancer.enabled).toBe(true);
    expect(object.status.ready).toBe(false);
  });

  it('accepts a status as CAPO v1beta1 controllers write it', () => {
    const status = {
      ready: true,
      network: { id: 'n1', name: 'k8s-clusterapi-cluster-default-capi', subnets: [{ id: 's1', name: 'sub', cidr: '10.6.0.0/24' }] },
      failureDomains: { nova: { controlPlane: true } },
      conditions: [{ type: 'Ready', status: 'False', severity: 'Warning', reason: 'Provisioning', lastTransitionTime: '2025-01-02T03:04:05Z' }],
    };
    expect(check(v1beta1.openStackClusterV1beta1, { spec: clusterSpec(), status })).toEqual([]);
  });
});

describe('v1beta1 validation rules', () => {
  const rule = (field: string, message: string) => `${field}: Invalid value: ${message}`;

  it('keeps the bastion floating IP off a cluster without external network', () => {
    const spec = {
      ...clusterSpec(),
      disableExternalNetwork: true,
      disableAPIServerFloatingIP: true,
      bastion: { floatingIP: '192.0.2.10', spec: machineSpec() },
    };
    expect(check(v1beta1.openStackClusterV1beta1, { spec })).toEqual([rule('spec', 'bastion floating IP cannot be set when disableExternalNetwork is true')]);
  });

  it('needs disableAPIServerFloatingIP on a cluster without external network', () => {
    const spec = { ...clusterSpec(), disableExternalNetwork: true };
    expect(check(v1beta1.openStackClusterV1beta1, { spec })).toEqual([
      rule('spec', 'disableAPIServerFloatingIP cannot be false when disableExternalNetwork is true'),
    ]);
    expect(check(v1beta1.openStackClusterTemplateV1beta1, { spec: template(spec) })).toEqual([
      rule('spec.template.spec', 'disableAPIServerFloatingIP cannot be false when disableExternalNetwork is true'),
    ]);
  });

  it('needs a spec for an enabled bastion', () => {
    const spec = { ...clusterSpec(), bastion: {} };
    expect(check(v1beta1.openStackClusterV1beta1, { spec })).toEqual([rule('spec.bastion', 'spec is required if bastion is enabled')]);
    expect(check(v1beta1.openStackClusterV1beta1, { spec: { ...clusterSpec(), bastion: { enabled: false } } })).toEqual([]);
  });

  it('needs a flavor or a flavorID', () => {
    const { flavor: _flavor, ...spec } = machineSpec();
    const message = 'at least one of flavor or flavorID must be set';
    expect(check(v1beta1.openStackMachineV1beta1, { spec })).toEqual([rule('spec', message)]);
    expect(check(v1beta1.openStackMachineTemplateV1beta1, { spec: template(spec) })).toEqual([rule('spec.template.spec', message)]);
    expect(check(v1beta1.openStackClusterV1beta1, { spec: { ...clusterSpec(), bastion: { spec } } })).toEqual([rule('spec.bastion.spec', message)]);
    expect(check(v1beta1.openStackMachineV1beta1, { spec: { ...spec, flavorID: 'a1b2' } })).toEqual([]);
  });

  it('types scheduler hint values', () => {
    const spec = { ...machineSpec(), schedulerHintAdditionalProperties: [{ name: 'query', value: { type: 'Number', string: '5' } }] };
    expect(check(v1beta1.openStackMachineV1beta1, { spec })).toEqual([
      rule('spec.schedulerHintAdditionalProperties[0].value', 'number is required when type is Number, and forbidden otherwise'),
      rule('spec.schedulerHintAdditionalProperties[0].value', 'string is required when type is String, and forbidden otherwise'),
    ]);
  });

  it('needs a volume availability zone name unless it comes from the machine', () => {
    const spec = { ...machineSpec(), rootVolume: { sizeGiB: 50, availabilityZone: { from: 'Machine', name: 'az1' } } };
    expect(check(v1beta1.openStackMachineV1beta1, { spec })).toEqual([
      rule('spec.rootVolume.availabilityZone', "name is required when from is 'Name' or default"),
    ]);
  });

  it('publishes the identityRef transition rule, which one object cannot break', () => {
    const identityRef = structuralSchemaOf(v1beta1.openStackMachineV1beta1).properties?.spec.properties?.identityRef;
    expect(identityRef?.['x-kubernetes-validations']).toEqual([
      { rule: '(!has(self.region) && !has(oldSelf.region)) || self.region == oldSelf.region', message: 'region is immutable' },
    ]);
    const spec = { ...machineSpec(), identityRef: { name: 'cloud-config', cloudName: 'openstack', region: 'RegionOne' } };
    expect(check(v1beta1.openStackMachineV1beta1, { spec })).toEqual([]);
  });
});
