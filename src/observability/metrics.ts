/**
 * A minimal Prometheus registry rendering text exposition format 0.0.4, so
 * /metrics needs no client library. Output is deterministic (families by
 * name, series by label values) which keeps scrapes diffable and testable.
 */
export const metricsContentType = 'text/plain; version=0.0.4; charset=utf-8';

export type Labels = Readonly<Record<string, string>>;

/** Prometheus' client default, tuned for request latencies in seconds. */
const defaultBuckets: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A family produced on demand by a collector, for values read at scrape time. */
export interface CollectedFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: { labels?: Labels; value: number }[];
}

export type Collector = () => CollectedFamily[];

interface Family {
  readonly name: string;
  /** Exposition lines of this family, without the HELP/TYPE header. */
  sampleLines(): string[];
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
}

const metricNamePattern = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Series of one family keyed by their label values in declared label order. */
abstract class Metric<Series> implements Family {
  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  private readonly series = new Map<string, { values: string[]; data: Series }>();

  constructor(
    readonly name: string,
    readonly help: string,
    protected readonly labelNames: readonly string[],
  ) {
    if (!metricNamePattern.test(name)) throw new Error(`invalid metric name ${JSON.stringify(name)}`);
    for (const label of labelNames) {
      if (!labelNamePattern.test(label) || label.startsWith('__')) {
        throw new Error(`invalid label name ${JSON.stringify(label)} for ${name}`);
      }
    }
    if (new Set(labelNames).size !== labelNames.length) throw new Error(`duplicate label names for ${name}`);
  }

  protected abstract newSeries(): Series;
  protected abstract render(labelText: (extra?: string) => string, data: Series): string[];

  protected seriesFor(labels: Labels): Series {
    const keys = Object.keys(labels);
    if (keys.length !== this.labelNames.length || !this.labelNames.every((label) => Object.hasOwn(labels, label))) {
      throw new Error(`${this.name} takes labels [${this.labelNames.join(', ')}], got [${keys.join(', ')}]`);
    }
    const values = this.labelNames.map((label) => labels[label]);
    const key = JSON.stringify(values);
    let entry = this.series.get(key);
    if (!entry) {
      entry = { values, data: this.newSeries() };
      this.series.set(key, entry);
    }
    return entry.data;
  }

  sampleLines(): string[] {
    // A metric without labels has exactly one series, shown at zero before first use, as in client_golang.
    if (this.labelNames.length === 0) this.seriesFor({});
    const entries = [...this.series.values()].sort((a, b) => compareValues(a.values, b.values));
    return entries.flatMap(({ values, data }) => {
      const pairs = this.labelNames.map((label, i) => labelPair(label, values[i]));
      return this.render((extra) => labelBlock(extra === undefined ? pairs : [...pairs, extra]), data);
    });
  }
}

export class Counter extends Metric<{ value: number }> {
  readonly type = 'counter';

  inc(labels: Labels = {}, n = 1): void {
    if (!(n >= 0)) throw new Error(`${this.name}: counters only go up, got ${n}`);
    this.seriesFor(labels).value += n;
  }
  protected newSeries() {
    return { value: 0 };
  }
  protected render(labelText: () => string, data: { value: number }): string[] {
    return [`${this.name}${labelText()} ${formatNumber(data.value)}`];
  }
}

export class Gauge extends Metric<{ value: number }> {
  readonly type = 'gauge';

  set(labels: Labels, value: number): void {
    this.seriesFor(labels).value = value;
  }
  inc(labels: Labels = {}, n = 1): void {
    this.seriesFor(labels).value += n;
  }
  dec(labels: Labels = {}, n = 1): void {
    this.seriesFor(labels).value -= n;
  }
  protected newSeries() {
    return { value: 0 };
  }
  protected render(labelText: () => string, data: { value: number }): string[] {
    return [`${this.name}${labelText()} ${formatNumber(data.value)}`];
  }
}

interface HistogramSeries {
  /** Per-bucket (not cumulative) counts; the last slot is the +Inf bucket. */
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends Metric<HistogramSeries> {
  readonly type = 'histogram';
  /** Upper bounds without the implicit +Inf. */
  private readonly bounds: readonly number[];

  constructor(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]) {
    super(name, help, labelNames);
    if (labelNames.includes('le')) throw new Error(`${name}: "le" is reserved for histogram buckets`);
    const bounds = buckets.filter((bound) => bound !== Number.POSITIVE_INFINITY);
    if (bounds.length === 0 || bounds.some((bound, i) => !Number.isFinite(bound) || (i > 0 && bound <= bounds[i - 1]))) {
      throw new Error(`${name}: buckets must be finite and strictly increasing`);
    }
    this.bounds = bounds;
  }

  observe(labels: Labels, value: number): void {
    const series = this.seriesFor(labels);
    const index = this.bounds.findIndex((bound) => value <= bound);
    series.counts[index === -1 ? this.bounds.length : index] += 1;
    series.sum += value;
    series.count += 1;
  }
  protected newSeries(): HistogramSeries {
    return { counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
  }
  protected render(labelText: (extra?: string) => string, data: HistogramSeries): string[] {
    let cumulative = 0;
    const lines = this.bounds.map((bound, i) => {
      cumulative += data.counts[i];
      return `${this.name}_bucket${labelText(labelPair('le', formatNumber(bound)))} ${cumulative}`;
    });
    lines.push(`${this.name}_bucket${labelText(labelPair('le', '+Inf'))} ${data.count}`);
    lines.push(`${this.name}_sum${labelText()} ${formatNumber(data.sum)}`);
    lines.push(`${this.name}_count${labelText()} ${data.count}`);
    return lines;
  }
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Family>();
  private readonly collectors: Collector[] = [];

  /** Process and Node.js runtime metrics are included unless turned off (tests want exact output). */
  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) this.collect(processMetrics);
  }

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.register(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.register(new Gauge(name, help, labelNames));
  }

  histogram(name: string, help: string, labelNames: readonly string[] = [], buckets = defaultBuckets): Histogram {
    return this.register(new Histogram(name, help, labelNames, buckets));
  }

  /** Adds families computed at every render, for values that are read rather than counted. */
  collect(collector: Collector): void {
    this.collectors.push(collector);
  }

  render(): string {
    const families: Family[] = [...this.metrics.values()];
    for (const collector of this.collectors) families.push(...collector().map(collectedFamily));
    const names = new Set<string>();
    for (const family of families) {
      if (names.has(family.name)) throw new Error(`metric ${family.name} is produced twice`);
      names.add(family.name);
    }
    families.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let text = '';
    for (const family of families) {
      const lines = family.sampleLines();
      if (lines.length === 0) continue;
      text += `# HELP ${family.name} ${escapeHelp(family.help)}\n# TYPE ${family.name} ${family.type}\n`;
      text += lines.map((line) => `${line}\n`).join('');
    }
    return text;
  }

  private register<M extends Family>(metric: M): M {
    if (this.metrics.has(metric.name)) throw new Error(`metric ${metric.name} is already registered`);
    this.metrics.set(metric.name, metric);
    return metric;
  }
}

function collectedFamily(family: CollectedFamily): Family {
  if (!metricNamePattern.test(family.name)) throw new Error(`invalid metric name ${JSON.stringify(family.name)}`);
  const samples = family.samples.map(({ labels = {}, value }) => {
    const names = Object.keys(labels).sort();
    const pairs = names.map((name) => labelPair(name, labels[name]));
    return { values: names.map((name) => labels[name]), line: `${family.name}${labelBlock(pairs)} ${formatNumber(value)}` };
  });
  samples.sort((a, b) => compareValues(a.values, b.values));
  return { name: family.name, help: family.help, type: family.type, sampleLines: () => samples.map((s) => s.line) };
}

function labelPair(name: string, value: string): string {
  return `${name}="${escapeLabelValue(value)}"`;
}

function labelBlock(pairs: string[]): string {
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

function compareValues(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return a.length - b.length;
}

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

const processStartSeconds = Math.round(performance.timeOrigin) / 1000;

/** The standard process_* families plus V8 heap figures, as Go and Node clients expose them. */
function processMetrics(): CollectedFamily[] {
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  const gauge = (name: string, help: string, value: number): CollectedFamily => ({
    name,
    help,
    type: 'gauge',
    samples: [{ value }],
  });
  return [
    {
      name: 'process_cpu_seconds_total',
      help: 'Total user and system CPU time spent in seconds.',
      type: 'counter',
      samples: [{ value: (cpu.user + cpu.system) / 1e6 }],
    },
    gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', memory.rss),
    gauge('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', processStartSeconds),
    gauge('nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', memory.heapTotal),
    gauge('nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', memory.heapUsed),
    gauge('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', memory.external),
  ];
}
