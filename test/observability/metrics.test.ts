/**
 * /metrics as a scraper reads it: Prometheus text format 0.0.4, the server's own families with the
 * names dashboards use, and the process and Node.js runtime families prom-client adds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startTestServer, type TestServer } from '../../harness/test-server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.stop();
});

async function scrape(): Promise<string> {
  const res = await request(server, 'GET', '/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
  return res.body;
}

describe('/metrics', () => {
  it('counts requests by verb, group, version, resource, scope and code, with their durations', async () => {
    expect((await request(server, 'GET', '/apis/testing.capo.dev/v1/namespaces/default/widgets')).status).toBe(200);
    const text = await scrape();
    expect(text).toContain('# TYPE apiserver_request_total counter');
    expect(text).toMatch(
      /^apiserver_request_total\{verb="LIST",group="testing\.capo\.dev",version="v1",resource="widgets",subresource="",scope="namespace",code="200"\} [1-9]/m,
    );
    expect(text).toContain('# TYPE apiserver_request_duration_seconds histogram');
    expect(text).toMatch(/^apiserver_request_duration_seconds_bucket\{le="0\.005",verb="LIST",.*resource="widgets".*\} \d+/m);
    expect(text).toMatch(/^apiserver_registered_watchers 0$/m);
  });

  it('includes the process and runtime families operators expect', async () => {
    const text = await scrape();
    for (const family of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_start_time_seconds',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_gc_duration_seconds',
    ]) {
      expect(text, family).toMatch(new RegExp(`^# TYPE ${family} `, 'm'));
    }
  });
});
