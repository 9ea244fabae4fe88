/**
 * When objects resync, and so how long what a pass verified may be trusted.
 *
 * The objects of one group (the controllers' group is a namespace, for
 * CAPO's reconcilers in practice one workload cluster: its
 * OpenStackCluster, machines and servers) resync together, on a grid of
 * instants one period apart whose phase comes from the group's name: an
 * object's next resync is the first instant of its group's grid at least
 * half a period after its last success. Together, one list call can verify
 * the resources of many objects (reconcile/read-together.ts) instead of one
 * GET each; spread by group, clusters still do not all resync in one burst.
 * client-go's informers resync all their objects at once too; ORC spreads
 * each object by jitter, which leaves nothing to read together.
 *
 * A resource a pass verified is trusted until the instant its object's
 * resync is due, so every resync reads again what it owns: once per period.
 */
import { createHash } from 'node:crypto';

/** Ten minutes (CAPO's default `--sync-period`); the controllers' grid and the verified memory's must use the same. */
export const defaultResyncPeriodMs = 10 * 60_000;

export class ResyncGrid {
  constructor(
    readonly periodMs: number,
    /** Monotonic: the grid only has to hold within this process, where its reconcilers run. */
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(periodMs >= 0)) throw new Error(`resync period must not be negative, got ${periodMs}`);
  }

  /** The first instant of `group`'s grid at least half a period after `from` (default now); `from` itself with a period of 0. */
  next(group: string, from = this.now()): number {
    // Without resync, nothing verified is trusted past its own pass.
    if (this.periodMs === 0) return from;
    const phase = phaseOf(group) * this.periodMs;
    const earliest = from + this.periodMs / 2;
    return phase + Math.ceil((earliest - phase) / this.periodMs) * this.periodMs;
  }

  /** How long from now until `group`'s next resync. */
  delay(group: string): number {
    const now = this.now();
    return this.next(group, now) - now;
  }
}

/** A hash of the name as a fraction of the period. */
function phaseOf(group: string): number {
  return createHash('sha256').update(group).digest().readUInt32BE(0) / 2 ** 32;
}
