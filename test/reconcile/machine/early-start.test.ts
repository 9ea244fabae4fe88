/**
 * Machines start as soon as what their servers need of the cluster exists (its network and
 * security groups), not once the cluster is provisioned: their servers boot while the API load
 * balancer builds. A control-plane machine joins that load balancer only once the cluster has its
 * endpoint (no member create meets a load balancer still being built), and no machine is Ready
 * before its cluster is provisioned. Once Ready, a machine's capacity costs no call of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/storage/interface.js';
import { condition, isReady, startMachineSteps, type Steps } from '../steps.js';

let steps: Steps;
const worker = 'demo-md-0-0';
const controlPlane = 'demo-control-plane-0';

beforeAll(async () => {
  steps = await startMachineSteps([worker, controlPlane]);
}, 60_000);

afterAll(async () => {
  await steps?.stop();
});

const status = (object: JsonObject | undefined) => (object?.status ?? {}) as Record<string, any>;
const serverReady = (object: JsonObject | undefined) => status(object).ready === true;
const memberRequests = () => steps.requests.filter((line) => / \/v2\/lbaas\/pools\/[^/]+\/members/.test(line));

describe('machines of a cluster still building its load balancer', () => {
  it('boot their servers once the cluster has its network and security groups', async () => {
    const building = await steps.until([['cluster', 'demo']], (object) => status(object).apiServerManagedLoadBalancer !== undefined);
    expect(status(building).initialization?.provisioned).toBeUndefined();
    for (const name of [worker, controlPlane]) {
      await steps.until(
        [
          ['server', name],
          ['machine', name],
        ],
        serverReady,
        60_000,
      );
    }
    expect(status(await steps.get('cluster', 'demo')).initialization?.provisioned).toBeUndefined();
  });

  it('are not Ready, and a control-plane machine does not join the API load balancer, before the cluster is provisioned', async () => {
    // The worker joins the ingress load balancer meanwhile; then only the cluster's endpoint is missing.
    const waitingWorker = await steps.until([['machine', worker]], (object) => condition(object, 'Ready')?.reason === 'WaitingForClusterInfrastructure');
    expect(condition(waitingWorker, 'APIServerIngressReady')).toMatchObject({ status: 'True' });
    expect(status(waitingWorker).initialization?.provisioned).toBeUndefined();

    const waitingControlPlane = await steps.until([['machine', controlPlane]], (object) => condition(object, 'APIServerIngressReady') !== undefined);
    expect(condition(waitingControlPlane, 'APIServerIngressReady')).toMatchObject({ status: 'False', reason: 'LoadBalancerNotReady' });
    expect(condition(waitingControlPlane, 'Ready')).toMatchObject({ status: 'False', reason: 'APIServerIngressNotReady' });
    const apiPool = status(await steps.get('cluster', 'demo')).extensions?.ownedResources?.['pool/6443'];
    expect(apiPool).toEqual(expect.any(String));
    expect(memberRequests().filter((line) => line.includes(apiPool))).toEqual([]);
  });

  it('join and become Ready once the cluster is provisioned, with one member create each', async () => {
    await steps.until([['cluster', 'demo']], isReady, 60_000);
    for (const name of [worker, controlPlane]) await steps.until([['machine', name]], isReady, 60_000);
    const apiPool = status(await steps.get('cluster', 'demo')).extensions?.ownedResources?.['pool/6443'];
    expect(memberRequests().filter((line) => line.includes(apiPool) && / POST /.test(line))).toHaveLength(1);
    expect(status(await steps.get('machine', controlPlane)).initialization).toEqual({ provisioned: true });
  });

  it('report their capacity from the flavor list that resolved their flavor, not from one read each', async () => {
    for (const name of [worker, controlPlane])
      expect(status(await steps.get('machine', name)).extensions?.nodeResources?.reserved).toMatchObject({ cpu: expect.any(String) });
    expect(steps.requests.filter((line) => /GET \S*\/flavors\/detail/.test(line)).length).toBeGreaterThan(0);
    expect(steps.requests.filter((line) => /GET \S*\/flavors\/(?!detail)/.test(line))).toEqual([]);
  });
});
