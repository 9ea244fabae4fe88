import { describe, expect, it } from 'vitest';
import { openStackServerAdmission as rules } from '../../../../src/api/infrastructure/admission/index.js';
import { changed, create, openStackServer, rendered, update } from './objects.js';

const immutable = {
  type: 'FieldValueForbidden',
  field: 'spec',
  message: 'Forbidden: OpenStackServer spec field is immutable. Please create a new resource instead.',
};

describe('OpenStackServer create', () => {
  it('accepts a bastion server', () => {
    expect(create(rules, openStackServer())).toEqual([]);
  });

  it('forbids a block device named root next to rootVolume', () => {
    const server = changed(openStackServer(), (s) => {
      s.spec.rootVolume = { sizeGiB: 20 };
      s.spec.additionalBlockDevices = [{ name: 'root', sizeGiB: 10, storage: { type: 'Local' } }];
    });
    expect(rendered(create(rules, server))).toEqual([
      { type: 'FieldValueForbidden', field: 'spec.additionalBlockDevices', message: 'Forbidden: cannot contain a device named "root" when rootVolume is set' },
    ]);
  });

  it('forbids security groups on a port without port security', () => {
    const server = changed(openStackServer(), (s) => {
      s.spec.ports[0].enablePortSecurity = false;
      s.spec.ports[0].securityGroups = [{ id: 'sg-1' }];
    });
    expect(rendered(create(rules, server))).toEqual([
      { type: 'FieldValueForbidden', field: 'spec.ports', message: 'Forbidden: cannot have security groups when EnablePortSecurity is set to false' },
    ]);
  });

  it("forbids security groups on a port with port security disabled in v0.14's spelling", () => {
    const server = changed(openStackServer(), (s) => {
      s.spec.ports[0].disablePortSecurity = true;
      s.spec.ports[0].securityGroups = [{ id: 'sg-1' }];
    });
    expect(rendered(create(rules, server))).toEqual([
      { type: 'FieldValueForbidden', field: 'spec.ports', message: 'Forbidden: cannot have security groups when DisablePortSecurity is set to true' },
    ]);
    expect(
      create(
        rules,
        changed(server, (s) => (s.spec.ports[0].disablePortSecurity = false)),
      ),
    ).toEqual([]);
  });

  it('forbids both spellings of port security on one port', () => {
    const server = changed(openStackServer(), (s) => {
      s.spec.ports[0].disablePortSecurity = false;
      s.spec.ports[0].enablePortSecurity = true;
    });
    expect(rendered(create(rules, server))).toEqual([
      {
        type: 'FieldValueForbidden',
        field: 'spec.ports',
        message: 'Forbidden: disablePortSecurity (CAPO v0.14) and enablePortSecurity (v0.15) are one setting: set one',
      },
    ]);
  });
});

describe('OpenStackServer update', () => {
  it('accepts an unchanged spec', () => {
    const old = openStackServer();
    expect(update(rules, old, old)).toEqual([]);
  });

  it('forbids any change, identityRef included as CAPO does', () => {
    const old = openStackServer();
    expect(
      rendered(
        update(
          rules,
          changed(old, (s) => (s.spec.flavor = 'm1.large')),
          old,
        ),
      ),
    ).toEqual([immutable]);
    expect(
      rendered(
        update(
          rules,
          changed(old, (s) => (s.spec.identityRef.name = 'rotated')),
          old,
        ),
      ),
    ).toEqual([immutable]);
  });

  it('lets ClusterClass dry runs through, but not real writes carrying the annotation', () => {
    const old = openStackServer();
    const server = changed(old, (s) => {
      s.metadata.annotations = { 'topology.cluster.x-k8s.io/dry-run': '' };
      s.spec.flavor = 'm1.large';
    });
    expect(update(rules, server, old, { dryRun: true })).toEqual([]);
    expect(update(rules, server, old)).not.toEqual([]);
  });

  it('keeps the region (CRD rule), reporting it alone', () => {
    const old = changed(openStackServer(), (s) => (s.spec.identityRef.region = 'RegionOne'));
    const server = changed(old, (s) => (s.spec.identityRef.region = 'RegionTwo'));
    expect(rendered(update(rules, server, old))).toEqual([
      { type: 'FieldValueInvalid', field: 'spec.identityRef', message: 'Invalid value: region is immutable' },
    ]);
  });
});
