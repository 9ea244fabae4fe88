/**
 * The listener, pool, health monitor and member actuators driven by the
 * engine against the OpenStack simulator through a real session. Octavia
 * takes one change per load balancer at a time; these tests prove the
 * actuators wait for it (instead of failing on its 409), fail only on
 * ERROR, change only what differs, replace a member that moved, and take a
 * vanished pool or load balancer as done on removal.
 */
import { describe, expect, it } from 'vitest';
import type { LoadBalancer, Pool } from '../../../src/openstack/index.js';
import type { Owner } from '../../../src/reconcile/resource/actuator.js';
import { classify, ensure, remove, ResourceTerminalError, type Removal } from '../../../src/reconcile/resource/engine.js';
import { healthMonitorActuator, type HealthMonitorDesired } from '../../../src/reconcile/resource/health-monitor.js';
import { listenerActuator, type ListenerDesired } from '../../../src/reconcile/resource/listener.js';
import { loadBalancerActuator } from '../../../src/reconcile/resource/load-balancer.js';
import { memberActuator, type MemberDesired } from '../../../src/reconcile/resource/member.js';
import { LoadBalancerBusyError } from '../../../src/reconcile/resource/octavia.js';
import { poolActuator, type PoolDesired } from '../../../src/reconcile/resource/pool.js';
import { pollUntil } from '../../../harness/poll.js';
import { newOwner, pause, SimulatedOctavia, uniqueName } from './simulated-octavia.js';

const bench = SimulatedOctavia.forThisFile(150);

const listenerFor = (lb: LoadBalancer, port = 6443, extra: Partial<ListenerDesired> = {}): ListenerDesired => ({
  name: `${lb.name}-${port}`,
  loadbalancer_id: lb.id,
  protocol: 'TCP',
  protocol_port: port,
  ...extra,
});

const poolFor = (lb: LoadBalancer, listenerId: string): PoolDesired => ({
  name: `${lb.name}-6443`,
  listener_id: listenerId,
  loadbalancer_id: lb.id,
  protocol: 'TCP',
  lb_algorithm: 'ROUND_ROBIN',
});

const monitorFor = (lb: LoadBalancer, poolId: string, extra: Partial<HealthMonitorDesired> = {}): HealthMonitorDesired => ({
  name: `${lb.name}-6443`,
  pool_id: poolId,
  loadbalancer_id: lb.id,
  type: 'TCP',
  delay: 10,
  timeout: 5,
  max_retries: 5,
  max_retries_down: 3,
  ...extra,
});

const memberFor = (lb: LoadBalancer, poolId: string, address: string, name = `${lb.name}-6443-control-plane-0`): MemberDesired => ({
  name,
  pool_id: poolId,
  loadbalancer_id: lb.id,
  address,
  protocol_port: 6443,
});

/** An ACTIVE load balancer with an ACTIVE listener and pool on port 6443. */
async function loadBalancerWithPool(owner: Owner): Promise<{ lb: LoadBalancer; pool: Pool }> {
  const lb = await bench.activeLoadBalancer(owner);
  const listener = await bench.ready(listenerActuator(bench.octavia), listenerFor(lb), owner);
  const pool = await bench.ready(poolActuator(bench.octavia), poolFor(lb, listener.id), owner);
  await untilActive(lb.id);
  bench.forget();
  return { lb, pool };
}

/** A control-plane machine's member, ACTIVE, in a fresh load balancer's pool, with the load balancer ACTIVE again. */
async function poolWithMember(address: string) {
  const owner = newOwner('OpenStackMachine');
  const { lb, pool } = await loadBalancerWithPool(owner);
  const members = memberActuator(bench.octavia, pool.id);
  const member = await bench.ready(members, memberFor(lb, pool.id, address), owner);
  await untilActive(lb.id);
  bench.forget();
  return { owner, lb, pool, members, member };
}

const untilActive = (lbId: string) =>
  pollUntil(`load balancer ${lbId} ACTIVE`, async () => ((await bench.octavia.getLoadBalancer(lbId)).provisioning_status === 'ACTIVE' ? true : undefined), {
    timeoutMs: 15_000,
    intervalMs: 10,
  });

/** Runs remove pass after pass, as the controller would, keeping what each pass returned. */
async function removeUntilDone(run: () => Promise<Removal>): Promise<Removal[]> {
  const passes: Removal[] = [];
  for (;;) {
    const removal = await run();
    passes.push(removal);
    if (!('waitingFor' in removal) || passes.length > 200) return passes;
    await pause();
  }
}

describe('building the API server load balancer pass by pass', () => {
  it('creates listener, pool, monitor and member in successive passes without one 409, then only reads them by ID', async () => {
    const owner = newOwner();
    const lb = await bench.activeLoadBalancer(owner);
    const ids: { listener?: string; pool?: string; monitor?: string; member?: string } = {};
    const octavia = bench.octavia;

    /** One reconcile as the cluster and machine reconcilers chain it: stop at the first resource that is not ready. */
    async function reconcile(): Promise<boolean> {
      const lbNow = await ensure(loadBalancerActuator(octavia), {
        recordedId: lb.id,
        desired: { name: lb.name!, vip_subnet_id: bench.subnetId },
        owner,
        record: bench.record,
      });
      if (!lbNow.ready) return false;
      const listener = await ensure(listenerActuator(octavia), {
        recordedId: ids.listener,
        desired: listenerFor(lb, 6443, { allowed_cidrs: ['10.0.0.0/8'] }),
        owner,
        record: async (id) => {
          ids.listener = id;
        },
      });
      if (!listener.ready) return false;
      const pool = await ensure(poolActuator(octavia), {
        recordedId: ids.pool,
        desired: poolFor(lb, listener.resource.id),
        owner,
        record: async (id) => {
          ids.pool = id;
        },
      });
      if (!pool.ready) return false;
      const monitor = await ensure(healthMonitorActuator(octavia), {
        recordedId: ids.monitor,
        desired: monitorFor(lb, pool.resource.id),
        owner,
        record: async (id) => {
          ids.monitor = id;
        },
      });
      if (!monitor.ready) return false;
      const member = await ensure(memberActuator(octavia, pool.resource.id), {
        recordedId: ids.member,
        desired: memberFor(lb, pool.resource.id, '10.20.0.10'),
        owner,
        record: async (id) => {
          ids.member = id;
        },
      });
      return member.ready;
    }

    bench.forget();
    let passes = 1;
    while (!(await reconcile())) {
      passes += 1;
      expect(passes).toBeLessThan(200);
      await pause();
    }
    // Each create waited for the load balancer the previous one made busy: one POST each, in order, and never a 409.
    expect(bench.mutations()).toEqual([
      'POST /v2/lbaas/listeners 201',
      'POST /v2/lbaas/pools 201',
      'POST /v2/lbaas/healthmonitors 201',
      `POST /v2/lbaas/pools/${ids.pool}/members 201`,
    ]);
    expect(bench.trace().filter((line) => / 409$/.test(line))).toEqual([]);
    const pool = await octavia.getPool(ids.pool!);
    expect(pool).toMatchObject({ healthmonitor_id: ids.monitor, members: [{ id: ids.member }], listeners: [{ id: ids.listener }] });
    expect((await octavia.getListener(ids.listener!)).allowed_cidrs).toEqual(['10.0.0.0/8']);

    bench.forget();
    expect(await reconcile()).toBe(true);
    expect(bench.trace()).toEqual([
      `GET /v2/lbaas/loadbalancers/${lb.id} 200`,
      `GET /v2/lbaas/listeners/${ids.listener} 200`,
      `GET /v2/lbaas/pools/${ids.pool} 200`,
      `GET /v2/lbaas/healthmonitors/${ids.monitor} 200`,
      `GET /v2/lbaas/pools/${ids.pool}/members/${ids.member} 200`,
    ]);
  });

  it('waits, creating nothing, when Octavia refuses a child because another change holds the load balancer', async () => {
    const owner = newOwner();
    const lb = await bench.activeLoadBalancer(owner);
    const listeners = listenerActuator(bench.octavia);
    // Someone else's change (a machine joining, say) makes the load balancer PENDING_UPDATE.
    await bench.octavia.createListener({ loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 22623, name: 'other' });
    bench.forget();

    const desired = listenerFor(lb);
    const error = await ensure(listeners, { recordedId: undefined, desired, owner, record: bench.record }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoadBalancerBusyError);
    expect(error).toMatchObject({ waitingFor: `load balancer ${lb.id} to become ACTIVE (now PENDING_UPDATE)`, requeueAfterMs: 5_000 });
    // The refused POST, then one GET to learn why; nothing recorded, since nothing was created.
    expect(bench.trace()).toEqual([
      expect.stringMatching(/^GET \/v2\/lbaas\/listeners\?name=.* 200$/),
      'POST /v2/lbaas/listeners 409',
      `GET /v2/lbaas/loadbalancers/${lb.id} 200`,
    ]);

    const passes = await bench.settle(listeners, desired, owner);
    expect(passes.at(-1)).toMatchObject({ ready: true, resource: { protocol_port: 6443 } });
    expect((await bench.octavia.listListeners({ name: desired.name })).map((listener) => listener.id)).toEqual([passes.at(-1)!.resource.id]);
  });

  it('fails a child, instead of waiting forever, when its load balancer is in ERROR', async () => {
    const owner = newOwner();
    const lbs = loadBalancerActuator(bench.octavia);
    const lb = await lbs.create({ name: uniqueName('kubeapi'), vip_subnet_id: bench.subnetId }, owner);
    await bench.clients.neutron.deletePort(lb.vip_port_id!);
    await pollUntil(
      'the load balancer in ERROR',
      async () => ((await bench.octavia.getLoadBalancer(lb.id)).provisioning_status === 'ERROR' ? true : undefined),
      { timeoutMs: 15_000, intervalMs: 10 },
    );

    const error = await ensure(listenerActuator(bench.octavia), { recordedId: undefined, desired: listenerFor(lb), owner, record: bench.record }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ResourceTerminalError);
    expect(error).toMatchObject({ reason: 'Failed', resourceKind: 'load balancer', ids: [lb.id] });
    expect((error as Error).message).toBe(`load balancer ${lb.id} failed: Octavia reports provisioning_status ERROR`);
    expect(classify(error)).toBe('terminal');
  });
});

describe('changes after creation', () => {
  it('puts allowed CIDRs once when they differ (in any order but their own), and leaves them alone when none are desired', async () => {
    const owner = newOwner();
    const lb = await bench.activeLoadBalancer(owner);
    const listeners = listenerActuator(bench.octavia);
    const created = await bench.ready(listeners, listenerFor(lb, 6443, { allowed_cidrs: ['10.0.0.0/8', '192.168.0.0/16'] }), owner);
    await untilActive(lb.id);
    bench.forget();

    for (const allowed_cidrs of [['192.168.0.0/16', '10.0.0.0/8'], undefined]) {
      const same = await ensure(listeners, {
        recordedId: created.id,
        desired: listenerFor(lb, 6443, allowed_cidrs ? { allowed_cidrs } : {}),
        owner,
        record: bench.record,
      });
      expect(same.ready).toBe(true);
    }
    expect(bench.mutations()).toEqual([]);

    const narrowed = listenerFor(lb, 6443, { allowed_cidrs: ['10.0.0.0/8'] });
    const changing = await ensure(listeners, { recordedId: created.id, desired: narrowed, owner, record: bench.record });
    expect(changing).toMatchObject({ ready: false, waitingFor: `listener ${created.id} to apply its allowed CIDRs` });
    const passes = await bench.settle(listeners, narrowed, owner, created.id);
    expect(passes.at(-1)!.resource.allowed_cidrs).toEqual(['10.0.0.0/8']);
    expect(bench.mutations()).toEqual([`PUT /v2/lbaas/listeners/${created.id} 200`]);

    // Empty lets everyone in: Octavia shows that as null, which is no difference on the next pass.
    await untilActive(lb.id);
    const opened = (await bench.settle(listeners, listenerFor(lb, 6443, { allowed_cidrs: [] }), owner, created.id)).at(-1)!.resource;
    expect(opened.allowed_cidrs ?? []).toEqual([]);
    expect(bench.mutations()).toHaveLength(2);
  });

  it('waits, without an error, when the allowed CIDRs cannot be put because another change holds the load balancer', async () => {
    const owner = newOwner();
    const lb = await bench.activeLoadBalancer(owner);
    const listeners = listenerActuator(bench.octavia);
    const created = await bench.ready(listeners, listenerFor(lb), owner);
    await untilActive(lb.id);
    await bench.octavia.createListener({ loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 22623, name: 'other' });
    bench.forget();

    const result = await ensure(listeners, {
      recordedId: created.id,
      desired: listenerFor(lb, 6443, { allowed_cidrs: ['10.0.0.0/8'] }),
      owner,
      record: bench.record,
    });
    expect(result).toMatchObject({ ready: false, waitingFor: `load balancer ${lb.id} to become ACTIVE (now PENDING_UPDATE)` });
    expect(bench.mutations()).toEqual([`PUT /v2/lbaas/listeners/${created.id} 409`]);
  });

  it('puts new monitor timings when they differ, and nothing when they match', async () => {
    const owner = newOwner();
    const { lb, pool } = await loadBalancerWithPool(owner);
    const monitors = healthMonitorActuator(bench.octavia);
    const created = await bench.ready(monitors, monitorFor(lb, pool.id), owner);
    await untilActive(lb.id);
    bench.forget();

    expect(await ensure(monitors, { recordedId: created.id, desired: monitorFor(lb, pool.id), owner, record: bench.record })).toMatchObject({ ready: true });
    expect(bench.mutations()).toEqual([]);

    const slower = monitorFor(lb, pool.id, { delay: 20, timeout: 10, max_retries: 3, max_retries_down: 2 });
    const passes = await bench.settle(monitors, slower, owner, created.id);
    expect(passes[0]).toMatchObject({ ready: false, waitingFor: `health monitor ${created.id} to apply its new timings` });
    // Ready once Octavia shows the new timings: a monitor applying them (PENDING_UPDATE) keeps checking meanwhile.
    expect(passes.at(-1)).toMatchObject({ ready: true, resource: { delay: 20, timeout: 10, max_retries: 3, max_retries_down: 2 } });
    expect(bench.mutations()).toEqual([`PUT /v2/lbaas/healthmonitors/${created.id} 200`]);
  });
});

describe('pool members', () => {
  it('replaces a member whose machine has a new address: deleted first, created again on a later pass', async () => {
    const { owner, lb, pool, members, member: old } = await poolWithMember('10.20.0.10');

    const moved = memberFor(lb, pool.id, '10.20.0.11');
    const passes = await bench.settle(members, moved, owner, old.id);
    expect(passes[0]).toMatchObject({
      ready: false,
      found: 'recorded',
      waitingFor: `member ${old.id} at 10.20.0.10:6443 to be deleted, to be created again at 10.20.0.11:6443`,
    });
    const replacement = passes.find((pass) => pass.found === 'created')!;
    expect(replacement).toMatchObject({ goneId: old.id, resource: { address: '10.20.0.11', protocol_port: 6443 } });
    expect(bench.mutations()).toEqual([`DELETE /v2/lbaas/pools/${pool.id}/members/${old.id} 204`, `POST /v2/lbaas/pools/${pool.id}/members 201`]);
    expect((await bench.octavia.listMembers(pool.id)).map((member) => member.address)).toEqual(['10.20.0.11']);
  });

  it('adopts only its own owner-tagged member, leaves a same-named untagged one alone, and removes only its own', async () => {
    const owner = newOwner('OpenStackMachine');
    const { lb, pool } = await loadBalancerWithPool(owner);
    const members = memberActuator(bench.octavia, pool.id);
    const desired = memberFor(lb, pool.id, '10.20.0.12');
    const users = await bench.octavia.createMember(pool.id, { name: desired.name, address: '10.20.0.99', protocol_port: 6443 });
    await untilActive(lb.id);
    // A create whose ID never reached status.
    const orphan = await members.create(desired, owner);
    await untilActive(lb.id);
    bench.forget();

    const adopted = await ensure(members, { recordedId: undefined, desired, owner, record: bench.record });
    expect(adopted).toMatchObject({ ready: true, found: 'adopted', resource: { id: orphan.id } });
    expect(bench.mutations()).toEqual([]);

    const removals = await removeUntilDone(() => remove(members, { recordedId: orphan.id, name: desired.name, owner }));
    expect(removals.at(-1)).toEqual({ deleted: true });
    expect((await bench.octavia.listMembers(pool.id)).map((member) => member.id)).toEqual([users.id]);
  });

  it('waits, rather than reporting blocked, when a removal meets a load balancer busy with another member', async () => {
    const { owner, lb, pool, members, member: ours } = await poolWithMember('10.20.0.13');
    await bench.octavia.createMember(pool.id, { name: 'another-machine', address: '10.20.0.14', protocol_port: 6443 });
    bench.forget();

    const removals = await removeUntilDone(() => remove(members, { recordedId: ours.id, name: ours.name!, owner }));
    expect(removals[0]).toEqual({
      waitingFor: `load balancer ${lb.id} to become ACTIVE (now PENDING_UPDATE)`,
      requeueAfterMs: 5_000,
      transition: { kind: 'load balancer change' },
    });
    expect(removals.at(-1)).toEqual({ deleted: true });
    // The recorded member alone: no list of copies by name while it is still there.
    expect(bench.trace().slice(0, 4)).toEqual([
      `GET /v2/lbaas/pools/${pool.id}/members/${ours.id} 200`,
      `DELETE /v2/lbaas/pools/${pool.id}/members/${ours.id} 409`,
      `GET /v2/lbaas/pools/${pool.id} 200`,
      `GET /v2/lbaas/loadbalancers/${lb.id} 200`,
    ]);
  });

  it('counts a member as removed once its load balancer (and so its pool) is gone', async () => {
    const { owner, lb, pool, members, member } = await poolWithMember('10.20.0.15');
    const lbRemovals = await removeUntilDone(() => remove(loadBalancerActuator(bench.octavia), { recordedId: lb.id, name: lb.name!, owner }));
    expect(lbRemovals.at(-1)).toEqual({ deleted: true });
    bench.forget();

    expect(await remove(members, { recordedId: member.id, name: member.name!, owner })).toEqual({ deleted: true });
    expect(bench.trace()).toEqual([
      `GET /v2/lbaas/pools/${pool.id}/members/${member.id} 404`,
      expect.stringMatching(new RegExp(`^GET /v2/lbaas/pools/${pool.id}/members\\?name=.* 404$`)),
    ]);
  });

  it('refuses a desired member meant for another pool than the actuator serves, creating nothing', async () => {
    const owner = newOwner('OpenStackMachine');
    const { lb, pool } = await loadBalancerWithPool(owner);
    const error = await ensure(memberActuator(bench.octavia, pool.id), {
      recordedId: undefined,
      desired: memberFor(lb, 'another-pool', '10.20.0.16'),
      owner,
      record: bench.record,
    }).catch((e: unknown) => e);
    expect((error as Error).message).toBe(`member "${lb.name}-6443-control-plane-0" is meant for pool another-pool, but this actuator serves pool ${pool.id}`);
    expect(bench.mutations()).toEqual([]);
  });
});
