/**
 * deploy/ as a platform team installs it, on a real one-node Kubernetes (harness/node: kubelet,
 * containerd, kube-proxy, the scheduler and controller manager beside kube-apiserver) running the
 * image scripts/image/build.sh makes: `kubectl apply -k`, the serving certificate, the APIServices
 * Available, our kinds through kube-apiserver, the reconciler in the pod building the example
 * cluster in a simulated cloud beside the node; probes that restart a dead or frozen process with
 * its data intact; a rollout restart that keeps every object; two replicas on etcd, one frozen and
 * the other taking the leader Lease; a drain that stops at the PodDisruptionBudget. Each wrong
 * input on the way (no PersistentVolume, no serving Secret, a wrong caBundle, a second replica on
 * SQLite) shows its cause where an operator looks. Skipped, naming why, where the node's binaries,
 * podman or root are missing.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '../../src/simulator/host.js';
import { waitForReady, waitForDeletion, type Kubectl } from '../../harness/cluster-flow.js';
import { CloudCensus, noResources } from '../../harness/census.js';
import { buildImage } from '../../harness/image.js';
import { createDataVolume, createServingSecret, installNamespace as namespace } from '../../harness/install-prerequisites.js';
import { nodeUnavailable, startNode, type Node } from '../../harness/node.js';
import { pollUntil } from '../../harness/poll.js';
import { renderExamples } from '../reconcile/flows/examples.js';

const unavailable = nodeUnavailable();
if (unavailable) console.warn(`deploy/ on a node is skipped: ${unavailable}`);

const repository = path.resolve(import.meta.dirname, '../..');
const selector = 'app.kubernetes.io/name=capo-apiserver';

let node: Node;
let cloud: Simulator;
let census: CloudCensus;
let work: string;
let manifests: string;
let kubectl: Kubectl;

/** A kustomization over deploy/ (or deploy/etcd) that runs the image built here, as a user's overlay names their registry's. */
async function overlay(name: string, base: string, image: string, patches: object[] = []): Promise<string> {
  const dir = path.join(work, name);
  const [newName, newTag] = image.split(/:(?=[^:/]+$)/);
  await mkdir(dir, { recursive: true });
  // The cloud beside the node serves the examples' images on the node's private address, which the server refuses to
  // download from unless the operator allows it: as an operator with a mirror on their own network does.
  const mirror = {
    target: { kind: 'Deployment', name: 'capo-apiserver' },
    patch: JSON.stringify([{ op: 'add', path: '/spec/template/spec/containers/0/args/-', value: `--image-download-allow=${new URL(cloud.url).host}` }]),
  };
  // kustomize takes bases by relative path only.
  await writeFile(
    path.join(dir, 'kustomization.yaml'),
    stringify({ resources: [path.relative(dir, base)], images: [{ name: 'capo-apiserver', newName, newTag }], patches: [...patches, mirror] }),
  );
  return dir;
}

async function must(args: string[], input?: string): Promise<string> {
  const result = await node.kubectl(args, input);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}\n${await diagnostics()}`);
  return result.stdout;
}

/** What an operator would look at first: the pods, their events and the server's last log lines. */
async function diagnostics(): Promise<string> {
  const pods = await node.kubectl(['get', 'pods', '-n', namespace, '-o', 'wide']);
  const events = await node.kubectl(['get', 'events', '-n', namespace, '--sort-by=.lastTimestamp']);
  const logs = await node.kubectl(['logs', '-n', namespace, '-l', selector, '--tail=30', '--all-containers']);
  return `${pods.stdout}\n${events.stdout.split('\n').slice(-20).join('\n')}\n${logs.stdout.slice(-4000)}`;
}

/** The events of the namespace's objects, as `kubectl get events` lists them. */
async function eventsMatching(pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  return pollUntil(
    `an event matching ${pattern}`,
    async () => {
      const events = JSON.parse(await must(['get', 'events', '-n', namespace, '-o', 'json'])) as { items: { reason: string; message: string }[] };
      return events.items.map((event) => `${event.reason}: ${event.message}`).find((line) => pattern.test(line));
    },
    { timeoutMs, intervalMs: 500 },
  );
}

interface PodStatus {
  metadata: { name: string; uid: string };
  status: {
    phase: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { containerID?: string; restartCount: number; ready: boolean }[];
  };
}

async function pods(): Promise<PodStatus[]> {
  return (JSON.parse(await must(['get', 'pods', '-n', namespace, '-l', selector, '-o', 'json'])) as { items: PodStatus[] }).items;
}

async function waitForRollout(timeoutSeconds = 180): Promise<void> {
  await must(['rollout', 'status', '-n', namespace, 'deployment/capo-apiserver', `--timeout=${timeoutSeconds}s`]);
}

/** The names and uids of every object of ours the example made, read through kube-apiserver. */
async function storedObjects(): Promise<string[]> {
  const listed = JSON.parse(await must(['get', 'openstackclusters,openstackmachines,openstackservers', '-A', '-o', 'json'])) as {
    items: { kind: string; metadata: { name: string; uid: string } }[];
  };
  return listed.items.map((item) => `${item.kind}/${item.metadata.name}/${item.metadata.uid}`).sort();
}

/**
 * Deletes the example through the reconciler, its identity Secret last: in a management cluster the
 * Secret is kube-apiserver's, and nothing there keeps it while our objects still need its
 * credentials to delete their cloud resources (as with CAPO, delete the cluster first).
 */
async function deleteExample(): Promise<void> {
  const credentials = path.join(manifests, '00-cloud-credentials.yaml');
  const rest = (await readdir(manifests)).filter((file) => file.endsWith('.yaml') && path.join(manifests, file) !== credentials);
  await must(['delete', '--wait=false', ...rest.flatMap((file) => ['-f', path.join(manifests, file)])]);
  await waitForDeletion(kubectl, 300);
  await must(['delete', '-f', credentials]);
}

async function apiServiceNames(): Promise<string[]> {
  const names = await must(['get', 'apiservices', '-o', `jsonpath={range .items[?(@.spec.service.name=="capo-apiserver")]}{.metadata.name}{"\\n"}{end}`]);
  return names.trim().split('\n').filter(Boolean);
}

/**
 * Every APIService of ours Available. After the server was away (killed, frozen, replaced) kube-apiserver
 * answers 503 for our groups until its next availability check passes, a little after the pod is Ready.
 */
async function waitForApiServices(): Promise<void> {
  await must(['wait', '--for=condition=Available', '--timeout=120s', ...(await apiServiceNames()).map((name) => `apiservice/${name}`)]);
}

async function setCaBundle(pem: string): Promise<void> {
  const patch = JSON.stringify({ spec: { caBundle: Buffer.from(pem).toString('base64') } });
  for (const name of await apiServiceNames()) await must(['patch', 'apiservice', name, '--type=merge', '-p', patch]);
}

describe.skipIf(unavailable !== undefined)(unavailable === undefined ? 'deploy/ on a real node' : `deploy/ on a real node (skipped: ${unavailable})`, () => {
  let image: string;

  beforeAll(async () => {
    image = await buildImage();
    node = await startNode({ crds: ['capi'] });
    kubectl = (args) => node.kubectl(args);
    await node.importImage(image);
    cloud = await startSimulator({ port: 0, host: node.nodeIp, transitionDelayMs: 100 });
    census = await CloudCensus.open(cloud);
    work = await mkdtemp(path.join(os.tmpdir(), 'capo-deploy-'));
    manifests = await renderExamples(cloud.url);
  }, 40 * 60_000);

  afterAll(async () => {
    census?.close();
    await cloud?.close();
    await node?.stop();
    if (work) await rm(work, { recursive: true, force: true });
    if (manifests) await rm(manifests, { recursive: true, force: true });
  }, 180_000);

  it(
    'installs with kubectl apply -k, naming each missing piece until it is given, and serves our kinds through kube-apiserver',
    async () => {
      await must(['apply', '-k', await overlay('sqlite', path.join(repository, 'deploy'), image)]);

      // No PersistentVolume yet: the claim cannot bind, and the scheduler says why.
      expect(await eventsMatching(/FailedScheduling: .*unbound immediate PersistentVolumeClaims/)).toBeTruthy();
      await createDataVolume(node, path.join(work, 'volume'));

      // Bound and scheduled, the pod waits for its serving certificate, and the kubelet says which Secret.
      expect(await eventsMatching(/FailedMount: .*secret "capo-apiserver-tls" not found/)).toBeTruthy();
      await createServingSecret(node, work);
      await waitForRollout();

      // A caBundle that did not sign the serving certificate: kube-apiserver's availability check does
      // not verify TLS, so the APIServices stay Available, but every request for our groups is refused
      // with 503, and kube-apiserver's log names the certificate error.
      const names = await apiServiceNames();
      expect(names).toHaveLength(5);
      await setCaBundle(await readFile(node.frontProxyCaCert, 'utf8'));
      const refused = await pollUntil(
        'kube-apiserver to refuse our group for the wrong CA',
        async () => {
          const answer = await node.kubectl(['get', '--raw', '/apis/infrastructure.cluster.x-k8s.io/v1beta2/openstackclusters']);
          return answer.code !== 0 ? answer.stderr : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 500 },
      );
      expect(refused).toContain('ServiceUnavailable');
      expect(await readFile(path.join(node.dir, 'kube-apiserver.log'), 'utf8')).toMatch(/x509: certificate signed by unknown authority/);
      // Our server reads its APIServices and says which caBundle is wrong, in its own log.
      const warned = await pollUntil(
        'the server to name the wrong caBundle',
        async () => {
          const logs = await node.kubectl(['logs', '-n', namespace, 'deployment/capo-apiserver']);
          return /APIService v1beta2\.infrastructure\.cluster\.x-k8s\.io: spec\.caBundle \(.*\) did not sign this server's certificate/.test(logs.stdout)
            ? true
            : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 1000 },
      );
      expect(warned).toBe(true);

      await setCaBundle(await readFile(node.caCert, 'utf8'));
      await must(['wait', '--for=condition=Available', '--timeout=120s', ...names.map((name) => `apiservice/${name}`)]);
      expect(await must(['get', 'openstackclusters', '-A'])).toBe('');
    },
    10 * 60_000,
  );

  it(
    'builds the example cluster from the pod, in the cloud beside the node',
    async () => {
      await must(['apply', '-f', manifests]);
      await waitForReady(kubectl, 'demo', 300);
    },
    8 * 60_000,
  );

  it(
    'restarts a killed process and a frozen one (liveness), with every object kept',
    async () => {
      const before = await storedObjects();
      const [pod] = await pods();
      const container = pod!.status.containerStatuses![0]!;
      process.kill(await node.containerPid(container.containerID!), 'SIGKILL');
      await pollUntil(
        'the kubelet to restart the killed container',
        async () => {
          const [again] = await pods();
          const status = again?.status.containerStatuses?.[0];
          return status && status.restartCount > container.restartCount && status.ready ? true : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      await waitForApiServices();
      expect(await storedObjects()).toEqual(before);

      // Frozen, it answers no probe: readiness takes it out of the Service, liveness restarts it.
      const [frozen] = await pods();
      const frozenStatus = frozen!.status.containerStatuses![0]!;
      process.kill(await node.containerPid(frozenStatus.containerID!), 'SIGSTOP');
      await pollUntil('readiness to fail', async () => ((await pods())[0]?.status.containerStatuses?.[0]?.ready === false ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      expect(await eventsMatching(/Unhealthy: Liveness probe failed/, 120_000)).toBeTruthy();
      await pollUntil(
        'liveness to restart the frozen container',
        async () => {
          const status = (await pods())[0]?.status.containerStatuses?.[0];
          return status && status.restartCount > frozenStatus.restartCount && status.ready ? true : undefined;
        },
        { timeoutMs: 180_000, intervalMs: 1000 },
      );
      await waitForApiServices();
      expect(await storedObjects()).toEqual(before);
    },
    8 * 60_000,
  );

  it(
    'keeps every object across a rollout restart, and refuses a second replica on SQLite with the reason',
    async () => {
      const before = await storedObjects();
      const [old] = await pods();
      await must(['rollout', 'restart', '-n', namespace, 'deployment/capo-apiserver']);
      await waitForRollout();
      const [replaced] = await pods();
      expect(replaced!.metadata.uid).not.toBe(old!.metadata.uid);
      await waitForApiServices();
      expect(await storedObjects()).toEqual(before);

      // Two pods on one SQLite database: the second cannot take the database's lock and says so.
      await must(['scale', '-n', namespace, 'deployment/capo-apiserver', '--replicas=2']);
      const second = await pollUntil(
        'the second replica to fail',
        async () => {
          const second = (await pods()).find((pod) => pod.metadata.uid !== replaced!.metadata.uid);
          if (second === undefined) return undefined;
          // Its last run's output: the current container's while it has just exited, the previous one's once it waits to restart.
          for (const previous of [[], ['--previous']]) {
            const logs = await node.kubectl(['logs', '-n', namespace, second.metadata.name, ...previous]);
            if (logs.code === 0 && /SQLite/.test(logs.stdout)) return logs.stdout;
          }
          return undefined;
        },
        { timeoutMs: 120_000, intervalMs: 1000 },
      );
      expect(second).toMatch(/another process holds the SQLite database .* one replica owns it; several replicas need --storage etcd/);
      await must(['scale', '-n', namespace, 'deployment/capo-apiserver', '--replicas=1']);
      await pollUntil('one replica again', async () => ((await pods()).length === 1 ? true : undefined), { timeoutMs: 120_000, intervalMs: 500 });
      await waitForApiServices();
      expect(await storedObjects()).toEqual(before);
      // The one left is the one that held the database all along.
      expect((await pods())[0]!.metadata.uid).toBe(replaced!.metadata.uid);
    },
    8 * 60_000,
  );

  it(
    'runs two replicas on etcd: the survivor takes the leader Lease from a frozen leader, and a drain stops at the disruption budget',
    async () => {
      // Tear the SQLite install's cluster down through its reconciler, then move the install to etcd.
      await deleteExample();
      await must([
        'apply',
        '-k',
        await overlay('etcd', path.join(repository, 'deploy', 'etcd'), image, [
          {
            target: { kind: 'Deployment', name: 'capo-apiserver' },
            patch: JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/args/6', value: `--etcd-servers=${node.podEtcdUrl}` }]),
          },
        ]),
      ]);
      await waitForRollout(240);
      // The SQLite replica goes once the new ones are ready; it takes its grace period to stop.
      await pollUntil('the two etcd replicas alone', async () => ((await pods()).length === 2 ? true : undefined), { timeoutMs: 60_000, intervalMs: 500 });
      await waitForApiServices();
      await must(['apply', '-f', manifests]);
      await waitForReady(kubectl, 'demo', 300);

      const holder = async () =>
        (JSON.parse(await must(['get', 'lease', 'capo-apiserver', '-n', namespace, '-o', 'json'])).spec as { holderIdentity: string }).holderIdentity;
      const leader = await holder();
      const leaderPod = (await pods()).find((pod) => leader.startsWith(`${pod.metadata.name}_`));
      expect(leaderPod, leader).toBeDefined();
      const pid = await node.containerPid(leaderPod!.status.containerStatuses![0]!.containerID!);
      process.kill(pid, 'SIGSTOP');
      try {
        const survivor = (await pods()).find((pod) => pod.metadata.uid !== leaderPod!.metadata.uid)!;
        await pollUntil('the other replica to take the Lease', async () => ((await holder()).startsWith(`${survivor.metadata.name}_`) ? true : undefined), {
          timeoutMs: 60_000,
          intervalMs: 500,
        });
        // Until its readiness probe fails, the frozen replica still receives its share of the requests
        // kube-apiserver routes to the Service, and they hang: the client waits for it to be taken out.
        await pollUntil(
          'the frozen replica out of the Service',
          async () => {
            const frozen = (await pods()).find((pod) => pod.metadata.uid === leaderPod!.metadata.uid);
            return frozen?.status.containerStatuses?.[0]?.ready === false ? true : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 500 },
        );
        // A discovery check that reached the frozen replica marked the APIServices unavailable; the next one, through the survivor, clears it.
        await waitForApiServices();
        // The survivor reconciles: the cluster's deletion runs its finalizers through the cloud.
        await deleteExample();
      } finally {
        // Its liveness probe may have had the kubelet replace it meanwhile.
        try {
          process.kill(pid, 'SIGCONT');
        } catch {}
      }
      // Everything the examples made, their Images included, is gone from the cloud.
      expect((await census.ours()).counts).toEqual(noResources);

      // One node: the first eviction leaves a replica with nowhere to go, so the budget refuses the second.
      const drain = await node.kubectl(['drain', 'capo-node', '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=40s', '--pod-selector', selector]);
      expect(drain.code).not.toBe(0);
      expect(drain.stderr + drain.stdout).toMatch(/Cannot evict pod as it would violate the pod's disruption budget/);
      await must(['uncordon', 'capo-node']);
      await waitForRollout(240);
    },
    15 * 60_000,
  );
});
