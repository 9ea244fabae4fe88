import { describe, expect, it } from 'vitest';
import { HealthChecks, healthContentType, healthHeaders } from '../../src/observability/health.js';

function checks(): HealthChecks {
  const health = new HealthChecks();
  health.add('ping', () => {}, ['livez', 'readyz', 'healthz']);
  health.add('log', async () => {}, ['livez', 'readyz', 'healthz']);
  health.add('storage', () => {}, ['readyz', 'healthz']);
  return health;
}

function failing(): HealthChecks {
  const health = checks();
  health.add('shutdown', async () => {
    throw new Error('process is shutting down');
  }, ['readyz']);
  return health;
}

const q = (text = '') => new URLSearchParams(text);

describe('HealthChecks', () => {
  it('exports the response headers kube sends', () => {
    expect(healthContentType).toBe('text/plain; charset=utf-8');
    expect(healthHeaders).toStrictEqual({
      'Content-Type': 'text/plain; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
    });
  });

  it('answers ok when all checks pass', async () => {
    expect(await checks().evaluate('readyz', undefined, q())).toStrictEqual({ status: 200, body: 'ok' });
  });

  it('lists checks for the endpoint in verbose mode', async () => {
    const health = checks();
    expect(await health.evaluate('readyz', undefined, q('verbose'))).toStrictEqual({
      status: 200,
      body: '[+]ping ok\n[+]log ok\n[+]storage ok\nreadyz check passed\n',
    });
    expect(await health.evaluate('livez', undefined, q('verbose=false'))).toStrictEqual({
      status: 200,
      body: '[+]ping ok\n[+]log ok\nlivez check passed\n',
    });
  });

  it('fails with the list and withheld reasons, verbose or not', async () => {
    const expected = {
      status: 500,
      body: '[+]ping ok\n[+]log ok\n[+]storage ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n',
    };
    expect(await failing().evaluate('readyz', undefined, q())).toStrictEqual(expected);
    expect(await failing().evaluate('readyz', undefined, q('verbose'))).toStrictEqual(expected);
  });

  it('only runs the checks registered for the endpoint', async () => {
    expect(await failing().evaluate('livez', undefined, q())).toStrictEqual({ status: 200, body: 'ok' });
  });

  it('excludes checks and warns about unknown exclusions', async () => {
    const health = failing();
    expect(await health.evaluate('readyz', undefined, q('exclude=shutdown'))).toStrictEqual({ status: 200, body: 'ok' });
    expect(await health.evaluate('readyz', undefined, q('verbose&exclude=shutdown&exclude=zeta&exclude=alpha&exclude=log'))).toStrictEqual({
      status: 200,
      body:
        '[+]ping ok\n[+]log excluded: ok\n[+]storage ok\n[+]shutdown excluded: ok\n' +
        'warn: some health checks cannot be excluded: no matches for "alpha","zeta"\nreadyz check passed\n',
    });
  });

  it('shows the exclusion warning in a failure listing', async () => {
    expect(await failing().evaluate('readyz', undefined, q('exclude=nope'))).toStrictEqual({
      status: 500,
      body:
        '[+]ping ok\n[+]log ok\n[+]storage ok\n[-]shutdown failed: reason withheld\n' +
        'warn: some health checks cannot be excluded: no matches for "nope"\nreadyz check failed\n',
    });
  });

  it('runs a single check on its sub-path and shows its reason', async () => {
    const health = failing();
    expect(await health.evaluate('readyz', 'storage', q())).toStrictEqual({ status: 200, body: 'ok' });
    expect(await health.evaluate('readyz', 'shutdown', q('verbose'))).toStrictEqual({
      status: 500,
      body: 'internal server error: process is shutting down\n',
    });
  });

  it('reports non-Error throws as text', async () => {
    const health = new HealthChecks();
    health.add('odd', () => Promise.reject('not ready'), ['readyz']);
    expect(await health.evaluate('readyz', 'odd', q())).toStrictEqual({
      status: 500,
      body: 'internal server error: not ready\n',
    });
  });

  it('answers 404 for a check that is not installed on the endpoint', async () => {
    const health = failing();
    expect(await health.evaluate('readyz', 'nope', q())).toStrictEqual({ status: 404, body: '404 page not found\n' });
    expect(await health.evaluate('livez', 'shutdown', q())).toStrictEqual({ status: 404, body: '404 page not found\n' });
  });

  it('falls back to ping when an endpoint has no checks, as kube does', async () => {
    const health = new HealthChecks();
    expect(await health.evaluate('healthz', undefined, q('verbose'))).toStrictEqual({
      status: 200,
      body: '[+]ping ok\nhealthz check passed\n',
    });
    expect(await health.evaluate('healthz', 'ping', q())).toStrictEqual({ status: 200, body: 'ok' });
  });

  it('runs checks anew on every evaluation', async () => {
    const health = new HealthChecks();
    let ready = false;
    health.add('informer-sync', () => {
      if (!ready) throw new Error('not synced');
    }, ['readyz']);
    expect((await health.evaluate('readyz', undefined, q())).status).toBe(500);
    ready = true;
    expect(await health.evaluate('readyz', undefined, q())).toStrictEqual({ status: 200, body: 'ok' });
  });

  it('refuses duplicate and path-breaking names', () => {
    const health = checks();
    expect(() => health.add('ping', () => {}, ['livez'])).toThrow(/already added/);
    expect(() => health.add('a/b', () => {}, ['livez'])).toThrow(/invalid/);
    expect(() => health.add('', () => {}, ['livez'])).toThrow(/invalid/);
  });
});
