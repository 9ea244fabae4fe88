/**
 * The real Cluster API core manager driving our kinds: a real kube-apiserver (with
 * kube-controller-manager and Cluster API's CRDs), this server aggregated behind it with its
 * reconciler and the simulated cloud, and capi-manager unchanged. The example's Cluster, one control
 * plane and one worker Machine are applied to kube-apiserver; Cluster API owns our objects, reads
 * what our reconciler provisions and takes the Machines to Provisioned, also those a
 * MachineDeployment clones from our OpenStackMachineTemplate; deleting the Cluster leaves nothing
 * in the cloud.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { aggregatedKinds } from '../../src/api/kinds.js';
import { startApp, type RunningApp } from '../../src/app.js';
import type { JsonObject } from '../../src/storage/interface.js';
import { CloudCensus, noResources } from '../../harness/census.js';
import {
  clusterApiUnavailable,
  registerAggregatedServer,
  startClusterApiManager,
  startControlPlane,
  type ClusterApiManager,
  type ControlPlane,
} from '../../harness/control-plane.js';
import { renderExamples } from '../reconcile/flows/examples.js';

const unavailable = clusterApiUnavailable();
const group = 'infrastructure.cluster.x-k8s.io';
const machines = ['demo-control-plane-0', 'demo-md-0-0'];

let plane: ControlPlane;
let app: RunningApp;
let manager: ClusterApiManager;
let census: CloudCensus;
let dataDir: string;
let manifests: string;

/** The example without its bastion, with two of its machines, as one YAML stream. */
async function exampleManifests(dir: string): Promise<string> {
  const documents: JsonObject[] = [];
  for (const file of ['00-cloud-credentials.yaml', '01-cluster.yaml', '02-openstackcluster.yaml', '03-machines.yaml', '04-bootstrap-data.yaml']) {
    for (const document of parseAllDocuments(await readFile(path.join(dir, file), 'utf8'))) documents.push(document.toJS() as JsonObject);
  }
  const kept = documents.filter((document) => !['Machine', 'OpenStackMachine'].includes(String(document.kind)) || machines.includes(String((document.metadata as JsonObject).name)));
  for (const document of kept) if (document.kind === 'OpenStackCluster') delete (document.spec as JsonObject).bastion;
  const file = path.join(dataDir, 'example.yaml');
  await writeFile(file, kept.map((document) => stringify(document)).join('---\n'));
  return file;
}

describe.skipIf(unavailable !== undefined)(unavailable === undefined ? 'the real Cluster API over our kinds' : `the real Cluster API over our kinds (skipped: ${unavailable})`, () => {
  beforeAll(async () => {
    plane = await startControlPlane({ controllerManager: true, crds: ['capi'] });
    const serving = await plane.certificate('capo-apiserver', '/CN=capo-apiserver', 'extendedKeyUsage=serverAuth\nsubjectAltName=DNS:capo-apiserver.capo-system.svc,IP:127.0.0.1');
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-capi-'));
    app = await startApp({
      dataDir,
      host: '127.0.0.1',
      port: 0,
      kinds: aggregatedKinds,
      servingCertificate: serving,
      aggregated: { kubeconfig: plane.kubeconfig },
      simulatedCloud: { port: 0, transitionDelayMs: 100 },
      reconciler: { resyncPeriodMs: 60_000 },
    });
    const groupVersions = [...new Set(aggregatedKinds.flatMap((kind) => kind.versions.map((version) => `${kind.group}/${version.name}`)))]
      .map((groupVersion) => ({ group: groupVersion.split('/')[0], version: groupVersion.split('/')[1] }))
      .sort((a, b) => a.group.localeCompare(b.group) || (a.version === 'v1beta2' ? -1 : b.version === 'v1beta2' ? 1 : a.version.localeCompare(b.version)));
    await registerAggregatedServer(plane, {
      namespace: 'capo-system',
      service: 'capo-apiserver',
      port: Number(new URL(app.url).port),
      caBundlePem: readFileSync(plane.caCert, 'utf8'),
      groupVersions,
    });
    const crds = await plane.kubectl(['apply', '-f', fileURLToPath(new URL('../../deploy/contract-crds.yaml', import.meta.url))]);
    if (crds.code !== 0) throw new Error(crds.stderr);
    manager = await startClusterApiManager(plane);
    census = await CloudCensus.open(app.cloud!);
    manifests = await renderExamples(app.cloud!.url);
  }, 600_000);

  afterAll(async () => {
    census?.close();
    await manager?.stop();
    await app?.close();
    await plane?.stop();
    for (const dir of [dataDir, manifests]) if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it('takes Machines to Provisioned over what our reconciler builds', async () => {
    const applied = await plane.kubectl(['apply', '-f', await exampleManifests(manifests)]);
    expect(applied.code, applied.stderr).toBe(0);
    const provisioned = await plane.kubectl(['wait', '--for=jsonpath={.status.phase}=Provisioned', ...machines.map((name) => `machine/${name}`), '--timeout=300s']);
    expect(provisioned.code, `${provisioned.stderr}\n${(await manager.log()).slice(-4000)}`).toBe(0);
    for (const name of machines) {
      const machine = JSON.parse((await plane.kubectl(['get', 'machine', name, '-o', 'json'])).stdout);
      const infra = JSON.parse((await plane.kubectl(['get', `openstackmachines.${group}`, name, '-o', 'json'])).stdout);
      // Cluster API owns our object, and took the providerID our reconciler published.
      expect(infra.metadata.ownerReferences).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'Machine', name, uid: machine.metadata.uid })]));
      expect(machine.spec.providerID).toBe(infra.spec.providerID);
      expect(infra.status.initialization.provisioned).toBe(true);
    }
    const cluster = JSON.parse((await plane.kubectl(['get', 'cluster', 'demo', '-o', 'json'])).stdout);
    const infraCluster = JSON.parse((await plane.kubectl(['get', `openstackclusters.${group}`, 'demo', '-o', 'json'])).stdout);
    expect(infraCluster.metadata.ownerReferences).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'Cluster', name: 'demo', uid: cluster.metadata.uid })]));
    expect(cluster.spec.controlPlaneEndpoint.host).toBe(infraCluster.spec.controlPlaneEndpoint.host);
  }, 400_000);

  it('clones our OpenStackMachineTemplate for a MachineDeployment\'s Machines and provisions them', async () => {
    const template = {
      apiVersion: `${group}/v1beta2`,
      kind: 'OpenStackMachineTemplate',
      metadata: { name: 'demo-md-1', namespace: 'default' },
      spec: { template: { spec: { flavor: { filter: { name: 'm1.small' } }, image: { filter: { name: 'ubuntu-22.04' } } } } },
    };
    const deployment = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'MachineDeployment',
      metadata: { name: 'demo-md-1', namespace: 'default' },
      spec: {
        clusterName: 'demo',
        replicas: 2,
        // Cluster API's defaulting webhook would set it; its webhooks are not registered here.
        rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
        selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': 'demo-md-1' } },
        template: {
          metadata: { labels: { 'cluster.x-k8s.io/deployment-name': 'demo-md-1' } },
          spec: {
            clusterName: 'demo',
            version: 'v1.33.1',
            bootstrap: { dataSecretName: 'demo-md-0-bootstrap' },
            infrastructureRef: { apiGroup: group, kind: 'OpenStackMachineTemplate', name: 'demo-md-1' },
          },
        },
      },
    };
    for (const object of [template, deployment]) {
      const applied = await plane.kubectl(['apply', '-f', '-'], JSON.stringify(object));
      expect(applied.code, applied.stderr).toBe(0);
    }
    const selector = 'cluster.x-k8s.io/deployment-name=demo-md-1';
    const created = await plane.kubectl(['wait', '--for=jsonpath={.status.replicas}=2', 'machinedeployment/demo-md-1', '--timeout=120s']);
    const status = (await plane.kubectl(['get', 'machinedeployment,machineset', '-o', 'yaml'])).stdout;
    expect(created.code, `${created.stderr}\n${status.slice(-3000)}\n${(await manager.log()).slice(-6000)}`).toBe(0);
    const provisioned = await plane.kubectl(['wait', '--for=jsonpath={.status.phase}=Provisioned', 'machines', '-l', selector, '--timeout=300s']);
    expect(provisioned.code, `${provisioned.stderr}\n${(await manager.log()).slice(-4000)}`).toBe(0);
    const cloned = JSON.parse((await plane.kubectl(['get', `openstackmachines.${group}`, '-l', selector, '-o', 'json'])).stdout).items;
    expect(cloned).toHaveLength(2);
    for (const infra of cloned) {
      expect(infra.spec.flavor).toEqual({ filter: { name: 'm1.small' } });
      expect(infra.metadata.ownerReferences).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'Machine' })]));
      expect(infra.status.initialization.provisioned).toBe(true);
    }
  }, 400_000);

  it('deletes everything when the Cluster is deleted, leaving nothing in the cloud', async () => {
    expect((await plane.kubectl(['delete', 'cluster', 'demo', '--wait=false'])).code).toBe(0);
    const gone = await plane.kubectl(['wait', '--for=delete', 'cluster/demo', '--timeout=300s']);
    expect(gone.code, `${gone.stderr}\n${(await manager.log()).slice(-4000)}`).toBe(0);
    expect((await plane.kubectl(['get', `openstackmachines.${group}`, '-A', '-o', 'name'])).stdout).toBe('');
    expect((await census.ours()).counts).toEqual(noResources);
  }, 400_000);
});
