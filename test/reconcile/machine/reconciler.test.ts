/**
 * The OpenStackMachine reconciler one pass at a time: it waits for the cluster's infrastructure and
 * for bootstrap data, stops while paused, creates its OpenStackServer once and follows it, joins its
 * load balancer while the server boots, gives Cluster API the providerID and `provisioned`, and on
 * deletion waits for the server to be gone before it lets go of its finalizer.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { machineFinalizer } from '../../../src/reconcile/machine/reconciler.js';
import type { JsonObject } from '../../../src/storage/interface.js';
import { condition, exampleMachine, isReady, startMachineSteps, type Steps } from '../steps.js';

let steps: Steps;
const worker = 'demo-md-0-0';

beforeAll(async () => {
  steps = await startMachineSteps([worker]);
}, 60_000);

afterAll(async () => {
  await steps?.stop();
});

const meta = (object: JsonObject | undefined) => object?.metadata as Record<string, any>;
const status = (object: JsonObject | undefined) => (object?.status ?? {}) as Record<string, any>;

describe('the OpenStackMachine reconciler', () => {
  it('waits for the cluster infrastructure, asking to be looked at again', async () => {
    const waiting = await steps.until([['machine', worker]], (object) => condition(object, 'Ready')?.reason === 'WaitingForClusterInfrastructure');
    expect(meta(waiting).finalizers).toEqual([machineFinalizer]);
    expect((await steps.pass('machine', worker)).requeueAfterMs).toBeGreaterThan(0);
    expect(await steps.get('server', worker)).toBeUndefined();
  });

  it('waits for bootstrap data once the cluster is provisioned', async () => {
    await steps.until([['cluster', 'demo']], isReady, 60_000);
    const [machine, openStackMachine] = await exampleMachine(steps, worker);
    const noData = structuredClone(machine);
    (noData.metadata as JsonObject).name = 'demo-md-0-nodata';
    (noData.spec as JsonObject).bootstrap = { configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfig', name: 'demo-md-0-nodata' } };
    ((noData.spec as JsonObject).infrastructureRef as JsonObject).name = 'demo-md-0-nodata';
    const infra = structuredClone(openStackMachine);
    (infra.metadata as JsonObject).name = 'demo-md-0-nodata';
    await steps.applyObjects([noData, infra]);
    const waiting = await steps.until([['machine', 'demo-md-0-nodata']], (object) => condition(object, 'Ready')?.reason === 'WaitingForBootstrapData');
    expect(condition(waiting, 'Ready')?.message).toContain('has no spec.bootstrap.dataSecretName yet');
    expect(await steps.get('server', 'demo-md-0-nodata')).toBeUndefined();
  });

  it('creates its OpenStackServer once, then hands Cluster API the providerID and provisioned', async () => {
    const ready = await steps.until(
      [
        ['machine', worker],
        ['server', worker],
      ],
      isReady,
      60_000,
    );
    const server = await steps.get('server', worker);
    expect(meta(server).ownerReferences).toEqual([expect.objectContaining({ kind: 'OpenStackMachine', name: worker, controller: true })]);
    expect(status(ready)).toMatchObject({ instanceID: status(server).instanceID, initialization: { provisioned: true } });
    expect((ready?.spec as JsonObject | undefined)?.providerID).toBe(`openstack:///${status(server).instanceID}`);
    expect(steps.requests.filter((line) => /^compute POST \/servers /.test(line))).toHaveLength(1);
  });

  it('does nothing while paused, and says so', async () => {
    await steps.kubectl(['annotate', 'openstackmachine', worker, 'cluster.x-k8s.io/paused=']);
    const before = steps.requests.length;
    await steps.pass('machine', worker);
    expect(condition(await steps.get('machine', worker), 'Paused')).toMatchObject({ status: 'True', reason: 'Paused' });
    expect(steps.requests.slice(before)).toEqual([]);
    await steps.kubectl(['annotate', 'openstackmachine', worker, 'cluster.x-k8s.io/paused-']);
  });

  it('keeps its finalizer until its server is gone from the cloud', async () => {
    await steps.kubectl(['delete', 'openstackmachine', worker, '--wait=false']);
    // The machine leaves the ingress pool, then deletes its server object; it waits for the server.
    await vi.waitFor(
      async () => {
        await steps.pass('machine', worker).catch(() => undefined);
        expect(meta(await steps.get('server', worker))?.deletionTimestamp).toBeDefined();
      },
      { timeout: 30_000, interval: 20 },
    );
    expect(meta(await steps.get('machine', worker)).finalizers).toEqual([machineFinalizer]);
    await steps.until(
      [
        ['machine', worker],
        ['server', worker],
      ],
      (object) => object === undefined,
      60_000,
    );
    expect(await steps.get('server', worker)).toBeUndefined();
    expect(steps.cloud.inventory().compute?.servers ?? 0).toBe(0);
  });

  it('joins the API load balancer while its server boots, with the address of its port', async () => {
    const controlPlane = 'demo-control-plane-0';
    await steps.applyObjects(await exampleMachine(steps, controlPlane));
    await vi.waitFor(
      async () => {
        await steps.pass('machine', controlPlane);
        expect(await steps.get('server', controlPlane)).toBeDefined();
      },
      { timeout: 30_000, interval: 20 },
    );
    // One server pass: the port, then the server, still BUILD as far as the object knows.
    await vi.waitFor(
      async () => {
        await steps.pass('server', controlPlane);
        expect(status(await steps.get('server', controlPlane)).instanceID).toBeDefined();
      },
      { timeout: 30_000, interval: 20 },
    );
    const booting = status(await steps.get('server', controlPlane));
    expect(booting.ready).toBe(false);
    expect(booting.addresses).toContainEqual({ type: 'InternalIP', address: expect.any(String) });
    const before = steps.requests.length;
    const memberCreates = () => steps.requests.slice(before).filter((line) => /^load-balancer POST \/v2\/lbaas\/pools\/[^/]+\/members /.test(line));
    await steps.pass('machine', controlPlane);
    expect(memberCreates()).toHaveLength(1);
    expect(condition(await steps.get('machine', controlPlane), 'Ready')).toMatchObject({ status: 'False', reason: 'InstanceNotReady' });
    const ready = await steps.until(
      [
        ['machine', controlPlane],
        ['server', controlPlane],
      ],
      isReady,
      60_000,
    );
    expect(condition(ready, 'APIServerIngressReady')).toMatchObject({ status: 'True' });
    expect(memberCreates()).toHaveLength(1);
  });
});
