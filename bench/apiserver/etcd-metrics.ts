/**
 * etcd's own latency histograms, read from the Prometheus text etcd serves at `/metrics` on its
 * client URL, before and after a phase: how long its WAL fsyncs and backend commits took in
 * between. Every write a server acknowledges waits for one WAL fsync, so on a server that stores
 * in that etcd they are the floor under write latency and under every watch delivery.
 *
 * Hand-written: parsing the few bucket lines of two histograms needs no Prometheus client.
 */

/** A histogram's cumulative bucket counts by upper bound (seconds); +Inf included. */
type Buckets = Map<number, number>;

export const etcdHistograms = { walFsync: 'etcd_disk_wal_fsync_duration_seconds', backendCommit: 'etcd_disk_backend_commit_duration_seconds' } as const;
type HistogramName = keyof typeof etcdHistograms;
export type EtcdSnapshot = Record<HistogramName, Buckets>;

/** What one histogram recorded between two snapshots. */
export interface BucketQuantile {
  count: number;
  /** The upper bound (ms) of the bucket holding the 99th percentile: p99 is at most this. */
  p99AtMostMs: number;
}

export async function readEtcdHistograms(clientUrl: string): Promise<EtcdSnapshot> {
  const response = await fetch(new URL('/metrics', clientUrl));
  if (!response.ok) throw new Error(`etcd ${clientUrl}/metrics: ${response.status}`);
  const text = await response.text();
  const snapshot = { walFsync: new Map(), backendCommit: new Map() } as EtcdSnapshot;
  for (const [key, name] of Object.entries(etcdHistograms) as [HistogramName, string][]) {
    const line = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\S+)$`, 'gm');
    for (const [, le, count] of text.matchAll(line)) snapshot[key].set(le === '+Inf' ? Infinity : Number(le), Number(count));
  }
  return snapshot;
}

/** The 99th percentile bucket of what `name` recorded from `before` to `after`. */
export function p99Between(before: EtcdSnapshot, after: EtcdSnapshot, name: HistogramName): BucketQuantile {
  const bounds = [...after[name].keys()].sort((a, b) => a - b);
  const recorded = (bound: number) => (after[name].get(bound) ?? 0) - (before[name].get(bound) ?? 0);
  const count = bounds.length === 0 ? 0 : recorded(Infinity);
  const rank = Math.ceil(0.99 * count);
  const bound = bounds.find((upper) => recorded(upper) >= rank) ?? Infinity;
  return { count, p99AtMostMs: bound * 1000 };
}
