/**
 * The server's Prometheus metrics, on prom-client: one registry per running app (tests start many
 * in one process, so never prom-client's global one), with the process and Node.js runtime families
 * every operator expects (CPU, memory, file descriptors, event-loop lag, GC). This module only
 * names the registry's three constructors the way the rest of the code declares families.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export type { Counter, Gauge, Histogram } from 'prom-client';

export class MetricsRegistry {
  readonly registry = new Registry();

  /** Process and runtime metrics are included unless turned off. */
  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  /** A counter's value summed per value of one label, e.g. requests per service; empty before the counter exists. */
  async totalsBy(name: string, label: string): Promise<Record<string, number>> {
    const metric = await this.registry.getSingleMetric(name)?.get();
    const totals: Record<string, number> = {};
    for (const { labels, value } of metric?.values ?? []) {
      const key = String(labels[label] ?? '');
      totals[key] = (totals[key] ?? 0) + value;
    }
    return totals;
  }

  /** Buckets default to prom-client's, which suit request latencies in seconds. */
  histogram(name: string, help: string, labelNames: readonly string[] = [], buckets?: number[]): Histogram {
    return new Histogram({ name, help, labelNames, registers: [this.registry], ...(buckets && { buckets }) });
  }

  /** The text exposition a scrape gets, and its content type. */
  async scrape(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
