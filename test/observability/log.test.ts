/**
 * Logs as an operator reads them: JSON lines, one per request at -v 1, carrying the Audit-Id the
 * response was given (or the one kube-apiserver's aggregator sent), the verb, the object and the code;
 * nothing at -v 0 but warnings and errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/log.js';
import { request, startTestServer, type TestServer } from '../../harness/test-server.js';

const lines: Record<string, unknown>[] = [];
let server: TestServer;

beforeAll(async () => {
  const destination = { write: (line: string) => void lines.push(JSON.parse(line)) };
  server = await startTestServer({ logger: createLogger({ verbosity: 1, destination }) });
});

afterAll(async () => {
  await server?.stop();
});

const requestLines = (id: string) => lines.filter((line) => line.msg === 'request' && line.requestId === id);

describe('request logs', () => {
  it('logs each request once, under the Audit-Id of its response', async () => {
    const res = await request(server, 'GET', '/apis/testing.capo.dev/v1/namespaces/default/widgets/missing');
    expect(res.status).toBe(404);
    const id = String(res.headers['audit-id']);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestLines(id)).toEqual([
      expect.objectContaining({
        level: 20,
        component: 'apiserver',
        verb: 'get',
        resource: 'widgets',
        namespace: 'default',
        name: 'missing',
        user: 'admin',
        code: 404,
      }),
    ]);
  });

  it('keeps the audit id kube-apiserver sends, and replaces one that is not an id', async () => {
    const kept = await request(server, 'GET', '/version', { headers: { 'Audit-Id': 'f0a1b2c3-0000-4000-8000-000000000001' } });
    expect(kept.headers['audit-id']).toBe('f0a1b2c3-0000-4000-8000-000000000001');
    expect(requestLines('f0a1b2c3-0000-4000-8000-000000000001')).toHaveLength(1);
    const replaced = await request(server, 'GET', '/version', { headers: { 'Audit-Id': 'not an id; <script>' } });
    expect(replaced.headers['audit-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('writes nothing below warnings at the default verbosity', () => {
    const quiet: string[] = [];
    const logger = createLogger({ destination: { write: (line: string) => void quiet.push(line) } });
    logger.debug('request');
    logger.warn('data directory tightened');
    expect(quiet.map((line) => JSON.parse(line).msg)).toEqual(['data directory tightened']);
  });
});
