/** The resync grid: one instant per period per namespace, at least half a period after the last success. */
import { describe, expect, it } from 'vitest';
import { ResyncGrid } from '../../../src/reconcile/runtime/resync-grid.js';

describe('ResyncGrid', () => {
  const period = 60_000;

  it('puts the next resync of a namespace between half a period and a period and a half away, on instants one period apart', () => {
    const grid = new ResyncGrid(period);
    for (const from of [0, 1, 29_999, 30_000, 123_456, 10_000_000]) {
      const next = grid.next('team-a', from);
      expect(next - from).toBeGreaterThanOrEqual(period / 2);
      expect(next - from).toBeLessThan(period * 1.5);
      // The same instant for every object of the namespace, whatever moment it finished in.
      expect((next - grid.next('team-a', 0)) % period).toBe(0);
    }
    // After a resync at its instant, the next is exactly one period later.
    const instant = grid.next('team-a', 0);
    expect(grid.next('team-a', instant + 250)).toBe(instant + period);
  });

  it('spreads namespaces over the period', () => {
    const grid = new ResyncGrid(period);
    const phases = new Set(Array.from({ length: 20 }, (_, index) => grid.next(`cluster-${index}`, 0) % period));
    expect(phases.size).toBeGreaterThan(15);
  });

  it('trusts nothing past its own pass without a resync period', () => {
    expect(new ResyncGrid(0).next('team-a', 5000)).toBe(5000);
    expect(() => new ResyncGrid(-1)).toThrow(/must not be negative/);
  });
});
