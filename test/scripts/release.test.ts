/**
 * `npm run release` (scripts/release.ts): the folder clusterctl's local repository reads, with
 * deploy/ as clusterctl installs a provider (one namespace, the image a variable, nothing that
 * clusterctl's namespace rewrite would break), the contract Cluster API v1.12 asks for, and CAPO's
 * own templates in two flavors that name only CAPO's variables and that this server accepts.
 * test/scripts/release-clusterctl.test.ts runs the real clusterctl over the same release.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedClusterApiKinds } from '../../src/api/embedded/kinds.js';
import { infrastructureKinds } from '../../src/api/infrastructure/kinds.js';
import type { JsonObject } from '../../src/storage/interface.js';
import { kubectlOk, startTestServer } from '../../harness/test-server.js';
import { contract, imageVariable, providerLabel, providerName, writeRelease } from '../../scripts/release.js';
import { renderTemplate } from '../reference/capo.js';
import { capoEnvironment, clusterctlFlagVariables } from './capo-environment.js';

const run = promisify(execFile);
const repository = new URL('../../', import.meta.url);
const version = JSON.parse(readFileSync(new URL('package.json', repository), 'utf8')).version as string;
const capoTemplate = readFileSync(new URL('test/reference/capo/templates/cluster-template.yaml', repository), 'utf8');

let root: string;
let folder: string;
let components: JsonObject[];

function documents(text: string): JsonObject[] {
  return parseAllDocuments(text).map((document) => document.toJS() as JsonObject);
}

function metadataOf(object: JsonObject): { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> } {
  return object.metadata as never;
}

function only(objects: JsonObject[], kind: string, name?: string): JsonObject {
  const found = objects.filter((object) => object.kind === kind && (name === undefined || metadataOf(object).name === name));
  if (found.length !== 1) throw new Error(`${found.length} ${kind} ${name ?? ''} objects`);
  return found[0]!;
}

/** The `${NAME}` variables a template names, defaults or not. */
function variablesOf(text: string): Set<string> {
  return new Set([...text.matchAll(/\$\{([A-Z0-9_]+)(?::=[^}]*)?\}/g)].map((match) => match[1]!));
}

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'capo-release-'));
  await writeRelease(root, { offline: false });
  folder = path.join(root, providerLabel, `v${version}`);
  components = documents(await readFile(path.join(folder, 'infrastructure-components.yaml'), 'utf8'));
}, 60_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe('the release folder', () => {
  it("is laid out as clusterctl's local repository reads it, with a configuration naming it", async () => {
    expect((await readdir(folder)).sort()).toEqual([
      'cluster-template-without-lb.yaml',
      'cluster-template.yaml',
      'infrastructure-components.yaml',
      'metadata.yaml',
    ]);
    expect(parse(await readFile(path.join(root, 'clusterctl.yaml'), 'utf8'))).toEqual({
      providers: [{ name: providerName, type: 'InfrastructureProvider', url: pathToFileURL(path.join(folder, 'infrastructure-components.yaml')).href }],
    });
  });

  it("declares the contract Cluster API v1.12 asks of infrastructure providers, the one the contract CRDs' labels give", async () => {
    expect(parse(await readFile(path.join(folder, 'metadata.yaml'), 'utf8'))).toEqual({
      apiVersion: 'clusterctl.cluster.x-k8s.io/v1alpha3',
      kind: 'Metadata',
      releaseSeries: [{ major: Number(version.split('.')[0]), minor: Number(version.split('.')[1]), contract: 'v1beta2' }],
    });
    // Cluster API picks the version of an infrastructure kind from its CRD's label for the contract.
    const cluster = only(components, 'CustomResourceDefinition', 'openstackclusters.infrastructure.cluster.x-k8s.io');
    expect(metadataOf(cluster).labels).toMatchObject({ [`cluster.x-k8s.io/${contract}`]: 'v1beta2' });
  });
});

describe('infrastructure-components.yaml', () => {
  it('installs what deploy/ and deploy/cert-manager.yaml install, in one namespace, with the image a clusterctl variable', async () => {
    const deploy = documents((await run('kubectl', ['kustomize', new URL('deploy', repository).pathname], { maxBuffer: 16 * 1024 * 1024 })).stdout);
    const certManager = documents(readFileSync(new URL('deploy/cert-manager.yaml', repository), 'utf8'));
    const key = (object: JsonObject) => `${String(object.kind)} ${metadataOf(object).name}`;
    const authenticationReader = 'capo-apiserver:extension-apiserver-authentication-reader';
    const expected = [...deploy, ...certManager].map(key).filter((name) => name !== `RoleBinding ${authenticationReader}`);
    expect(components.map(key).sort()).toEqual([...expected, `ClusterRole ${authenticationReader}`, `ClusterRoleBinding ${authenticationReader}`].sort());

    expect(components.filter((object) => object.kind === 'Namespace').map((object) => metadataOf(object).name)).toEqual(['capo-system']);
    const namespaces = new Set(components.map((object) => metadataOf(object).namespace).filter((namespace) => namespace !== undefined));
    expect([...namespaces]).toEqual(['capo-system']);

    const deployment = only(components, 'Deployment', 'capo-apiserver') as { spec: { template: { spec: { containers: { name: string; image: string }[] } } } };
    // clusterctl takes only canonical image references, a registry host first.
    expect(deployment.spec.template.spec.containers.map((container) => container.image)).toEqual([`\${${imageVariable}:=localhost/capo-apiserver:${version}}`]);
  });

  it("grants the read of kube-system's authentication ConfigMap by a ClusterRole limited to it, as clusterctl moves every RoleBinding into its namespace", () => {
    const name = 'capo-apiserver:extension-apiserver-authentication-reader';
    expect(only(components, 'ClusterRole', name).rules).toEqual([
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['extension-apiserver-authentication'], verbs: ['get', 'list', 'watch'] },
    ]);
    expect(only(components, 'ClusterRoleBinding', name)).toMatchObject({
      roleRef: { kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name: 'capo-apiserver', namespace: 'capo-system' }],
    });
  });

  it('has cert-manager issue the certificate of the Service every APIService routes to, and inject its CA into each', () => {
    const certificate = only(components, 'Certificate') as { metadata: { name: string; namespace: string }; spec: { dnsNames: string[]; secretName: string } };
    const service = only(components, 'Service');
    const serviceName = `${metadataOf(service).name}.${metadataOf(service).namespace}.svc`;
    expect(certificate.spec.dnsNames).toContain(serviceName);
    const deployment = only(components, 'Deployment') as { spec: { template: { spec: { volumes: { secret?: { secretName: string } }[] } } } };
    expect(deployment.spec.template.spec.volumes.map((volume) => volume.secret?.secretName)).toContain(certificate.spec.secretName);
    const apiServices = components.filter((object) => object.kind === 'APIService');
    expect(apiServices.map((object) => metadataOf(object).name).sort()).toEqual(
      [
        'v1alpha1.extensions.capo-apiserver.io',
        'v1alpha1.infrastructure.cluster.x-k8s.io',
        'v1alpha1.openstack.k-orc.cloud',
        'v1beta1.infrastructure.cluster.x-k8s.io',
        'v1beta2.infrastructure.cluster.x-k8s.io',
      ].sort(),
    );
    for (const apiService of apiServices) {
      expect(metadataOf(apiService).annotations).toEqual({
        'cert-manager.io/inject-ca-from': `${certificate.metadata.namespace}/${certificate.metadata.name}`,
      });
      expect((apiService.spec as JsonObject).service).toEqual({ namespace: metadataOf(service).namespace, name: metadataOf(service).name, port: 443 });
    }
  });
});

describe('the cluster templates', () => {
  it("ship CAPO's default template unchanged, and a without-lb flavor naming only CAPO's variables", async () => {
    const defaultTemplate = await readFile(path.join(folder, 'cluster-template.yaml'), 'utf8');
    const withoutLb = await readFile(path.join(folder, 'cluster-template-without-lb.yaml'), 'utf8');
    expect(defaultTemplate).toBe(capoTemplate);
    const capoVariables = variablesOf(capoTemplate);
    expect(capoVariables).toEqual(new Set(['CLUSTER_NAME', ...Object.keys(capoEnvironment), ...Object.keys(clusterctlFlagVariables)]));
    // One control plane machine without a load balancer: CAPO's flavor drops the count's variable with it.
    expect(variablesOf(withoutLb)).toEqual(new Set([...capoVariables].filter((name) => name !== 'CONTROL_PLANE_MACHINE_COUNT')));

    // The flavor is the default less the API server's load balancer, with one control plane machine: nothing else differs.
    const flavor = documents(withoutLb);
    const cluster = only(flavor, 'OpenStackCluster');
    expect((cluster.spec as JsonObject).apiServer).toBeUndefined();
    expect((only(flavor, 'KubeadmControlPlane').spec as JsonObject).replicas).toBe(1);
    const expected = documents(capoTemplate);
    delete (only(expected, 'OpenStackCluster').spec as JsonObject).apiServer;
    (only(expected, 'KubeadmControlPlane').spec as JsonObject).replicas = 1;
    expect(flavor).toEqual(expected);
  });

  it('render, with a CAPO environment, to manifests this server accepts in both flavors', async () => {
    const server = await startTestServer({ kinds: [...infrastructureKinds, ...embeddedClusterApiKinds] });
    try {
      // Served by Cluster API's kubeadm providers and MachineDeployment controller, not by the embedded mode.
      const clusterApiProvidersKinds = new Set(['KubeadmConfigTemplate', 'KubeadmControlPlane', 'MachineDeployment']);
      for (const [flavor, file] of [
        ['default', 'cluster-template.yaml'],
        ['without-lb', 'cluster-template-without-lb.yaml'],
      ] as const) {
        const clusterName = `demo-${flavor}`;
        const text = renderTemplate(
          await readFile(path.join(folder, file), 'utf8'),
          { CLUSTER_NAME: clusterName, ...capoEnvironment, ...clusterctlFlagVariables },
          file,
        );
        const served = documents(text).filter((object) => !clusterApiProvidersKinds.has(String(object.kind)));
        expect(served.map((object) => object.kind)).toEqual(['Secret', 'Cluster', 'OpenStackCluster', 'OpenStackMachineTemplate', 'OpenStackMachineTemplate']);
        await kubectlOk(server, ['apply', '-n', 'default', '-f', '-'], served.map((object) => stringify(object)).join('---\n'));
        const stored = JSON.parse(await kubectlOk(server, ['get', 'openstackcluster', clusterName, '-n', 'default', '-o', 'json']));
        expect(stored.spec.identityRef).toMatchObject({ cloudName: 'openstack', name: `${clusterName}-cloud-config` });
        expect(stored.spec.apiServer?.managedLoadBalancer?.enabled).toBe(flavor === 'default' ? true : undefined);
      }
    } finally {
      await server.stop();
    }
  });
});
