/**
 * The order the OpenStackCluster's step graph gives, seen in one pass at a time: the bastion is
 * started while the API load balancer builds (it needs the network and its group, not the load
 * balancer), and on deletion the load balancers go while the bastion server is still being
 * deleted, with nothing left in the cloud at the end. The API load balancer needs only the
 * subnet, not the router; its floating IP goes on while it builds (and is not read again until
 * it is ACTIVE, while each resync reads the network, subnet and router again, all at once and
 * beside a look at it), and once it is ACTIVE one read of its status tree vouches for its
 * listener, pool and monitor; the security groups, made in the first pass, are read together at
 * each resync. Whether Neutron takes tags in a create is asked beside the preflight checks. A new
 * cluster looks nothing up by name (its first creates follow a status write); one that a pass
 * wrote a status for looks up its network, security groups and API load balancer beside the
 * checks; the subnet of a network made in the same pass is not looked up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudCensus, noResources } from '../../../harness/census.js';
import { defaultServices, type ServedRequest } from '../../../src/simulator/host.js';
import { createOctaviaSimulator } from '../../../src/simulator/octavia/index.js';
import type { SimulatorContext } from '../../../src/simulator/framework.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { condition, firstRead, isReady, overlapping, provisionExampleCluster, startSteps, type Steps } from '../steps.js';

let steps: Steps;
let census: CloudCensus;
const bastion = 'demo-bastion';

beforeAll(async () => {
  steps = await startSteps();
  census = await CloudCensus.open(steps.cloud);
  await provisionExampleCluster(steps, { bastion: true, ready: false });
});

afterAll(async () => {
  census?.close();
  await steps?.stop();
});

const status = (object: JsonObject | undefined) => (object?.status ?? {}) as JsonObject;

describe('the OpenStackCluster step graph', () => {
  it('creates the bastion in the pass that creates the API load balancer, before it is ACTIVE', async () => {
    const cluster = await steps.until([['cluster', 'demo']], (object) => status(object).apiServerManagedLoadBalancer !== undefined);
    expect(condition(cluster, 'APIEndpointReady')).toMatchObject({ status: 'False' });
    expect(await steps.get('server', bastion)).toBeDefined();
    expect(condition(cluster, 'BastionReady')).toMatchObject({ status: 'False', reason: 'Creating' });
  });

  it('deletes the load balancers while the bastion server is still being deleted, and leaves nothing', async () => {
    // The bastion server's reconciler holds its finalizer; its image never comes, so it stays not ready.
    await steps.pass('server', bastion);
    expect((await steps.get('server', bastion))?.metadata).toMatchObject({ finalizers: [expect.any(String)] });
    await steps.until([['cluster', 'demo']], (object) => condition(object, 'APIEndpointReady')?.status === 'True');

    const before = steps.requests.length;
    await steps.kubectl(['delete', 'openstackcluster', 'demo', '--wait=false']);
    await steps.until([['cluster', 'demo']], () =>
      steps.requests.slice(before).some((line) => /^load-balancer DELETE \/v2\/lbaas\/loadbalancers\//.test(line)),
    );
    expect((await steps.get('server', bastion))?.metadata).toMatchObject({ deletionTimestamp: expect.any(String) });

    await steps.until(
      [
        ['cluster', 'demo'],
        ['server', bastion],
      ],
      (object) => object === undefined,
      60_000,
    );
    expect((await census.ours()).counts).toEqual(noResources);
  });
});

describe('the first checks of a cluster a pass already wrote a status for', () => {
  let firstSteps: Steps;
  const served: ServedRequest[] = [];

  beforeAll(async () => {
    firstSteps = await startSteps({ onRequest: (request) => served.push(request) });
    // Reads slow enough that one after the other could not overlap (the lists: the lookups by name).
    for (const path of ['^/v2.0/extensions', '^/v2.0/networks$', '^/v2.0/security-groups$']) {
      firstSteps.cloud.faults.add({ service: 'network', method: 'GET', path, latencyMs: 200 });
    }
    for (const path of ['^/v2/lbaas/providers', '^/v2/lbaas/loadbalancers$']) {
      firstSteps.cloud.faults.add({ service: 'load-balancer', method: 'GET', path, latencyMs: 200 });
    }
    // A first pass that Keystone turns away stops before any check and says so in the status: a pass got as far as a
    // status write, so the creates to come look up their names first.
    firstSteps.cloud.faults.add({ service: 'identity', method: 'POST', path: '^/v3/auth/tokens$', status: 401, times: 1 });
    await provisionExampleCluster(firstSteps, { ready: false });
    const refused = await firstSteps.until([['cluster', 'demo']], (object) => condition(object, 'Ready') !== undefined);
    expect(condition(refused, 'Ready')).toMatchObject({ status: 'False' });
    expect(condition(refused, 'PreflightChecksPassed')).toBeUndefined();
    await firstSteps.until([['cluster', 'demo']], (object) => status(object).apiServerManagedLoadBalancer !== undefined);
  });

  afterAll(async () => {
    await firstSteps?.stop();
  });

  it("reads Neutron's extensions (can a create carry tags?) beside the preflight checks, not before the first create", () => {
    const extensions = firstRead(served, 'network', /^\/v2\.0\/extensions/);
    const providers = firstRead(served, 'load-balancer', /^\/v2\/lbaas\/providers/);
    expect(extensions && providers).toBeDefined();
    expect(overlapping(extensions!, providers!)).toBe(true);
  });

  it('looks up the names of its network, security groups and API load balancer beside the preflight checks', () => {
    const providers = firstRead(served, 'load-balancer', /^\/v2\/lbaas\/providers/)!;
    const lookups = [
      firstRead(served, 'network', /^\/v2\.0\/networks\?name=k8s-clusterapi-cluster-default-demo$/),
      firstRead(served, 'network', /^\/v2\.0\/security-groups\?name=k8s-cluster-default-demo-secgroup-controlplane$/),
      firstRead(served, 'network', /^\/v2\.0\/security-groups\?name=k8s-cluster-default-demo-secgroup-worker$/),
      firstRead(served, 'load-balancer', /^\/v2\/lbaas\/loadbalancers\?name=k8s-clusterapi-cluster-default-demo-kubeapi&/),
    ];
    expect(lookups.every((lookup) => lookup !== undefined && overlapping(lookup, providers))).toBe(true);
  });

  it('does not look up a subnet by name on the network it has just created', () => {
    const networkCreate = served.find((request) => request.service === 'network' && request.method === 'POST' && request.path === '/v2.0/networks');
    const subnetCreate = served.find((request) => request.service === 'network' && request.method === 'POST' && request.path === '/v2.0/subnets');
    expect(networkCreate && subnetCreate).toBeDefined();
    expect(firstRead(served, 'network', /^\/v2\.0\/subnets\?name=/)).toBeUndefined();
  });
});

describe('the first pass of a new cluster', () => {
  let newSteps: Steps;
  const served: ServedRequest[] = [];
  /** The cluster's status as sampled while it was built: whether a status was written, and when. */
  const samples: { at: number; written: boolean }[] = [];

  beforeAll(async () => {
    newSteps = await startSteps({ onRequest: (request) => served.push(request) });
    // A network create slow enough for the samples to see what was written while it ran.
    newSteps.cloud.faults.add({ service: 'network', method: 'POST', path: '^/v2.0/networks$', latencyMs: 500 });
    const sampler = setInterval(() => {
      const at = performance.now();
      void newSteps.get('cluster', 'demo').then((object) => samples.push({ at, written: Object.keys(status(object)).length > 0 }));
    }, 10);
    try {
      await provisionExampleCluster(newSteps, { ready: false });
      await newSteps.until([['cluster', 'demo']], (object) => status(object).apiServerManagedLoadBalancer !== undefined);
    } finally {
      clearInterval(sampler);
    }
  });

  afterAll(async () => {
    await newSteps?.stop();
  });

  it('looks nothing up by name: nothing can have been made for it', () => {
    const lookups = served.filter(
      (request) =>
        request.method === 'GET' && /^\/v2\.0\/(networks|subnets|routers|security-groups)\?name=|^\/v2\/lbaas\/loadbalancers\?name=/.test(request.path),
    );
    expect(lookups).toEqual([]);
  });

  it('writes its status before its first create: a create a crash lost leaves a status, and the next pass looks', () => {
    const create = served.find((request) => request.service === 'network' && request.method === 'POST' && request.path === '/v2.0/networks')!;
    expect(create).toBeDefined();
    expect(samples.some((sample) => !sample.written && sample.at < create.startMs)).toBe(true);
    expect(samples.some((sample) => sample.written && sample.at > create.startMs && sample.at < create.endMs)).toBe(true);
  });
});

describe('the API load balancer and the router', () => {
  /** Long enough that the floating IP, made in milliseconds once the router is there, comes before ACTIVE. */
  const loadBalancerBuildMs = 5_000;
  const slowOctavia = (ctx: SimulatorContext) =>
    createOctaviaSimulator(Object.create(ctx, { transitionDelayMs: { value: loadBalancerBuildMs } }) as SimulatorContext);
  let routerSteps: Steps;
  const served: ServedRequest[] = [];

  beforeAll(async () => {
    routerSteps = await startSteps(
      {
        services: defaultServices.map((factory) => (factory === createOctaviaSimulator ? slowOctavia : factory)),
        onRequest: (request) => served.push(request),
        // What a pass verified runs out every second, several times while the load balancer builds.
      },
      { resyncPeriodMs: 1_000 },
    );
  });

  afterAll(async () => {
    await routerSteps?.stop();
  });

  const owned = (object: JsonObject | undefined) => ((status(object).extensions as JsonObject | undefined)?.ownedResources ?? {}) as Record<string, string>;

  it('creates the load balancer while the router cannot be made, and floats its address on the VIP port before it is ACTIVE', async () => {
    routerSteps.cloud.faults.add({ service: 'network', method: 'POST', path: '^/v2.0/routers$', status: 403, message: 'router creation is not allowed' });
    await provisionExampleCluster(routerSteps, { ready: false });
    const waiting = await routerSteps.until([['cluster', 'demo']], (object) => owned(object)['loadbalancer/api'] !== undefined);
    expect(routerSteps.requests.some((line) => /^load-balancer POST \/v2\/lbaas\/loadbalancers /.test(line))).toBe(true);
    expect(routerSteps.requests.some((line) => /^network POST \/v2.0\/routers 201/.test(line))).toBe(false);
    expect(owned(waiting)['floatingip/api']).toBeUndefined();
    expect(condition(waiting, 'Ready')).toMatchObject({ status: 'False', message: expect.stringContaining('router creation is not allowed') });

    routerSteps.cloud.faults.clear();
    // Reads of the load balancer, network, subnet and router slow enough that one after another could not overlap.
    routerSteps.cloud.faults.add({ service: 'load-balancer', method: 'GET', path: '^/v2/lbaas/loadbalancers/[^/]+$', latencyMs: 200 });
    for (const path of ['^/v2.0/networks/', '^/v2.0/subnets/', '^/v2.0/routers/'])
      routerSteps.cloud.faults.add({ service: 'network', method: 'GET', path, latencyMs: 200 });
    const slowFrom = served.length;
    const ready = await routerSteps.until([['cluster', 'demo']], isReady, 60_000);
    const fip = routerSteps.requests.findIndex((line) => /^network POST \/v2.0\/floatingips 201/.test(line));
    // Once the load balancer is ACTIVE, one read of its status tree vouches for the listener, pool and monitor its
    // create made (naming the monitor, which the create's answer did not): none is read on its own.
    const treeRead = routerSteps.requests.findIndex((line) => /^load-balancer GET \/v2\/lbaas\/loadbalancers\/[^/]+\/status /.test(line));
    expect(fip).toBeGreaterThan(-1);
    expect(treeRead).toBeGreaterThan(fip);
    expect(routerSteps.requests.filter((line) => /^load-balancer GET \/v2\/lbaas\/(listeners|pools|healthmonitors)/.test(line))).toEqual([]);
    expect(owned(ready)['healthmonitor/6443']).toEqual(expect.any(String));
    // While the load balancer builds, its floating IP is not looked at again, though what the passes verified ran out
    // several times (the network was read again each time); once, along with the tree, when it is ACTIVE.
    expect(routerSteps.requests.slice(fip, treeRead).filter((line) => /^network GET \/v2.0\/networks\//.test(line)).length).toBeGreaterThan(2);
    expect(routerSteps.requests.slice(fip, treeRead + 3).filter((line) => /^network GET \/v2.0\/floatingips\//.test(line)).length).toBeLessThanOrEqual(1);
    expect((status(ready).apiServerManagedLoadBalancer as JsonObject).ip).not.toBe((status(ready).apiServerManagedLoadBalancer as JsonObject).internalIP);
    const tree = firstRead(served, 'load-balancer', /^\/v2\/lbaas\/loadbalancers\/[^/]+\/status$/)!;

    // A pass that reads the network again (what it verified ran out) looks at the building load balancer at the same
    // time, not after the network and subnet it needs: a resync near the end of a build does not delay finding it ACTIVE.
    const since = served.slice(slowFrom);
    const lbReads = since.filter(
      (request) => request.service === 'load-balancer' && request.method === 'GET' && /^\/v2\/lbaas\/loadbalancers\/[^/]+$/.test(request.path),
    );
    const built = tree.startMs;
    const networkReads = since.filter(
      (request) => request.service === 'network' && request.method === 'GET' && request.path.startsWith('/v2.0/networks/') && request.startMs < built,
    );
    expect(networkReads.length).toBeGreaterThan(0);
    for (const network of networkReads) expect(lbReads.some((lb) => overlapping(lb, network))).toBe(true);
    // Nor does such a pass read the network, then the subnet, then the router: those run out run at once.
    const reads = (prefix: string) => since.filter((request) => request.service === 'network' && request.method === 'GET' && request.path.startsWith(prefix));
    for (const prefix of ['/v2.0/subnets/', '/v2.0/routers/']) {
      expect(reads(prefix).some((read) => networkReads.some((network) => overlapping(network, read)))).toBe(true);
    }
  });

  it('reads the security groups it made in one list at each resync, from the first on, never one GET each', () => {
    const groupReads = served.filter(
      (request) => request.service === 'network' && request.method === 'GET' && request.path.startsWith('/v2.0/security-groups'),
    );
    expect(groupReads.filter((request) => /^\/v2\.0\/security-groups\/[^/?]+$/.test(request.path))).toEqual([]);
    expect(groupReads.filter((request) => request.path.startsWith('/v2.0/security-groups?id=')).length).toBeGreaterThan(2);
  });
});
