/** What a pass may take from memory: same ID, same generation, until the object's resync; and what to read along with a resource. */
import { describe, expect, it } from 'vitest';
import { ResyncGrid } from '../../src/reconcile/runtime/resync-grid.js';
import { VerifiedResources } from '../../src/reconcile/verified-resources.js';

const a = { uid: 'a', namespace: 'default' };
const b = { uid: 'b', namespace: 'default' };

describe('VerifiedResources', () => {
  it("answers only for the same ID and generation, until the object's resync is due", () => {
    let now = 0;
    const grid = new ResyncGrid(60_000, () => now);
    const verified = new VerifiedResources(grid, () => now);
    const resyncAt = grid.next('default');
    verified.set(a, 'network', 'n1', 3, { id: 'n1' });
    expect(verified.get('a', 'network', 'n1', 3)).toEqual({ id: 'n1' });
    expect(verified.get('a', 'network', undefined, 3)).toBeUndefined();
    expect(verified.get('a', 'network', 'n2', 3)).toBeUndefined();
    verified.set(a, 'network', 'n1', 3, { id: 'n1' });
    expect(verified.get('a', 'network', 'n1', 4)).toBeUndefined();
    verified.set(a, 'network', 'n1', 3, { id: 'n1' });
    now = resyncAt - 1;
    expect(verified.get('a', 'network', 'n1', 3)).toEqual({ id: 'n1' });
    now = resyncAt;
    expect(verified.get('a', 'network', 'n1', 3)).toBeUndefined();
  });

  it('counts as run out what runs out within the margin asked for, at most a quarter period', () => {
    let now = 0;
    const grid = new ResyncGrid(60_000, () => now);
    const verified = new VerifiedResources(grid, () => now);
    const resyncAt = grid.next('default');
    verified.set(a, 'loadbalancer', 'lb1', 1, { id: 'lb1' });
    now = resyncAt - 1_000;
    expect(verified.lastSeen('a', 'loadbalancer', 'lb1', 1)).toEqual({ resource: { id: 'lb1' }, expired: false, unverified: false });
    expect(verified.lastSeen('a', 'loadbalancer', 'lb1', 1, 1_000)?.expired).toBe(true);
    // Still trusted by a plain read until it runs out.
    expect(verified.get('a', 'loadbalancer', 'lb1', 1)).toEqual({ id: 'lb1' });
    now = resyncAt - 20_000;
    expect(verified.lastSeen('a', 'loadbalancer', 'lb1', 1, 30_000)?.expired).toBe(false);
    expect(verified.lastSeen('a', 'loadbalancer', 'lb1', 1, 15_000)?.expired).toBe(false);
    now = resyncAt - 15_000;
    expect(verified.lastSeen('a', 'loadbalancer', 'lb1', 1, 30_000)?.expired).toBe(true);
  });

  it("keeps what a parent's create made as seen but run out: no read is spared, its last copy stays for the parent's tree", () => {
    const grid = new ResyncGrid(60_000, () => 0);
    const verified = new VerifiedResources(grid, () => 0);
    verified.seenCreated(a, 'listener/6443', 'l1', 1, { id: 'l1', provisioning_status: 'PENDING_CREATE' });
    expect(verified.lastSeen('a', 'listener/6443', 'l1', 1)).toEqual({
      resource: { id: 'l1', provisioning_status: 'PENDING_CREATE' },
      expired: true,
      unverified: true,
    });
    expect(verified.lastSeen('a', 'listener/6443', 'l1', 2)).toBeUndefined();
    expect(verified.get('a', 'listener/6443', 'l1', 1)).toBeUndefined();
    // Once verified, it is like any other.
    verified.set(a, 'listener/6443', 'l1', 1, { id: 'l1', provisioning_status: 'ACTIVE' });
    expect(verified.lastSeen('a', 'listener/6443', 'l1', 1)).toMatchObject({ expired: false, unverified: false });
  });

  it('names the resources of a group due within a window, the earliest first, with the owner their tag is for', () => {
    let now = 0;
    const grid = new ResyncGrid(60_000, () => now);
    const verified = new VerifiedResources(grid, () => now);
    const group = { group: 'ports', tagOwnerUid: 'server-a' };
    verified.set(a, 'port', 'p1', 1, {}, group);
    const firstResync = grid.next('default');
    now = firstResync;
    // Verified at the first resync, so due a period later.
    verified.set(b, 'port', 'p2', 1, {}, { group: 'ports', tagOwnerUid: 'server-b' });
    verified.set(b, 'network', 'n1', 1, {});
    verified.set(b, 'subnet', 's1', 1, {}, { group: 'subnets', tagOwnerUid: 'b' });
    expect(verified.companions('ports', 'p9', 0, 10)).toEqual([{ id: 'p1', ownerUid: 'server-a' }]);
    expect(verified.companions('ports', 'p9', 60_000, 10)).toEqual([
      { id: 'p1', ownerUid: 'server-a' },
      { id: 'p2', ownerUid: 'server-b' },
    ]);
    expect(verified.companions('ports', 'p9', 60_000, 1)).toEqual([{ id: 'p1', ownerUid: 'server-a' }]);
    expect(verified.companions('ports', 'p1', 60_000, 10)).toEqual([{ id: 'p2', ownerUid: 'server-b' }]);

    // Verified again, a resource is due at its new resync; invalidated, replaced or forgotten, it is no longer named.
    verified.set(a, 'port', 'p1', 1, {}, group);
    expect(verified.companions('ports', 'p9', 60_000, 10)).toEqual([
      { id: 'p2', ownerUid: 'server-b' },
      { id: 'p1', ownerUid: 'server-a' },
    ]);
    verified.invalidate('a', 'port');
    verified.seenCreated(b, 'port', 'p3', 1, {});
    expect(verified.companions('ports', 'p9', 60_000, 10)).toEqual([]);
    verified.set(a, 'port', 'p4', 1, {}, group);
    verified.forget('a');
    expect(verified.companions('ports', 'p9', 120_000, 10)).toEqual([]);
    expect(verified.companions('subnets', 's9', 60_000, 10)).toEqual([{ id: 's1', ownerUid: 'b' }]);
  });

  it("carries an object's entries of one generation over to the next", () => {
    const verified = new VerifiedResources(new ResyncGrid(60_000));
    verified.set(a, 'network', 'n1', 1, { id: 'n1' });
    verified.set(a, 'subnet', 's1', 2, { id: 's1' });
    verified.set(b, 'network', 'n2', 1, { id: 'n2' });
    verified.carryOver('a', 1, 2);
    expect(verified.get('a', 'network', 'n1', 2)).toEqual({ id: 'n1' });
    expect(verified.get('a', 'subnet', 's1', 2)).toEqual({ id: 's1' });
    expect(verified.get('b', 'network', 'n2', 2)).toBeUndefined();
  });

  it('forgets one role, or everything of an object', () => {
    const verified = new VerifiedResources(new ResyncGrid(60_000));
    verified.set(a, 'network', 'n1', 1, {});
    verified.set(a, 'subnet', 's1', 1, {});
    verified.set(b, 'network', 'n2', 1, {});
    verified.invalidate('a', 'network');
    expect(verified.get('a', 'network', 'n1', 1)).toBeUndefined();
    expect(verified.get('a', 'subnet', 's1', 1)).toBeDefined();
    verified.forget('a');
    expect(verified.get('a', 'subnet', 's1', 1)).toBeUndefined();
    expect(verified.get('b', 'network', 'n2', 1)).toBeDefined();
  });

  it('forgets a vanished resource at once, whoever verified it, and names those owners to wake', () => {
    const grid = new ResyncGrid(60_000, () => 0);
    const verified = new VerifiedResources(grid, () => 0);
    const cluster = { kind: 'OpenStackCluster', namespace: 'default', name: 'a' };
    verified.set({ ...a, object: cluster }, 'network', 'n1', 1, { id: 'n1' });
    verified.set({ ...b, object: { kind: 'OpenStackServer', namespace: 'default', name: 'b' } }, 'port/0', 'p1', 1, { id: 'p1' });
    verified.set(b, 'network', 'n1', 1, { id: 'n1' });
    expect(verified.vanished('n1')).toEqual([cluster]);
    expect(verified.get('a', 'network', 'n1', 1)).toBeUndefined();
    expect(verified.get('b', 'network', 'n1', 1)).toBeUndefined();
    expect(verified.get('b', 'port/0', 'p1', 1)).toEqual({ id: 'p1' });
    expect(verified.vanished('n1')).toEqual([]);
  });
});
