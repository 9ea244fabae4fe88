import { describe, expect, it } from 'vitest';
import { conversionDataAnnotation, openStackClusterConverter as converter } from '../../../../src/api/infrastructure/conversion/index.js';
import type { JsonObject } from '../../../../src/storage/interface.js';
import { deepFreeze, GROUP } from './crd-schema.js';
import { expectLosslessPair, FLAVOR_ID, IMAGE_ID, NET_ID, object, SERVER_ID, stashOf, SUBNET_ID, T0, T1, withoutStash } from './objects.js';

const KIND = 'OpenStackCluster';
const identityRef = { type: 'Secret', name: 'capo-e2e-cloud-config', cloudName: 'openstack' };
const v1 = (spec: JsonObject, status?: JsonObject, metadata?: JsonObject) =>
  object('v1beta1', KIND, { spec: { identityRef, ...spec }, ...(status ? { status } : {}) }, metadata);
const v2 = (spec: JsonObject, status?: JsonObject, metadata?: JsonObject) =>
  object('v1beta2', KIND, { spec: { identityRef, ...spec }, ...(status ? { status } : {}) }, metadata);

const loadBalancer = {
  enabled: true,
  additionalPorts: [8443],
  allowedCIDRs: ['192.0.2.0/24', '10.6.0.0/24'],
  provider: 'amphora',
  availabilityZone: 'az-1',
  flavor: 'lb.small',
  network: { filter: { name: 'lb-net', tags: ['k8s'] } },
  subnets: [{ id: SUBNET_ID }],
  monitor: { delay: 10, timeout: 5, maxRetries: 5, maxRetriesDown: 3 },
};

const rule = (name: string) => ({
  name,
  description: `Created by cluster-api-provider-openstack - ${name}`,
  direction: 'ingress',
  etherType: 'IPv4',
  portRangeMin: 179,
  portRangeMax: 179,
  protocol: 'tcp',
  remoteManagedGroups: ['controlplane', 'worker'],
});

describe('OpenStackCluster spec', () => {
  it.each<[string, JsonObject, JsonObject]>([
    [
      'API server fields move under apiServer; disableAPIServerFloatingIP inverts into enableFloatingIP',
      { apiServerLoadBalancer: loadBalancer, disableAPIServerFloatingIP: true, apiServerFixedIP: '10.6.0.10', apiServerPort: 6444 },
      { apiServer: { managedLoadBalancer: loadBalancer, enableFloatingIP: false, fixedIP: '10.6.0.10', port: 6444 } },
    ],
    [
      'a floating IP alone makes an apiServer',
      { apiServerFloatingIP: '203.0.113.10', disableAPIServerFloatingIP: false },
      { apiServer: { floatingIP: '203.0.113.10', enableFloatingIP: true } },
    ],
    ['disableExternalNetwork inverts into enableExternalNetwork', { disableExternalNetwork: true }, { enableExternalNetwork: false }],
    [
      'externalRouterIPs become managedRouter.externalIPs',
      { externalRouterIPs: [{ fixedIP: '203.0.113.2', subnet: { filter: { name: 'public-v4', ipVersion: 4 } } }, { subnet: { id: SUBNET_ID } }] },
      { managedRouter: { externalIPs: [{ fixedIP: '203.0.113.2', subnet: { filter: { name: 'public-v4', ipVersion: 4 } } }, { subnet: { id: SUBNET_ID } }] } },
    ],
    [
      'networkMTU and disablePortSecurity become managedNetwork',
      { networkMTU: 1450, disablePortSecurity: false },
      { managedNetwork: { mtu: 1450, enablePortSecurity: true } },
    ],
    ['networkMTU alone makes a managedNetwork', { networkMTU: 9000 }, { managedNetwork: { mtu: 9000 } }],
    [
      'allNodesSecurityGroupRules become clusterNodesSecurityGroupRules',
      {
        managedSecurityGroups: {
          allowAllInClusterTraffic: false,
          allNodesSecurityGroupRules: [rule('BGP (calico)')],
          controlPlaneNodesSecurityGroupRules: [rule('etcd metrics')],
          workerNodesSecurityGroupRules: [rule('node exporter')],
        },
      },
      {
        managedSecurityGroups: {
          allowAllInClusterTraffic: false,
          clusterNodesSecurityGroupRules: [rule('BGP (calico)')],
          controlPlaneNodesSecurityGroupRules: [rule('etcd metrics')],
          workerNodesSecurityGroupRules: [rule('node exporter')],
        },
      },
    ],
    [
      'the bastion spec converts as a machine spec',
      {
        bastion: {
          enabled: true,
          availabilityZone: 'az-2',
          floatingIP: '203.0.113.20',
          spec: {
            flavor: 'm1.small',
            image: { filter: { name: 'ubuntu-2404', tags: ['bastion'] } },
            sshKeyName: 'capo-e2e-key',
            ports: [{ network: { id: NET_ID }, disablePortSecurity: true, tags: ['bastion'] }],
          },
        },
      },
      {
        bastion: {
          enabled: true,
          availabilityZone: 'az-2',
          floatingIP: '203.0.113.20',
          spec: {
            flavor: { filter: { name: 'm1.small' } },
            image: { filter: { name: 'ubuntu-2404', tags: ['bastion'] } },
            sshKeyName: 'capo-e2e-key',
            ports: [{ network: { id: NET_ID }, enablePortSecurity: false, tags: ['bastion'] }],
          },
        },
      },
    ],
    ...[
      { managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['8.8.8.8'], allocationPools: [{ start: '10.6.0.10', end: '10.6.0.200' }] }] },
      {
        network: { filter: { name: 'tenant', projectID: 'p1' } },
        subnets: [{ id: SUBNET_ID }, { filter: { ipVersion: 6 } }],
        primarySubnet: { id: SUBNET_ID },
      },
      { router: { id: 'e1e2e3e4-5555-4666-8777-888899990000' }, externalNetwork: { id: NET_ID } },
      { tags: ['capo', 'e2e'], controlPlaneEndpoint: { host: 'api.capo-e2e.example', port: 6443 } },
      { controlPlaneAvailabilityZones: ['az-1', 'az-2'], controlPlaneOmitAvailabilityZone: false },
      { extensions: { networking: { kubeNetworkPlugin: 'cilium' }, platform: { ntp: { servers: ['ntp.example'] } } } },
    ].map((fields): [string, JsonObject, JsonObject] => [`${Object.keys(fields).join(', ')} are unchanged`, fields, fields]),
  ])('%s', (_, spoke, hub) => {
    expectLosslessPair(converter, v1(spoke), v2(hub));
  });
});

describe('OpenStackCluster status', () => {
  it('conditions lose nothing without severities: observedGeneration is the generation, empty reason and message stand for none', () => {
    const spoke = v1(
      {},
      {
        ready: true,
        conditions: [
          { type: 'Ready', status: 'True', lastTransitionTime: T0 },
          { type: 'NetworkReady', status: 'True', lastTransitionTime: T0, reason: 'Created', message: 'network k8s-clusterapi-cluster-default-capo-e2e' },
        ],
      },
    );
    const hub = v2(
      {},
      {
        conditions: [
          { type: 'Ready', status: 'True', lastTransitionTime: T0, reason: '', message: '', observedGeneration: 3 },
          {
            type: 'NetworkReady',
            status: 'True',
            lastTransitionTime: T0,
            reason: 'Created',
            message: 'network k8s-clusterapi-cluster-default-capo-e2e',
            observedGeneration: 3,
          },
        ],
      },
    );
    expectLosslessPair(converter, spoke, hub);
  });

  it('ready follows the Ready condition', () => {
    const notReady = v2(
      {},
      { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: T0, reason: 'OpenStackError', message: 'boom', observedGeneration: 3 }] },
    );
    expect((converter.fromStorage(notReady, 'v1beta1').status as JsonObject).ready).toBe(false);
    // CAPO's Go type always writes ready, so any v1beta1 status has one, even one with no conditions.
    const noConditions = v2({}, { initialization: { provisioned: true } });
    expect(converter.fromStorage(noConditions, 'v1beta1').status).toEqual({ initialization: { provisioned: true }, ready: false });
    expect(converter.toStorage(converter.fromStorage(noConditions, 'v1beta1'))).toEqual(noConditions);
  });

  it('failureDomains: a map keyed by name becomes a list sorted by name; controlPlane false is implied in v1beta1', () => {
    const spoke = v1({}, { ready: false, failureDomains: { 'az-2': {}, 'az-1': { controlPlane: true, attributes: { zone: 'west' } }, 'AZ-0': {} } });
    const hub = v2(
      {},
      {
        failureDomains: [
          { name: 'AZ-0', controlPlane: false },
          { name: 'az-1', controlPlane: true, attributes: { zone: 'west' } },
          { name: 'az-2', controlPlane: false },
        ],
      },
    );
    expectLosslessPair(converter, spoke, hub);
    expectLosslessPair(converter, v1({}, { ready: false, failureDomains: {} }), v2({}, { failureDomains: [] }));
  });

  it('apiServerLoadBalancer becomes apiServerManagedLoadBalancer; the bastion resolved ports invert port security; the rest is unchanged', () => {
    const lb = {
      name: 'k8s-clusterapi-cluster-default-capo-e2e-kubeapi',
      id: 'lb-1',
      ip: '203.0.113.10',
      internalIP: '10.6.0.5',
      allowedCIDRs: ['10.6.0.0/24'],
      tags: ['capo'],
    };
    const common = {
      initialization: { provisioned: true },
      network: {
        id: NET_ID,
        name: 'k8s-clusterapi-cluster-default-capo-e2e',
        subnets: [{ id: SUBNET_ID, name: 'k8s-clusterapi-cluster-default-capo-e2e', cidr: '10.6.0.0/24' }],
      },
      externalNetwork: { id: NET_ID, name: 'public' },
      router: { id: 'r1', name: 'k8s-clusterapi-cluster-default-capo-e2e', ips: ['203.0.113.2'] },
      controlPlaneSecurityGroup: { id: 'sg1', name: 'k8s-cluster-default-capo-e2e-secgroup-controlplane' },
      workerSecurityGroup: { id: 'sg2', name: 'k8s-cluster-default-capo-e2e-secgroup-worker' },
      bastionSecurityGroup: { id: 'sg3', name: 'k8s-cluster-default-capo-e2e-secgroup-bastion' },
      extensions: { loadBalancers: { controlPlane: { vip: '10.6.0.5', floatingIP: '203.0.113.10' } } },
    };
    const bastion = (portSecurity: JsonObject) => ({
      id: SERVER_ID,
      name: 'capo-e2e-bastion',
      sshKeyName: 'capo-e2e-key',
      state: 'ACTIVE',
      ip: '10.6.0.7',
      floatingIP: '203.0.113.20',
      resolved: { imageID: IMAGE_ID, flavorID: FLAVOR_ID, ports: [{ name: 'capo-e2e-bastion-0', description: '', networkID: NET_ID, ...portSecurity }] },
      resources: { ports: [{ id: 'port-1' }] },
    });
    expectLosslessPair(
      converter,
      v1({}, { ready: false, ...common, apiServerLoadBalancer: lb, bastion: bastion({ disablePortSecurity: false }) }),
      v2({}, { ...common, apiServerManagedLoadBalancer: lb, bastion: bastion({ enablePortSecurity: true }) }),
    );
  });
});

describe('OpenStackCluster lossy conversions', () => {
  const conditions = [
    { type: 'Ready', status: 'False', severity: 'Error', lastTransitionTime: T0, reason: 'OpenStackError', message: 'quota exceeded' },
    { type: 'NetworkReady', status: 'True', lastTransitionTime: T0 },
  ];

  it('keeps v1beta1 severities, failureReason and failureMessage in the annotation and restores them', () => {
    const spoke = v1({}, { ready: false, failureReason: 'CreateError', failureMessage: 'quota exceeded', conditions });
    const hub = converter.toStorage(spoke);
    expect(withoutStash(hub)).toEqual(
      v2(
        {},
        {
          conditions: [
            { type: 'Ready', status: 'False', lastTransitionTime: T0, reason: 'OpenStackError', message: 'quota exceeded', observedGeneration: 3 },
            { type: 'NetworkReady', status: 'True', lastTransitionTime: T0, reason: '', message: '', observedGeneration: 3 },
          ],
        },
      ),
    );
    expect(stashOf(hub)).toEqual({
      apiVersion: `${GROUP}/v1beta1`,
      kind: KIND,
      status: { ready: false, conditions, failureReason: 'CreateError', failureMessage: 'quota exceeded' },
    });
    expect(converter.fromStorage(deepFreeze(hub), 'v1beta1')).toEqual(spoke);
  });

  it('writes the annotation as canonical JSON: sorted keys, only the lossy fields, null for an absent one', () => {
    const hub = converter.toStorage(v1({}, { failureReason: 'CreateError' }));
    expect((hub.metadata as { annotations: Record<string, string> }).annotations[conversionDataAnnotation]).toBe(
      `{"apiVersion":"${GROUP}/v1beta1","kind":"${KIND}","status":{"conditions":null,"failureMessage":null,"failureReason":"CreateError","ready":null}}`,
    );
  });

  it.each<[string, JsonObject]>([
    ['a ready that disagrees with the Ready condition', { ready: true, conditions: [{ type: 'NetworkReady', status: 'True', lastTransitionTime: T0 }] }],
    ['a status without ready', { network: { id: NET_ID, name: 'tenant' } }],
    ['an explicit controlPlane: false', { ready: false, failureDomains: { 'az-1': { controlPlane: false } } }],
    ['an empty reason or message', { ready: false, conditions: [{ type: 'Custom', status: 'Unknown', reason: '', message: '', lastTransitionTime: T0 }] }],
    ['conditions without a generation to stamp', { ready: false, conditions }],
  ])('restores %s', (_, status) => {
    const spoke = v1({}, status, { generation: undefined });
    const hub = converter.toStorage(spoke);
    expect(stashOf(hub)).toBeDefined();
    expect(converter.fromStorage(hub, 'v1beta1')).toEqual(spoke);
  });

  it('keeps an empty externalRouterIPs, which v1beta2 cannot hold', () => {
    const spoke = v1({ externalRouterIPs: [] });
    const hub = converter.toStorage(spoke);
    expect(withoutStash(hub)).toEqual(v2({}));
    expect(stashOf(hub)).toEqual({ apiVersion: `${GROUP}/v1beta1`, kind: KIND, spec: { externalRouterIPs: [] } });
    expect(converter.fromStorage(hub, 'v1beta1')).toEqual(spoke);
  });

  it('keeps the bastion flavor name when flavorID wins', () => {
    const spoke = v1({ bastion: { enabled: true, spec: { flavor: 'm1.small', flavorID: FLAVOR_ID, image: { id: IMAGE_ID } } } });
    const hub = converter.toStorage(spoke);
    expect((withoutStash(hub).spec as JsonObject).bastion).toEqual({ enabled: true, spec: { flavor: { id: FLAVOR_ID }, image: { id: IMAGE_ID } } });
    expect(stashOf(hub)).toEqual({
      apiVersion: `${GROUP}/v1beta1`,
      kind: KIND,
      spec: { bastion: { spec: { flavor: 'm1.small', flavorID: FLAVOR_ID } } },
    });
    expect(converter.fromStorage(hub, 'v1beta1')).toEqual(spoke);
  });

  it.each<[string, JsonObject, JsonObject]>([
    ['unsorted failure domains and a missing controlPlane', {}, { failureDomains: [{ name: 'az-2', controlPlane: true }, { name: 'az-1' }] }],
    [
      'observedGeneration older than the generation',
      {},
      { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T0, reason: 'Ready', message: '', observedGeneration: 2 }] },
    ],
    ['an empty apiServer and managedNetwork', { apiServer: {}, managedNetwork: {} }, {}],
    ['a managedRouter without external IPs', { managedRouter: {} }, {}],
    ['a resolved bastion port without a description', {}, { bastion: { resolved: { ports: [{ name: 'capo-e2e-bastion-0', networkID: NET_ID }] } } }],
  ])('keeps v1beta2-only %s on the v1beta1 object', (_, spec, status) => {
    const hub = v2(spec, status);
    const spoke = converter.fromStorage(hub, 'v1beta1');
    expect(stashOf(spoke)).toMatchObject({ apiVersion: `${GROUP}/v1beta2`, kind: KIND });
    expect(converter.toStorage(deepFreeze(spoke))).toEqual(hub);
  });

  it('shows v1beta1 clients a resolved port description, as CAPO writes it', () => {
    const spoke = converter.fromStorage(v2({}, { bastion: { resolved: { ports: [{ name: 'b-0', networkID: NET_ID }] } } }), 'v1beta1');
    expect((spoke.status as JsonObject).bastion).toEqual({ resolved: { ports: [{ name: 'b-0', networkID: NET_ID, description: '' }] } });
  });
});

describe('OpenStackCluster annotation data that no longer fits', () => {
  it('drops a severity once v1beta2 changed the condition', () => {
    const hub = converter.toStorage(
      v1({}, { ready: false, conditions: [{ type: 'Ready', status: 'False', severity: 'Error', reason: 'OpenStackError', lastTransitionTime: T0 }] }),
    );
    const recovered = deepFreeze({
      ...hub,
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T1, reason: 'Ready', message: '', observedGeneration: 3 }] },
    });
    expect(converter.fromStorage(recovered, 'v1beta1').status).toEqual({
      ready: true,
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T1, reason: 'Ready' }],
    });
  });

  it('keeps a severity while only v1beta2-only details of the condition changed', () => {
    const spoke = v1({}, { ready: false, conditions: [{ type: 'Ready', status: 'False', severity: 'Warning', reason: 'Waiting', lastTransitionTime: T0 }] });
    const hub = converter.toStorage(spoke);
    const conditions = (hub.status as JsonObject).conditions as JsonObject[];
    const observedLater = deepFreeze({ ...hub, status: { conditions: [{ ...conditions[0], observedGeneration: 4 }] } });
    expect(converter.fromStorage(observedLater, 'v1beta1').status).toEqual(spoke.status);
  });

  it('drops the bastion flavor name once v1beta2 changed the flavor', () => {
    const hub = converter.toStorage(v1({ bastion: { enabled: true, spec: { flavor: 'm1.small', flavorID: FLAVOR_ID, image: { id: IMAGE_ID } } } }));
    const spec = hub.spec as JsonObject;
    const changed = deepFreeze({
      ...hub,
      spec: { ...spec, bastion: { enabled: true, spec: { flavor: { filter: { name: 'm1.large' } }, image: { id: IMAGE_ID } } } },
    });
    expect((converter.fromStorage(changed, 'v1beta1').spec as JsonObject).bastion).toEqual({
      enabled: true,
      spec: { flavor: 'm1.large', image: { id: IMAGE_ID } },
    });
  });

  it('does not bring back failureReason into a status v1beta2 removed', () => {
    const hub = converter.toStorage(v1({}, { ready: false, failureReason: 'CreateError' }));
    const { status: _, ...withoutStatus } = hub;
    expect(converter.fromStorage(deepFreeze(withoutStatus), 'v1beta1')).not.toHaveProperty('status');
  });

  it('drops the failure-domain order once a v1beta1 client changed the failure domains', () => {
    const spoke = converter.fromStorage(
      v2(
        {},
        {
          failureDomains: [
            { name: 'b', controlPlane: true },
            { name: 'a', controlPlane: false },
          ],
        },
      ),
      'v1beta1',
    );
    const status = spoke.status as JsonObject;
    const edited = deepFreeze({ ...spoke, status: { ...status, failureDomains: { ...(status.failureDomains as JsonObject), c: { controlPlane: true } } } });
    expect((converter.toStorage(edited).status as JsonObject).failureDomains).toEqual([
      { name: 'a', controlPlane: false },
      { name: 'b', controlPlane: true },
      { name: 'c', controlPlane: true },
    ]);
  });
});
