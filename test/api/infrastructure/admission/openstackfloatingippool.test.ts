import { describe, expect, it } from 'vitest';
import { openStackFloatingIPPoolAdmission as rules } from '../../../../src/api/infrastructure/admission/index.js';
import { changed, openStackFloatingIPPool, rendered, update } from './objects.js';

describe('OpenStackFloatingIPPool', () => {
  it('has no create rules', () => {
    expect(rules.validateCreate).toBeUndefined();
  });

  it('lets the spec change', () => {
    const old = openStackFloatingIPPool();
    const pool = changed(old, (p) => {
      p.spec.maxIPs = 10;
      p.spec.reclaimPolicy = 'Retain';
      p.spec.identityRef.name = 'rotated';
    });
    expect(update(rules, pool, old)).toEqual([]);
  });

  it('keeps the region (CRD rule)', () => {
    const old = changed(openStackFloatingIPPool(), (p) => (p.spec.identityRef.region = 'RegionOne'));
    const pool = changed(old, (p) => (p.spec.identityRef.region = 'RegionTwo'));
    const errors = update(rules, pool, old);
    expect(rendered(errors)).toEqual([{ type: 'FieldValueInvalid', field: 'spec.identityRef', message: 'Invalid value: region is immutable' }]);
    expect(
      update(
        rules,
        changed(old, (p) => (p.spec.identityRef.region = 'RegionOne')),
        old,
      ),
    ).toEqual([]);
  });

  it('fails the CRD rule when the region is removed', () => {
    const old = changed(openStackFloatingIPPool(), (p) => (p.spec.identityRef.region = 'RegionOne'));
    expect(rendered(update(rules, openStackFloatingIPPool(), old))).toEqual([
      { type: 'FieldValueInvalid', field: 'spec.identityRef', message: 'Invalid value: no such key: region evaluating rule: region is immutable' },
    ]);
  });
});
