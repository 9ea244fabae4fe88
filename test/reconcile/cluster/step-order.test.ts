/**
 * The order the OpenStackCluster's step graph gives, seen in one pass at a time: the bastion is
 * started while the API load balancer builds (it needs the network and its group, not the load
 * balancer), and on deletion the load balancers go while the bastion server is still being
 * deleted, with nothing left in the cloud at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudCensus, noResources } from '../../../harness/census.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { condition, provisionExampleCluster, startSteps, type Steps } from '../steps.js';

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
    await steps.until([['cluster', 'demo']], () => steps.requests.slice(before).some((line) => /^load-balancer DELETE \/v2\/lbaas\/loadbalancers\//.test(line)));
    expect((await steps.get('server', bastion))?.metadata).toMatchObject({ deletionTimestamp: expect.any(String) });

    await steps.until([['cluster', 'demo'], ['server', bastion]], (object) => object === undefined, 60_000);
    expect((await census.ours()).counts).toEqual(noResources);
  });
});
