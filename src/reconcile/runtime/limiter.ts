/**
 * Bounds concurrent work per group (a cloud, an identity) and overall, so 100
 * clusters on one cloud never have more than a few OpenStack calls in flight
 * against it, and one busy cloud cannot take every slot from the others.
 *
 * Fairness: each group has its own FIFO of waiters, and groups take turns
 * (round robin in the order they started waiting), so a group with a long
 * backlog gets one slot per turn like a group with a single waiter. Waiters of
 * a group at its own limit are skipped rather than blocking other groups.
 */

export interface ConcurrencyLimits {
  /** Most calls of one group running at once. */
  perGroup: number;
  /** Most calls running at once across all groups. */
  total: number;
}

export class ConcurrencyLimiter {
  private readonly running = new Map<string, number>();
  private runningTotal = 0;
  /** Map order is the round-robin order: a group served goes to the back. */
  private readonly waiting = new Map<string, (() => void)[]>();

  /** The limits in force: the configured ones, or this replica's share of them. */
  private limits: ConcurrencyLimits;

  constructor(private readonly configured: ConcurrencyLimits) {
    for (const [name, value] of Object.entries(configured)) {
      if (!Number.isInteger(value) || value < 1) throw new Error(`concurrency limit ${name} must be a positive integer, got ${value}`);
    }
    this.limits = configured;
  }

  /**
   * Keeps to one of `replicas` equal shares of the configured limits (at least one call each), so
   * replicas of a sharded reconciler together stay within what one cloud was given. Calls running
   * above a lowered limit finish; no new one starts until the group is under it.
   */
  shareAmong(replicas: number): void {
    const share = (limit: number) => Math.max(1, Math.floor(limit / Math.max(1, replicas)));
    this.limits = { perGroup: share(this.configured.perGroup), total: share(this.configured.total) };
    this.dispatch();
  }

  /** Runs fn once group and the total are below their limits; settles as fn does. */
  async run<T>(group: string, fn: () => Promise<T>): Promise<T> {
    await new Promise<void>((start) => {
      const waiters = this.waiting.get(group);
      if (waiters) waiters.push(start);
      else this.waiting.set(group, [start]);
      this.dispatch();
    });
    try {
      return await fn();
    } finally {
      this.runningTotal -= 1;
      const left = this.running.get(group)! - 1;
      if (left === 0) this.running.delete(group);
      else this.running.set(group, left);
      this.dispatch();
    }
  }

  private dispatch(): void {
    while (this.runningTotal < this.limits.total) {
      const group = [...this.waiting.keys()].find((name) => (this.running.get(name) ?? 0) < this.limits.perGroup);
      if (group === undefined) return;
      const waiters = this.waiting.get(group)!;
      const start = waiters.shift()!;
      this.waiting.delete(group);
      if (waiters.length > 0) this.waiting.set(group, waiters);
      this.running.set(group, (this.running.get(group) ?? 0) + 1);
      this.runningTotal += 1;
      start();
    }
  }
}
