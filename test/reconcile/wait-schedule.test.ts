/** The polling schedule: soon while a state is young, slower as it ages, never past the actuator's delay. */
import { describe, expect, it } from 'vitest';
import type { Waiting } from '../../src/reconcile/resource/actuator.js';
import { WaitSchedule } from '../../src/reconcile/wait-schedule.js';

function clock() {
  let now = 0;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** Looks at `wait` of `uid` every second, as the unlearned rule asks while it is young, and finds it over after `seconds`. */
function followUnlearned(schedule: WaitSchedule, time: ReturnType<typeof clock>, uid: string, wait: Waiting, seconds: number) {
  for (let age = 0; age < seconds; age++) {
    expect(schedule.next(uid, [wait])).toBe(1_000);
    time.advance(1_000);
  }
  schedule.next(uid, []);
}

describe('WaitSchedule', () => {
  it('looks after half the time waited, between half the actuator delay (2 s at least) and the delay', () => {
    const time = clock();
    const schedule = new WaitSchedule(time.now);
    const wait = { waitingFor: 'load balancer lb1 to become ACTIVE (now PENDING_CREATE)', requeueAfterMs: 5_000 };
    expect(schedule.next('uid', [wait])).toBe(2_500);
    time.advance(4_000);
    expect(schedule.next('uid', [wait])).toBe(2_500);
    time.advance(4_000);
    expect(schedule.next('uid', [wait])).toBe(4_000);
    time.advance(20_000);
    expect(schedule.next('uid', [wait])).toBe(5_000);
  });

  it('starts over when the wait changes (a new state), and takes the soonest of several waits', () => {
    const time = clock();
    const schedule = new WaitSchedule(time.now);
    const build = { waitingFor: 'server s1 to become ACTIVE (now BUILD)', requeueAfterMs: 10_000 };
    expect(schedule.next('uid', [build])).toBe(5_000);
    time.advance(30_000);
    expect(schedule.next('uid', [build])).toBe(10_000);
    const listener = { waitingFor: 'listener l1 to become ACTIVE (now PENDING_CREATE)', requeueAfterMs: 5_000 };
    expect(schedule.next('uid', [build, listener])).toBe(2_500);
    time.advance(1_000);
    // The build wait is gone from the object's waits, so it is forgotten and would start over.
    expect(schedule.next('uid', [listener])).toBe(2_500);
    expect(schedule.next('uid', [build])).toBe(5_000);
  });

  it('keeps objects apart', () => {
    const time = clock();
    const schedule = new WaitSchedule(time.now);
    const wait = { waitingFor: 'same text', requeueAfterMs: 60_000 };
    schedule.next('a', [wait]);
    time.advance(100_000);
    expect(schedule.next('a', [wait])).toBe(50_000);
    expect(schedule.next('b', [wait])).toBe(30_000);
  });

  describe('timed transitions', () => {
    const listener = (id: string, begins?: boolean) => ({
      waitingFor: `load balancer lb1 to become ACTIVE (now PENDING_UPDATE, ${id})`,
      requeueAfterMs: 5_000,
      transition: { kind: 'load balancer PENDING_UPDATE', id: 'lb1', ...(begins && { begins }) },
    });

    it('learns how long a transition takes and then looks once, just after the expected end', () => {
      const time = clock();
      const schedule = new WaitSchedule(time.now);
      // Not learned yet: the unlearned rule (a second at first), looks that find it under way, then one that finds it over.
      followUnlearned(schedule, time, 'a', listener('first'), 4);
      // Over between 3 s and 4 s: expected 3.5 s; another object's listener is looked at just after that.
      expect(schedule.next('b', [listener('second')])).toBe(3_600);
      time.advance(1_000);
      expect(schedule.next('b', [listener('second')])).toBe(2_600);
    });

    it('looks at a transition not learned yet after a tenth of the time it has run, between 1 s and the actuator delay', () => {
      const time = clock();
      const schedule = new WaitSchedule(time.now);
      expect(schedule.next('a', [listener('first')])).toBe(1_000);
      time.advance(4_000);
      expect(schedule.next('a', [listener('first')])).toBe(1_000);
      time.advance(16_000);
      expect(schedule.next('a', [listener('first')])).toBe(2_000);
      time.advance(40_000);
      expect(schedule.next('a', [listener('first')])).toBe(5_000);
      // A wait without a transition keeps the age rule: half its age, from half the delay.
      expect(schedule.next('b', [{ waitingFor: 'router r1 to become ACTIVE', requeueAfterMs: 5_000 }])).toBe(2_500);
    });

    it('after a look that came too early, looks again soon for as long again, then falls back to the age rule', () => {
      const time = clock();
      const schedule = new WaitSchedule(time.now);
      followUnlearned(schedule, time, 'a', listener('first'), 4);
      // Expected 3.5 s: looked at just after that, still under way, then looked at a tenth of that apart.
      expect(schedule.next('b', [listener('second')])).toBe(3_600);
      time.advance(3_600);
      expect(schedule.next('b', [listener('second')])).toBe(350);
      time.advance(3_500);
      // Past twice the expectation: slower than learned, the age rule again (half of 7.1 s, at most the 5 s delay).
      expect(schedule.next('b', [listener('second')])).toBe(3_550);
    });

    it('times a look answered by a list read before the pass by that read, and puts it off as the reads ask', () => {
      const time = clock();
      const schedule = new WaitSchedule(time.now);
      followUnlearned(schedule, time, 'a', listener('first'), 4);
      // Expected 3.5 s. Under way at 2 s; then over in an answer read at 3 s, taken by the pass at 3.6 s.
      schedule.next('b', [listener('second')]);
      time.advance(2_000);
      expect(schedule.next('b', [listener('second')])).toBe(1_600);
      time.advance(1_600);
      schedule.next('b', [], undefined, { seenAgoMs: 600 });
      // Over between 2 s and 3 s (sample 2.5 s, not 2.8 s as the pass's own time would say): the estimate comes down to 3 s.
      expect(schedule.next('c', [listener('third')])).toBe(3_100);
      // Put off to meet others' looks, the look is due by then.
      expect(schedule.next('d', [listener('fourth')], undefined, { align: (delayMs) => delayMs + 400 })).toBe(3_500);
    });

    it('takes a change sent in the pass for a new transition of the same resource', () => {
      const time = clock();
      const schedule = new WaitSchedule(time.now);
      expect(schedule.next('a', [listener('listener', true)])).toBe(1_000);
      time.advance(1_000);
      expect(schedule.next('a', [listener('listener')])).toBe(1_000);
      time.advance(1_000);
      // The pass found the load balancer ACTIVE and created the pool: the listener's transition ended (1-2 s, expected 1.5 s).
      expect(schedule.next('a', [listener('pool', true)])).toBe(1_600);
      time.advance(1_600);
      schedule.next('a', []);
      // The pool was over at its first look after 1.6 s (sample 1.28 s): the estimate came down to 1.39 s.
      expect(schedule.next('c', [listener('monitor', true)])).toBe(1_490);
    });

    it('wakes the other objects waiting on a transition of the kind seen over, once theirs has run as long, unless they looked since', () => {
      const time = clock();
      const schedule = new WaitSchedule(time.now);
      const woken: [string, number][] = [];
      schedule.wakeWith((object, delayMs) => woken.push([`${object.kind} ${object.name}`, delayMs]));
      const server = (name: string) => ({ kind: 'OpenStackServer', namespace: 'default', name });
      const build = (id: string) => ({
        waitingFor: `server ${id} to become ACTIVE (now BUILD)`,
        requeueAfterMs: 10_000,
        transition: { kind: 'server BUILD', id },
      });
      // Three servers created together, one a second later; nothing learned, so the unlearned rule.
      schedule.next('early', [build('s0')], server('early'));
      schedule.next('sibling', [build('s1')], server('sibling'));
      time.advance(1_000);
      schedule.next('late', [build('s2')], server('late'));
      time.advance(8_900);
      // The sibling looks a moment before the boots end: still building, next look by the unlearned rule, a second on (a tenth of its 9.9 s, at least 1 s).
      expect(schedule.next('sibling', [build('s1')], server('sibling'))).toBe(1_000);
      time.advance(300);
      // The early one is seen over after 10.2 s, by a look long after the second it asked for: too late to learn from, but it took
      // 10.2 s at most, so the sibling (same start) is woken now, the late one when it has run 10.2 s.
      schedule.next('early', [], server('early'));
      expect(woken).toEqual([
        ['OpenStackServer sibling', 100],
        ['OpenStackServer late', 1_100],
      ]);
      // A transition of another kind wakes nobody.
      woken.length = 0;
      const cluster = { kind: 'OpenStackCluster', namespace: 'default', name: 'lb' };
      schedule.next('lb', [listener('first')], cluster);
      time.advance(2_500);
      schedule.next('lb', [], cluster);
      expect(woken).toEqual([]);
      // Nor is an object woken that looked after its transition had run as long: it is slower, and its own looks go on.
      schedule.next('slow', [build('s4')], server('slow'));
      time.advance(5_000);
      schedule.next('fast', [build('s5')], server('fast'));
      time.advance(6_000);
      schedule.next('slow', [build('s4')], server('slow'));
      time.advance(4_000);
      schedule.next('fast', [], server('fast'));
      expect(woken.filter(([object]) => object === 'OpenStackServer slow')).toEqual([]);
    });

    it('learns each kind of transition on its own', () => {
      const time = clock();
      const schedule = new WaitSchedule(time.now);
      const build = { waitingFor: 'server s1 to become ACTIVE (now BUILD)', requeueAfterMs: 10_000, transition: { kind: 'server BUILD', id: 's1' } };
      schedule.next('a', [build]);
      time.advance(1_000);
      schedule.next('a', []);
      expect(schedule.next('b', [listener('first')])).toBe(1_000);
      expect(schedule.next('c', [{ ...build, transition: { kind: 'server BUILD', id: 's2' } }])).toBe(900);
    });
  });

  describe('looks that came late (a busy replica)', () => {
    const build = (id: string) => ({
      waitingFor: `server ${id} to become ACTIVE (now BUILD)`,
      requeueAfterMs: 10_000,
      transition: { kind: 'server BUILD', id },
    });
    /** Server s1 boots in 10 s, looked at when asked: over between 9 and 10 s, expected 9.5 s. */
    const learnTenSecondBoot = (schedule: WaitSchedule, time: ReturnType<typeof clock>) => followUnlearned(schedule, time, 'a', build('s1'), 10);

    it('do not stretch the learned time: a late look bounds how busy the replica was, not how long the transition took', () => {
      const time = clock();
      const schedule = new WaitSchedule(time.now);
      learnTenSecondBoot(schedule, time);
      expect(schedule.next('b', [build('s2')])).toBe(9_600);
      // The look asked for at 9.6 s comes at 25 s and finds s2 ACTIVE: still expected 9.5 s (learning "25 s at most" would make it 14.75 s).
      time.advance(25_000);
      schedule.next('b', []);
      expect(schedule.next('c', [build('s3')])).toBe(9_600);
      // A late look that finds it under way still shows it took at least that long: s3 is under way at 30 s, found over late at 60 s.
      time.advance(9_600);
      expect(schedule.next('c', [build('s3')])).toBe(950);
      time.advance(20_400);
      expect(schedule.next('c', [build('s3')])).toBe(10_000);
      time.advance(30_000);
      schedule.next('c', []);
      // At least 30 s: the estimate moves halfway there, to 19.75 s.
      expect(schedule.next('d', [build('s4')])).toBe(19_850);
    });

    it('leave the looks that came when due, or earlier, to learn as before', () => {
      const time = clock();
      const schedule = new WaitSchedule(time.now);
      learnTenSecondBoot(schedule, time);
      // s2: under way at 9.6 s, over at the quick look asked for 950 ms on, which came 50 ms late (within the tolerance): over between 9.6 and 10.6 s, the estimate moves halfway to 10.1 s.
      expect(schedule.next('b', [build('s2')])).toBe(9_600);
      time.advance(9_600);
      expect(schedule.next('b', [build('s2')])).toBe(950);
      time.advance(1_000);
      schedule.next('b', []);
      expect(schedule.next('c', [build('s3')])).toBe(9_900);
      // s3 is found over by a pass that came early (an event, a sibling's wake), at 8 s: it may have ended sooner (sample 6.4 s), the estimate comes down to 8.1 s.
      time.advance(8_000);
      schedule.next('c', []);
      expect(schedule.next('d', [build('s4')])).toBe(8_200);
    });
  });
});
