import { describe, expect, it } from 'vitest';
import { MetricsRegistry, metricsContentType } from '../../src/observability/metrics.js';

const bare = () => new MetricsRegistry({ processMetrics: false });

describe('MetricsRegistry', () => {
  it('declares the 0.0.4 text content type', () => {
    expect(metricsContentType).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  it('renders counters and gauges with HELP/TYPE and sorted series', () => {
    const registry = bare();
    const requests = registry.counter('apiserver_request_total', 'Requests.', ['verb', 'code']);
    const watchers = registry.gauge('apiserver_registered_watchers', 'Watchers.');
    requests.inc({ verb: 'list', code: '200' });
    requests.inc({ code: '404', verb: 'get' }, 2);
    requests.inc({ verb: 'get', code: '200' }, 0.5);
    requests.inc({ verb: 'get', code: '200' });
    watchers.inc();
    watchers.inc({}, 3);
    watchers.dec({}, 2);
    expect(registry.render()).toBe(
      [
        '# HELP apiserver_registered_watchers Watchers.',
        '# TYPE apiserver_registered_watchers gauge',
        'apiserver_registered_watchers 2',
        '# HELP apiserver_request_total Requests.',
        '# TYPE apiserver_request_total counter',
        'apiserver_request_total{verb="get",code="200"} 1.5',
        'apiserver_request_total{verb="get",code="404"} 2',
        'apiserver_request_total{verb="list",code="200"} 1',
        '',
      ].join('\n'),
    );
  });

  it('shows label-less metrics at zero and omits unused labelled families', () => {
    const registry = bare();
    registry.counter('b_total', 'B.');
    registry.gauge('a', 'A.', ['x']);
    registry.histogram('c_seconds', 'C.', [], [1]);
    expect(registry.render()).toBe(
      [
        '# HELP b_total B.',
        '# TYPE b_total counter',
        'b_total 0',
        '# HELP c_seconds C.',
        '# TYPE c_seconds histogram',
        'c_seconds_bucket{le="1"} 0',
        'c_seconds_bucket{le="+Inf"} 0',
        'c_seconds_sum 0',
        'c_seconds_count 0',
        '',
      ].join('\n'),
    );
  });

  it('renders cumulative histogram buckets, sum and count', () => {
    const registry = bare();
    const duration = registry.histogram('request_duration_seconds', 'Latency.', ['verb'], [0.1, 0.5, 1]);
    for (const value of [0.05, 0.1, 0.3, 0.7, 2]) duration.observe({ verb: 'get' }, value);
    duration.observe({ verb: 'apply' }, 0.25);
    expect(registry.render()).toBe(
      [
        '# HELP request_duration_seconds Latency.',
        '# TYPE request_duration_seconds histogram',
        'request_duration_seconds_bucket{verb="apply",le="0.1"} 0',
        'request_duration_seconds_bucket{verb="apply",le="0.5"} 1',
        'request_duration_seconds_bucket{verb="apply",le="1"} 1',
        'request_duration_seconds_bucket{verb="apply",le="+Inf"} 1',
        'request_duration_seconds_sum{verb="apply"} 0.25',
        'request_duration_seconds_count{verb="apply"} 1',
        'request_duration_seconds_bucket{verb="get",le="0.1"} 2',
        'request_duration_seconds_bucket{verb="get",le="0.5"} 3',
        'request_duration_seconds_bucket{verb="get",le="1"} 4',
        'request_duration_seconds_bucket{verb="get",le="+Inf"} 5',
        'request_duration_seconds_sum{verb="get"} 3.15',
        'request_duration_seconds_count{verb="get"} 5',
        '',
      ].join('\n'),
    );
  });

  it('uses the Prometheus default buckets', () => {
    const registry = bare();
    registry.histogram('h', 'H.').observe({}, 3);
    const buckets = registry
      .render()
      .split('\n')
      .filter((line) => line.startsWith('h_bucket'));
    expect(buckets).toStrictEqual([
      'h_bucket{le="0.005"} 0',
      'h_bucket{le="0.01"} 0',
      'h_bucket{le="0.025"} 0',
      'h_bucket{le="0.05"} 0',
      'h_bucket{le="0.1"} 0',
      'h_bucket{le="0.25"} 0',
      'h_bucket{le="0.5"} 0',
      'h_bucket{le="1"} 0',
      'h_bucket{le="2.5"} 0',
      'h_bucket{le="5"} 1',
      'h_bucket{le="10"} 1',
      'h_bucket{le="+Inf"} 1',
    ]);
  });

  it('escapes label values and help text', () => {
    const registry = bare();
    registry.counter('escapes_total', 'Back\\slash and\nnewline "kept".', ['path']).inc({ path: 'a\\b"c"\nd' });
    expect(registry.render()).toBe(
      [
        '# HELP escapes_total Back\\\\slash and\\nnewline "kept".',
        '# TYPE escapes_total counter',
        'escapes_total{path="a\\\\b\\"c\\"\\nd"} 1',
        '',
      ].join('\n'),
    );
  });

  it('formats special values', () => {
    const registry = bare();
    const gauge = registry.gauge('g', 'G.', ['k']);
    gauge.set({ k: 'a' }, Number.NaN);
    gauge.set({ k: 'b' }, Number.POSITIVE_INFINITY);
    gauge.set({ k: 'c' }, Number.NEGATIVE_INFINITY);
    gauge.set({ k: 'd' }, -1.5e-7);
    expect(registry.render().split('\n').slice(2, 6)).toStrictEqual([
      'g{k="a"} NaN',
      'g{k="b"} +Inf',
      'g{k="c"} -Inf',
      'g{k="d"} -1.5e-7',
    ]);
  });

  it('merges collector families into the sorted output', () => {
    const registry = bare();
    registry.counter('m_total', 'M.').inc();
    let calls = 0;
    registry.collect(() => {
      calls += 1;
      return [
        { name: 'z_info', help: 'Z.', type: 'gauge', samples: [{ labels: { version: 'v1', arch: 'x' }, value: 1 }] },
        { name: 'a_total', help: 'A.', type: 'counter', samples: [{ value: 7 }] },
        { name: 'empty', help: 'E.', type: 'gauge', samples: [] },
      ];
    });
    const expected = [
      '# HELP a_total A.',
      '# TYPE a_total counter',
      'a_total 7',
      '# HELP m_total M.',
      '# TYPE m_total counter',
      'm_total 1',
      '# HELP z_info Z.',
      '# TYPE z_info gauge',
      'z_info{arch="x",version="v1"} 1',
      '',
    ].join('\n');
    expect(registry.render()).toBe(expected);
    expect(registry.render()).toBe(expected);
    expect(calls).toBe(2);
  });

  it('includes process and Node.js metrics by default', () => {
    const text = new MetricsRegistry().render();
    for (const [name, type] of [
      ['process_cpu_seconds_total', 'counter'],
      ['process_resident_memory_bytes', 'gauge'],
      ['process_start_time_seconds', 'gauge'],
      ['nodejs_heap_size_total_bytes', 'gauge'],
      ['nodejs_heap_size_used_bytes', 'gauge'],
      ['nodejs_external_memory_bytes', 'gauge'],
    ]) {
      expect(text).toContain(`# TYPE ${name} ${type}\n`);
      expect(text).toMatch(new RegExp(`^${name} [0-9.e+]+$`, 'm'));
    }
    const start = Number(/^process_start_time_seconds (\S+)$/m.exec(text)![1]);
    expect(Math.abs(start - (Date.now() / 1000 - process.uptime()))).toBeLessThan(5);
  });

  it('rejects misuse', () => {
    const registry = bare();
    const counter = registry.counter('x_total', 'X.', ['a']);
    expect(() => registry.counter('x_total', 'again')).toThrow(/already registered/);
    expect(() => counter.inc({ a: '1' }, -1)).toThrow(/only go up/);
    expect(() => counter.inc({})).toThrow(/takes labels \[a\]/);
    expect(() => counter.inc({ a: '1', b: '2' })).toThrow(/takes labels/);
    expect(() => registry.gauge('bad-name', 'B.')).toThrow(/invalid metric name/);
    expect(() => registry.gauge('g', 'G.', ['__reserved'])).toThrow(/invalid label name/);
    expect(() => registry.gauge('g2', 'G.', ['a', 'a'])).toThrow(/duplicate/);
    expect(() => registry.histogram('h', 'H.', ['le'])).toThrow(/reserved/);
    expect(() => registry.histogram('h2', 'H.', [], [1, 1])).toThrow(/increasing/);
    expect(() => registry.histogram('h3', 'H.', [], [])).toThrow(/increasing/);
    registry.collect(() => [{ name: 'x_total', help: 'dup', type: 'counter', samples: [{ value: 1 }] }]);
    expect(() => registry.render()).toThrow(/produced twice/);
  });
});
