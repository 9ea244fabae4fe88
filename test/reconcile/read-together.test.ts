/**
 * Reading together: a resync's read of one resource carries the others of its group that are due,
 * each owner's pass takes its answer once and only while fresh, concurrent owners share one list,
 * and whatever the list cannot vouch for is read by ID.
 */
import { describe, expect, it } from 'vitest';
import { lookGridMs, ReadTogether } from '../../src/reconcile/read-together.js';
import type { ReadTarget, ResourceActuator } from '../../src/reconcile/resource/actuator.js';
import { ResyncGrid } from '../../src/reconcile/runtime/resync-grid.js';
import { VerifiedResources } from '../../src/reconcile/verified-resources.js';

interface Port {
  id: string;
  status: string;
}

const periodMs = 60_000;
const freshMs = 15_000;

/** Ports p1..pN owned by objects o1..oN of one namespace, verified at time 0 unless `verified` is false; the clock is the test's. */
function setup(count: number, verified = true) {
  let now = 0;
  const clock = () => now;
  const grid = new ResyncGrid(periodMs, clock);
  const memory = new VerifiedResources(grid, clock);
  const reads = new ReadTogether(memory, freshMs, clock);
  const cloud = new Map<string, Port>();
  const lists: string[][] = [];
  const gets: string[] = [];
  let failNextList = false;
  let held: Promise<void> | undefined;
  const actuator = {
    kind: 'port',
    getById: async (id: string) => {
      gets.push(id);
      return cloud.get(id) && { ...cloud.get(id)! };
    },
    readMany: {
      group: 'cloud-1/port',
      read: async (targets: readonly ReadTarget[]) => {
        lists.push(targets.map((target) => target.id));
        await held;
        if (failNextList) {
          failNextList = false;
          throw new Error('503 Service Unavailable');
        }
        return [...cloud.values()].filter((port) => targets.some((target) => target.id === port.id)).map((port) => ({ ...port }));
      },
    },
  } as unknown as ResourceActuator<{ name: string }, Port>;
  for (let index = 1; index <= count; index++) {
    cloud.set(`p${index}`, { id: `p${index}`, status: 'ACTIVE' });
    if (verified)
      memory.set({ uid: `o${index}`, namespace: 'default' }, 'port', `p${index}`, 1, cloud.get(`p${index}`), {
        group: 'cloud-1/port',
        tagOwnerUid: `o${index}`,
      });
  }
  const read = (index: number, seen?: (ageMs: number) => void) => reads.read(actuator, { id: `p${index}`, ownerUid: `o${index}` }, seen);
  const waiting = (index: number) => ({ group: 'cloud-1/port', target: { id: `p${index}`, ownerUid: `o${index}` } });
  return {
    reads,
    waiting,
    /** The owner of p`index` waits on it and looks again `delayMs` from now. */
    lookAgain: (index: number, delayMs: number) => reads.lookAgain([waiting(index)], delayMs),
    cloud,
    lists,
    gets,
    read,
    /** Moves the clock to the namespace's next resync, where every port's verification runs out. */
    toResync: () => {
      now = grid.next('default', 0);
    },
    advance: (ms: number) => {
      now += ms;
    },
    failNextList: () => {
      failNextList = true;
    },
    /** Holds the lists sent until the returned function is called. */
    holdLists: () => {
      let release!: () => void;
      held = new Promise<void>((resolve) => (release = resolve));
      return () => {
        held = undefined;
        release();
      };
    },
  };
}

describe('ReadTogether', () => {
  it('reads the due resources of other objects along with one, and hands each owner its answer once', async () => {
    const cloud = setup(3);
    cloud.toResync();
    cloud.cloud.get('p2')!.status = 'DOWN';
    expect(await cloud.read(1)).toEqual({ id: 'p1', status: 'ACTIVE' });
    expect(cloud.lists).toEqual([['p1', 'p2', 'p3']]);
    cloud.advance(2000);
    // The answer p2's owner takes is the list's, not a read of its own.
    expect(await cloud.read(2)).toEqual({ id: 'p2', status: 'DOWN' });
    expect(await cloud.read(3)).toEqual({ id: 'p3', status: 'ACTIVE' });
    expect(cloud.lists).toHaveLength(1);
    expect(cloud.gets).toEqual([]);
    // Taken once: the next read of p2 goes to the cloud again (along with p1 and p3, still due in this test).
    await cloud.read(2);
    expect(cloud.lists).toHaveLength(2);
  });

  it('lets owners whose resource is in a list under way wait for it instead of sending their own', async () => {
    const cloud = setup(3);
    cloud.toResync();
    const release = cloud.holdLists();
    const all = Promise.all([cloud.read(1), cloud.read(2), cloud.read(3)]);
    release();
    expect((await all).map((port) => port?.id)).toEqual(['p1', 'p2', 'p3']);
    expect(cloud.lists).toEqual([['p1', 'p2', 'p3']]);
    expect(cloud.gets).toEqual([]);
  });

  it('reads by ID what nothing can be read along with, what the list lacks, and an answer gone stale', async () => {
    const alone = setup(1);
    alone.toResync();
    expect(await alone.read(1)).toEqual({ id: 'p1', status: 'ACTIVE' });
    expect(alone.lists).toEqual([]);
    expect(alone.gets).toEqual(['p1']);

    // Deleted since: missing from the list, and the read by ID says gone.
    const deleted = setup(3);
    deleted.toResync();
    deleted.cloud.delete('p1');
    deleted.cloud.delete('p2');
    expect(await deleted.read(1)).toBeUndefined();
    expect(await deleted.read(2)).toBeUndefined();
    expect(deleted.lists).toEqual([['p1', 'p2', 'p3']]);
    expect(deleted.gets).toEqual(['p1', 'p2']);

    const stale = setup(2);
    stale.toResync();
    await stale.read(1);
    stale.advance(freshMs + 1);
    await stale.read(2);
    expect(stale.lists).toEqual([
      ['p1', 'p2'],
      ['p2', 'p1'],
    ]);
  });

  it('fails only the pass whose list failed; an owner that waited for it reads again', async () => {
    const cloud = setup(2);
    cloud.toResync();
    cloud.failNextList();
    const release = cloud.holdLists();
    const first = cloud.read(1);
    const second = cloud.read(2);
    release();
    await expect(first).rejects.toThrow('503');
    expect(await second).toEqual({ id: 'p2', status: 'ACTIVE' });
    expect(cloud.lists).toEqual([
      ['p1', 'p2'],
      ['p2', 'p1'],
    ]);
  });
});

describe('ReadTogether, looks at resources still in a transition', () => {
  it('reads the looks due now in one list with the one that reads, never a look not due yet', async () => {
    const cloud = setup(3, false);
    cloud.cloud.get('p2')!.status = 'BUILD';
    cloud.lookAgain(2, 1000);
    cloud.lookAgain(3, 3000);
    cloud.advance(1000);
    expect(await cloud.read(1)).toEqual({ id: 'p1', status: 'ACTIVE' });
    cloud.advance(300);
    // Its owner's pass is told how old the answer is, to time the transition by the list.
    const ages: number[] = [];
    expect(await cloud.read(2, (ageMs) => ages.push(ageMs))).toEqual({ id: 'p2', status: 'BUILD' });
    expect(ages).toEqual([300]);
    expect(cloud.lists).toEqual([['p1', 'p2']]);
    expect(cloud.gets).toEqual([]);
    // p3's look comes when it is due, alone now: one GET.
    cloud.advance(1700);
    expect(await cloud.read(3)).toEqual({ id: 'p3', status: 'ACTIVE' });
    expect(cloud.gets).toEqual(['p3']);
  });

  it('puts a look off to the next instant of the grid only when another resource of its group is waited on', () => {
    const cloud = setup(2, false);
    cloud.advance(100);
    expect(cloud.reads.alignLook([cloud.waiting(1)], 1234)).toBe(1234);
    cloud.lookAgain(2, 4000);
    expect(cloud.reads.alignLook([cloud.waiting(1)], 1234)).toBe(Math.ceil(1334 / lookGridMs) * lookGridMs - 100);
    expect(cloud.reads.alignLook([cloud.waiting(2)], 1234)).toBe(1234);
  });

  it('keeps what a look was read along for only for seconds, and forgets a look its owner never came for', async () => {
    const stale = setup(2, false);
    stale.lookAgain(2, 0);
    await stale.read(1);
    stale.advance(2001);
    await stale.read(2);
    expect(stale.lists).toEqual([['p1', 'p2']]);
    expect(stale.gets).toEqual(['p2']);

    const forgotten = setup(2, false);
    forgotten.lookAgain(2, 0);
    forgotten.advance(10 * 60_000);
    await forgotten.read(1);
    expect(forgotten.lists).toEqual([]);
    expect(forgotten.gets).toEqual(['p1']);
  });
});
