/**
 * Takes turns on a load balancer. Octavia applies one change at a time and
 * refuses (409) any other while PENDING_UPDATE; six workers joining the
 * ingress pool at once would otherwise each try, be refused, and try again,
 * which costs a request per refusal and delays them all. A machine takes a
 * turn before adding its member; the others wait for the load balancer's
 * settle time without asking Octavia.
 */
export class LoadBalancerTurns {
  private readonly busyUntil = new Map<string, number>();

  constructor(
    /** How long a member change usually keeps a load balancer busy. */
    private readonly settleMs = 3_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Undefined: it is this caller's turn (and the load balancer counts as busy from now); else how long to wait. */
  take(loadBalancerId: string): number | undefined {
    const now = this.now();
    const until = this.busyUntil.get(loadBalancerId) ?? 0;
    if (until > now) return until - now;
    this.busyUntil.set(loadBalancerId, now + this.settleMs);
    return undefined;
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
