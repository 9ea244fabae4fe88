/**
 * The cluster flow against real OpenStack Zed (ministack): an ORC Image
 * uploaded to Glance from a mirror on loopback (hash checked), network,
 * router, security groups, API load balancer with a floating IP, bastion, one
 * control plane and one worker machine booted from that Image, the worker's
 * floating IP from an OpenStackFloatingIPPool, created
 * through this server with its
 * reconciler, Ready for kubectl, then deleted, leaving nothing of the run in
 * any service. MINISTACK_CLOUDS names ministack's clouds.yaml (clouds
 * `ministack` and `ministack-admin`); without it the suite is skipped on a
 * workstation and fails in CI, which starts ministack for it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { servedKinds } from '../../../src/served-kinds.js';
import { createServiceClients, loadCloud, OpenStackSession } from '../../../src/openstack/index.js';
import { startTestServer, type TestServer } from '../../../harness/test-server.js';
import { clusterManifests, countByKind, remnants, singleCloudYaml, type Remnant } from './ministack-cluster.js';
import { waitForObject } from '../../../harness/cluster-flow.js';

const cloudsPath = process.env.MINISTACK_CLOUDS;
const inCi = !['', 'false', undefined].includes(process.env.CI);

if (cloudsPath === undefined && inCi) {
  describe('the cluster flow against ministack', () => {
    it('has ministack to run against', () => {
      throw new Error(
        "MINISTACK_CLOUDS is unset in CI, which starts ministack for this suite: set it to ministack's clouds.yaml (e.g. /tmp/ministack/clouds.yaml)",
      );
    });
  });
} else if (cloudsPath === undefined) {
  console.warn("the cluster flow against ministack is skipped: set MINISTACK_CLOUDS to a running ministack's clouds.yaml to run it");
}

/**
 * Ministack's fake compute takes 5-30 s per server and Octavia 3-10 s per
 * load balancer child, one after another. On two cores shared with the rest
 * of the suite (the fidelity suite on the same ministack among it) the first
 * build took 233 s alone and past 300 s beside it, so each wait has seven
 * minutes: a bound against a hang, not a speed target.
 */
const limits = { readySeconds: 420, deleteSeconds: 150 };
const namespace = 'default';
const execFileAsync = promisify(execFile);

describe.skipIf(cloudsPath === undefined)('the cluster flow against ministack', () => {
  const name = `ms-${randomBytes(3).toString('hex')}`;
  const requestLog: string[] = [];
  let server: TestServer;
  let admin: OpenStackSession;
  let manifests: string;
  let deletionStarted = false;
  let mirror: Awaited<ReturnType<typeof serveImage>>;

  beforeAll(async () => {
    const cloudsYaml = await readFile(cloudsPath!, 'utf8');
    admin = await OpenStackSession.create(loadCloud({ cloudsYaml, cloudName: 'ministack-admin' }));
    mirror = await serveImage();
    manifests = clusterManifests({ name, namespace, cloudsYaml: singleCloudYaml(cloudsYaml, 'ministack'), cloudName: 'ministack', nodeImage: mirror.image });
    server = await startTestServer({
      kinds: servedKinds,
      // The mirror is on loopback, which downloads refuse unless an operator allows it (--image-download-allow): its address and port only.
      reconciler: {
        resyncPeriodMs: 20_000,
        sessionOptions: { logger: (line) => requestLog.push(line) },
        imageDownloads: { allow: [new URL(mirror.image.url).host] },
      },
    });
  });

  afterAll(
    async () => {
      // A run whose creation failed still removes its cluster, so a workstation's ministack does not fill up;
      // a failed deletion is not tried twice, which would take the suite past eight minutes.
      if (server !== undefined && !deletionStarted)
        await kubectlToEnd(server, ['delete', '-f', '-', '--ignore-not-found', '--wait=true', `--timeout=${limits.deleteSeconds}s`], manifests);
      await server?.stop();
      admin?.close();
      mirror?.server.close();
      console.info(
        `ministack cluster flow (${name}): ${requestLog.length} OpenStack requests; by service and method: ${JSON.stringify(requestsByCall(requestLog))}`,
      );
    },
    (limits.deleteSeconds + 30) * 1000,
  );

  it(
    'creates the cluster and its machines until kubectl wait sees them Ready',
    async () => {
      const applied = await server.kubectl(['apply', '-f', '-'], { input: manifests });
      expect(applied.stderr).toBe('');

      const started = Date.now();
      const clusterReady = await kubectlToEnd(server, ['wait', '--for=condition=Ready', `openstackcluster/${name}`, `--timeout=${limits.readySeconds}s`]);
      expect(clusterReady.stderr, await progress(server, requestLog)).toBe('');
      const remaining = Math.max(1, limits.readySeconds - Math.round((Date.now() - started) / 1000));
      const machinesReady = await kubectlToEnd(server, ['wait', '--for=condition=Ready', 'openstackmachines', '--all', `--timeout=${remaining}s`]);
      expect(machinesReady.stderr, await progress(server, requestLog)).toBe('');

      const cluster = openStackClusterStatus.parse(JSON.parse((await server.kubectl(['get', 'openstackcluster', name, '-o', 'json'])).stdout));
      expect(cluster.status.initialization.provisioned).toBe(true);
      // ministack's external network `public` is 172.24.4.0/24: both addresses are floating IPs on it.
      expect(cluster.status.apiServerManagedLoadBalancer.ip).toMatch(/^172\.24\.4\.\d+$/);
      expect(cluster.status.bastion.floatingIP).toMatch(/^172\.24\.4\.\d+$/);
      expect(cluster.spec.controlPlaneEndpoint?.host).toBe(cluster.status.apiServerManagedLoadBalancer.ip);

      // The census must see what the cluster owns, or an empty one after deletion would prove nothing.
      const owned = countByKind(await remnants(admin, await runTraces(server, name)));
      // Exact counts: a duplicate made by a retried create would show here.
      expect(owned).toEqual(ownedOnceReady);

      // The pool answered the worker's claim, and the address is on the worker's port.
      const address = ipAddress.parse(JSON.parse((await server.kubectl(['get', 'ipaddress', `${name}-md-0-0-floating-ip-address`, '-o', 'json'])).stdout));
      const worker = workerServer.parse(JSON.parse((await server.kubectl(['get', 'openstackserver', `${name}-md-0-0`, '-o', 'json'])).stdout));
      expect(worker.status.conditions.find((condition) => condition.type === 'FloatingAddressFromPoolReady')?.status).toBe('True');
      const { neutron } = createServiceClients(admin);
      const [fip] = await neutron.listFloatingIps({ floating_ip_address: address.spec.address });
      const workerPorts = await neutron.listPorts({ device_id: worker.status.instanceID });
      expect(workerPorts.map((port) => port.id)).toContain(fip.port_id);
    },
    (limits.readySeconds + 30) * 1000,
  );

  it(
    'heals what the openstack CLI deletes behind its back: the router, the API load balancer, a security group rule, the node image; fails a machine whose server is deleted, as CAPO does',
    async () => {
      const before = openStackClusterStatus.parse(JSON.parse((await server.kubectl(['get', 'openstackcluster', name, '-o', 'json'])).stdout)).status;
      const { neutron } = createServiceClients(admin);
      const apiRule = (await neutron.listSecurityGroupRules({ security_group_id: before.controlPlaneSecurityGroup.id })).find(
        (rule) => rule.direction === 'ingress' && rule.port_range_min === 6443,
      );
      expect(apiRule, 'the control plane group admits the API').toBeDefined();
      await openstackCli(['security group rule', 'delete', apiRule!.id]);
      const image = imageStatus.parse(JSON.parse((await server.kubectl(['get', 'images.openstack.k-orc.cloud', `${name}-node`, '-o', 'json'])).stdout));
      await openstackCli(['image', 'delete', image.status.id]);
      // Neutron refuses to take a router's interface while floating IPs are reached through it: a cleanup script lets them go first.
      // Paused meanwhile, or the reconciler would put the floating IPs back between the script's steps.
      await setPaused(server, name, true);
      const ours = (await remnants(admin, await runTraces(server, name))).filter((remnant) => remnant.kind === 'floating IP');
      for (const fip of ours) await openstackCli(['floating ip', 'unset', '--port', fip.id]);
      await openstackCli(['router', 'remove subnet', before.router.id, before.network.subnets[0].id]);
      await openstackCli(['router', 'delete', before.router.id]);
      await openstackCli(['loadbalancer', 'delete', '--cascade', '--wait', before.apiServerManagedLoadBalancer.id]);
      await setPaused(server, name, false);
      const healed = await clusterStatusWhen(
        server,
        name,
        (status) => status.router.id !== before.router.id && status.apiServerManagedLoadBalancer.id !== before.apiServerManagedLoadBalancer.id,
        limits.readySeconds,
      );
      // The floating IP moved to the new VIP: the endpoint stays.
      expect(healed.apiServerManagedLoadBalancer.ip).toBe(before.apiServerManagedLoadBalancer.ip);
      await waitUntilReady(server, name, requestLog);
      for (const address of [healed.apiServerManagedLoadBalancer.ip, healed.bastion.floatingIP]) {
        const [fip] = z
          .array(z.looseObject({ Port: z.string().nullable() }))
          .parse(JSON.parse(await openstackCli(['floating ip', 'list', '--floating-ip-address', address, '-f', 'json'])));
        expect(fip?.Port, `${address} is on a port again`).not.toBeNull();
      }
      // The rule is written again (at the group's next resync at the latest), the image made and uploaded again from the mirror.
      const ruleBack = async () =>
        (await neutron.listSecurityGroupRules({ security_group_id: healed.controlPlaneSecurityGroup.id })).some(
          (rule) => rule.direction === 'ingress' && rule.port_range_min === 6443,
        );
      await vi.waitFor(async () => expect(await ruleBack()).toBe(true), { timeout: limits.readySeconds * 1000, interval: 2_000 });
      await waitForObject(
        server.kubectl,
        `images.openstack.k-orc.cloud/${name}-node`,
        'make the image again',
        (object) => {
          const now = imageStatus.parse(object);
          return now.status.id !== image.status.id && now.status.conditions.some((condition) => condition.type === 'Available' && condition.status === 'True');
        },
        limits.readySeconds,
      );
      expect(countByKind(await remnants(admin, await runTraces(server, name)))).toEqual(ownedOnceReady);

      // The worker's server deleted: its machine fails as CAPO's does, nothing is made again under it; its replacement converges.
      const worker = workerServer.parse(JSON.parse((await server.kubectl(['get', 'openstackserver', `${name}-md-0-0`, '-o', 'json'])).stdout));
      const tracesOfFailed = await runTraces(server, name);
      await openstackCli(['server', 'delete', '--wait', worker.status.instanceID]);
      await kubectlToEnd(server, ['annotate', '--overwrite', 'openstackserver', `${name}-md-0-0`, 'drift-check=now']);
      const failed = await kubectlToEnd(server, [
        'wait',
        '--for=jsonpath={.status.conditions[?(@.type=="Ready")].reason}=InstanceDeleted',
        `openstackmachine/${name}-md-0-0`,
        '--timeout=120s',
      ]);
      expect(failed.stderr, await progress(server, requestLog)).toBe('');
      const replaced = await kubectlToEnd(server, [
        'delete',
        `openstackmachine/${name}-md-0-0`,
        `machines.cluster.x-k8s.io/${name}-md-0-0`,
        `--timeout=${limits.deleteSeconds}s`,
      ]);
      expect(replaced.stderr, await progress(server, requestLog)).toBe('');
      expect((await server.kubectl(['apply', '-f', '-'], { input: manifests })).stderr).toBe('');
      await waitUntilReady(server, name, requestLog);
      const traces = [...new Set([...tracesOfFailed, ...(await runTraces(server, name))])];
      expect(countByKind(await remnants(admin, traces))).toEqual(ownedOnceReady);
    },
    (2 * limits.readySeconds + limits.deleteSeconds + 60) * 1000,
  );

  it(
    'deletes everything, leaving nothing of the run in any service',
    async () => {
      deletionStarted = true;
      // Taken before deletion: the objects and their uids are gone afterwards.
      const traces = await runTraces(server, name);
      const removed = await kubectlToEnd(server, ['delete', '-f', '-', '--wait=true', `--timeout=${limits.deleteSeconds}s`], manifests);
      expect(removed.stderr, await progress(server, requestLog)).toBe('');
      const left: Remnant[] = await remnants(admin, traces);
      expect(left.map(({ kind, name: leftName, id }) => `${kind} ${leftName} (${id})`)).toEqual([]);
    },
    (limits.deleteSeconds + 30) * 1000,
  );
});

/** What the cluster owns once Ready, exactly: a duplicate made by a retried create, or a leak, would show. */
const ownedOnceReady = {
  network: 1,
  subnet: 1,
  // One per server (bastion, control plane, worker) and the VIP port Octavia made for the load balancer.
  port: 4,
  router: 1,
  // The control plane, worker and bastion groups, and Octavia's VIP group `lb-<id>`.
  'security group': 4,
  // The API load balancer's, the bastion's and the worker's from the pool.
  'floating IP': 3,
  'load balancer': 1,
  listener: 1,
  pool: 1,
  'health monitor': 1,
  // The control plane machine joins the API load balancer; the worker does not.
  member: 1,
  server: 3,
  // The ORC Image the machines boot from, uploaded from the test's mirror.
  image: 1,
};

/** The `openstack` CLI as the cluster's own user (ministack's `demo`), as a person or a cleanup script runs it; its stdout. */
async function openstackCli(args: string[]): Promise<string> {
  const [command, ...rest] = args;
  const { stdout } = await execFileAsync('openstack', ['--os-cloud', 'ministack', ...command.split(' '), ...rest], {
    env: { ...process.env, OS_CLIENT_CONFIG_FILE: cloudsPath },
    timeout: 300_000,
  });
  return stdout;
}

/** Pauses or resumes the Cluster (Cluster API's spec.paused), which stops or restarts the reconcile of all its objects. */
async function setPaused(server: TestServer, name: string, paused: boolean): Promise<void> {
  const patched = await server.kubectl(['patch', 'clusters.cluster.x-k8s.io', name, '--type=merge', '-p', JSON.stringify({ spec: { paused } })]);
  expect(patched.stderr).toBe('');
}

/** Polls the OpenStackCluster's status until `reached` holds of it. */
async function clusterStatusWhen(
  server: TestServer,
  name: string,
  reached: (status: z.infer<typeof openStackClusterStatus>['status']) => boolean,
  seconds: number,
) {
  const cluster = await waitForObject(
    server.kubectl,
    `openstackcluster/${name}`,
    'heal',
    (object) => reached(openStackClusterStatus.parse(object).status),
    seconds,
  );
  return openStackClusterStatus.parse(cluster).status;
}

/** kubectl wait for the cluster and every machine to be Ready, with where each stands when not. */
async function waitUntilReady(server: TestServer, name: string, requestLog: readonly string[]): Promise<void> {
  for (const target of [`openstackcluster/${name}`, 'openstackmachines']) {
    const ready = await kubectlToEnd(server, [
      'wait',
      '--for=condition=Ready',
      target,
      ...(target === 'openstackmachines' ? ['--all'] : []),
      `--timeout=${limits.readySeconds}s`,
    ]);
    expect(ready.stderr, await progress(server, requestLog)).toBe('');
  }
}

/** An image mirror on loopback, as a platform team's would be: one small raw disk image, the same bytes every run. */
async function serveImage(): Promise<{ server: Server; image: { url: string; sha256: string } }> {
  const data = Buffer.alloc(512 * 1024, 0x5a);
  const server = createServer((request, response) => {
    if (request.url !== '/node.raw') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length }).end(data);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, image: { url: `http://127.0.0.1:${port}/node.raw`, sha256: createHash('sha256').update(data).digest('hex') } };
}

const ipAddress = z.looseObject({ spec: z.looseObject({ address: z.string() }) });
const workerServer = z.looseObject({
  status: z.looseObject({ instanceID: z.string(), conditions: z.array(z.looseObject({ type: z.string(), status: z.string() })) }),
});

const openStackClusterStatus = z.object({
  spec: z.object({ controlPlaneEndpoint: z.object({ host: z.string() }).optional() }),
  status: z.object({
    initialization: z.object({ provisioned: z.boolean() }),
    apiServerManagedLoadBalancer: z.object({ id: z.string(), ip: z.string() }),
    bastion: z.object({ floatingIP: z.string() }),
    router: z.object({ id: z.string() }),
    network: z.object({ id: z.string(), subnets: z.array(z.object({ id: z.string() })) }),
    controlPlaneSecurityGroup: z.object({ id: z.string() }),
  }),
});

const imageStatus = z.looseObject({
  status: z.looseObject({ id: z.string(), conditions: z.array(z.looseObject({ type: z.string(), status: z.string() })) }),
});

const objectList = z.object({
  items: z.array(
    z.object({
      kind: z.string(),
      metadata: z.object({ name: z.string(), uid: z.string() }),
      status: z
        .object({
          conditions: z
            .array(z.looseObject({ type: z.string(), status: z.string(), reason: z.string().optional(), message: z.string().optional() }))
            .optional(),
          apiServerManagedLoadBalancer: z.object({ id: z.string() }).optional(),
        })
        .optional(),
    }),
  ),
});

const infrastructureKinds = 'openstackclusters,openstackmachines,openstackservers,openstackfloatingippools,images.openstack.k-orc.cloud';

async function infrastructureObjects(server: TestServer): Promise<z.infer<typeof objectList>['items']> {
  const listed = await server.kubectl(['get', infrastructureKinds, '-n', namespace, '-o', 'json']);
  if (listed.code !== 0) throw new Error(`kubectl get ${infrastructureKinds} failed: ${listed.stderr}`);
  return objectList.parse(JSON.parse(listed.stdout)).items;
}

/**
 * What the run's OpenStack resources are marked with: the cluster name, the
 * uids of the cluster, its machines and the servers the bastion and machines
 * became (owner tags), and the API load balancer's id (Octavia's own VIP port
 * and security group), as far as creation got.
 */
async function runTraces(server: TestServer, clusterName: string): Promise<string[]> {
  const objects = await infrastructureObjects(server);
  const loadBalancerIds = objects.flatMap((object) =>
    object.status?.apiServerManagedLoadBalancer?.id === undefined ? [] : [object.status.apiServerManagedLoadBalancer.id],
  );
  return [clusterName, ...objects.map((object) => object.metadata.uid), ...loadBalancerIds];
}

/** Where each object stands and what OpenStack refused: the message a failed wait carries. */
async function progress(server: TestServer, requestLog: readonly string[]): Promise<string> {
  const conditions = (await infrastructureObjects(server)).flatMap((object) =>
    (object.status?.conditions ?? []).map(
      (condition) => `${object.kind}/${object.metadata.name} ${condition.type}=${condition.status} ${condition.reason ?? ''}: ${condition.message ?? ''}`,
    ),
  );
  const refused = requestLog.filter((line) => !/ [23]\d\d \d+ms/.test(line)).slice(-20);
  return ['conditions:', ...conditions, 'OpenStack requests that did not succeed (last 20):', ...(refused.length === 0 ? ['none'] : refused), ''].join('\n');
}

interface Finished {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl without the harness's one-minute cap, for waits that take minutes on ministack. */
async function kubectlToEnd(server: TestServer, args: string[], input?: string): Promise<Finished> {
  const child = server.spawnKubectl(args);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.end(input);
  const code = await new Promise<number>((resolve) => child.on('close', (exit) => resolve(exit ?? 1)));
  return { code, stdout, stderr };
}

/** `openstack <service> <method> <path> <status> ...` lines counted by service and method. */
function requestsByCall(requestLog: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of requestLog) {
    const [, service, method] = line.split(' ');
    const key = `${service} ${method}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
