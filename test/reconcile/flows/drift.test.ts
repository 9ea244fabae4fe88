/**
 * Drift on the simulated cloud: the example cluster's resources deleted behind the reconciler's
 * back, one kind at a time, through the OpenStack API with the cluster's own identity (what a user
 * with the `openstack` CLI, or a cleanup script, does). The cluster's infrastructure is made again
 * (found at the latest at the next resync, whatever the verified-resources memory believed); a
 * machine whose server vanished is failed as CAPO fails it and not made again under the same
 * machine, and its replacement converges. After each, the cloud holds exactly what the manifests
 * call for: nothing duplicated, nothing leaked.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type ServedRequest, type Simulator } from '../../../src/simulator/host.js';
import { CloudCensus, type ResourceCounts } from '../../../harness/census.js';
import { apply, getObject, waitForObject, waitForReady, type Kubectl } from '../../../harness/cluster-flow.js';
import { allowMirrorOf, startServerProcess, type ServerProcess } from '../../../harness/server-process.js';
import type { TestServer } from '../../../harness/test-server.js';
import { renderExamples, startExampleServer, type ExampleServer } from './examples.js';
import { expectedInventoryChange, expectedResources, readManifests, withoutRules } from './expected.js';

/** Short, so a drift no pass touches is found within seconds: the next resync at the latest. */
const resyncPeriodMs = 4_000;

let example: ExampleServer;
let server: TestServer;
let census: CloudCensus;
let expected: ResourceCounts;
let kubectl: Kubectl;

interface Named {
  id: string;
}

interface ClusterStatus {
  network: { id: string; subnets: Named[] };
  router: Named;
  controlPlaneSecurityGroup: Named;
  workerSecurityGroup: Named;
  apiServerManagedLoadBalancer: { id: string; ip: string };
  bastion: { id: string; floatingIP: string };
  extensions: { ownedResources: Record<string, string> };
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

beforeAll(async () => {
  example = await startExampleServer({}, {}, undefined, { resyncPeriodMs });
  ({ server } = example);
  kubectl = (args, options) => server.kubectl(args, options);
  expected = expectedResources(await readManifests(example.manifests));
  census = await CloudCensus.open(server.cloud!);
  expect((await server.kubectl(['apply', '-f', example.manifests])).code).toBe(0);
  await waitForReady(kubectl, 'demo', 180);
}, 240_000);

afterAll(async () => {
  census?.close();
  await example?.stop();
});

async function get<T>(reference: string, version = ''): Promise<T> {
  const result = await server.kubectl(['get', reference + version, '-o', 'json']);
  if (result.code !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout) as T;
}

const clusterStatus = async () => (await get<{ status: ClusterStatus }>('openstackcluster/demo')).status;

/** Polls until `reached` holds of the cluster's status; the reconciler's report on failure. */
async function clusterReaches(what: string, reached: (status: ClusterStatus) => boolean, timeoutMs = 60_000): Promise<ClusterStatus> {
  return vi.waitFor(
    async () => {
      const status = await clusterStatus();
      if (!reached(status)) throw new Error(`the cluster did not ${what}: ${JSON.stringify(status)}`);
      return status;
    },
    { timeout: timeoutMs, interval: 250 },
  );
}

async function expectExactlyTheExpectedResources(when: string): Promise<void> {
  await waitForReady(kubectl, 'demo', 120);
  const observed = await census.ours();
  expect.soft(observed.duplicates, when).toEqual([]);
  expect.soft(observed.counts, when).toEqual(expected);
  expect.soft(withoutRules(census.sinceBaseline()), when).toEqual(expectedInventoryChange(expected));
  // Healing leaves the leak audit as it was: nothing of ours without its owner.
  const audit = await server.kubectl(['get', '--raw', '/admin/v1/leaks']);
  expect.soft(JSON.parse(audit.stdout || '{}'), `${when}: ${audit.stderr}`).toMatchObject({ leaks: [], failed: [] });
}

/** Waits until each machine that has members records one in each of the cluster's pools, and the pool lists it. */
async function membersRecordedIn(clusterOwned: Record<string, string>): Promise<void> {
  const pools = Object.entries(clusterOwned).filter(([key]) => key.startsWith('pool/'));
  await vi.waitFor(
    async () => {
      const machines = await get<{ items: { metadata: { name: string }; status?: { extensions?: { ownedResources?: Record<string, string> } } }[] }>(
        'openstackmachines',
      );
      const members = machines.items.map((machine) => [machine.metadata.name, machine.status?.extensions?.ownedResources ?? {}] as const);
      const withMembers = members.filter(([, owned]) => Object.keys(owned).some((key) => key.startsWith('member/')));
      expect(withMembers.length).toBeGreaterThan(0);
      for (const [key, poolId] of pools) {
        const listed = (await census.clients.octavia.listMembers(poolId)).map((member) => member.id);
        const port = key.slice('pool/'.length);
        for (const [machine, owned] of withMembers) expect(listed, `${machine}'s member in pool ${key}`).toContain(owned[`member/${port}`]);
      }
    },
    { timeout: 60_000, interval: 250 },
  );
}

/** What a MachineHealthCheck does with a failed machine: it goes, and its MachineSet makes another; then the cloud holds what it should. */
async function replaceMachine(machine: string, when: string): Promise<void> {
  const deleted = await server.kubectl(['delete', `openstackmachine/${machine}`, `machines.cluster.x-k8s.io/${machine}`, '--timeout=120s']);
  expect(deleted.stderr).toBe('');
  expect((await server.kubectl(['apply', '-f', example.manifests])).code).toBe(0);
  await expectExactlyTheExpectedResources(when);
}

async function warnings(reason: string): Promise<string[]> {
  const events = await get<{ items: { reason: string; type: string; message: string }[] }>('events');
  return events.items.filter((event) => event.type === 'Warning' && event.reason === reason).map((event) => event.message);
}

/**
 * What Neutron asks of whoever takes a router's interface away: the floating IPs reached through it
 * let go first. The cluster is paused meanwhile (until `resume`), or the reconciler would put them
 * back between the script's steps.
 */
async function disassociateFloatingIps(): Promise<void> {
  await setPaused(true);
  for (const fip of await census.clients.neutron.listFloatingIps()) {
    if (fip.port_id) await census.clients.neutron.updateFloatingIp(fip.id, { port_id: null });
  }
}

async function setPaused(paused: boolean): Promise<void> {
  const patched = await server.kubectl(['patch', 'clusters.cluster.x-k8s.io', 'demo', '--type=merge', '-p', JSON.stringify({ spec: { paused } })]);
  expect(patched.stderr).toBe('');
}

/** Every floating IP of the cluster's is on a port again. */
async function floatingIpsAssociated(): Promise<void> {
  await vi.waitFor(
    async () => {
      const fips = await census.clients.neutron.listFloatingIps();
      expect(fips.filter((fip) => !fip.port_id).map((fip) => fip.floating_ip_address)).toEqual([]);
    },
    { timeout: 30_000, interval: 250 },
  );
}

describe('cluster infrastructure deleted behind our back is made again', () => {
  it('a managed security group rule', async () => {
    const group = (await clusterStatus()).controlPlaneSecurityGroup.id;
    const rules = await census.clients.neutron.listSecurityGroupRules({ security_group_id: group });
    const apiRule = rules.find((rule) => rule.direction === 'ingress' && rule.port_range_min === 6443)!;
    expect(apiRule).toBeDefined();
    await census.clients.neutron.deleteSecurityGroupRule(apiRule.id);
    await vi.waitFor(
      async () => {
        const now = await census.clients.neutron.listSecurityGroupRules({ security_group_id: group });
        expect(now.filter((rule) => rule.direction === 'ingress' && rule.port_range_min === 6443)).toHaveLength(1);
      },
      { timeout: 30_000, interval: 250 },
    );
    await expectExactlyTheExpectedResources('after the rule was added again');
  }, 120_000);

  it("the router's interface on the cluster subnet", async () => {
    const { router, network } = await clusterStatus();
    await disassociateFloatingIps();
    await census.clients.neutron.removeInterface(router.id, { subnet_id: network.subnets[0].id });
    await setPaused(false);
    await vi.waitFor(
      async () => {
        const ports = await census.clients.neutron.listPorts({ device_id: router.id, device_owner: ['network:router_interface'] });
        expect(ports.flatMap((port) => port.fixed_ips.map((ip) => ip.subnet_id))).toContain(network.subnets[0].id);
      },
      { timeout: 30_000, interval: 250 },
    );
    await floatingIpsAssociated();
    await expectExactlyTheExpectedResources('after the interface was added again');
  }, 120_000);

  it('the router', async () => {
    const { router, network } = await clusterStatus();
    await disassociateFloatingIps();
    await census.clients.neutron.removeInterface(router.id, { subnet_id: network.subnets[0].id });
    await census.clients.neutron.deleteRouter(router.id);
    await setPaused(false);
    const healed = await clusterReaches('make its router again', (status) => status.router.id !== router.id);
    const ports = await census.clients.neutron.listPorts({ device_id: healed.router.id, device_owner: ['network:router_interface'] });
    expect(ports.flatMap((port) => port.fixed_ips.map((ip) => ip.subnet_id))).toContain(network.subnets[0].id);
    expect((await warnings('ResourceVanished')).some((message) => message.includes(router.id))).toBe(true);
    await floatingIpsAssociated();
    await expectExactlyTheExpectedResources('after the router was made again');
  }, 120_000);

  it("the API load balancer, with its listeners, pools, monitors and the control plane's members", async () => {
    const before = await clusterStatus();
    const lb = before.apiServerManagedLoadBalancer;
    await census.clients.octavia.deleteLoadBalancer(lb.id, { cascade: true });
    const healed = await clusterReaches('make its API load balancer again', (status) => status.apiServerManagedLoadBalancer.id !== lb.id, 90_000);
    // The floating IP moves to the new VIP: the endpoint the nodes and kubeconfigs use stays.
    expect(healed.apiServerManagedLoadBalancer.ip).toBe(lb.ip);
    // The machines stay Ready while they put their members into the new pools: Ready alone does not say they did.
    await membersRecordedIn(healed.extensions.ownedResources);
    await expectExactlyTheExpectedResources('after the load balancer was made again');
  }, 180_000);

  it("the API server's floating IP, made again at the same address", async () => {
    const { apiServerManagedLoadBalancer, extensions } = await clusterStatus();
    const fipId = extensions.ownedResources['floatingip/api'];
    await census.clients.neutron.deleteFloatingIp(fipId);
    const healed = await clusterReaches('make its API floating IP again', (status) => status.extensions.ownedResources['floatingip/api'] !== fipId);
    expect(healed.apiServerManagedLoadBalancer.ip).toBe(apiServerManagedLoadBalancer.ip);
    const spec = (await get<{ spec: { controlPlaneEndpoint: { host: string } } }>('openstackcluster/demo')).spec;
    expect(spec.controlPlaneEndpoint.host).toBe(apiServerManagedLoadBalancer.ip);
    await expectExactlyTheExpectedResources('after the floating IP was made again');
  }, 120_000);

  it("a managed security group, once a cleanup script took it off the workers' ports", async () => {
    const before = await clusterStatus();
    const group = before.workerSecurityGroup.id;
    for (const port of await census.clients.neutron.listPorts({ security_groups: group })) {
      await census.clients.neutron.updatePort(port.id, { security_groups: (port.security_groups ?? []).filter((id) => id !== group) });
    }
    await census.clients.neutron.deleteSecurityGroup(group);
    const healed = await clusterReaches('make its worker security group again', (status) => status.workerSecurityGroup.id !== group);
    // Its rules, and the control plane's rules that named the old group as their remote (Neutron deleted those with it), written again.
    await vi.waitFor(
      async () => {
        expect((await census.clients.neutron.listSecurityGroupRules({ security_group_id: healed.workerSecurityGroup.id })).length).toBeGreaterThan(2);
        const rules = await census.clients.neutron.listSecurityGroupRules({ security_group_id: healed.controlPlaneSecurityGroup.id });
        expect(rules.some((rule) => rule.remote_group_id === healed.workerSecurityGroup.id)).toBe(true);
      },
      { timeout: 30_000, interval: 250 },
    );
    expect((await warnings('ResourceVanished')).some((message) => message.includes(group))).toBe(true);
    await expectExactlyTheExpectedResources('after the security group was made again');
  }, 120_000);

  it("the API load balancer's health monitor", async () => {
    const monitorId = (await clusterStatus()).extensions.ownedResources['healthmonitor/6443'];
    await census.clients.octavia.deleteHealthMonitor(monitorId);
    await clusterReaches('make its health monitor again', (status) => status.extensions.ownedResources['healthmonitor/6443'] !== monitorId, 60_000);
    await expectExactlyTheExpectedResources('after the health monitor was made again');
  }, 120_000);

  it("a control plane machine's member of the API pool", async () => {
    const machine = 'demo-control-plane-1';
    const owned = (await get<{ status: { extensions: { ownedResources: Record<string, string> } } }>(`openstackmachine/${machine}`)).status.extensions
      .ownedResources;
    const memberId = owned['member/6443'];
    const poolId = (await clusterStatus()).extensions.ownedResources['pool/6443'];
    await census.clients.octavia.deleteMember(poolId, memberId);
    await vi.waitFor(
      async () => {
        const now = (await get<{ status: { extensions: { ownedResources: Record<string, string> } } }>(`openstackmachine/${machine}`)).status.extensions
          .ownedResources;
        expect(now['member/6443']).not.toBe(memberId);
        expect((await census.clients.octavia.listMembers(poolId)).map((member) => member.id)).toContain(now['member/6443']);
      },
      { timeout: 60_000, interval: 250 },
    );
    await expectExactlyTheExpectedResources('after the member was made again');
  }, 120_000);

  it('the bastion server', async () => {
    const { bastion } = await clusterStatus();
    await census.clients.nova.deleteServer(bastion.id);
    const healed = await clusterReaches(
      'make its bastion again',
      (status) => status.bastion?.id !== undefined && status.bastion.id !== bastion.id && status.bastion.floatingIP === bastion.floatingIP,
      90_000,
    );
    expect(healed.bastion.floatingIP).toBe(bastion.floatingIP);
    await expectExactlyTheExpectedResources('after the bastion was made again');
  }, 180_000);
});

describe("a machine's server deleted behind our back", () => {
  it('fails the machine as CAPO does, is not made again under it, and its replacement converges', async () => {
    const machine = 'demo-md-0-0';
    const instanceID = (await get<{ status: { instanceID: string } }>(`openstackserver/${machine}`)).status.instanceID;
    const serversBefore = (await census.ourIds()).servers.length;
    await census.clients.nova.deleteServer(instanceID);

    const failed = await vi.waitFor(
      async () => {
        const object = await get<{ status: { conditions: Condition[] } }>(`openstackmachine/${machine}`);
        const ready = object.status.conditions.find((condition) => condition.type === 'Ready');
        expect(ready).toMatchObject({ status: 'False', reason: 'InstanceDeleted', message: 'The server was unexpectedly deleted' });
        return object;
      },
      { timeout: 60_000, interval: 250 },
    );
    expect(failed.status.conditions.find((condition) => condition.type === 'InstanceReady')).toMatchObject({ status: 'False', reason: 'InstanceDeleted' });
    // Cluster API's v1beta1 contract (CAPO v0.14): failureReason and failureMessage, which a MachineHealthCheck acts on.
    const v1beta1 = await get<{ status: { failureReason?: string; failureMessage?: string; ready: boolean } }>(
      `openstackmachines.v1beta1.infrastructure.cluster.x-k8s.io/${machine}`,
    );
    expect(v1beta1.status).toMatchObject({ ready: false, failureReason: 'UpdateError', failureMessage: 'The server was unexpectedly deleted' });
    expect((await warnings('InstanceDeleted')).some((message) => message.includes(machine))).toBe(true);
    expect((await warnings('ResourceVanished')).some((message) => message.includes(instanceID))).toBe(true);
    // Not made again under the same machine: a resync later, still one server fewer.
    await vi.waitFor(
      async () =>
        expect(
          (await get<{ status: { conditions: Condition[] } }>(`openstackserver/${machine}`)).status.conditions.some((c) => c.reason === 'InstanceDeleted'),
        ).toBe(true),
      {
        timeout: 30_000,
        interval: 250,
      },
    );
    expect((await census.ourIds()).servers).toHaveLength(serversBefore - 1);

    await replaceMachine(machine, 'after the failed machine was replaced');
  }, 240_000);
});

describe("a running server's port deleted behind our back", () => {
  it('is said, not made again beside the server (one made now would not be attached to it); the machine is replaced', async () => {
    const machine = 'demo-md-0-1';
    const openStackServer = await get<{ status: { resources: { ports: Named[] } } }>(`openstackserver/${machine}`);
    const portId = openStackServer.status.resources.ports[0].id;
    await census.clients.neutron.deletePort(portId);
    await vi.waitFor(
      async () => {
        const object = await get<{ status: { conditions: Condition[] } }>(`openstackmachine/${machine}`);
        expect(object.status.conditions.find((condition) => condition.type === 'Ready')?.message).toContain(
          `port ${portId}, recorded in status, no longer exists in OpenStack`,
        );
      },
      { timeout: 60_000, interval: 250 },
    );
    expect((await census.ourIds()).ports).not.toContain(portId);
    await replaceMachine(machine, 'after the machine that lost its port was replaced');
  }, 240_000);
});

describe('an image deleted from Glance', () => {
  it('is made and uploaded again (an ORC-managed image)', async () => {
    const image = await get<{ status: { id: string } }>('images.openstack.k-orc.cloud/node-image');
    await census.clients.glance.deleteImage(image.status.id);
    await vi.waitFor(
      async () => {
        const now = await get<{ status: { id: string; conditions: Condition[] } }>('images.openstack.k-orc.cloud/node-image');
        expect(now.status.id).not.toBe(image.status.id);
        expect(now.status.conditions.find((condition) => condition.type === 'Available')?.status).toBe('True');
      },
      { timeout: 60_000, interval: 250 },
    );
    await expectExactlyTheExpectedResources('after the image was made again');
  }, 120_000);
});

describe('a cloud that was reset (every ID gone: a lab cloud rebuilt, a simulator started afresh)', () => {
  let sim: Simulator;
  let process: ServerProcess | undefined;
  let dataDir: string;
  let manifests: string;
  /** Requests the cloud served, by `METHOD kind`, since the counter was last cleared. */
  let served = new Map<string, number>();
  const count = (request: ServedRequest) => {
    const kind = request.path.split('?')[0].replace(/\/[0-9a-f-]{36}/g, '/{id}');
    const key = `${request.method} ${kind}`;
    served.set(key, (served.get(key) ?? 0) + 1);
  };
  const total = () => [...served.values()].reduce((sum, n) => sum + n, 0);

  beforeAll(async () => {
    sim = await startSimulator({ transitionDelayMs: 100, onRequest: count });
    manifests = await renderExamples(sim.url);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'capo-drift-reset-'));
    process = await startServerProcess(dataDir, allowMirrorOf(sim.url));
  });

  afterAll(async () => {
    await process?.kill();
    await sim?.close();
    for (const dir of [dataDir, manifests]) if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('heals the cluster, fails the machines as CAPO does, with about the calls of a first build; replaced machines converge', async () => {
    const kubectl = process!.kubectl;
    await apply(kubectl, manifests);
    await waitForReady(kubectl, 'demo', 180);
    const firstBuild = total();

    await process!.kill();
    const port = Number(new URL(sim.url).port);
    await sim.close();
    served = new Map();
    sim = await startSimulator({ transitionDelayMs: 100, port, onRequest: count });
    const resetCensus = await CloudCensus.open(sim);
    try {
      process = await startServerProcess(dataDir, allowMirrorOf(sim.url));
      const restarted = process.kubectl;
      await waitForObject<{ status: { conditions: Condition[] } }>(
        restarted,
        'openstackcluster/demo',
        'Ready again on the new cloud',
        (cluster) => readyOf(cluster)?.status === 'True' && cluster.status.conditions.every((c) => c.type !== 'Ready' || c.reason === 'Ready'),
        120,
      );
      await vi.waitFor(
        async () => {
          const machines = (await getObject(restarted, 'openstackmachines')) as { items: { status: { conditions: Condition[] } }[] };
          expect(machines.items.map((machine) => readyOf(machine)?.reason)).toEqual(machines.items.map(() => 'InstanceDeleted'));
        },
        { timeout: 120_000, interval: 500 },
      );
      const healing = total();
      console.log(
        `reset: a first build took ${firstBuild} calls, healing after the reset ${healing}: ${JSON.stringify(Object.fromEntries([...served].sort((a, b) => b[1] - a[1]).slice(0, 12)))}`,
      );
      // No storm: the cluster is built again and each machine's loss found, for about what a first build costs.
      expect(healing).toBeLessThan(firstBuild * 1.5);

      const names = ((await getObject(restarted, 'openstackmachines')) as { items: { metadata: { name: string } }[] }).items.map((item) => item.metadata.name);
      const deleted = await restarted([
        'delete',
        ...names.flatMap((name) => [`openstackmachine/${name}`, `machines.cluster.x-k8s.io/${name}`]),
        '--timeout=120s',
      ]);
      expect(deleted.stderr).toBe('');
      await apply(restarted, manifests);
      await waitForReady(restarted, 'demo', 180);
      const expectedCounts = expectedResources(await readManifests(manifests));
      const observed = await resetCensus.ours();
      expect.soft(observed.duplicates).toEqual([]);
      expect.soft(observed.counts).toEqual(expectedCounts);
      expect.soft(withoutRules(resetCensus.sinceBaseline())).toEqual(expectedInventoryChange(expectedCounts));
    } finally {
      resetCensus.close();
    }
  }, 600_000);
});

function readyOf(object: { status: { conditions?: Condition[] } }): Condition | undefined {
  return object.status.conditions?.find((condition) => condition.type === 'Ready');
}
