/**
 * The cluster's load balancers on three Octavias:
 * - one that builds a fully populated create in one provisioning transition: one POST makes the
 *   whole tree, no child is created alone;
 * - a provider that refuses the tree (501): the load balancer alone, the children one by one;
 * - one that accepts the tree but leaves its children PENDING_CREATE for good, as ministack's Zed
 *   does: the stuck children are deleted and made again one by one, the load balancer is kept, the
 *   cluster reaches Ready, and the load balancers made after the finding get no tree.
 * And a change Octavia refuses because the load balancer is busy: a Ready cluster says it waits
 * (no Ready=True left standing from the pass before), and is Ready again once the change is made.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServiceClients } from '../../../src/openstack/services/index.js';
import { loadCloud, OpenStackSession } from '../../../src/openstack/index.js';
import { defaultServices } from '../../../src/simulator/host.js';
import { createOctaviaSimulator, octaviaWithQuirks } from '../../../src/simulator/octavia/index.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { condition, isReady, startSteps, type Steps } from '../steps.js';

let steps: Steps | undefined;

afterEach(async () => {
  await steps?.stop();
  steps = undefined;
});

/** The example cluster without its bastion (an OpenStackServer with a reconciler of its own), reconciled to Ready. */
async function readyCluster(current: Steps): Promise<JsonObject> {
  await current.apply('00-cloud-credentials.yaml', '01-cluster.yaml');
  const [cluster] = await current.documents('02-openstackcluster.yaml');
  delete (cluster.spec as JsonObject).bastion;
  await current.applyObjects([cluster]);
  return (await current.until([['cluster', 'demo']], isReady, 60_000))!;
}

const octaviaCalls = (current: Steps, pattern: RegExp) => current.requests.filter((line) => pattern.test(line));

/** Runs `use` with an Octavia client of the demo user. */
async function withOctavia<T>(current: Steps, use: (octavia: ReturnType<typeof createServiceClients>['octavia']) => Promise<T>): Promise<T> {
  const session = await OpenStackSession.create(loadCloud({ cloudsYaml: current.cloud.cloudsYaml('openstack'), cloudName: 'openstack' }));
  try {
    return await use(createServiceClients(session).octavia);
  } finally {
    session.close();
  }
}

/** Every listener and pool the cloud holds, with its provisioning status. */
async function children(current: Steps): Promise<{ listeners: string[]; pools: string[] }> {
  return withOctavia(current, async (octavia) => {
    const describe = (object: { name?: string | null; provisioning_status: string }) => `${object.name} ${object.provisioning_status}`;
    return { listeners: (await octavia.listListeners()).map(describe).sort(), pools: (await octavia.listPools()).map(describe).sort() };
  });
}

describe('the cluster load balancers', () => {
  it('are created fully populated: one POST per load balancer, no child made alone', async () => {
    steps = await startSteps();
    await readyCluster(steps);
    expect(octaviaCalls(steps, /^load-balancer POST \/v2\/lbaas\/loadbalancers /)).toHaveLength(2);
    expect(octaviaCalls(steps, /^load-balancer (POST|DELETE) \/v2\/lbaas\/(listeners|pools|healthmonitors)/)).toEqual([]);
    expect(await children(steps)).toEqual({
      listeners: [
        'k8s-clusterapi-cluster-default-demo-ingress-443 ACTIVE',
        'k8s-clusterapi-cluster-default-demo-ingress-80 ACTIVE',
        'k8s-clusterapi-cluster-default-demo-kubeapi-6443 ACTIVE',
      ],
      pools: [
        'k8s-clusterapi-cluster-default-demo-ingress-443 ACTIVE',
        'k8s-clusterapi-cluster-default-demo-ingress-80 ACTIVE',
        'k8s-clusterapi-cluster-default-demo-kubeapi-6443 ACTIVE',
      ],
    });
  }, 90_000);

  it('are created alone, their children one by one, where the cloud refuses the tree (501)', async () => {
    steps = await startSteps();
    // Octavia's answer for a provider that does not support a fully populated create; nothing is created.
    steps.cloud.faults.add({ service: 'load-balancer', method: 'POST', path: '^/v2/lbaas/loadbalancers$', status: 501, times: 1 });
    await readyCluster(steps);
    expect(octaviaCalls(steps, /^load-balancer POST \/v2\/lbaas\/loadbalancers /).map((line) => line.split(' ')[3])).toEqual(['501', '201', '201']);
    expect(octaviaCalls(steps, /^load-balancer POST \/v2\/lbaas\/listeners /).length).toBeGreaterThanOrEqual(1);
    const { listeners, pools } = await children(steps);
    expect(listeners).toHaveLength(3);
    expect(pools).toHaveLength(3);
    expect([...listeners, ...pools].every((line) => line.endsWith(' ACTIVE'))).toBe(true);
  }, 90_000);

  it('replace children a cloud left PENDING_CREATE one by one, and build no more trees there', async () => {
    const quirky = octaviaWithQuirks({ fullyPopulatedChildrenStayPending: true });
    steps = await startSteps({ services: defaultServices.map((factory) => (factory === createOctaviaSimulator ? quirky : factory)) });
    const ready = await readyCluster(steps);
    // One load balancer each, kept: only their stuck children were replaced.
    expect(octaviaCalls(steps, /^load-balancer POST \/v2\/lbaas\/loadbalancers /)).toHaveLength(2);
    expect(octaviaCalls(steps, /^load-balancer DELETE \/v2\/lbaas\/loadbalancers\//)).toEqual([]);
    expect(octaviaCalls(steps, /^load-balancer DELETE \/v2\/lbaas\/listeners\//).length).toBeGreaterThanOrEqual(1);
    expect(octaviaCalls(steps, /^load-balancer DELETE \/v2\/lbaas\/pools\//).length).toBeGreaterThanOrEqual(1);
    // Nothing stuck is left, and nothing twice.
    const { listeners, pools } = await children(steps);
    expect(listeners.every((line) => line.endsWith(' ACTIVE')) && pools.every((line) => line.endsWith(' ACTIVE'))).toBe(true);
    expect(listeners).toHaveLength(3);
    expect(pools).toHaveLength(3);
    const owned = ((ready.status as JsonObject).extensions as JsonObject).ownedResources as Record<string, string>;
    expect(Object.keys(owned)).toEqual(expect.arrayContaining(['listener/6443', 'pool/6443', 'healthmonitor/6443', 'ingress/listener/80', 'ingress/pool/443']));

    // The same cloud again: the children come one by one from the start, none is stuck.
    await steps.kubectl(['delete', 'openstackcluster', 'demo', '--wait=false']);
    await steps.until([['cluster', 'demo']], (object) => object === undefined, 60_000);
    const before = steps.requests.length;
    await readyCluster(steps);
    const again = steps.requests.slice(before);
    expect(again.filter((line) => /^load-balancer DELETE /.test(line))).toEqual([]);
    expect(again.filter((line) => /^load-balancer POST \/v2\/lbaas\/listeners /.test(line))).toHaveLength(3);
  }, 120_000);

  it('turn a Ready cluster not Ready while Octavia refuses a change as busy, and Ready again once it is made', async () => {
    // What a pass verified runs out at once: every pass reads the load balancer's children again.
    steps = await startSteps({}, { resyncPeriodMs: 1 });
    await readyCluster(steps);
    // A listener deleted behind our back, then a 409 for its re-creation: Octavia's answer while another change holds the load balancer.
    await withOctavia(steps, async (octavia) => {
      const listener = (await octavia.listListeners()).find((candidate) => candidate.name === 'k8s-clusterapi-cluster-default-demo-ingress-80')!;
      await octavia.deleteListener(listener.id);
      await vi.waitFor(async () => expect((await octavia.getLoadBalancer(listener.loadbalancers![0].id)).provisioning_status).toBe('ACTIVE'));
    });
    steps.cloud.faults.add({
      service: 'load-balancer',
      method: 'POST',
      path: '^/v2/lbaas/listeners$',
      status: 409,
      message: 'Load Balancer is immutable and cannot be updated.',
      times: 1,
    });
    expect(isReady(await steps.get('cluster', 'demo'))).toBe(true);

    await steps.pass('cluster', 'demo');
    expect(octaviaCalls(steps, /^load-balancer POST \/v2\/lbaas\/listeners /).map((line) => line.split(' ')[3])).toEqual(['409']);
    expect(condition(await steps.get('cluster', 'demo'), 'Ready')).toMatchObject({
      status: 'False',
      message: expect.stringMatching(/^waiting for load balancer \S+ to accept changes again/),
    });

    await steps.until([['cluster', 'demo']], isReady, 30_000);
    expect((await children(steps)).listeners).toContain('k8s-clusterapi-cluster-default-demo-ingress-80 ACTIVE');
  }, 90_000);
});
