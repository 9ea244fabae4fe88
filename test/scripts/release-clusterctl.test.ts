/**
 * The release under the real clusterctl (v1.12.5) against a real control plane, with no internet:
 * the configuration `npm run release -- --offline` writes points clusterctl at our release and at
 * Cluster API's core and kubeadm releases made from the Go module cache, and cert-manager's CRDs
 * (of the version clusterctl v1.12.5 would install) are installed first, which clusterctl takes
 * for an installed cert-manager: it creates a test Issuer and Certificate, they are accepted, and
 * it skips its own install from GitHub. No pod runs here (no kubelet): this process stands in for
 * cert-manager (issuing the serving certificate and injecting its CA) and for capo-apiserver's pod
 * (serving behind the installed Service with the installed service account's token). Then
 * `clusterctl generate cluster` with a CAPO user's environment renders both flavors, whose
 * infrastructure objects our server stores through kube-apiserver, and `clusterctl upgrade plan`
 * lists our provider.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/storage/interface.js';
import { clusterctl, clusterctlUnavailable, type InstalledServer, serveAsInstalledPod, standInForCertManager } from '../../harness/clusterctl.js';
import { type ControlPlane, startControlPlane } from '../../harness/control-plane.js';
import { pollUntil } from '../../harness/poll.js';
import { sourceEntry } from '../../harness/typescript-process.js';
import { goModuleDir, goToolchain, providerLabel } from '../../scripts/release.js';
import { capoEnvironment, clusterctlFlagVariables } from './capo-environment.js';

const run = promisify(execFile);
const unavailable =
  clusterctlUnavailable() ?? (goToolchain() === undefined ? 'no Go toolchain to download Cluster API and cert-manager modules with' : undefined);
/** clusterctl v1.12.5's CertManagerDefaultVersion: the cert-manager it would install. */
const certManagerVersion = 'v1.20.1';
const version = `v${JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version}`;
const providerSelector = `cluster.x-k8s.io/provider=${providerLabel}`;

let plane: ControlPlane;
let root: string;
let configHome: string;
let config: string;
let env: Record<string, string>;
let installed: InstalledServer | undefined;

async function kubectlJson(args: string[]): Promise<JsonObject> {
  const result = await plane.kubectl([...args, '-o', 'json']);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

function names(list: JsonObject): string[] {
  return (list.items as JsonObject[]).map((item) => String((item.metadata as JsonObject).name)).sort();
}

/** The server's own /readyz?verbose, straight to its port (kube-apiserver does not route it). */
function readyz(url: string, ca: string, servername: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(`${url}/readyz?verbose`, { ca, servername }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe.skipIf(unavailable !== undefined)(
  unavailable === undefined ? 'the release under clusterctl' : `the release under clusterctl (skipped: ${unavailable})`,
  () => {
    beforeAll(async () => {
      // kube-controller-manager finalizes the namespace clusterctl's cert-manager check deletes.
      plane = await startControlPlane({ controllerManager: true });
      const certManagerCrds = path.join(await goModuleDir('github.com/cert-manager/cert-manager', certManagerVersion), 'deploy', 'crds');
      // create: the CRDs are too large for apply's last-applied annotation.
      for (const args of [
        ['create', '-f', certManagerCrds],
        ['wait', '--for=condition=Established', '-f', certManagerCrds, '--timeout=60s'],
      ]) {
        const result = await plane.kubectl(args);
        if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
      }
      root = await mkdtemp(path.join(os.tmpdir(), 'capo-clusterctl-release-'));
      configHome = await mkdtemp(path.join(os.tmpdir(), 'capo-clusterctl-home-'));
      // `npm run release -- --out DIR --offline`, from the sources.
      await run(process.execPath, [...sourceEntry('scripts/release.ts'), '--out', root, '--offline'], { timeout: 120_000 });
      config = path.join(root, 'clusterctl.yaml');
      // clusterctl keeps its overrides and state under $XDG_CONFIG_HOME/cluster-api: one of the test's own.
      env = { KUBECONFIG: plane.kubeconfig, XDG_CONFIG_HOME: configHome };
    }, 600_000);

    afterAll(async () => {
      await installed?.close();
      await plane?.stop();
      for (const dir of [root, configHome]) if (dir) await rm(dir, { recursive: true, force: true });
    }, 120_000);

    it("clusterctl init installs capo-apiserver beside Cluster API's core and kubeadm providers, taking the installed cert-manager", async () => {
      const result = await clusterctl(['init', '--infrastructure', 'capo-apiserver', '--config', config], env);
      const output = `${result.stdout}\n${result.stderr}`;
      expect(result.code, output).toBe(0);
      expect(output).toContain('Skipping installing cert-manager as it is already installed');
      expect(output).toContain(`Installing provider="${providerLabel}" version="${version}" targetNamespace="capo-system"`);

      const providers = (await kubectlJson(['get', 'providers.clusterctl.cluster.x-k8s.io', '-A'])).items as JsonObject[];
      const inventory = providers.map((provider) => ({
        namespace: (provider.metadata as JsonObject).namespace,
        name: (provider.metadata as JsonObject).name,
        type: provider.type,
        version: provider.version,
      }));
      expect(inventory.sort((a, b) => String(a.name).localeCompare(String(b.name)))).toEqual([
        { namespace: 'capi-kubeadm-bootstrap-system', name: 'bootstrap-kubeadm', type: 'BootstrapProvider', version: 'v1.12.5' },
        { namespace: 'capi-system', name: 'cluster-api', type: 'CoreProvider', version: 'v1.12.5' },
        { namespace: 'capi-kubeadm-control-plane-system', name: 'control-plane-kubeadm', type: 'ControlPlaneProvider', version: 'v1.12.5' },
        { namespace: 'capo-system', name: providerLabel, type: 'InfrastructureProvider', version },
      ]);

      // Our components, each carrying clusterctl's provider label: the image is the variable's default.
      const deployment = await kubectlJson(['get', 'deployment', 'capo-apiserver', '-n', 'capo-system']);
      expect((deployment.metadata as JsonObject).labels).toMatchObject({ 'cluster.x-k8s.io/provider': providerLabel, 'clusterctl.cluster.x-k8s.io': '' });
      expect((deployment.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image).toBe(
        `localhost/capo-apiserver:${version.slice(1)}`,
      );
      expect(names(await kubectlJson(['get', 'apiservices', '-l', providerSelector]))).toEqual(
        [
          'v1alpha1.extensions.capo-apiserver.io',
          'v1alpha1.infrastructure.cluster.x-k8s.io',
          'v1alpha1.openstack.k-orc.cloud',
          'v1beta1.infrastructure.cluster.x-k8s.io',
          'v1beta2.infrastructure.cluster.x-k8s.io',
        ].sort(),
      );
      const crds = (await kubectlJson(['get', 'crds', '-l', providerSelector])).items as JsonObject[];
      expect(crds.map((crd) => String((crd.metadata as JsonObject).name)).sort()).toEqual([
        'openstackclusteridentities.infrastructure.cluster.x-k8s.io',
        'openstackclusters.infrastructure.cluster.x-k8s.io',
        'openstackclustertemplates.infrastructure.cluster.x-k8s.io',
        'openstackfloatingippools.infrastructure.cluster.x-k8s.io',
        'openstackmachines.infrastructure.cluster.x-k8s.io',
        'openstackmachinetemplates.infrastructure.cluster.x-k8s.io',
        'openstackservers.infrastructure.cluster.x-k8s.io',
      ]);
      const clusterCrd = crds.find((crd) => (crd.metadata as JsonObject).name === 'openstackclusters.infrastructure.cluster.x-k8s.io')!;
      expect((clusterCrd.metadata as JsonObject).labels).toMatchObject({ 'cluster.x-k8s.io/v1beta2': 'v1beta2' });
      expect(names(await kubectlJson(['get', 'clusterrolebindings', '-l', providerSelector]))).toEqual(
        ['capo-apiserver', 'capo-apiserver:extension-apiserver-authentication-reader', 'capo-apiserver:system:auth-delegator'].sort(),
      );
      // cert-manager's API took the Issuer and the Certificate for the Service's name.
      const certificate = await kubectlJson(['get', 'certificates.cert-manager.io', 'capo-apiserver-tls', '-n', 'capo-system']);
      expect((certificate.spec as JsonObject).dnsNames).toContain('capo-apiserver.capo-system.svc');
      expect(names(await kubectlJson(['get', 'issuers.cert-manager.io', '-n', 'capo-system']))).toEqual(['capo-apiserver-selfsigned']);
    });

    it('serves the APIServices it installed from a server holding only the RBAC it installed', async () => {
      await standInForCertManager(plane, 'capo-system');
      installed = await serveAsInstalledPod(plane, {
        namespace: 'capo-system',
        serviceAccount: 'capo-apiserver',
        service: 'capo-apiserver',
        servicePort: 'https',
        tlsSecret: 'capo-apiserver-tls',
      });
      const available = await plane.kubectl(['wait', '--for=condition=Available', 'apiservices', '-l', providerSelector, '--timeout=90s']);
      expect(available.code, available.stderr).toBe(0);
      // Every readiness check passes: the authentication ConfigMap in kube-system, the Namespaces, and
      // the reconciler's informers on Secrets, Clusters, Machines and IPAM claims, all read as the service account.
      const ca = readFileSync(plane.caCert, 'utf8');
      const ready = await pollUntil(
        'the server to be ready as the service account',
        async () => {
          const answer = await readyz(installed!.app.url, ca, 'capo-apiserver.capo-system.svc');
          return answer.status === 200 ? answer : undefined;
        },
        { timeoutMs: 45_000, intervalMs: 250 },
      ).catch(async (error: unknown) => {
        throw new Error(`${String(error)}: ${(await readyz(installed!.app.url, ca, 'capo-apiserver.capo-system.svc')).body}`);
      });
      expect(ready.body).toContain('[+]extension-apiserver-authentication ok');
      expect(ready.body).toContain('[+]cluster-api-informers ok');
      const listed = await plane.kubectl(['get', 'openstackclusters.infrastructure.cluster.x-k8s.io', '-A']);
      expect(listed.code, listed.stderr).toBe(0);
    }, 240_000);

    it("clusterctl generate cluster renders both flavors from a CAPO user's environment alone, and our server stores their infrastructure", async () => {
      for (const flavor of ['', 'without-lb']) {
        const name = flavor === '' ? 'demo' : `demo-${flavor}`;
        const args = ['generate', 'cluster', name, ...(flavor === '' ? [] : ['--flavor', flavor])];
        args.push(
          '--kubernetes-version',
          clusterctlFlagVariables.KUBERNETES_VERSION!,
          '--control-plane-machine-count',
          clusterctlFlagVariables.CONTROL_PLANE_MACHINE_COUNT!,
        );
        args.push('--worker-machine-count', clusterctlFlagVariables.WORKER_MACHINE_COUNT!, '--config', config);
        const generated = await clusterctl(args, { ...env, ...capoEnvironment });
        expect(generated.code, generated.stderr).toBe(0);
        expect(generated.stdout).not.toContain('${');
        const objects = parseAllDocuments(generated.stdout).map((document) => document.toJS() as JsonObject);
        expect(objects.map((object) => `${String(object.kind)}/${String((object.metadata as JsonObject).namespace)}`)).toEqual(
          [
            'Secret',
            'KubeadmConfigTemplate',
            'Cluster',
            'MachineDeployment',
            'KubeadmControlPlane',
            'OpenStackCluster',
            'OpenStackMachineTemplate',
            'OpenStackMachineTemplate',
          ].map((kind) => `${kind}/default`),
        );
        const controlPlane = objects.find((object) => object.kind === 'KubeadmControlPlane')!;
        expect((controlPlane.spec as JsonObject).replicas).toBe(flavor === '' ? 3 : 1);

        // Cluster API's kinds wait for its webhooks, whose pods cannot run here; ours go to our server through kube-apiserver.
        const ours = objects.filter((object) => object.kind === 'Secret' || String(object.apiVersion).startsWith('infrastructure.cluster.x-k8s.io/'));
        const applied = await plane.kubectl(['apply', '-f', '-'], ours.map((object) => stringify(object)).join('---\n'));
        expect(applied.code, applied.stderr).toBe(0);
        const stored = await kubectlJson(['get', 'openstackclusters.infrastructure.cluster.x-k8s.io', name, '-n', 'default']);
        expect(stored.spec).toMatchObject({
          identityRef: { cloudName: 'openstack', name: `${name}-cloud-config` },
          externalNetwork: { id: capoEnvironment.OPENSTACK_EXTERNAL_NETWORK_ID },
        });
        expect((stored.spec as { apiServer?: { managedLoadBalancer?: { enabled: boolean } } }).apiServer?.managedLoadBalancer?.enabled).toBe(
          flavor === '' ? true : undefined,
        );
        expect(names(await kubectlJson(['get', 'openstackmachinetemplates.infrastructure.cluster.x-k8s.io', '-n', 'default']))).toEqual(
          expect.arrayContaining([`${name}-control-plane`, `${name}-md-0`]),
        );
      }
    });

    it('clusterctl upgrade plan lists capo-apiserver, up to date', async () => {
      const result = await clusterctl(['upgrade', 'plan', '--config', config], env);
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toMatch(
        new RegExp(`${providerLabel}\\s+capo-system\\s+InfrastructureProvider\\s+${version.replaceAll('.', '\\.')}\\s+Already up to date`),
      );
    });
  },
);
