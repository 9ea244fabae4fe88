/**
 * The embedded mode's Cluster API objects beside the CAPO kinds: discovery
 * and OpenAPI of the core group and of cluster.x-k8s.io, the reference
 * template applied with the real kubectl, Machines, printer columns, the
 * status subresource and the CRD-like refusal of strategic merge patch.
 */
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedClusterApiKinds } from '../../../src/api/embedded/kinds.js';
import { infrastructureKinds } from '../../../src/api/infrastructure/kinds.js';
import { request, startTestServer, type TestServer } from '../../../harness/test-server.js';
import { capoTemplateDocuments } from '../../reference/capo.js';
import { kubectlExpectations } from './kubectl.js';

const templateVariables: Record<string, string> = {
  CLUSTER_NAME: 'quickstart',
  OPENSTACK_CLOUD_CACERT_B64: Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64'),
  OPENSTACK_CLOUD_YAML_B64: Buffer.from('clouds:\n  openstack: {}\n').toString('base64'),
  OPENSTACK_EXTERNAL_NETWORK_ID: '5b5ac5b4-5ff1-4b0e-9a2c-8b2f3e1d7a10',
  OPENSTACK_CLOUD: 'openstack',
  OPENSTACK_DNS_NAMESERVERS: '192.0.2.53',
  OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR: 'm1.medium',
  OPENSTACK_NODE_MACHINE_FLAVOR: 'm1.small',
  OPENSTACK_IMAGE_NAME: 'ubuntu-2404-kube-v1.33.1',
  OPENSTACK_SSH_KEY_NAME: 'default',
  OPENSTACK_FAILURE_DOMAIN: 'nova',
  KUBERNETES_VERSION: 'v1.33.1',
  CONTROL_PLANE_MACHINE_COUNT: '1',
  WORKER_MACHINE_COUNT: '1',
};

/** Kinds of the template that need providers this server does not serve (kubeadm bootstrap and control plane, MachineDeployment). */
const unservedKinds = new Set(['KubeadmConfigTemplate', 'KubeadmControlPlane', 'MachineDeployment']);

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ kinds: [...infrastructureKinds, ...embeddedClusterApiKinds] });
});

afterAll(async () => {
  await server?.stop();
});

const { ok, fails } = kubectlExpectations(() => server);

/** The reference cluster template with clusterctl's ${VAR}s filled in, as one YAML stream of the served kinds. */
function referenceTemplate(): string {
  return capoTemplateDocuments('cluster-template.yaml', templateVariables)
    .filter((document) => !unservedKinds.has(String(document.kind)))
    .map((document) => stringify(document))
    .join('---\n');
}

function machine(name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}): string {
  return JSON.stringify({
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Machine',
    metadata: { name, namespace: 'default', labels: { 'cluster.x-k8s.io/cluster-name': 'quickstart', ...labels } },
    spec: {
      clusterName: 'quickstart',
      bootstrap: { dataSecretName: `${name}-bootstrap` },
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackMachine', name },
      version: 'v1.33.1',
      ...spec,
    },
  });
}

function line(output: string, start: string): string | undefined {
  return output.split('\n').find((l) => l.startsWith(start));
}

describe('discovery', () => {
  it('lists secrets in v1 and clusters and machines in cluster.x-k8s.io, with short names and categories', async () => {
    const resources = await ok(['api-resources', '-o', 'wide']);
    const verbs = 'create,delete,deletecollection,get,list,patch,update,watch';
    expect(line(resources, 'secrets ')).toMatch(new RegExp(`^secrets\\s+v1\\s+true\\s+Secret\\s+${verbs}\\s*$`));
    expect(line(resources, 'clusters ')).toMatch(new RegExp(`^clusters\\s+cl\\s+cluster\\.x-k8s\\.io/v1beta2\\s+true\\s+Cluster\\s+${verbs}\\s+cluster-api$`));
    expect(line(resources, 'machines ')).toMatch(new RegExp(`^machines\\s+ma\\s+cluster\\.x-k8s\\.io/v1beta2\\s+true\\s+Machine\\s+${verbs}\\s+cluster-api$`));
    const versions = (await ok(['api-versions'])).split('\n');
    expect(versions).toEqual(expect.arrayContaining(['v1', 'cluster.x-k8s.io/v1beta2', 'infrastructure.cluster.x-k8s.io/v1beta2']));
  });

  it('serves the legacy /api documents and keeps the core group out of /apis', async () => {
    const root = await request(server, 'GET', '/api');
    expect(root.json()).toEqual({
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: new URL(server.url).host }],
    });
    const v1 = (await request(server, 'GET', '/api/v1')).json();
    expect(v1).toMatchObject({
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: [
        { name: 'secrets', kind: 'Secret', namespaced: true },
        { name: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'] },
      ],
    });
    const groups = (await request(server, 'GET', '/apis')).json().groups.map((g: { name: string }) => g.name);
    expect(groups).toEqual(['infrastructure.cluster.x-k8s.io', 'cluster.x-k8s.io', 'ipam.cluster.x-k8s.io']);
    expect((await request(server, 'GET', '/apis/cluster.x-k8s.io/v1beta2')).json().groupVersion).toBe('cluster.x-k8s.io/v1beta2');
    expect((await request(server, 'GET', '/api/v2')).status).toBe(404);
  });

  it('serves aggregated discovery of /api with an ETag', async () => {
    const accept = { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' };
    const first = await request(server, 'GET', '/api', { headers: accept });
    expect(first.json().items).toEqual([
      {
        metadata: {},
        versions: [
          {
            version: 'v1',
            freshness: 'Current',
            resources: [
              expect.objectContaining({ resource: 'secrets', responseKind: { group: '', version: 'v1', kind: 'Secret' }, scope: 'Namespaced' }),
              expect.objectContaining({ resource: 'events', responseKind: { group: '', version: 'v1', kind: 'Event' }, scope: 'Namespaced' }),
            ],
          },
        ],
      },
    ]);
    const again = await request(server, 'GET', '/api', { headers: { ...accept, 'If-None-Match': String(first.headers.etag) } });
    expect(again.status).toBe(304);
    const named = (await request(server, 'GET', '/apis', { headers: accept })).json();
    expect(named.items.map((item: { metadata: { name: string } }) => item.metadata.name)).toEqual([
      'infrastructure.cluster.x-k8s.io',
      'cluster.x-k8s.io',
      'ipam.cluster.x-k8s.io',
    ]);
  });
});

describe('OpenAPI', () => {
  it('publishes api/v1 with strategic merge patch for Secrets only, and kube patch strategies on ObjectMeta', async () => {
    const index = (await request(server, 'GET', '/openapi/v3')).json();
    expect(Object.keys(index.paths)).toEqual(expect.arrayContaining(['api/v1', 'apis/cluster.x-k8s.io/v1beta2']));
    const core = (await request(server, 'GET', index.paths['api/v1'].serverRelativeURL)).json();
    const item = core.paths['/api/v1/namespaces/{namespace}/secrets/{name}'];
    expect(item.patch.operationId).toBe('patchCoreV1NamespacedSecret');
    expect(item.patch.tags).toEqual(['core_v1']);
    expect(Object.keys(item.patch.requestBody.content)).toContain('application/strategic-merge-patch+json');
    expect(core.components.schemas['io.k8s.api.core.v1.Secret']['x-kubernetes-group-version-kind']).toEqual([{ group: '', kind: 'Secret', version: 'v1' }]);
    const objectMeta = core.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'].properties;
    expect(objectMeta.finalizers['x-kubernetes-patch-strategy']).toBe('merge');
    expect(objectMeta.ownerReferences).toMatchObject({ 'x-kubernetes-patch-merge-key': 'uid', 'x-kubernetes-patch-strategy': 'merge' });

    const capi = (await request(server, 'GET', index.paths['apis/cluster.x-k8s.io/v1beta2'].serverRelativeURL)).json();
    const clusterPatch = capi.paths['/apis/cluster.x-k8s.io/v1beta2/namespaces/{namespace}/clusters/{name}'].patch;
    expect(Object.keys(clusterPatch.requestBody.content)).not.toContain('application/strategic-merge-patch+json');

    const v2 = (await request(server, 'GET', '/openapi/v2')).json();
    expect(v2.paths['/api/v1/namespaces/{namespace}/secrets/{name}'].patch.consumes).toContain('application/strategic-merge-patch+json');
    expect(v2.definitions['io.k8s.api.core.v1.Secret']).toBeDefined();
  });

  it('explains Secret, Cluster and Machine fields', async () => {
    expect(await ok(['explain', 'secret.stringData'])).toContain('Write-only');
    const reference = await ok(['explain', 'cluster.spec.infrastructureRef']);
    expect(reference).toContain('GROUP:      cluster.x-k8s.io');
    expect(reference).toMatch(/apiGroup\s+<string> -required-/);
    expect(await ok(['explain', 'machine.spec'])).toMatch(/clusterName\s+<string> -required-/);
  });
});

describe('the reference template and Machines', () => {
  it('applies the template: Secret, Cluster and the CAPO objects', async () => {
    const out = await ok(['apply', '-n', 'default', '-f', '-'], referenceTemplate());
    expect(out.split('\n').filter(Boolean).sort()).toEqual([
      'cluster.cluster.x-k8s.io/quickstart created',
      'openstackcluster.infrastructure.cluster.x-k8s.io/quickstart created',
      'openstackmachinetemplate.infrastructure.cluster.x-k8s.io/quickstart-control-plane created',
      'openstackmachinetemplate.infrastructure.cluster.x-k8s.io/quickstart-md-0 created',
      'secret/quickstart-cloud-config created',
    ]);
    const cluster = JSON.parse(await ok(['get', 'cl', 'quickstart', '-o', 'json']));
    expect(cluster.spec.infrastructureRef).toEqual({ apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackCluster', name: 'quickstart' });
    expect(cluster.spec.clusterNetwork).toEqual({ pods: { cidrBlocks: ['192.168.0.0/16'] }, serviceDomain: 'cluster.local' });
    const identity = JSON.parse(await ok(['get', 'secret', 'quickstart-cloud-config', '-o', 'json']));
    expect(Buffer.from(identity.data['clouds.yaml'], 'base64').toString()).toBe('clouds:\n  openstack: {}\n');
    // Applying the unchanged template again changes nothing.
    expect(await ok(['apply', '-n', 'default', '-f', '-'], referenceTemplate())).toContain('cluster.cluster.x-k8s.io/quickstart unchanged');
  });

  it('creates Machines and prints clusters and machines with Cluster API columns', async () => {
    await ok(['apply', '-f', '-'], machine('quickstart-cp-0', { failureDomain: 'nova' }, { 'cluster.x-k8s.io/control-plane': '' }));
    await ok(['apply', '-f', '-'], machine('quickstart-md-0', {}));
    await ok([
      'patch',
      'ma',
      'quickstart-cp-0',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}',
    ]);
    await ok([
      'patch',
      'cl',
      'quickstart',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Provisioned","controlPlane":{"desiredReplicas":1}}}',
    ]);

    const out = await ok(['get', 'clusters,machines']);
    const [clusters, machines] = out.split('\n\n');
    const clusterLines = clusters.split('\n');
    expect(clusterLines[0]).toMatch(
      /^NAME\s+CLUSTERCLASS\s+AVAILABLE\s+CP DESIRED\s+CP AVAILABLE\s+CP UP-TO-DATE\s+W DESIRED\s+W AVAILABLE\s+W UP-TO-DATE\s+PHASE\s+AGE\s+VERSION$/,
    );
    expect(clusterLines[1]).toMatch(/^cluster\.cluster\.x-k8s\.io\/quickstart\s+1\s+Provisioned\s+\d+s\s*$/);
    const machineLines = machines.split('\n');
    expect(machineLines[0]).toMatch(/^NAME\s+CLUSTER\s+NODE NAME\s+FAILURE DOMAIN\s+READY\s+AVAILABLE\s+UP-TO-DATE\s+PHASE\s+AGE\s+VERSION$/);
    expect(line(out, 'machine.cluster.x-k8s.io/quickstart-cp-0')).toMatch(/quickstart\s+True\s+Running\s+\d+s\s+v1\.33\.1$/);
    expect(line(out, 'machine.cluster.x-k8s.io/quickstart-md-0')).toMatch(/quickstart\s+\d+s\s+v1\.33\.1$/);

    const wide = await ok(['get', 'machines', '-o', 'wide']);
    expect(wide.split('\n')[0]).toContain('PROVIDER ID');
    expect(await ok(['get', 'machines', '-l', 'cluster.x-k8s.io/control-plane', '-o', 'name'])).toBe('machine.cluster.x-k8s.io/quickstart-cp-0\n');
    const all = await ok(['get', 'cluster-api', '-o', 'name']);
    expect(all).toContain('cluster.cluster.x-k8s.io/quickstart');
    expect(all).toContain('machine.cluster.x-k8s.io/quickstart-md-0');
    expect(all).toContain('openstackcluster.infrastructure.cluster.x-k8s.io/quickstart');
  });

  it('keeps status out of main-resource writes', async () => {
    await ok(['patch', 'ma', 'quickstart-md-0', '--type=merge', '-p', '{"spec":{"providerID":"openstack:///x"},"status":{"phase":"Failed"}}']);
    const stored = JSON.parse(await ok(['get', 'ma', 'quickstart-md-0', '-o', 'json']));
    expect(stored.spec.providerID).toBe('openstack:///x');
    expect(stored.status).toBeUndefined();
  });

  it('validates the spec with Cluster API’s rules', async () => {
    const missing = await fails(
      ['apply', '-f', '-'],
      machine('broken', { clusterName: undefined, infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'Open Stack', name: 'x' } }),
    );
    expect(missing).toContain('spec.clusterName: Required value');
    expect(missing).toContain('spec.infrastructureRef.kind');
    const empty = await fails(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', metadata: { name: 'empty', namespace: 'default' }, spec: {} }),
    );
    expect(empty).toContain('spec in body should have at least 1 properties');
  });

  it('refuses strategic merge patch on Cluster API kinds, as kube does for CRDs', async () => {
    const refused = await fails(['patch', 'cluster', 'quickstart', '-p', '{"spec":{"paused":true}}']);
    expect(refused).toContain('application/strategic-merge-patch+json');
    await ok(['patch', 'cluster', 'quickstart', '--type=merge', '-p', '{"spec":{"paused":true}}']);
    expect(JSON.parse(await ok(['get', 'cluster', 'quickstart', '-o', 'json'])).spec.paused).toBe(true);
  });

  it('deletes what the template created', async () => {
    const out = await ok(['delete', '-n', 'default', '-f', '-'], referenceTemplate());
    expect(out).toContain('secret "quickstart-cloud-config" deleted');
    expect(out).toContain('cluster.cluster.x-k8s.io "quickstart" deleted');
    expect(await ok(['get', 'secrets,clusters', '-o', 'name'])).toBe('');
  });
});
