/** Turns on a load balancer: one member change at a time, others wait the settle time without calling Octavia. */
import { describe, expect, it } from 'vitest';
import { LoadBalancerTurns } from '../../src/reconcile/load-balancer-turns.js';

describe('LoadBalancerTurns', () => {
  it('gives one caller the turn and tells the others how long to wait', () => {
    let now = 1_000;
    const turns = new LoadBalancerTurns(3_000, () => now);
    expect(turns.take('lb1')).toBeUndefined();
    expect(turns.take('lb1')).toBe(3_000);
    expect(turns.take('lb2')).toBeUndefined();
    now += 2_000;
    expect(turns.take('lb1')).toBe(1_000);
    now += 1_000;
    expect(turns.take('lb1')).toBeUndefined();
  });

  it('keeps everyone off for a settle time after Octavia refused a change', () => {
    let now = 0;
    const turns = new LoadBalancerTurns(3_000, () => now);
    turns.busy('lb1');
    now += 500;
    expect(turns.take('lb1')).toBe(2_500);
  });

  it('counts the settle time again from when a change was accepted, which may come well after the turn', () => {
    let now = 0;
    const turns = new LoadBalancerTurns(3_000, () => now);
    expect(turns.take('lb1')).toBeUndefined();
    // The create waited 2 s behind the cloud's limits before Octavia took it.
    now += 2_000;
    turns.busy('lb1');
    now += 1_500;
    expect(turns.take('lb1')).toBe(1_500);
  });
});
