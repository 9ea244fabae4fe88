/** Which failed requests tell of a resource deleted behind our back, and what a pass forgets of its frozen references. */
import { describe, expect, it } from 'vitest';
import { OpenStackError, type OpenStackErrorKind } from '../../src/openstack/index.js';
import { forgetFrozen, vanishedReference } from '../../src/reconcile/drift.js';

const id = '48340dc4-2f1e-4c3b-9a7e-0c1d2e3f4a5b';

function answer(kind: OpenStackErrorKind, method: 'GET' | 'POST' | 'PUT' | 'DELETE', serviceMessage: string): OpenStackError {
  return new OpenStackError({
    kind,
    detail: `${kind}: ${serviceMessage}`,
    service: 'network',
    method,
    path: '/v2.0/ports',
    status: kind === 'NotFound' ? 404 : 400,
    serviceMessage,
  });
}

describe('vanishedReference', () => {
  it("names the resource a create or an update did not find, in each service's words", () => {
    expect(vanishedReference(answer('NotFound', 'POST', `Network ${id} could not be found.`))).toEqual({ kind: 'network', id });
    expect(vanishedReference(answer('NotFound', 'PUT', `Security group ${id.toUpperCase()} does not exist`))).toEqual({ kind: 'security group', id });
    // Nova's boot answers 400 for a port or network it cannot find; Octavia's create 400 for a subnet.
    expect(vanishedReference(answer('BadRequest', 'POST', `Port id ${id} could not be found.`))).toEqual({ kind: 'port', id });
    expect(vanishedReference(answer('BadRequest', 'POST', `Subnet ${id} not found.`))).toEqual({ kind: 'subnet', id });
  });

  it('leaves alone a read or delete (their own resource, which the engine judges), other failures and 404s naming no ID', () => {
    expect(vanishedReference(answer('NotFound', 'GET', `Network ${id} could not be found.`))).toBeUndefined();
    expect(vanishedReference(answer('NotFound', 'DELETE', `Network ${id} could not be found.`))).toBeUndefined();
    expect(vanishedReference(answer('Conflict', 'POST', `Network ${id} could not be found.`))).toBeUndefined();
    expect(vanishedReference(answer('BadRequest', 'POST', 'Invalid input for fixed_ips.'))).toBeUndefined();
    expect(vanishedReference(answer('NotFound', 'POST', 'The resource could not be found.'))).toBeUndefined();
    expect(vanishedReference(new Error(`Network ${id} could not be found.`))).toBeUndefined();
  });
});

describe('forgetFrozen', () => {
  it('forgets the reference at the path only when it names the vanished ID', () => {
    const status: Record<string, unknown> = { externalNetwork: { id, name: 'public' }, network: { id: 'other' } };
    expect(forgetFrozen(status, ['network'], id)).toBe(false);
    expect(forgetFrozen(status, ['externalNetwork'], id)).toBe(true);
    expect(status).toEqual({ network: { id: 'other' } });
    expect(forgetFrozen(status, ['resolved', 'ports'], id)).toBe(false);
  });
});
