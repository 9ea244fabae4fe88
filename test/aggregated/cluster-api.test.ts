/**
 * The real Cluster API managers driving our kinds: a real kube-apiserver (with
 * kube-controller-manager and Cluster API's CRDs), this server aggregated behind it with its
 * reconciler and the simulated cloud, and Cluster API's core manager (with ClusterTopology on) and
 * kubeadm's bootstrap and control-plane managers, unchanged. The example's Cluster, one control
 * plane and one worker Machine are applied to kube-apiserver; Cluster API owns our objects, reads
 * what our reconciler provisions and takes the Machines to Provisioned, also those a
 * MachineDeployment clones from our OpenStackMachineTemplate; the worker's floating IP comes from
 * an OpenStackFloatingIPPool through Cluster API's IPAM objects; deleting the Cluster leaves nothing
 * in the cloud. Then a Cluster of CAPO's reference ClusterClass: the topology controller builds our
 * objects from our templates with the class's patches, kubeadm's control plane provisions its
 * machine through them, and deleting it leaves nothing either.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import type { RunningApp } from '../../src/app.js';
import type { JsonObject } from '../../src/storage/interface.js';
import { startAggregatedServer, type AggregatedServer } from '../../harness/aggregated-server.js';
import { CloudCensus, noResources } from '../../harness/census.js';
import {
  clusterApiUnavailable,
  kubectlProxy,
  startClusterApiManager,
  startControlPlane,
  type ClusterApiManager,
  type ControlPlane,
} from '../../harness/control-plane.js';
import { pollUntil } from '../../harness/poll.js';
import { renderCapoTemplate } from '../reference/capo.js';
import { renderExamples } from '../reconcile/flows/examples.js';

const unavailable = clusterApiUnavailable();
const group = 'infrastructure.cluster.x-k8s.io';
const machines = ['demo-control-plane-0', 'demo-md-0-0'];

let plane: ControlPlane;
let server: AggregatedServer;
let app: RunningApp;
let managers: ClusterApiManager[] = [];
let census: CloudCensus;
let manifests: string;

/** The dashboard's list of clusters, read through kube-apiserver. */
async function overview(): Promise<unknown> {
  return JSON.parse((await plane.kubectl(['get', '--raw', '/apis/extensions.capo-apiserver.io/v1alpha1/dashboard/api/clusters'])).stdout).clusters;
}

/** The managers' logs, newest lines last, for a failure message. */
async function managerLogs(characters = 4000): Promise<string> {
  return (await Promise.all(managers.map(async (manager) => (await manager.log()).slice(-characters)))).join('\n');
}

/** The example without its bastion, with two of its machines, as one YAML stream. */
async function exampleManifests(dir: string): Promise<string> {
  const documents: JsonObject[] = [];
  for (const file of [
    '00-cloud-credentials.yaml',
    '00-images.yaml',
    '01-cluster.yaml',
    '02-openstackcluster.yaml',
    '03-machines.yaml',
    '04-bootstrap-data.yaml',
  ]) {
    for (const document of parseAllDocuments(await readFile(path.join(dir, file), 'utf8'))) documents.push(document.toJS() as JsonObject);
  }
  const kept = documents.filter(
    (document) => !['Machine', 'OpenStackMachine'].includes(String(document.kind)) || machines.includes(String((document.metadata as JsonObject).name)),
  );
  for (const document of kept) if (document.kind === 'OpenStackCluster') delete (document.spec as JsonObject).bastion;
  // The worker takes its floating IP from a pool, through Cluster API's IPAM objects in kube-apiserver.
  for (const document of kept) {
    if (document.kind === 'OpenStackMachine' && (document.metadata as JsonObject).name === 'demo-md-0-0')
      (document.spec as JsonObject).floatingIPPoolRef = { apiGroup: group, kind: 'OpenStackFloatingIPPool', name: 'workers' };
  }
  kept.push({
    apiVersion: `${group}/v1alpha1`,
    kind: 'OpenStackFloatingIPPool',
    metadata: { name: 'workers', namespace: 'default' },
    spec: { identityRef: { name: 'demo-cloud-config', cloudName: 'openstack' }, reclaimPolicy: 'Delete' },
  });
  const file = path.join(dir, 'example.yaml');
  await writeFile(file, kept.map((document) => stringify(document)).join('---\n'));
  return file;
}

describe.skipIf(unavailable !== undefined)(
  unavailable === undefined ? 'the real Cluster API over our kinds' : `the real Cluster API over our kinds (skipped: ${unavailable})`,
  () => {
    beforeAll(async () => {
      plane = await startControlPlane({ controllerManager: true, crds: ['capi'] });
      server = await startAggregatedServer(plane, {
        simulatedCloud: { port: 0, transitionDelayMs: 100 },
        reconciler: { resyncPeriodMs: 60_000 },
        // The reconciler runs while it holds a coordination.k8s.io Lease in the management cluster.
        leaderElection: { name: 'capo-apiserver', namespace: 'capo-system' },
      });
      app = server.app;
      const crds = await plane.kubectl(['apply', '-f', fileURLToPath(new URL('../../deploy/api/contract-crds.yaml', import.meta.url))]);
      if (crds.code !== 0) throw new Error(crds.stderr);
      managers = await Promise.all([
        startClusterApiManager(plane, 'capi-manager', ['ClusterTopology=true']),
        startClusterApiManager(plane, 'capi-kubeadm-bootstrap-manager'),
        startClusterApiManager(plane, 'capi-kubeadm-control-plane-manager', ['ClusterTopology=true']),
      ]);
      census = await CloudCensus.open(app.cloud!);
      manifests = await renderExamples(app.cloud!.url);
    }, 600_000);

    afterAll(async () => {
      census?.close();
      await Promise.all(managers.map((manager) => manager.stop()));
      await server?.close();
      await plane?.stop();
      if (manifests) await rm(manifests, { recursive: true, force: true });
    }, 120_000);

    it('elects its reconciler with a Lease in the management cluster', async () => {
      const readLease = async () => JSON.parse((await plane.kubectl(['get', 'lease', 'capo-apiserver', '-n', 'capo-system', '-o', 'json'])).stdout);
      const lease = await readLease();
      expect(lease.spec).toMatchObject({ holderIdentity: expect.stringMatching(/.+_.+/), leaseDurationSeconds: 12, leaseTransitions: 0 });
      // The holder renews it every retry period (2 s).
      const renewed = await pollUntil(
        'a renewal of the lease',
        async () => {
          const again = await readLease();
          return again.metadata.resourceVersion !== lease.metadata.resourceVersion ? again : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 250 },
      );
      expect(renewed.spec.holderIdentity).toBe(lease.spec.holderIdentity);
      expect(Date.parse(renewed.spec.renewTime)).toBeGreaterThan(Date.parse(lease.spec.renewTime));
    });

    it('takes Machines to Provisioned over what our reconciler builds', async () => {
      const applied = await plane.kubectl(['apply', '-f', await exampleManifests(manifests)]);
      expect(applied.code, applied.stderr).toBe(0);
      const provisioned = await plane.kubectl([
        'wait',
        '--for=jsonpath={.status.phase}=Provisioned',
        ...machines.map((name) => `machine/${name}`),
        '--timeout=300s',
      ]);
      expect(provisioned.code, `${provisioned.stderr}\n${await managerLogs()}`).toBe(0);
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
      expect(infraCluster.metadata.ownerReferences).toEqual(
        expect.arrayContaining([expect.objectContaining({ kind: 'Cluster', name: 'demo', uid: cluster.metadata.uid })]),
      );
      expect(cluster.spec.controlPlaneEndpoint.host).toBe(infraCluster.spec.controlPlaneEndpoint.host);

      // The worker's claim lives in kube-apiserver, answered by the pool with an IPAddress there.
      const claim = JSON.parse((await plane.kubectl(['get', 'ipaddressclaims.ipam.cluster.x-k8s.io', 'demo-md-0-0-floating-ip-address', '-o', 'json'])).stdout);
      expect(claim.status.addressRef.name).toBe('demo-md-0-0-floating-ip-address');
      const address = JSON.parse((await plane.kubectl(['get', 'ipaddresses.ipam.cluster.x-k8s.io', 'demo-md-0-0-floating-ip-address', '-o', 'json'])).stdout);
      expect(address.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'IPAddressClaim', uid: claim.metadata.uid })]);
      const [fip] = await census.clients.neutron.listFloatingIps({ floating_ip_address: address.spec.address });
      const worker = JSON.parse((await plane.kubectl(['get', `openstackservers.${group}`, 'demo-md-0-0', '-o', 'json'])).stdout);
      expect((await census.clients.neutron.listPorts({ device_id: worker.status.instanceID })).map((port) => port.id)).toContain(fip.port_id);

      // The dashboard, reached through kube-apiserver, shows the phase Cluster API gave the Cluster there.
      expect(cluster.status.phase).toBe('Provisioned');
      await expect
        .poll(overview, { timeout: 15_000 })
        .toEqual([expect.objectContaining({ namespace: 'default', name: 'demo', phase: 'Provisioned', paused: false })]);
    }, 400_000);

    it('pauses and resumes the Cluster in kube-apiserver from the dashboard, for a user allowed to patch it there', async () => {
      const clusterPaused = async () => JSON.parse((await plane.kubectl(['get', 'cluster', 'demo', '-o', 'json'])).stdout).spec.paused ?? false;
      const admin = await kubectlProxy(plane.kubeconfig);
      try {
        const api = `${admin.url}/apis/extensions.capo-apiserver.io/v1alpha1/dashboard/api`;
        const { csrfToken } = (await (await fetch(`${api}/session`)).json()) as { csrfToken: string };
        expect(((await (await fetch(`${api}/namespaces/default/clusters/demo`)).json()) as { actions: { pause: boolean } }).actions.pause).toBe(true);
        for (const [action, paused] of [
          ['pause', true],
          ['resume', false],
        ] as const) {
          const answer = await fetch(`${api}/namespaces/default/clusters/demo/${action}`, { method: 'POST', headers: { 'X-CSRF-Token': csrfToken } });
          expect(await answer.json()).toEqual({ paused });
          expect(await clusterPaused()).toBe(paused);
          await expect.poll(overview, { timeout: 15_000 }).toEqual([expect.objectContaining({ name: 'demo', paused })]);
        }
      } finally {
        admin.stop();
      }

      // A user who may read everything of ours and Cluster API's, but not patch a Cluster, is offered no pause and refused one.
      const viewerRbac = [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: 'capo-viewer' },
          rules: [
            { apiGroups: [group, 'cluster.x-k8s.io'], resources: ['*'], verbs: ['get', 'list', 'watch'] },
            { apiGroups: ['extensions.capo-apiserver.io'], resources: ['*'], verbs: ['*'] },
          ],
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: 'capo-viewer' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'capo-viewer' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'viewer' }],
        },
      ];
      const applied = await plane.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: viewerRbac }));
      expect(applied.code, applied.stderr).toBe(0);
      const viewer = await kubectlProxy(plane.kubeconfig, { as: 'viewer' });
      try {
        const api = `${viewer.url}/apis/extensions.capo-apiserver.io/v1alpha1/dashboard/api`;
        // kube-apiserver's RBAC takes the new binding in within moments.
        await expect.poll(async () => (await fetch(`${api}/namespaces/default/clusters/demo`)).status, { timeout: 15_000 }).toBe(200);
        const { csrfToken } = (await (await fetch(`${api}/session`)).json()) as { csrfToken: string };
        expect(((await (await fetch(`${api}/namespaces/default/clusters/demo`)).json()) as { actions: { pause: boolean } }).actions.pause).toBe(false);
        const refused = await fetch(`${api}/namespaces/default/clusters/demo/pause`, { method: 'POST', headers: { 'X-CSRF-Token': csrfToken } });
        expect(refused.status).toBe(403);
        expect(await refused.json()).toMatchObject({
          reason: 'Forbidden',
          message: expect.stringContaining('User "viewer" cannot patch resource "clusters" in API group "cluster.x-k8s.io"'),
        });
        expect(await clusterPaused()).toBe(false);
      } finally {
        viewer.stop();
      }
    }, 120_000);

    it("clones our OpenStackMachineTemplate for a MachineDeployment's Machines and provisions them", async () => {
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
      expect(created.code, `${created.stderr}\n${status.slice(-3000)}\n${await managerLogs(6000)}`).toBe(0);
      const provisioned = await plane.kubectl(['wait', '--for=jsonpath={.status.phase}=Provisioned', 'machines', '-l', selector, '--timeout=300s']);
      expect(provisioned.code, `${provisioned.stderr}\n${await managerLogs()}`).toBe(0);
      const cloned = JSON.parse((await plane.kubectl(['get', `openstackmachines.${group}`, '-l', selector, '-o', 'json'])).stdout).items;
      expect(cloned).toHaveLength(2);
      for (const infra of cloned) {
        expect(infra.spec.flavor).toEqual({ filter: { name: 'm1.small' } });
        expect(infra.metadata.ownerReferences).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'Machine' })]));
        expect(infra.status.initialization.provisioned).toBe(true);
      }
      // Cluster API made the Cluster the template's owner; the template reports a machine's capacity, for autoscaling from zero.
      const capacity = await plane.kubectl([
        'wait',
        '--for=jsonpath={.status.capacity.memory}=2Gi',
        `openstackmachinetemplates.${group}/demo-md-1`,
        '--timeout=60s',
      ]);
      expect(capacity.code, `${capacity.stderr}\n${(await plane.kubectl(['get', `openstackmachinetemplates.${group}/demo-md-1`, '-o', 'yaml'])).stdout}`).toBe(
        0,
      );
      const reported = JSON.parse((await plane.kubectl(['get', `openstackmachinetemplates.${group}/demo-md-1`, '-o', 'json'])).stdout);
      expect(reported.metadata.ownerReferences).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'Cluster', name: 'demo' })]));
      expect(reported.status.capacity).toEqual({ cpu: '1', memory: '2Gi', storage: '20Gi' });
    }, 400_000);

    it('deletes everything when the Cluster is deleted, leaving nothing in the cloud', async () => {
      expect((await plane.kubectl(['delete', 'cluster', 'demo', '--wait=false'])).code).toBe(0);
      const gone = await plane.kubectl(['wait', '--for=delete', 'cluster/demo', '--timeout=300s']);
      expect(gone.code, `${gone.stderr}\n${await managerLogs()}`).toBe(0);
      expect((await plane.kubectl(['get', `openstackmachines.${group}`, '-A', '-o', 'name'])).stdout).toBe('');
      // The pool outlives the Cluster; it goes once it has released the worker's address.
      const pool = await plane.kubectl(['delete', `openstackfloatingippools.${group}/workers`, '--timeout=60s']);
      expect(pool.code, pool.stderr).toBe(0);
      expect((await plane.kubectl(['get', 'ipaddresses.ipam.cluster.x-k8s.io', '-A', '-o', 'name'])).stdout).toBe('');
      // The example's ORC Images belong to no Cluster: they stay in Glance until they are deleted themselves.
      expect((await census.ours()).counts).toEqual({ ...noResources, images: 2 });
      const images = await plane.kubectl(['delete', '-f', path.join(manifests, '00-images.yaml'), '--timeout=120s']);
      expect(images.code, images.stderr).toBe(0);
      expect((await census.ours()).counts).toEqual(noResources);
    }, 400_000);

    it("builds a Cluster of CAPO's reference ClusterClass from our templates, and provisions its control plane", async () => {
      const identity = await plane.kubectl(['apply', '-f', path.join(manifests, '00-cloud-credentials.yaml')]);
      expect(identity.code, identity.stderr).toBe(0);
      const classApplied = await plane.kubectl(['apply', '-f', '-'], renderCapoTemplate('clusterclass-dev-test.yaml', {}));
      expect(classApplied.code, classApplied.stderr).toBe(0);
      const cluster = {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Cluster',
        metadata: { name: 'topo', namespace: 'default' },
        spec: {
          clusterNetwork: { pods: { cidrBlocks: ['192.168.0.0/16'] } },
          topology: {
            classRef: { name: 'dev-test' },
            version: 'v1.33.1',
            controlPlane: { replicas: 1 },
            workers: {
              machineDeployments: [
                // The rollout and every variable the class's patches read are given: Cluster API's defaulting webhook is not registered here.
                {
                  class: 'default-worker',
                  name: 'md-0',
                  replicas: 1,
                  rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
                },
              ],
            },
            variables: [
              { name: 'identityRef', value: { name: 'demo-cloud-config', cloudName: 'openstack' } },
              { name: 'imageName', value: 'ubuntu-22.04' },
              { name: 'addImageVersion', value: false },
              { name: 'imageRef', value: '' },
              { name: 'injectIgnitionSysext', value: false },
              { name: 'allowedCIDRs', value: [] },
              { name: 'bastion', value: { enabled: false } },
            ],
          },
        },
      };
      const applied = await plane.kubectl(['apply', '-f', '-'], JSON.stringify(cluster));
      expect(applied.code, applied.stderr).toBe(0);
      const selector = 'cluster.x-k8s.io/cluster-name=topo';

      // The infrastructure cluster, from our OpenStackClusterTemplate with the class's identityRef patch.
      const provisioned = await plane.kubectl([
        'wait',
        '--for=jsonpath={.status.initialization.infrastructureProvisioned}=true',
        'cluster/topo',
        '--timeout=180s',
      ]);
      const classStatus = (await plane.kubectl(['get', 'clusterclass', 'dev-test', '-o', 'jsonpath={.status}'])).stdout;
      expect(provisioned.code, `${provisioned.stderr}\n${classStatus}\n${await managerLogs()}`).toBe(0);
      const owner = JSON.parse((await plane.kubectl(['get', 'cluster', 'topo', '-o', 'json'])).stdout);
      const [infraCluster] = JSON.parse((await plane.kubectl(['get', `openstackclusters.${group}`, '-l', selector, '-o', 'json'])).stdout).items;
      expect(owner.spec.infrastructureRef).toEqual({ apiGroup: group, kind: 'OpenStackCluster', name: infraCluster.metadata.name });
      expect(infraCluster.metadata.labels['capo.e2e.test/template-metadata']).toBe('propagated');
      expect(infraCluster.metadata.annotations['cluster.x-k8s.io/cloned-from-name']).toBe('dev-test-openstackcluster');
      expect(infraCluster.spec.identityRef).toEqual({ type: 'Secret', name: 'demo-cloud-config', cloudName: 'openstack' });
      expect(infraCluster.spec.managedSubnets).toEqual([expect.objectContaining({ cidr: '10.6.0.0/24' })]);
      expect(infraCluster.metadata.ownerReferences).toEqual(
        expect.arrayContaining([expect.objectContaining({ kind: 'Cluster', name: 'topo', uid: owner.metadata.uid })]),
      );

      // kubeadm's control plane takes a Machine through our OpenStackMachineTemplate, patched by the class.
      const controlPlane = 'cluster.x-k8s.io/control-plane';
      const controlPlaneCreated = await plane.kubectl(['wait', '--for=jsonpath={.status.controlPlane.replicas}=1', 'cluster/topo', '--timeout=120s']);
      expect(controlPlaneCreated.code, `${controlPlaneCreated.stderr}\n${await managerLogs()}`).toBe(0);
      const machineUp = await plane.kubectl([
        'wait',
        '--for=jsonpath={.status.phase}=Provisioned',
        'machines',
        '-l',
        `${selector},${controlPlane}`,
        '--timeout=300s',
      ]);
      const machines = (await plane.kubectl(['get', 'machines,kubeadmcontrolplanes,kubeadmconfigs', '-o', 'yaml'])).stdout;
      expect(machineUp.code, `${machineUp.stderr}\n${machines.slice(-3000)}\n${await managerLogs()}`).toBe(0);
      const [controlPlaneMachine] = JSON.parse(
        (await plane.kubectl(['get', `openstackmachines.${group}`, '-l', `${selector},${controlPlane}`, '-o', 'json'])).stdout,
      ).items;
      expect(controlPlaneMachine.spec.flavor).toEqual({ filter: { name: 'm1.medium' } });
      expect(controlPlaneMachine.spec.image).toEqual({ filter: { name: 'ubuntu-22.04' } });
      expect(controlPlaneMachine.status.initialization.provisioned).toBe(true);

      // Workers: once the control plane reports its version, the topology adds the MachineDeployment, cloned from our worker template.
      const workers = `${selector},topology.cluster.x-k8s.io/deployment-name=md-0`;
      const workerUp = await plane.kubectl(['wait', '--for=jsonpath={.status.workers.replicas}=1', 'cluster/topo', '--timeout=180s']);
      expect(workerUp.code, `${workerUp.stderr}\n${await managerLogs()}`).toBe(0);
      const [worker] = JSON.parse((await plane.kubectl(['get', `openstackmachines.${group}`, '-l', workers, '-o', 'json'])).stdout).items;
      expect(worker.spec.flavor).toEqual({ filter: { name: 'm1.small' } });
      expect(worker.spec.image).toEqual({ filter: { name: 'ubuntu-22.04' } });
    }, 600_000);

    it('deletes the topology Cluster and everything built for it, leaving nothing in the cloud', async () => {
      expect((await plane.kubectl(['delete', 'cluster', 'topo', '--wait=false'])).code).toBe(0);
      const gone = await plane.kubectl(['wait', '--for=delete', 'cluster/topo', '--timeout=300s']);
      expect(gone.code, `${gone.stderr}\n${await managerLogs()}`).toBe(0);
      expect((await plane.kubectl(['get', `openstackmachines.${group},openstackclusters.${group}`, '-A', '-o', 'name'])).stdout).toBe('');
      expect((await census.ours()).counts).toEqual(noResources);
    }, 400_000);
  },
);
