import { describe, expect, it } from 'vitest';
import { openStackMachineConverter as converter } from '../../../../src/api/infrastructure/conversion/index.js';
import type { JsonObject } from '../../../../src/storage/interface.js';
import { deepFreeze, GROUP } from './crd-schema.js';
import { expectLosslessPair, FLAVOR_ID, IMAGE_ID, NET_ID, object, SERVER_ID, stashOf, SUBNET_ID, T0, T1, withoutStash } from './objects.js';

const KIND = 'OpenStackMachine';
const image = { filter: { name: 'ubuntu-2404-kube-v1.33.1' } };
const v1 = (spec: JsonObject, status?: JsonObject) => object('v1beta1', KIND, { spec: { image, ...spec }, ...(status ? { status } : {}) });
const v2 = (spec: JsonObject, status?: JsonObject) => object('v1beta2', KIND, { spec: { image, ...spec }, ...(status ? { status } : {}) });

/** Every machine spec field that is the same in both versions. */
const unchanged = {
  providerID: `openstack:///${SERVER_ID}`,
  sshKeyName: 'capo-e2e-key',
  securityGroups: [{ filter: { name: 'allow-ssh' } }, { id: 'f0f1f2f3-6666-4777-8888-999900001111' }],
  trunk: false,
  tags: ['capo', 'worker'],
  serverMetadata: [{ key: 'role', value: 'worker' }],
  configDrive: true,
  rootVolume: { sizeGiB: 50, type: 'ssd', availabilityZone: { from: 'Machine' } },
  additionalBlockDevices: [
    { name: 'etcd', sizeGiB: 10, storage: { type: 'Volume', volume: { type: 'ssd', availabilityZone: { from: 'Name', name: 'az-1' } } } },
  ],
  serverGroup: { filter: { name: 'capo-e2e-workers' } },
  identityRef: { type: 'Secret', name: 'capo-e2e-cloud-config', cloudName: 'openstack', region: 'RegionOne' },
  floatingIPPoolRef: { apiGroup: GROUP, kind: 'OpenStackFloatingIPPool', name: 'public-pool' },
  schedulerHintAdditionalProperties: [{ name: 'same_host', value: { type: 'String', string: SERVER_ID } }],
  extensions: { networkInterfaces: { keepalived: 'eth0' } },
};

const port = {
  network: { filter: { name: 'tenant', tags: ['k8s'] } },
  fixedIPs: [{ subnet: { id: SUBNET_ID }, ipAddress: '10.6.0.21' }],
  nameSuffix: 'storage',
  description: 'storage network',
  tags: ['storage'],
  trunk: false,
  securityGroups: [{ filter: { name: 'storage' } }],
  allowedAddressPairs: [{ ipAddress: '10.6.0.100' }],
  hostID: 'compute-1',
  vnicType: 'direct',
  profile: { ovsHWOffload: true, trustedVF: false },
  macAddress: 'fa:16:3e:00:00:01',
  adminStateUp: true,
  propagateUplinkStatus: false,
  valueSpecs: [{ name: 'qos', key: 'qos_policy_id', value: 'gold' }],
};

describe('OpenStackMachine spec', () => {
  it.each<[string, JsonObject, JsonObject]>([
    ['flavorID becomes flavor.id', { flavorID: FLAVOR_ID }, { flavor: { id: FLAVOR_ID } }],
    ['flavor (a name) becomes flavor.filter.name', { flavor: 'm1.medium' }, { flavor: { filter: { name: 'm1.medium' } } }],
    [
      'ports invert disablePortSecurity into enablePortSecurity; the rest of the port is unchanged',
      { flavor: 'm1.medium', ports: [{ ...port, disablePortSecurity: true }, { network: { id: NET_ID } }, { disablePortSecurity: false }] },
      { flavor: { filter: { name: 'm1.medium' } }, ports: [{ ...port, enablePortSecurity: false }, { network: { id: NET_ID } }, { enablePortSecurity: true }] },
    ],
    ['the other fields are unchanged', { flavor: 'm1.medium', ...unchanged }, { flavor: { filter: { name: 'm1.medium' } }, ...unchanged }],
  ])('%s', (_, spoke, hub) => {
    expectLosslessPair(converter, v1(spoke), v2(hub));
  });

  it('keeps the flavor name when both flavor and flavorID are set (CAPO keeps the ID)', () => {
    const spoke = v1({ flavor: 'm1.medium', flavorID: FLAVOR_ID });
    const hub = converter.toStorage(spoke);
    expect(withoutStash(hub)).toEqual(v2({ flavor: { id: FLAVOR_ID } }));
    expect(stashOf(hub)).toEqual({ apiVersion: `${GROUP}/v1beta1`, kind: KIND, spec: { flavor: 'm1.medium', flavorID: FLAVOR_ID } });
    expect(converter.fromStorage(hub, 'v1beta1')).toEqual(spoke);
  });

  it.each<[string, JsonObject]>([
    ['an ID and a filter', { id: FLAVOR_ID, filter: { name: 'm1.medium' } }],
    ['neither an ID nor a filter', {}],
    ['a filter without a name', { filter: {} }],
  ])('keeps a v1beta2 flavor with %s on the v1beta1 object', (_, flavor) => {
    const hub = v2({ flavor });
    const spoke = converter.fromStorage(hub, 'v1beta1');
    expect(stashOf(spoke)).toEqual({ apiVersion: `${GROUP}/v1beta2`, kind: KIND, spec: { flavor } });
    expect(converter.toStorage(deepFreeze(spoke))).toEqual(hub);
  });
});

describe('OpenStackMachine status', () => {
  const resolvedPort = (portSecurity: JsonObject) => ({
    name: 'capo-e2e-md-0-abcde-0',
    description: 'Created by cluster-api-provider-openstack cluster default-capo-e2e',
    networkID: NET_ID,
    fixedIPs: [{ subnet: SUBNET_ID, ipAddress: '10.6.0.21' }],
    securityGroups: ['sg2'],
    tags: ['capo'],
    trunk: false,
    ...portSecurity,
  });
  const unchangedStatus = {
    initialization: { provisioned: true },
    instanceID: SERVER_ID,
    addresses: [
      { type: 'InternalIP', address: '10.6.0.21' },
      { type: 'InternalDNS', address: 'capo-e2e-md-0-abcde' },
    ],
    instanceState: 'ACTIVE',
    resources: { ports: [{ id: 'port-1' }] },
    extensions: { nodeResources: { reserved: { cpu: '500m', memory: '1Gi' } } },
  };

  it('maps ready, conditions and resolved ports; the rest is unchanged', () => {
    const spoke = v1(
      { flavor: 'm1.medium' },
      {
        ready: true,
        ...unchangedStatus,
        resolved: { imageID: IMAGE_ID, flavorID: FLAVOR_ID, serverGroupID: 'sg-group', ports: [resolvedPort({ disablePortSecurity: false })] },
        conditions: [
          { type: 'Ready', status: 'True', lastTransitionTime: T1 },
          { type: 'InstanceReady', status: 'True', lastTransitionTime: T0 },
        ],
      },
    );
    const hub = v2(
      { flavor: { filter: { name: 'm1.medium' } } },
      {
        ...unchangedStatus,
        resolved: { imageID: IMAGE_ID, flavorID: FLAVOR_ID, serverGroupID: 'sg-group', ports: [resolvedPort({ enablePortSecurity: true })] },
        conditions: [
          { type: 'Ready', status: 'True', lastTransitionTime: T1, reason: '', message: '', observedGeneration: 3 },
          { type: 'InstanceReady', status: 'True', lastTransitionTime: T0, reason: '', message: '', observedGeneration: 3 },
        ],
      },
    );
    expectLosslessPair(converter, spoke, hub);
  });

  it('keeps failureReason, failureMessage and severities in the annotation', () => {
    const spoke = v1(
      { flavor: 'm1.medium' },
      {
        ready: false,
        failureReason: 'CreateError',
        failureMessage: 'instance state ERROR is unexpected',
        conditions: [{ type: 'InstanceReady', status: 'False', severity: 'Error', reason: 'InstanceStateError', lastTransitionTime: T0 }],
      },
    );
    const hub = converter.toStorage(spoke);
    expect(withoutStash(hub).status).toEqual({
      conditions: [{ type: 'InstanceReady', status: 'False', reason: 'InstanceStateError', message: '', lastTransitionTime: T0, observedGeneration: 3 }],
    });
    expect(stashOf(hub)).toEqual({ apiVersion: `${GROUP}/v1beta1`, kind: KIND, status: spoke.status });
    expect(converter.fromStorage(hub, 'v1beta1')).toEqual(spoke);
  });
});
