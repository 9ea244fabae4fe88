import { describe, expect, it } from 'vitest';
import {
  openStackClusterConverter,
  openStackClusterTemplateConverter,
  openStackMachineTemplateConverter,
} from '../../../../src/api/infrastructure/conversion/index.js';
import type { JsonObject } from '../../../../src/storage/interface.js';
import { deepFreeze, GROUP } from './crd-schema.js';
import { expectLosslessPair, FLAVOR_ID, IMAGE_ID, object, referenceDocuments, stashOf, T0, withoutStash } from './objects.js';

const calicoRules = [
  {
    description: 'Created by cluster-api-provider-openstack - BGP (calico)',
    direction: 'ingress',
    etherType: 'IPv4',
    name: 'BGP (Calico)',
    portRangeMax: 179,
    portRangeMin: 179,
    protocol: 'tcp',
    remoteManagedGroups: ['controlplane', 'worker'],
  },
  {
    description: 'Created by cluster-api-provider-openstack - IP-in-IP (calico)',
    direction: 'ingress',
    etherType: 'IPv4',
    name: 'IP-in-IP (calico)',
    protocol: '4',
    remoteManagedGroups: ['controlplane', 'worker'],
  },
];

const spokeOf = (hub: JsonObject, spec: JsonObject) => deepFreeze({ ...hub, apiVersion: `${GROUP}/v1beta1`, spec });

describe("CAPO's cluster-template.yaml (v1beta2)", () => {
  const [cluster, controlPlane, workers] = referenceDocuments('cluster-template.yaml').map(deepFreeze);

  it('OpenStackCluster converts to v1beta1 and back without loss', () => {
    expect(cluster.kind).toBe('OpenStackCluster');
    const spoke = spokeOf(cluster, {
      apiServerLoadBalancer: { enabled: true },
      externalNetwork: { id: '9f3b6c1e-2d4a-4b8f-9c7e-5a1d2e3f4b6c' },
      identityRef: { cloudName: 'openstack', name: 'capo-e2e-cloud-config' },
      managedSecurityGroups: { allNodesSecurityGroupRules: calicoRules },
      managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['8.8.8.8'] }],
    });
    expectLosslessPair(openStackClusterConverter, spoke, cluster);
  });

  it.each([
    ['control-plane', 'm1.medium'],
    ['md-0', 'm1.small'],
  ])('OpenStackMachineTemplate %s converts to v1beta1 and back without loss', (suffix, flavor) => {
    const template = suffix === 'md-0' ? workers : controlPlane;
    expect((template.metadata as JsonObject).name).toBe(`capo-e2e-${suffix}`);
    const spoke = spokeOf(template, {
      template: { spec: { flavor, image: { filter: { name: 'ubuntu-2404-kube-v1.33.1' } }, sshKeyName: 'capo-e2e-key' } },
    });
    expectLosslessPair(openStackMachineTemplateConverter, spoke, template);
  });
});

describe("CAPO's clusterclass-dev-test.yaml (v1beta2)", () => {
  const documents = referenceDocuments('clusterclass-dev-test.yaml').map(deepFreeze);
  const clusterTemplate = documents.find((d) => d.kind === 'OpenStackClusterTemplate')!;

  it('OpenStackClusterTemplate keeps its v1beta2-only template metadata in the annotation', () => {
    const spoke = openStackClusterTemplateConverter.fromStorage(clusterTemplate, 'v1beta1');
    expect(withoutStash(spoke)).toEqual(
      spokeOf(clusterTemplate, {
        template: {
          spec: {
            apiServerLoadBalancer: { enabled: true },
            externalNetwork: { filter: { name: 'public' } },
            identityRef: { name: 'dev-test-cloud-config', cloudName: 'openstack' },
            managedSecurityGroups: { allNodesSecurityGroupRules: calicoRules },
            managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['8.8.8.8'] }],
          },
        },
      }),
    );
    const metadata = { labels: { 'capo.e2e.test/template-metadata': 'propagated' }, annotations: { 'capo.e2e.test/template-metadata': 'propagated' } };
    expect(stashOf(spoke)).toEqual({ apiVersion: `${GROUP}/v1beta2`, kind: 'OpenStackClusterTemplate', spec: { template: { metadata } } });
    expect(openStackClusterTemplateConverter.toStorage(deepFreeze(spoke))).toEqual(clusterTemplate);
  });

  it('OpenStackMachineTemplates with an ORC image reference convert without loss', () => {
    const machineTemplates = documents.filter((d) => d.kind === 'OpenStackMachineTemplate');
    expect(machineTemplates).toHaveLength(2);
    for (const template of machineTemplates) {
      const spec = ((template.spec as JsonObject).template as JsonObject).spec as JsonObject;
      const flavor = ((spec.flavor as JsonObject).filter as JsonObject).name;
      expectLosslessPair(openStackMachineTemplateConverter, spokeOf(template, { template: { spec: { ...spec, flavor } } }), template);
    }
  });
});

describe('OpenStackMachineTemplate', () => {
  const KIND = 'OpenStackMachineTemplate';
  const template = (spec: JsonObject) => ({ template: { spec: { image: { id: IMAGE_ID }, ...spec } } });

  it('converts spec.template.spec as a machine spec; capacity and nodeInfo are unchanged; conditions get no observedGeneration', () => {
    const status = { capacity: { cpu: 4, memory: '16Gi', 'ephemeral-storage': '50Gi' }, nodeInfo: { operatingSystem: 'linux' } };
    const spoke = object('v1beta1', KIND, {
      spec: template({ flavorID: FLAVOR_ID, ports: [{ disablePortSecurity: true }] }),
      status: { ...status, conditions: [{ type: 'OpenStackAuthenticationSucceeded', status: 'True', lastTransitionTime: T0 }] },
    });
    const hub = object('v1beta2', KIND, {
      spec: template({ flavor: { id: FLAVOR_ID }, ports: [{ enablePortSecurity: false }] }),
      status: { ...status, conditions: [{ type: 'OpenStackAuthenticationSucceeded', status: 'True', lastTransitionTime: T0, reason: '', message: '' }] },
    });
    expectLosslessPair(openStackMachineTemplateConverter, spoke, hub);
  });

  it('keeps severities and observedGeneration in the annotation', () => {
    const spoke = object('v1beta1', KIND, {
      spec: template({ flavor: 'm1.small' }),
      status: { conditions: [{ type: 'Ready', status: 'False', severity: 'Warning', reason: 'Pending', lastTransitionTime: T0 }] },
    });
    const hub = openStackMachineTemplateConverter.toStorage(spoke);
    expect(stashOf(hub)).toEqual({ apiVersion: `${GROUP}/v1beta1`, kind: KIND, status: spoke.status });
    expect(openStackMachineTemplateConverter.fromStorage(hub, 'v1beta1')).toEqual(spoke);

    const observed = object('v1beta2', KIND, {
      spec: template({ flavor: { filter: { name: 'm1.small' } } }),
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: T0, observedGeneration: 3 }] },
    });
    const view = openStackMachineTemplateConverter.fromStorage(observed, 'v1beta1');
    expect(stashOf(view)).toEqual({ apiVersion: `${GROUP}/v1beta2`, kind: KIND, status: observed.status });
    expect(openStackMachineTemplateConverter.toStorage(deepFreeze(view))).toEqual(observed);
  });
});

describe('OpenStackClusterTemplate', () => {
  const KIND = 'OpenStackClusterTemplate';
  const identityRef = { name: 'dev-test-cloud-config', cloudName: 'openstack' };

  it('converts spec.template.spec as a cluster spec, bastion included', () => {
    const spoke = object('v1beta1', KIND, {
      spec: {
        template: {
          spec: {
            identityRef,
            disableAPIServerFloatingIP: true,
            disableExternalNetwork: true,
            networkMTU: 1500,
            bastion: { enabled: false, spec: { flavorID: FLAVOR_ID, image: { id: IMAGE_ID } } },
          },
        },
      },
    });
    const hub = object('v1beta2', KIND, {
      spec: {
        template: {
          spec: {
            identityRef,
            apiServer: { enableFloatingIP: false },
            enableExternalNetwork: false,
            managedNetwork: { mtu: 1500 },
            bastion: { enabled: false, spec: { flavor: { id: FLAVOR_ID }, image: { id: IMAGE_ID } } },
          },
        },
      },
    });
    expectLosslessPair(openStackClusterTemplateConverter, spoke, hub);
  });

  it('restores the template metadata even when a v1beta1 client changed the spec', () => {
    const metadata = { labels: { tier: 'dev' } };
    const hub = object('v1beta2', KIND, { spec: { template: { metadata, spec: { identityRef, tags: ['a'] } } } });
    const spoke = openStackClusterTemplateConverter.fromStorage(hub, 'v1beta1');
    const edited = deepFreeze({ ...spoke, spec: { template: { spec: { identityRef, tags: ['b'] } } } });
    expect(openStackClusterTemplateConverter.toStorage(edited).spec).toEqual({ template: { metadata, spec: { identityRef, tags: ['b'] } } });
  });
});
