import { describe, expect, it } from 'vitest';
import { errorFromNetwork, errorFromResponse, extractServiceError, parseRetryAfter } from '../../../src/openstack/errors.js';
import { isNotFound, isRetryable, type OpenStackError } from '../../../src/openstack/index.js';
import type { HttpMethod, ServiceType } from '../../../src/openstack/index.js';

const now = Date.parse('2026-08-01T12:00:00Z');

function response(service: ServiceType, method: HttpMethod, path: string, status: number, body: unknown, headers: Record<string, string> = {}): OpenStackError {
  return errorFromResponse({
    service,
    method,
    path,
    url: `http://cloud.example${path}`,
    status,
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    now,
  });
}

describe('errorFromResponse', () => {
  it('formats Neutron OverQuota as one actionable line', () => {
    const error = response(
      'network',
      'POST',
      '/v2.0/networks',
      409,
      { NeutronError: { type: 'OverQuota', message: "Quota exceeded for resources: ['network'].", detail: '' } },
      { 'x-openstack-request-id': 'req-5c1e' },
    );
    expect(error.kind).toBe('OverQuota');
    expect(error.message).toBe("neutron POST /v2.0/networks: 409 Conflict (OverQuota): Quota exceeded for resources: ['network']. [req-5c1e]");
    expect(error).toMatchObject({ status: 409, fault: 'OverQuota', requestId: 'req-5c1e', service: 'network', method: 'POST' });
  });

  it('keeps other Neutron conflicts as Conflict with their type', () => {
    const error = response('network', 'DELETE', '/v2.0/security-groups/sg1', 409, {
      NeutronError: { type: 'SecurityGroupInUse', message: 'Security Group sg1 in use.', detail: '' },
    });
    expect(error.kind).toBe('Conflict');
    expect(error.fault).toBe('SecurityGroupInUse');
    expect(error.serviceMessage).toBe('Security Group sg1 in use.');
  });

  it('reads Nova and Cinder bodies; 404 is NotFound', () => {
    const error = response(
      'compute',
      'GET',
      '/servers/abc',
      404,
      { itemNotFound: { code: 404, message: 'Instance abc could not be found.' } },
      { 'x-compute-request-id': 'req-n' },
    );
    expect(error.kind).toBe('NotFound');
    expect(isNotFound(error)).toBe(true);
    expect(error.message).toBe('nova GET /servers/abc: 404 Not Found (itemNotFound): Instance abc could not be found. [req-n]');
  });

  it('maps quota refusals that use 403 and 413 to OverQuota', () => {
    expect(
      response('compute', 'POST', '/servers', 403, {
        forbidden: { code: 403, message: 'Quota exceeded for instances: Requested 1, but already used 10 of 10 instances' },
      }).kind,
    ).toBe('OverQuota');
    expect(
      response('block-storage', 'POST', '/volumes', 413, {
        overLimit: { code: 413, message: 'VolumeLimitExceeded: Maximum number of volumes allowed (10) exceeded for quota volumes.' },
      }).kind,
    ).toBe('OverQuota');
    expect(
      response('load-balancer', 'POST', '/v2/lbaas/loadbalancers', 403, {
        faultcode: 'Client',
        faultstring: 'Quota has been met for resources: Load Balancer',
        debuginfo: null,
      }).kind,
    ).toBe('OverQuota');
    expect(
      response('compute', 'POST', '/servers', 403, { forbidden: { code: 403, message: 'Policy does not allow compute:servers:create to be performed.' } }).kind,
    ).toBe('Forbidden');
  });

  it('reads Keystone and Octavia bodies, and does not repeat a title equal to the status', () => {
    const keystone = response('identity', 'POST', '/v3/auth/tokens', 401, {
      error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' },
    });
    expect(keystone.kind).toBe('Unauthorized');
    expect(keystone.message).toBe('keystone POST /v3/auth/tokens: 401 Unauthorized: The request you have made requires authentication.');
    const octavia = response('load-balancer', 'PUT', '/v2/lbaas/listeners/l1', 409, {
      faultcode: 'Client',
      faultstring: 'Load Balancer lb1 is immutable and cannot be updated.',
      debuginfo: null,
    });
    expect(octavia.message).toBe('octavia PUT /v2/lbaas/listeners/l1: 409 Conflict: Load Balancer lb1 is immutable and cannot be updated.');
  });

  it('turns Glance HTML into text', () => {
    const html =
      '<html>\n <head>\n  <title>404 Not Found</title>\n </head>\n <body>\n  <h1>404 Not Found</h1>\n  No image found with ID i1<br /><br />\n\n\n </body>\n</html>';
    expect(response('image', 'GET', '/v2/images/i1', 404, html).message).toBe('glance GET /v2/images/i1: 404 Not Found: No image found with ID i1');
  });

  it('reads Glance’s webob JSON bodies', () => {
    const body = { message: 'The resource could not be found.<br /><br />\nNo image found with ID i1\n\n', code: '404 Not Found', title: 'Not Found' };
    expect(response('image', 'GET', '/v2/images/i1', 404, body).message).toBe(
      'glance GET /v2/images/i1: 404 Not Found: The resource could not be found. No image found with ID i1',
    );
  });

  it('maps statuses to kinds', () => {
    const kinds = [400, 401, 403, 404, 409, 429, 500, 501, 502, 503, 504, 418].map((status) => response('network', 'GET', '/v2.0/x', status, '').kind);
    expect(kinds).toEqual([
      'BadRequest',
      'Unauthorized',
      'Forbidden',
      'NotFound',
      'Conflict',
      'RateLimited',
      'Transient',
      'BadRequest',
      'Transient',
      'Transient',
      'Transient',
      'Unexpected',
    ]);
  });

  it('parses Retry-After as seconds or a date', () => {
    const limited = response('compute', 'GET', '/servers', 429, '', { 'retry-after': '7' });
    expect(limited.retryAfterSeconds).toBe(7);
    expect(limited.message).toBe('nova GET /servers: 429 Too Many Requests; retry after 7s');
    expect(parseRetryAfter(new Date(now + 30_000).toUTCString(), now)).toBe(30);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });

  it('keeps unknown JSON bodies visible and long bodies bounded', () => {
    expect(extractServiceError('{"weird":true}').message).toBe('{"weird":true}');
    expect(extractServiceError('x'.repeat(2000)).message).toHaveLength(500);
    expect(extractServiceError('')).toEqual({});
  });
});

describe('errorFromNetwork', () => {
  const base = {
    service: 'network' as const,
    method: 'GET' as const,
    path: '/v2.0/networks',
    url: 'https://neutron.example:9696/v2.0/networks',
    cause: new Error('x'),
  };

  it('classifies connection failures as Unreachable, before anything was sent', () => {
    const error = errorFromNetwork({ ...base, code: 'ECONNREFUSED' });
    expect(error.kind).toBe('Unreachable');
    expect(error.notSent).toBe(true);
    expect(error.message).toBe('neutron GET /v2.0/networks: cannot reach neutron.example:9696: connection refused (ECONNREFUSED)');
    expect(errorFromNetwork({ ...base, code: 'ENOTFOUND' }).kind).toBe('Unreachable');
    expect(errorFromNetwork({ ...base, code: 'EHOSTUNREACH' }).kind).toBe('Unreachable');
    expect(isRetryable(error)).toBe(true);
  });

  it('classifies certificate failures as TLS with advice', () => {
    const error = errorFromNetwork({ ...base, code: 'SELF_SIGNED_CERT_IN_CHAIN' });
    expect(error.kind).toBe('TLS');
    expect(error.message).toContain('certificate not trusted (self-signed certificate in chain) for neutron.example:9696: set cacert in the identity secret');
    expect(isRetryable(error)).toBe(false);
  });

  it('classifies timeouts by phase', () => {
    const slow = errorFromNetwork({ ...base, code: 'ETIMEDOUT', timeoutPhase: 'request', timeoutMs: 30_000 });
    expect(slow.kind).toBe('Transient');
    expect(slow.notSent).toBe(false);
    expect(slow.message).toBe('neutron GET /v2.0/networks: timed out: no response within 30s');
    const dead = errorFromNetwork({ ...base, code: 'ETIMEDOUT', timeoutPhase: 'connect', timeoutMs: 10_000 });
    expect(dead.kind).toBe('Unreachable');
    expect(dead.notSent).toBe(true);
    expect(errorFromNetwork({ ...base, code: 'ECONNRESET' }).kind).toBe('Transient');
  });

  it('isRetryable and isNotFound reject foreign errors', () => {
    expect(isRetryable(new Error('x'))).toBe(false);
    expect(isNotFound(undefined)).toBe(false);
  });
});
