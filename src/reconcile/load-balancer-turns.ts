/**
 * Takes turns on a load balancer. Octavia applies one change at a time and
 * refuses (409) any other while PENDING_UPDATE; six workers joining the
 * ingress pool at once would otherwise each try, be refused, and try again,
 * which costs a request per refusal and delays them all. A machine takes a
 * turn before sending members (member-batches.ts); the others wait for the
 * load balancer's settle time without asking Octavia.
 */
export class LoadBalancerTurns {
  private readonly busyUntil = new Map<string, number>();

  constructor(
    /** How long a member change usually keeps a load balancer busy. */
    private readonly settleMs = 3_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** How long until the load balancer is free (undefined: now), without taking the turn. */
  waitMs(loadBalancerId: string): number | undefined {
    const until = this.busyUntil.get(loadBalancerId) ?? 0;
    const now = this.now();
    return until > now ? until - now : undefined;
  }

  /** Undefined: it is this caller's turn (and the load balancer counts as busy from now); else how long to wait. */
  take(loadBalancerId: string): number | undefined {
    const waitMs = this.waitMs(loadBalancerId);
    if (waitMs === undefined) this.busyUntil.set(loadBalancerId, this.now() + this.settleMs);
    return waitMs;
  }

  /**
   * Octavia refused a change, or accepted one just now: keep the others off
   * for a settle time from now. The turn counts from when it was taken, but
   * the change may reach Octavia later (queued behind the cloud's limits), and
   * the load balancer is busy from then on.
   */
  busy(loadBalancerId: string): void {
    this.busyUntil.set(loadBalancerId, this.now() + this.settleMs);
  }
}
