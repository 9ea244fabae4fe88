/** Prometheus families of the reconcile loops, one series per controller. */
import type { Counter, Gauge, Histogram, MetricsRegistry } from '../../observability/metrics.js';
import type { WorkQueueMetrics } from './queue.js';

/** How one reconcile ended, the `result` label of reconcile_duration_seconds. */
export type ReconcileOutcome = 'success' | 'requeue' | 'error' | 'terminal';

export interface ReconcileMetrics extends WorkQueueMetrics {
  reconciled(outcome: ReconcileOutcome, seconds: number): void;
}

interface Families {
  depth: Gauge;
  adds: Counter;
  retries: Counter;
  duration: Histogram;
}

/** Controllers share one registry, which refuses a family registered twice. */
const familiesByRegistry = new WeakMap<MetricsRegistry, Families>();

function families(registry: MetricsRegistry): Families {
  let found = familiesByRegistry.get(registry);
  if (found === undefined) {
    found = {
      depth: registry.gauge('reconcile_queue_depth', 'Keys waiting in the work queue of a controller.', ['controller']),
      adds: registry.counter('reconcile_queue_adds_total', 'Keys entering the work queue of a controller (adds of a key already queued are not counted).', [
        'controller',
      ]),
      retries: registry.counter('reconcile_retries_total', 'Reconciles scheduled for retry with backoff after an error.', ['controller']),
      duration: registry.histogram(
        'reconcile_duration_seconds',
        'Duration of reconciles by controller and result (success, requeue, error, terminal).',
        ['controller', 'result'],
        [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      ),
    };
    familiesByRegistry.set(registry, found);
  }
  return found;
}

export function reconcileMetrics(registry: MetricsRegistry, controller: string): ReconcileMetrics {
  const { depth, adds, retries, duration } = families(registry);
  const labels = { controller };
  // Series exist from the start, so rate() sees the first increment.
  depth.set(labels, 0);
  adds.inc(labels, 0);
  retries.inc(labels, 0);
  return {
    depth: (length) => depth.set(labels, length),
    added: () => adds.inc(labels),
    retried: () => retries.inc(labels),
    reconciled: (result, seconds) => duration.observe({ controller, result }, seconds),
  };
}
