/**
 * At resync a load balancer and its listeners, pools and monitors are vouched for by one read of
 * its status tree, not a GET each; a child the tree does not show ACTIVE (here one deleted behind
 * our back) sends them back to their own reads, which make it again. Likewise the router's read
 * vouches for its interfaces while its revision stands; a change to the router lists them again.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createServiceClients, loadCloud, OpenStackSession, type ServiceClients } from '../../../src/openstack/index.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { isReady, provisionExampleCluster, startSteps, type Steps } from '../steps.js';

let steps: Steps;
let session: OpenStackSession;
let clients: ServiceClients;

const owned = (object: JsonObject | undefined): Record<string, string> =>
  ((object?.status as Record<string, any> | undefined)?.extensions?.ownedResources ?? {}) as Record<string, string>;
const octaviaReads = (from: number) => steps.requests.slice(from).filter((line) => /^load-balancer GET /.test(line));
const treeReads = (from: number) => octaviaReads(from).filter((line) => /\/loadbalancers\/[^/]+\/status /.test(line));
const isRouterRead = (line: string) => /^network GET \/v2\.0\/routers(\/|\?id=)/.test(line);
const interfaceLists = (from: number) => steps.requests.slice(from).filter((line) => /^network GET \/v2\.0\/ports\?device_id=/.test(line));
/** Where the `count`th router read at or after `from` is in the requests, once the cluster's passes have made it. */
async function routerReadAt(from: number, count: number): Promise<number> {
  const positions = () => steps.requests.flatMap((line, index) => (index >= from && isRouterRead(line) ? [index] : []));
  await steps.until([['cluster', 'demo']], () => positions().length >= count, 30_000);
  return positions()[count - 1];
}

beforeAll(async () => {
  // A short resync, so that what the passes verified runs out within the test.
  steps = await startSteps({}, { resyncPeriodMs: 1_500 });
  session = await OpenStackSession.create(loadCloud({ cloudsYaml: steps.cloud.cloudsYaml('sim'), cloudName: 'sim' }));
  clients = createServiceClients(session);
  await provisionExampleCluster(steps);
}, 90_000);

afterAll(async () => {
  session?.close();
  await steps?.stop();
});

describe('a provisioned cluster at resync', () => {
  it('reads each load balancer tree once instead of its load balancer, listeners, pools and monitors', async () => {
    const from = steps.requests.length;
    // Passes until both load balancers' trees were read: the API one and the ingress one.
    await steps.until([['cluster', 'demo']], () => treeReads(from).length >= 2, 30_000);
    expect(octaviaReads(from).filter((line) => /\/(loadbalancers|listeners|pools|healthmonitors)\/[^/?]+ /.test(line))).toEqual([]);
    expect(isReady(await steps.get('cluster', 'demo'))).toBe(true);
  });

  it('lists the router interfaces again only after the router changed', async () => {
    // The first resyncs after the build may list once (the interface's add moved the revision on); from then on, none.
    const settled = await routerReadAt(steps.requests.length, 2);
    await routerReadAt(settled + 1, 2);
    expect(interfaceLists(settled + 1)).toEqual([]);

    const routerId = ((await steps.get('cluster', 'demo'))?.status as Record<string, any> | undefined)?.router?.id as string;
    await clients.neutron.updateRouter(routerId, { description: 'changed by hand' });
    const changed = steps.requests.length;
    await routerReadAt(changed, 2);
    expect(interfaceLists(changed)).toEqual([expect.stringContaining(`device_id=${routerId}`)]);
  });

  it('reads the children again when the tree lacks one, and makes the missing one again', async () => {
    const monitorId = owned(await steps.get('cluster', 'demo'))['healthmonitor/6443'];
    expect(monitorId).toEqual(expect.any(String));
    await clients.octavia.deleteHealthMonitor(monitorId);
    const from = steps.requests.length;
    const remade = await steps.until(
      [['cluster', 'demo']],
      (object) => isReady(object) && owned(object)['healthmonitor/6443'] !== undefined && owned(object)['healthmonitor/6443'] !== monitorId,
      30_000,
    );
    expect(steps.requests.slice(from).some((line) => /^load-balancer POST \/v2\/lbaas\/healthmonitors /.test(line))).toBe(true);
    // The cluster stays Ready through the pass that records the new monitor, which Octavia is still
    // building then (PENDING_CREATE); the passes after it wait for the load balancer until it is done.
    const remadeId = owned(remade)['healthmonitor/6443'];
    await vi.waitFor(
      async () => {
        await steps.pass('cluster', 'demo');
        expect((await clients.octavia.getHealthMonitor(remadeId)).provisioning_status).toBe('ACTIVE');
      },
      { timeout: 30_000, interval: 20 },
    );
    expect(owned(await steps.get('cluster', 'demo'))['healthmonitor/6443']).toBe(remadeId);
  });
});
