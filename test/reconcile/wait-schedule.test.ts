/** The polling schedule: soon while a state is young, slower as it ages, never past the actuator's delay. */
import { describe, expect, it } from 'vitest';
import { WaitSchedule } from '../../src/reconcile/wait-schedule.js';

function clock() {
  let now = 0;
  return { now: () => now, advance: (ms: number) => (now += ms) };
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
});
