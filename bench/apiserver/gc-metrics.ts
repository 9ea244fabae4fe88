/**
 * The full garbage collections a server ran during a stretch of the benchmark, from the Prometheus
 * text it serves at `/metrics`: ours through prom-client's `nodejs_gc_duration_seconds` (by kind),
 * kube-apiserver through Go's `go_gc_duration_seconds`.
 *
 * Why the report needs it: with 500 watchers the p99 of the deliveries is the second- or third-worst
 * of 200 updates, and a full collection of V8's old generation, on 2 cores shared with the client
 * and etcd, can hold the updates around it back by 30-60 ms. One landing among the updates can
 * decide a run's p99, so every run says whether one did.
 *
 * Hand-written: a few counter lines need no Prometheus client.
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';

/** Totals since the server started. */
export interface GcTotals {
  /** Full collections: V8's mark-compacts (reported as `major` or, when marking ran incrementally, `incremental`); Go's cycles. */
  full: number;
  /** The main thread's pauses for them (and, on Node, their weak callbacks); Go's stop-the-world pauses. */
  pauseSeconds: number;
}

const nodeFullKinds = ['major', 'incremental', 'weakcb'];

export function gcTotals(metricsText: string): GcTotals | undefined {
  const node = [...metricsText.matchAll(/^nodejs_gc_duration_seconds_(count|sum)\{kind="(\w+)"\} (\S+)$/gm)];
  if (node.length > 0) {
    const sum = (field: string, kinds: string[]) =>
      node.filter(([, f, kind]) => f === field && kinds.includes(kind!)).reduce((total, [, , , value]) => total + Number(value), 0);
    // A weak-callback pass follows a full collection; it is part of its pause, not another collection.
    return { full: sum('count', ['major', 'incremental']), pauseSeconds: sum('sum', nodeFullKinds) };
  }
  const count = /^go_gc_duration_seconds_count (\S+)$/m.exec(metricsText);
  const sum = /^go_gc_duration_seconds_sum (\S+)$/m.exec(metricsText);
  return count && sum ? { full: Number(count[1]), pauseSeconds: Number(sum[1]) } : undefined;
}

/** What happened between two readings. */
export function gcBetween(before: GcTotals | undefined, after: GcTotals | undefined): GcTotals | undefined {
  return before && after ? { full: after.full - before.full, pauseSeconds: after.pauseSeconds - before.pauseSeconds } : undefined;
}

/**
 * The collections of this process (the load generator) from now until `stop`: its 500 watch streams
 * receive some 50 MB/s, and the pauses that costs it delay the arrival times it records, for either
 * server alike. Reported beside the server's, so a reader can tell which side held a delivery back.
 */
export function observeOwnGc(): { stop(): GcTotals & { allPauseSeconds: number } } {
  const totals = { full: 0, pauseSeconds: 0, allPauseSeconds: 0 };
  // Node's GC entries carry their kind in `detail`, which the entry type does not declare.
  const count = (entries: readonly { duration: number; detail?: unknown }[]) => {
    for (const entry of entries) {
      const kind = (entry.detail as { kind?: number } | undefined)?.kind;
      const full = kind === constants.NODE_PERFORMANCE_GC_MAJOR || kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL;
      if (full) totals.full++;
      if (full || kind === constants.NODE_PERFORMANCE_GC_WEAKCB) totals.pauseSeconds += entry.duration / 1000;
      totals.allPauseSeconds += entry.duration / 1000;
    }
  };
  const observer = new PerformanceObserver((list) => count(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      // Entries not yet handed to the callback belong to the stretch too.
      count(observer.takeRecords());
      observer.disconnect();
      return totals;
    },
  };
}
