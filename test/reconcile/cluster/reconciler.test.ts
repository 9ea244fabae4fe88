/**
 * The OpenStackCluster reconciler one pass at a time: its gates (no Cluster yet, paused), the
 * finalizer before any cloud call, a preflight the cloud did not answer retried soon and one it
 * failed rechecked at a steady pace, conditions at the object's generation, a transient failure
 * retried and an authentication failure reported, and deletion in reverse order with the
 * finalizer last.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerUidAnnotation } from '../../../src/reconcile/adoption.js';
import { clusterFinalizer } from '../../../src/reconcile/cluster/reconciler.js';
import { deleteForMoveAnnotation } from '../../../src/reconcile/lifecycle.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { condition, isReady, lastRequest, startSteps, type Steps } from '../steps.js';

let steps: Steps;

beforeAll(async () => {
  steps = await startSteps();
  await steps.apply('00-cloud-credentials.yaml');
  // Without the bastion, whose OpenStackServer has a reconciler of its own.
  const [cluster] = await steps.documents('02-openstackcluster.yaml');
  delete (cluster.spec as JsonObject).bastion;
  await steps.applyObjects([cluster]);
});

afterAll(async () => {
  await steps?.stop();
});

const meta = (object: JsonObject | undefined) => object?.metadata as Record<string, any>;

describe('the OpenStackCluster reconciler', () => {
  it('waits for its Cluster without touching the cloud or the object', async () => {
    const before = await steps.get('cluster', 'demo');
    expect(await steps.pass('cluster', 'demo')).toEqual({});
    const cluster = await steps.get('cluster', 'demo');
    expect(meta(cluster).resourceVersion).toBe(meta(before).resourceVersion);
    expect(cluster?.status).toBeUndefined();
    expect(meta(cluster).finalizers).toBeUndefined();
    expect(steps.requests).toEqual([]);
  });

  it('waits while its Cluster is paused, saying so', async () => {
    await steps.apply('01-cluster.yaml');
    await steps.kubectl(['patch', 'clusters.cluster.x-k8s.io', 'demo', '--type=merge', '-p', '{"spec":{"paused":true}}']);
    await steps.pass('cluster', 'demo');
    const cluster = await steps.get('cluster', 'demo');
    expect(condition(cluster, 'Paused')).toMatchObject({ status: 'True', reason: 'Paused', message: 'Cluster default/demo is paused' });
    expect(meta(cluster).finalizers).toBeUndefined();
    expect(steps.requests).toEqual([]);
    await steps.kubectl(['patch', 'clusters.cluster.x-k8s.io', 'demo', '--type=merge', '-p', '{"spec":{"paused":false}}']);
  });

  it('holds its finalizer before the first cloud request', async () => {
    await steps.pass('cluster', 'demo');
    expect(meta(await steps.get('cluster', 'demo')).finalizers).toContain(clusterFinalizer);
    expect(steps.requests.filter((line) => / (POST|PUT|DELETE) /.test(line) && !line.startsWith('identity '))).toEqual([]);
  });

  it('retries a preflight check the cloud did not answer with the queue backoff, and rechecks a finding a minute later', async () => {
    const externalNetworks = { service: 'network', method: 'GET', path: '^/v2\\.0/networks$', times: 1 } as const;
    // Two: beside the first checks goes the lookup of the cluster network's name, which lists networks too.
    steps.cloud.faults.add({ ...externalNetworks, status: 409, message: 'injected conflict', times: 2 });
    await expect(steps.pass('cluster', 'demo')).rejects.toThrow(
      /^1 preflight check failed: listing external networks failed: .*409.*run the check again when the service answers$/,
    );
    let cluster = await steps.get('cluster', 'demo');
    expect(condition(cluster, 'PreflightChecksPassed')).toMatchObject({ status: 'False', reason: 'PreflightFailed' });
    expect(condition(cluster, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'OpenStackError',
      message: expect.stringMatching(/^will retry: 1 preflight check failed/),
    });

    // A refusal is an answer: the user has to act, so the check waits for them at a steady pace.
    steps.cloud.faults.add({ ...externalNetworks, status: 403, message: 'not allowed to list networks' });
    const beforeRecheck = steps.requests.length;
    expect(await steps.pass('cluster', 'demo')).toEqual({
      requeueAfterMs: 60_000,
      waitingFor: [expect.stringMatching(/^preflight checks to pass \(1 preflight check failed: .*not allowed to list networks/)],
    });
    // The lookups by name of a new cluster's first creates go out beside its first checks only, not beside each recheck.
    expect(
      steps.requests
        .slice(beforeRecheck)
        .filter((line) => /^(network GET \/v2\.0\/(networks|security-groups)|load-balancer GET \/v2\/lbaas\/loadbalancers)\?name=/.test(line)),
    ).toEqual([]);
    cluster = await steps.get('cluster', 'demo');
    expect(condition(cluster, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'PreflightFailed',
      message: expect.stringMatching(/403 Forbidden.*give the user a role/),
    });
  });

  it('retries a transient failure and reaches Ready with every condition at the current generation', async () => {
    steps.cloud.faults.add({ service: 'network', method: 'POST', path: '^/v2\\.0/networks$', status: 503, times: 1 });
    await expect(steps.pass('cluster', 'demo')).rejects.toThrow(/503/);
    expect(condition(await steps.get('cluster', 'demo'), 'Ready')).toMatchObject({
      status: 'False',
      reason: 'OpenStackError',
      message: expect.stringMatching(/^will retry: /),
    });
    // Its own spec.controlPlaneEndpoint write bumps the generation; what it verified before still stands, so the next pass reads none of it again.
    await steps.until(
      [['cluster', 'demo']],
      (object) => Boolean(((object?.spec as JsonObject | undefined)?.controlPlaneEndpoint as { host?: string } | undefined)?.host),
      60_000,
    );
    const beforeNextPass = steps.requests.length;
    await steps.pass('cluster', 'demo');
    expect(steps.requests.slice(beforeNextPass).filter((line) => /^network GET \/v2\.0\/(networks|subnets|routers|security-groups)\//.test(line))).toEqual([]);
    const ready = await steps.until([['cluster', 'demo']], isReady, 60_000);
    const generation = meta(ready).generation;
    const conditions = ((ready?.status as JsonObject | undefined)?.conditions ?? []) as Record<string, unknown>[];
    expect(conditions.map((c) => c.type)).toEqual(expect.arrayContaining(['Ready', 'OpenStackAuthenticationSucceeded', 'Paused']));
    // Each condition says which generation it was judged on: this pass's, except the preflight
    // checks, which run before anything is built (the reconciler's own spec.controlPlaneEndpoint
    // write comes later and bumps the generation).
    for (const c of conditions) {
      if (c.type === 'PreflightChecksPassed') expect(c.observedGeneration).toBeLessThanOrEqual(generation);
      else expect(c.observedGeneration, String(c.type)).toBe(generation);
    }
    expect(ready?.status).toMatchObject({ network: { id: expect.any(String) }, apiServerManagedLoadBalancer: { id: expect.any(String) } });
    expect(steps.requests.filter((line) => /^network POST \/v2\.0\/networks /.test(line)).map((line) => line.split(' ')[3])).toEqual(['503', '201']);
  });

  it('writes nothing to a Ready cluster when a pass finds nothing to change', async () => {
    const before = await steps.get('cluster', 'demo');
    await steps.pass('cluster', 'demo');
    await steps.pass('cluster', 'demo');
    expect(meta(await steps.get('cluster', 'demo')).resourceVersion).toBe(meta(before).resourceVersion);
  });

  it('lets a copy made by clusterctl move take its resources over: the original lets go without deleting, the copy creates nothing', async () => {
    const original = (await steps.get('cluster', 'demo'))!;
    expect(meta(original).annotations).toMatchObject({ [ownerUidAnnotation]: meta(original).uid });
    // clusterctl move's steps on the source: the Cluster paused, the object copied to the target
    // (metadata without the server's fields, spec; no status), then marked, deleted, and only then
    // its finalizers removed. Our reconciler lets go as soon as it sees the marked deletion.
    await steps.kubectl(['patch', 'clusters.cluster.x-k8s.io', 'demo', '--type=merge', '-p', '{"spec":{"paused":true}}']);
    const before = steps.requests.length;
    await steps.kubectl(['annotate', 'openstackcluster', 'demo', `${deleteForMoveAnnotation}=`]);
    await steps.kubectl(['delete', 'openstackcluster', 'demo', '--wait=false']);
    await steps.until([['cluster', 'demo']], (object) => object === undefined, 60_000);
    const writes = () => steps.requests.slice(before).filter((line) => / (POST|PUT|DELETE) /.test(line) && !line.startsWith('identity '));
    expect(writes()).toEqual([]);

    // The copy, here in the same storage once the original is gone: a uid of its own, the original's recorded one.
    const { name, namespace, labels, annotations, ownerReferences } = meta(original);
    await steps.applyObjects([
      { apiVersion: original.apiVersion, kind: original.kind, metadata: { name, namespace, labels, annotations, ownerReferences }, spec: original.spec },
    ]);
    await steps.kubectl(['patch', 'clusters.cluster.x-k8s.io', 'demo', '--type=merge', '-p', '{"spec":{"paused":false}}']);
    const copy = await steps.until([['cluster', 'demo']], isReady, 60_000);
    expect(meta(copy).uid).not.toBe(meta(original).uid);
    expect(meta(copy).annotations).toMatchObject({ [ownerUidAnnotation]: meta(original).uid });
    // It found every resource by the original's owner tag, and created, changed and deleted nothing.
    expect(writes()).toEqual([]);
    const ids = (object: JsonObject | undefined) => {
      const status = object?.status as { network: { id: string }; router: { id: string }; apiServerManagedLoadBalancer: { id: string } };
      return [status.network.id, status.router.id, status.apiServerManagedLoadBalancer.id];
    };
    expect(ids(copy)).toEqual(ids(original));
  });

  it('deletes the load balancers before the router, the router before the network, and its finalizer last', async () => {
    const before = steps.requests.length;
    await steps.kubectl(['delete', 'openstackcluster', 'demo', '--wait=false']);
    await steps.until([['cluster', 'demo']], (object) => object === undefined, 60_000);
    const deletions = steps.requests.slice(before).filter((line) => / DELETE /.test(line));
    const lastLoadBalancer = lastRequest(deletions, /^load-balancer DELETE \/v2\/lbaas\/loadbalancers\//);
    const router = lastRequest(deletions, /^network DELETE \/v2\.0\/routers\//);
    const network = lastRequest(deletions, /^network DELETE \/v2\.0\/networks\//);
    expect(lastLoadBalancer).toBeGreaterThanOrEqual(0);
    expect(lastLoadBalancer).toBeLessThan(router);
    expect(router).toBeLessThan(network);
    // The finalizer went last: nothing of the cluster is left in the cloud.
    expect(steps.cloud.inventory()['load-balancer']?.loadbalancers ?? 0).toBe(0);
    expect(steps.cloud.inventory().network?.routers ?? 0).toBe(0);
  });

  it('reports credentials the cloud refuses as a failed authentication', async () => {
    await steps.kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
        kind: 'OpenStackCluster',
        metadata: { name: 'nocreds', namespace: 'default', labels: { 'cluster.x-k8s.io/cluster-name': 'demo' } },
        spec: { identityRef: { name: 'missing-secret', cloudName: 'openstack' } },
      }),
    );
    const cluster = await steps.until([['cluster', 'nocreds']], (object) => condition(object, 'OpenStackAuthenticationSucceeded') !== undefined);
    expect(condition(cluster, 'OpenStackAuthenticationSucceeded')).toMatchObject({ status: 'False', reason: 'OpenStackAuthenticationFailed' });
    expect(condition(cluster, 'Ready')?.status).toBe('False');
  });
});
