/**
 * `clusterctl describe cluster` and `clusterctl move` with the real clusterctl (v1.12.5), between
 * two management clusters each made by `clusterctl init --infrastructure capo-apiserver` from the
 * offline release (see release-clusterctl.test.ts), with their pods standing in as processes of
 * this host (harness/clusterctl.ts startManagementPlane): Cluster API's managers serving their
 * webhooks behind their Services, and capo-apiserver behind its APIServices, each with a storage
 * of its own. Both reconcile into one simulated cloud. The example's cluster is made Ready on the
 * source; its Machines get Nodes in a workload cluster (the source's own kube-apiserver, reached
 * through the cluster's kubeconfig Secret), as clusterctl moves only provisioned clusters. Moved,
 * the cluster is Ready on the target over the very resources it had, the source holds none of its
 * objects, and nothing in the cloud was created again or deleted.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { startSimulator, type Simulator } from '../../src/simulator/host.js';
import type { JsonObject } from '../../src/storage/interface.js';
import { CloudCensus } from '../../harness/census.js';
import { waitForReady, type Kubectl } from '../../harness/cluster-flow.js';
import { clusterctl, clusterctlUnavailable, type ManagementPlane, startManagementPlane } from '../../harness/clusterctl.js';
import { clusterApiUnavailable, type ControlPlane } from '../../harness/control-plane.js';
import { sourceEntry } from '../../harness/typescript-process.js';
import { goModuleDir, goToolchain } from '../../scripts/release.js';
import { renderExamples } from '../reconcile/flows/examples.js';

const run = promisify(execFile);
const unavailable =
  clusterctlUnavailable() ??
  clusterApiUnavailable() ??
  (goToolchain() === undefined ? 'no Go toolchain to download Cluster API and cert-manager modules with' : undefined);
/** clusterctl v1.12.5's CertManagerDefaultVersion: the cert-manager it would install. */
const certManagerVersion = 'v1.20.1';
const group = 'infrastructure.cluster.x-k8s.io';
const machines = ['demo-control-plane-0', 'demo-md-0-0'];
/** The kinds clusterctl moves with the cluster, as kubectl names them. */
const clusterKinds = `clusters.cluster.x-k8s.io,machines.cluster.x-k8s.io,openstackclusters.${group},openstackmachines.${group},openstackservers.${group}`;

let root: string;
let cloud: Simulator;
let census: CloudCensus | undefined;
let source: ManagementPlane | undefined;
let target: ManagementPlane | undefined;
let manifests: string | undefined;

function kubectlOf(plane: ControlPlane): Kubectl {
  return (args) => plane.kubectl(args);
}

async function kubectlOk(plane: ControlPlane, args: string[], input?: string): Promise<string> {
  const result = await plane.kubectl(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** The managers' logs, newest lines last, for a failure message. */
async function managerLogs(plane: ManagementPlane | undefined, characters = 3000): Promise<string> {
  return (await Promise.all((plane?.managers ?? []).map(async (manager) => (await manager.log()).slice(-characters)))).join('\n');
}

/**
 * The example without its bastion and its ORC images (which clusterctl does not move: machines
 * take the cloud's public image by name), with one control plane Machine and one worker.
 */
async function exampleManifests(dir: string): Promise<string> {
  const documents: JsonObject[] = [];
  for (const file of ['00-cloud-credentials.yaml', '01-cluster.yaml', '02-openstackcluster.yaml', '03-machines.yaml', '04-bootstrap-data.yaml']) {
    for (const document of parseAllDocuments(await readFile(path.join(dir, file), 'utf8'))) documents.push(document.toJS() as JsonObject);
  }
  const kept = documents.filter(
    (document) => !['Machine', 'OpenStackMachine'].includes(String(document.kind)) || machines.includes(String((document.metadata as JsonObject).name)),
  );
  for (const document of kept) {
    if (document.kind === 'OpenStackCluster') delete (document.spec as JsonObject).bastion;
    if (document.kind === 'OpenStackMachine') (document.spec as JsonObject).image = { filter: { name: 'ubuntu-22.04' } };
  }
  const file = path.join(dir, 'example.yaml');
  await writeFile(file, kept.map((document) => stringify(document)).join('---\n'));
  return file;
}

/**
 * The workload cluster Cluster API reaches through the Cluster's kubeconfig Secret: here the
 * source's kube-apiserver, holding a Node for each Machine with the Machine's providerID, so that
 * Cluster API gives the Machines their nodeRef and the Cluster ControlPlaneInitialized.
 */
async function provideWorkloadNodes(plane: ControlPlane): Promise<void> {
  const kubeconfig = stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'demo', cluster: { server: plane.url, 'certificate-authority-data': Buffer.from(await readFile(plane.caCert)).toString('base64') } }],
    users: [
      {
        name: 'admin',
        user: {
          'client-certificate-data': Buffer.from(plane.admin.cert).toString('base64'),
          'client-key-data': Buffer.from(plane.admin.key).toString('base64'),
        },
      },
    ],
    contexts: [{ name: 'demo', context: { cluster: 'demo', user: 'admin' } }],
    'current-context': 'demo',
  });
  const documents: JsonObject[] = [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'demo-kubeconfig', namespace: 'default', labels: { 'cluster.x-k8s.io/cluster-name': 'demo' } },
      type: 'cluster.x-k8s.io/secret',
      data: { value: Buffer.from(kubeconfig).toString('base64') },
    },
  ];
  for (const name of machines) {
    const machine = JSON.parse(await kubectlOk(plane, ['get', 'machine', name, '-o', 'json']));
    documents.push({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { providerID: machine.spec.providerID } });
  }
  await kubectlOk(plane, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: documents }));
}

/**
 * The bootstrap data Secrets of examples/ owned by their Machine, as kubeadm's bootstrap provider
 * has its Secrets owned (by the KubeadmConfig a Machine owns): clusterctl moves a Secret that
 * something moved owns, or whose name is one of Cluster API's for the cluster (demo-kubeconfig);
 * the example's bootstrap Secrets are neither.
 */
async function ownBootstrapSecrets(plane: ControlPlane): Promise<void> {
  for (const name of machines) {
    const machine = JSON.parse(await kubectlOk(plane, ['get', 'machine', name, '-o', 'json']));
    const owner = { apiVersion: machine.apiVersion, kind: 'Machine', name, uid: machine.metadata.uid };
    await kubectlOk(plane, [
      'patch',
      'secret',
      machine.spec.bootstrap.dataSecretName,
      '--type=merge',
      '-p',
      JSON.stringify({ metadata: { ownerReferences: [owner] } }),
    ]);
  }
}

describe.skipIf(unavailable !== undefined)(
  unavailable === undefined ? 'clusterctl describe and move' : `clusterctl describe and move (skipped: ${unavailable})`,
  () => {
    beforeAll(async () => {
      root = await mkdtemp(path.join(os.tmpdir(), 'capo-clusterctl-move-'));
      // `npm run release -- --out DIR --offline`, from the sources.
      await run(process.execPath, [...sourceEntry('scripts/release.ts'), '--out', root, '--offline'], { timeout: 120_000 });
      const certManagerCrds = path.join(await goModuleDir('github.com/cert-manager/cert-manager', certManagerVersion), 'deploy', 'crds');
      const options = { config: path.join(root, 'clusterctl.yaml'), certManagerCrds };
      // One after the other: two at once would each take the two cores longer.
      source = await startManagementPlane(options);
      target = await startManagementPlane(options);
      cloud = await startSimulator({ port: 0, host: '127.0.0.1', transitionDelayMs: 100 });
      census = await CloudCensus.open(cloud);
      manifests = await renderExamples(cloud.url);
    }, 900_000);

    afterAll(async () => {
      census?.close();
      await target?.stop();
      await source?.stop();
      await cloud?.close();
      for (const dir of [root, manifests]) if (dir) await rm(dir, { recursive: true, force: true });
    }, 180_000);

    it('makes the example Ready under the real Cluster API, whose webhooks answer, and clusterctl describe shows it', async () => {
      const { plane } = source!;
      const applied = await plane.kubectl(['apply', '-f', await exampleManifests(manifests!)]);
      expect(applied.code, applied.stderr).toBe(0);
      await waitForReady(kubectlOf(plane), 'demo', 240);
      await provideWorkloadNodes(plane);
      await ownBootstrapSecrets(plane);
      const provisioned = await plane.kubectl(['wait', '--for=condition=ControlPlaneInitialized', 'cluster/demo', '--timeout=120s']);
      expect(provisioned.code, `${provisioned.stderr}\n${await managerLogs(source)}`).toBe(0);
      const noded = await plane.kubectl(['wait', '--for=jsonpath={.status.nodeRef.name}', ...machines.map((name) => `machine/${name}`), '--timeout=120s']);
      expect(noded.code, `${noded.stderr}\n${await managerLogs(source)}`).toBe(0);

      const described = await clusterctl(['describe', 'cluster', 'demo', '--show-machinesets', '--grouping=false'], source!.env);
      expect(described.code, described.stderr).toBe(0);
      expect(described.stdout).toMatch(/^Cluster\/demo\s/m);
      expect(described.stdout).toContain('OpenStackCluster/demo');
      for (const name of machines) expect(described.stdout).toContain(`Machine/${name}`);
    }, 600_000);

    it('clusterctl move takes the cluster to a second management cluster, which adopts its resources: none created again, none deleted', async () => {
      const before = await census!.ourIds();
      expect(before.servers).toHaveLength(machines.length);
      const targetKubeconfig = target!.plane.kubeconfig;
      const moved = await clusterctl(['move', '--to-kubeconfig', targetKubeconfig, '--namespace', 'default'], source!.env);
      expect(moved.code, `${moved.stdout}\n${moved.stderr}`).toBe(0);

      const left = await source!.plane.kubectl(['get', clusterKinds, '-n', 'default', '-o', 'name']);
      expect(left.code, left.stderr).toBe(0);
      expect(left.stdout.trim()).toBe('');

      await waitForReady(kubectlOf(target!.plane), 'demo', 240);
      const cluster = JSON.parse(await kubectlOk(target!.plane, ['get', 'cluster', 'demo', '-o', 'json']));
      expect(cluster.spec.paused ?? false).toBe(false);
      // Copies with uids of their own (clusterctl moves no status: Ready there is the target reconciler's), owning by the originals' uids.
      const copies = JSON.parse(
        await kubectlOk(target!.plane, [
          'get',
          `openstackclusters.${group},openstackmachines.${group},openstackservers.${group}`,
          '-n',
          'default',
          '-o',
          'json',
        ]),
      ).items as JsonObject[];
      expect(copies).toHaveLength(1 + 2 * machines.length);
      for (const copy of copies) {
        const metadata = copy.metadata as { uid: string; annotations?: Record<string, string> };
        expect(metadata.annotations?.['capo-apiserver.io/owner-uid']).toMatch(/^[0-9a-f-]{36}$/);
        expect(metadata.annotations?.['capo-apiserver.io/owner-uid']).not.toBe(metadata.uid);
      }
      expect(await census!.ourIds()).toEqual(before);
    }, 600_000);
  },
);
