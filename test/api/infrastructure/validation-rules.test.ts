/**
 * Every x-kubernetes-validations rule of CAPO's CRDs and the main webhook
 * rules, each broken by one variant over HTTPS: 422 Invalid with the rule's
 * message at the rule's field, nothing stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { infrastructureKinds } from '../../../src/api/infrastructure/kinds.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { request, startTestServer, type TestServer } from '../../../harness/test-server.js';

const group = 'infrastructure.cluster.x-k8s.io';
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ kinds: infrastructureKinds });
});

afterAll(async () => {
  await server?.stop();
});

const identityRef = { type: 'Secret', name: 'cloud-config', cloudName: 'openstack' };
const machineSpec = { flavor: { filter: { name: 'm1.small' } }, image: { filter: { name: 'ubuntu' } }, identityRef };

function cluster(spec: JsonObject = {}, version = 'v1beta2'): JsonObject {
  return { apiVersion: `${group}/${version}`, kind: 'OpenStackCluster', metadata: { name: 'c' }, spec: { identityRef, ...spec } };
}

function machine(spec: JsonObject = {}): JsonObject {
  return { apiVersion: `${group}/v1beta2`, kind: 'OpenStackMachine', metadata: { name: 'm' }, spec: { ...machineSpec, ...spec } };
}

/** OpenStackServer (v1alpha1) also requires sshKeyName and ports. */
function openStackServer(spec: JsonObject): JsonObject {
  return {
    apiVersion: `${group}/v1alpha1`,
    kind: 'OpenStackServer',
    metadata: { name: 's' },
    spec: { image: { filter: { name: 'ubuntu' } }, identityRef, sshKeyName: 'default', ports: [{ network: { filter: { name: 'net' } } }], ...spec },
  };
}

const plurals: Record<string, string> = { OpenStackCluster: 'openstackclusters', OpenStackMachine: 'openstackmachines', OpenStackServer: 'openstackservers' };

async function post(object: JsonObject, dryRun = true) {
  const [, version] = String(object.apiVersion).split('/');
  return request(server, 'POST', `/apis/${group}/${version}/namespaces/default/${plurals[String(object.kind)]}${dryRun ? '?dryRun=All' : ''}`, {
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(object),
  });
}

async function expectInvalid(response: Awaited<ReturnType<typeof post>>, field: string, message: string) {
  expect(response.status, response.body).toBe(422);
  const status = response.json();
  expect(status.reason).toBe('Invalid');
  expect(status.details.causes).toContainEqual(expect.objectContaining({ field, message: expect.stringContaining(message) }));
}

const schedulerHint = (value: JsonObject) => ({ schedulerHintAdditionalProperties: [{ name: 'hint', value }] });

describe('CRD validation rules', () => {
  const cases: [string, JsonObject, string, string][] = [
    [
      'bastion floating IP without external network',
      cluster({
        enableExternalNetwork: false,
        apiServer: { enableFloatingIP: false },
        bastion: { enabled: true, spec: machineSpec, floatingIP: '192.0.2.10' },
      }),
      'spec',
      'bastion floating IP cannot be set when enableExternalNetwork is false',
    ],
    [
      'API floating IP without external network',
      cluster({ enableExternalNetwork: false }),
      'spec',
      'apiServer.enableFloatingIP cannot be true when enableExternalNetwork is false',
    ],
    ['enabled bastion without spec', cluster({ bastion: { enabled: true } }), 'spec.bastion', 'spec is required if bastion is enabled'],
    ['empty managedNetwork', cluster({ managedNetwork: {} }), 'spec.managedNetwork', 'managedNetwork must not be empty if set'],
    ['empty managedRouter', cluster({ managedRouter: {} }), 'spec.managedRouter', 'managedRouter must not be empty if set'],
    [
      'volume AZ from Name without name',
      machine({ rootVolume: { sizeGiB: 10, availabilityZone: { from: 'Name' } } }),
      'spec.rootVolume.availabilityZone',
      "name is required when from is 'Name' or default",
    ],
    [
      'bool hint without bool',
      machine(schedulerHint({ type: 'Bool' })),
      'spec.schedulerHintAdditionalProperties[0].value',
      'bool is required when type is Bool, and forbidden otherwise',
    ],
    [
      'number hint without number',
      machine(schedulerHint({ type: 'Number' })),
      'spec.schedulerHintAdditionalProperties[0].value',
      'number is required when type is Number, and forbidden otherwise',
    ],
    [
      'string hint without string',
      machine(schedulerHint({ type: 'String' })),
      'spec.schedulerHintAdditionalProperties[0].value',
      'string is required when type is String, and forbidden otherwise',
    ],
    ['server without flavor', openStackServer({}), 'spec', 'at least one of flavor or flavorID must be set'],
    [
      'v1beta1 bastion floating IP without external network',
      cluster(
        {
          disableExternalNetwork: true,
          disableAPIServerFloatingIP: true,
          bastion: { enabled: true, spec: { flavor: 'm1.small', image: { filter: { name: 'ubuntu' } } }, floatingIP: '192.0.2.10' },
        },
        'v1beta1',
      ),
      'spec',
      'bastion floating IP cannot be set when disableExternalNetwork is true',
    ],
    [
      'v1beta1 API floating IP without external network',
      cluster({ disableExternalNetwork: true }, 'v1beta1'),
      'spec',
      'disableAPIServerFloatingIP cannot be false when disableExternalNetwork is true',
    ],
  ];
  for (const [name, object, field, message] of cases) {
    it(`rejects ${name}`, async () => {
      await expectInvalid(await post(object), field, message);
    });
  }

  it('accepts the valid baselines', async () => {
    for (const object of [cluster(), machine(), openStackServer({ flavor: 'm1.small' })]) {
      expect((await post(object)).status).toBe(201);
    }
  });
});

describe('webhook rules', () => {
  it('forbids a block device named root beside rootVolume', async () => {
    const response = await post(machine({ rootVolume: { sizeGiB: 10 }, additionalBlockDevices: [{ name: 'root', sizeGiB: 1, storage: { type: 'Local' } }] }));
    await expectInvalid(response, 'spec.additionalBlockDevices', 'cannot contain a device named "root" when rootVolume is set');
  });

  it('forbids security groups on ports without port security', async () => {
    const response = await post(machine({ ports: [{ enablePortSecurity: false, securityGroups: [{ id: '6d1d4b26-2c45-4a7c-9d7b-6a1a3f1c0e11' }] }] }));
    await expectInvalid(response, 'spec.ports', 'cannot have security groups when EnablePortSecurity is set to false');
  });

  it('keeps a machine spec immutable but lets providerID be set', async () => {
    expect((await post(machine(), false)).status).toBe(201);
    const path = `/apis/${group}/v1beta2/namespaces/default/openstackmachines/m`;
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    const providerID = await request(server, 'PATCH', path, { headers: merge, body: '{"spec":{"providerID":"openstack:///abc"}}' });
    expect(providerID.status, providerID.body).toBe(200);
    const flavor = await request(server, 'PATCH', path, { headers: merge, body: '{"spec":{"flavor":{"filter":{"name":"m1.large"}}}}' });
    await expectInvalid(flavor, 'spec', 'cannot be modified');
    const region = await request(server, 'PATCH', path, { headers: merge, body: '{"spec":{"identityRef":{"region":"RegionTwo"}}}' });
    await expectInvalid(region, 'spec.identityRef', 'region is immutable');
    const stored = (await request(server, 'GET', path)).json();
    expect(stored.spec.flavor).toEqual({ filter: { name: 'm1.small' } });
    expect(stored.spec.identityRef.region).toBeUndefined();
  });

  it('lets a cluster set its control plane endpoint once', async () => {
    expect((await post(cluster(), false)).status).toBe(201);
    const path = `/apis/${group}/v1beta2/namespaces/default/openstackclusters/c`;
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    const first = await request(server, 'PATCH', path, { headers: merge, body: '{"spec":{"controlPlaneEndpoint":{"host":"192.0.2.1","port":6443}}}' });
    expect(first.status, first.body).toBe(200);
    const second = await request(server, 'PATCH', path, { headers: merge, body: '{"spec":{"controlPlaneEndpoint":{"host":"192.0.2.2","port":6443}}}' });
    await expectInvalid(second, 'spec', 'cannot be modified');
  });
});
