/**
 * The load balancer actuator driven by the engine against the OpenStack
 * simulator through a real session: PENDING_CREATE waited out pass by pass,
 * PENDING_UPDATE (another change under way) taken as serving, ERROR reported, adoption only by owner tag, and the cascade delete waited
 * out until Octavia answers 404.
 */
import { describe, expect, it } from 'vitest';
import { ownerTag, ownerTags } from '../../../src/reconcile/resource/actuator.js';
import { classify, ensure, remove, ResourceTerminalError, type Removal } from '../../../src/reconcile/resource/engine.js';
import { loadBalancerActuator, type LoadBalancerDesired } from '../../../src/reconcile/resource/load-balancer.js';
import { pollUntil } from '../../../harness/poll.js';
import { newOwner, pause, SimulatedOctavia, uniqueName } from './simulated-octavia.js';

const bench = SimulatedOctavia.forThisFile();

const desiredLoadBalancer = (extra: Partial<LoadBalancerDesired> = {}): LoadBalancerDesired => ({
  name: uniqueName('k8s-clusterapi-cluster-default-demo-kubeapi'),
  vip_subnet_id: bench.subnetId,
  description: 'test',
  ...extra,
});

const loadBalancerCount = () => bench.sim.inventory()['load-balancer']?.loadbalancers ?? 0;

/** Runs remove pass after pass, as the controller would, keeping what each pass returned. */
async function removeUntilDeleted(input: Parameters<typeof remove>[1]): Promise<Removal[]> {
  const passes: Removal[] = [];
  for (;;) {
    const removal = await remove(loadBalancerActuator(bench.octavia), input);
    passes.push(removal);
    if ('deleted' in removal || 'blockedBy' in removal || passes.length > 200) return passes;
    await pause();
  }
}

describe('ensure a load balancer', () => {
  it('creates it tagged, records it at once, waits through PENDING_CREATE, then reads it by ID only', async () => {
    const lbs = loadBalancerActuator(bench.octavia);
    const owner = newOwner();
    const desired = desiredLoadBalancer({ tags: ['team-a', ownerTag(owner)] });

    const first = await ensure(lbs, { recordedId: undefined, desired, owner, record: bench.record });
    expect(first).toMatchObject({ ready: false, found: 'created', requeueAfterMs: 5_000 });
    expect(!first.ready && first.waitingFor).toBe(`load balancer ${first.resource.id} to become ACTIVE (now PENDING_CREATE)`);
    const id = first.resource.id;
    // One adoption list, the POST carrying the tags, and the record: nothing else before the ID is safe.
    expect(bench.trace()).toEqual([
      `GET /v2/lbaas/loadbalancers?name=${desired.name}&tags=${encodeURIComponent(ownerTag(owner))} 200`,
      'POST /v2/lbaas/loadbalancers 201',
      `record ${id}`,
    ]);
    expect(first.resource.tags).toEqual([...ownerTags(owner), 'team-a']);

    bench.forget();
    const passes = await bench.settle(lbs, desired, owner, id);
    expect(passes.at(-1)).toMatchObject({ ready: true, found: 'recorded', resource: { id, provisioning_status: 'ACTIVE' } });
    // Each pass is a single GET by ID; no list, no second POST.
    expect(bench.trace()).toEqual(passes.map(() => `GET /v2/lbaas/loadbalancers/${id} 200`));
    expect(lbs.describe(passes.at(-1)!.resource)).toMatchObject({
      id,
      name: desired.name,
      provisioning_status: 'ACTIVE',
      vip_subnet_id: bench.subnetId,
      vip_address: expect.stringMatching(/^10\.20\./),
      provider: 'amphora',
    });
  });

  it('reports a load balancer whose amphora build failed (ERROR) as failed instead of waiting it out', async () => {
    const lbs = loadBalancerActuator(bench.octavia);
    const owner = newOwner();
    const desired = desiredLoadBalancer();
    const created = await ensure(lbs, { recordedId: undefined, desired, owner, record: bench.record });
    // Deleting the VIP port before the driver plugs it fails the build, as on a real cloud.
    await bench.clients.neutron.deletePort(created.resource.vip_port_id!);

    const error = await pollUntil(
      'the load balancer to fail',
      () =>
        ensure(lbs, { recordedId: created.resource.id, desired, owner, record: bench.record }).then(
          () => undefined,
          (e: unknown) => e,
        ),
      { timeoutMs: 15_000, intervalMs: 10 },
    );
    expect(error).toBeInstanceOf(ResourceTerminalError);
    expect(error).toMatchObject({ reason: 'Failed', ids: [created.resource.id] });
    expect((error as Error).message).toBe(`load balancer ${created.resource.id} failed: Octavia reports provisioning_status ERROR`);
    expect(classify(error)).toBe('terminal');

    // A load balancer in ERROR can still be deleted.
    const removals = await removeUntilDeleted({ recordedId: created.resource.id, name: desired.name, owner });
    expect(removals.at(-1)).toEqual({ deleted: true });
  });

  it('counts a load balancer applying another change (PENDING_UPDATE) as serving: ready, without a wait', async () => {
    const lbs = loadBalancerActuator(bench.octavia);
    const owner = newOwner();
    const lb = await bench.activeLoadBalancer(owner);
    // A machine's member, say: Octavia marks the load balancer PENDING_UPDATE while it applies it.
    await bench.octavia.createListener({ loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 6443, name: 'child' });
    const result = await ensure(lbs, { recordedId: lb.id, desired: desiredLoadBalancer({ name: lb.name! }), owner, record: bench.record });
    expect(result).toMatchObject({ ready: true, found: 'recorded', resource: { id: lb.id, provisioning_status: 'PENDING_UPDATE' } });
  });

  it('adopts the owner-tagged load balancer after a crash between create and record, without a second POST', async () => {
    const lbs = loadBalancerActuator(bench.octavia);
    const owner = newOwner();
    const desired = desiredLoadBalancer();
    const orphan = await lbs.create(desired, owner);
    const before = loadBalancerCount();
    bench.forget();

    const adopted = await ensure(lbs, { recordedId: undefined, desired, owner, record: bench.record });
    expect(adopted).toMatchObject({ found: 'adopted', resource: { id: orphan.id } });
    expect(bench.trace()).toContain(`record ${orphan.id}`);
    expect(bench.mutations()).toEqual([]);
    expect(loadBalancerCount()).toBe(before);
  });

  it('leaves a same-named load balancer of another owner, or an untagged one, alone, and removes only its own', async () => {
    const lbs = loadBalancerActuator(bench.octavia);
    const desired = desiredLoadBalancer();
    const theirs = await lbs.create(desired, newOwner());
    const users = await bench.octavia.createLoadBalancer({ name: desired.name, vip_subnet_id: bench.subnetId });
    const owner = newOwner();

    const ours = await ensure(lbs, { recordedId: undefined, desired, owner, record: bench.record });
    expect(ours.found).toBe('created');
    expect([theirs.id, users.id]).not.toContain(ours.resource.id);

    const removals = await removeUntilDeleted({ recordedId: undefined, name: desired.name, owner });
    expect(removals.at(-1)).toEqual({ deleted: true });
    expect((await bench.octavia.listLoadBalancers({ name: desired.name })).map((lb) => lb.id).sort()).toEqual([theirs.id, users.id].sort());
  });
});

describe('read load balancers together', () => {
  it("answers those of the owners asked for in one list by their tags, and none of another owner's", async () => {
    const lbs = loadBalancerActuator(bench.octavia);
    const [a, b, other] = [newOwner(), newOwner(), newOwner()];
    const created = [];
    for (const owner of [a, b, other])
      created.push((await ensure(lbs, { recordedId: undefined, desired: desiredLoadBalancer(), owner, record: bench.record })).resource);
    bench.forget();
    const found = await lbs.readMany!.read([
      { id: created[0]!.id, ownerUid: a.uid },
      { id: created[1]!.id, ownerUid: b.uid },
    ]);
    expect(found.map((lb) => lb.id).sort()).toEqual([created[0]!.id, created[1]!.id].sort());
    expect(bench.trace()).toEqual([`GET /v2/lbaas/loadbalancers?tags-any=${encodeURIComponent(`${ownerTag(a)},${ownerTag(b)}`)} 200`]);
  });
});

describe('remove a load balancer', () => {
  it('sends no DELETE while PENDING_UPDATE, deletes with cascade once, and waits until Octavia answers 404', async () => {
    const lbs = loadBalancerActuator(bench.octavia);
    const owner = newOwner();
    const lb = await bench.activeLoadBalancer(owner);
    const listener = await bench.octavia.createListener({ loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 6443, name: 'child' });
    bench.forget();

    // Read while the listener create runs: Octavia would refuse the DELETE, so none is sent.
    const busy = { ...lb, provisioning_status: 'PENDING_UPDATE' };
    expect(await lbs.delete(busy)).toEqual({ waitingFor: `load balancer ${lb.id} to be deleted`, requeueAfterMs: 5_000 });
    expect(bench.trace()).toEqual([]);

    const removals = await removeUntilDeleted({ recordedId: lb.id, name: lb.name!, owner });
    expect(removals[0]).toEqual({ waitingFor: `load balancer ${lb.id} to be deleted`, requeueAfterMs: 5_000 });
    expect(removals.at(-1)).toEqual({ deleted: true });
    // One DELETE, with cascade, never a 409, and no second DELETE while it runs; done once the GET answers 404.
    expect(bench.mutations()).toEqual([`DELETE /v2/lbaas/loadbalancers/${lb.id}?cascade=true 204`]);
    expect(bench.trace().at(-2)).toBe(`GET /v2/lbaas/loadbalancers/${lb.id} 404`);
    await expect(bench.octavia.getListener(listener.id)).rejects.toMatchObject({ kind: 'NotFound' });
  });

  it('takes a 409 for a load balancer that turned PENDING_* after it was read as a wait, not as blocked', async () => {
    const lbs = loadBalancerActuator(bench.octavia);
    const owner = newOwner();
    const lb = await bench.activeLoadBalancer(owner);
    bench.sim.faults.add({
      service: 'load-balancer',
      method: 'DELETE',
      path: `/loadbalancers/${lb.id}$`,
      status: 409,
      message: `Invalid state PENDING_UPDATE of loadbalancer resource ${lb.id}`,
      times: 1,
    });

    const refused = await remove(lbs, { recordedId: lb.id, name: lb.name!, owner });
    expect(refused).toEqual({ waitingFor: `load balancer ${lb.id} to be deleted`, requeueAfterMs: 5_000 });
    const removals = await removeUntilDeleted({ recordedId: lb.id, name: lb.name!, owner });
    expect(removals.at(-1)).toEqual({ deleted: true });
  });

  it('reports any other 409 on delete as blocked, with what Octavia said', async () => {
    const lbs = loadBalancerActuator(bench.octavia);
    const owner = newOwner();
    const lb = await bench.activeLoadBalancer(owner);
    bench.sim.faults.add({
      service: 'load-balancer',
      method: 'DELETE',
      path: `/loadbalancers/${lb.id}$`,
      status: 409,
      message: 'Conflict with the amphora driver',
      times: 1,
    });

    const blocked = await remove(lbs, { recordedId: lb.id, name: lb.name!, owner });
    expect(blocked).toEqual({ blockedBy: `load balancer ${lb.id} cannot be deleted yet (Conflict with the amphora driver)`, requeueAfterMs: 15_000 });
    expect((await removeUntilDeleted({ recordedId: lb.id, name: lb.name!, owner })).at(-1)).toEqual({ deleted: true });
  });
});
