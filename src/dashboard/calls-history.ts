/**
 * OpenStack calls per service over the last 15 minutes, for the dashboard's
 * chart: the reconciler's request counters (openstack_api_requests_total,
 * retries included) read every 10 seconds, kept as per-interval counts in a
 * bounded ring. Reading a counter costs nothing of the cloud.
 */

/** Calls so far per service type (compute, network, load-balancer, ...), as the counters hold them. */
export type CallTotals = () => Promise<Record<string, number>>;

export interface CallsSample {
  /** The end of the interval, ISO 8601. */
  at: string;
  /** Calls in the interval, per service. */
  calls: Record<string, number>;
}

export class CallsHistory {
  private readonly samples: CallsSample[] = [];
  private previous: Record<string, number> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly totals: CallTotals,
    readonly intervalMs = 10_000,
    private readonly keep = 90,
  ) {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), intervalMs);
    this.timer.unref();
  }

  history(): CallsSample[] {
    return [...this.samples];
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sample(): Promise<void> {
    const now = await this.totals().catch(() => undefined);
    if (!now) return;
    if (this.previous) {
      const calls: Record<string, number> = {};
      for (const [service, total] of Object.entries(now)) calls[service] = total - (this.previous[service] ?? 0);
      this.samples.push({ at: new Date().toISOString(), calls });
      if (this.samples.length > this.keep) this.samples.shift();
    }
    this.previous = now;
  }
}
