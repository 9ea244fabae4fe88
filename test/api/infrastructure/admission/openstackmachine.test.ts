import { describe, expect, it } from 'vitest';
import { openStackMachineAdmission as rules } from '../../../../src/api/infrastructure/admission/index.js';
import { changed, create, openStackMachine, rendered, update } from './objects.js';

const immutable = { type: 'FieldValueForbidden', field: 'spec', message: 'Forbidden: cannot be modified' };
const rootDevice = {
  type: 'FieldValueForbidden',
  field: 'spec.additionalBlockDevices',
  message: 'Forbidden: cannot contain a device named "root" when rootVolume is set',
};
const portSecurity = {
  type: 'FieldValueForbidden',
  field: 'spec.ports',
  message: 'Forbidden: cannot have security groups when EnablePortSecurity is set to false',
};

describe('OpenStackMachine create', () => {
  it('accepts a machine with volumes and ports', () => {
    const machine = changed(openStackMachine(), (m) => {
      m.spec.rootVolume = { sizeGiB: 50, type: 'ssd' };
      m.spec.additionalBlockDevices = [{ name: 'etcd', sizeGiB: 10, storage: { type: 'Volume' } }];
      m.spec.ports = [
        { network: { id: 'net-1' }, securityGroups: [{ id: 'sg-1' }] },
        { network: { id: 'net-2' }, enablePortSecurity: false },
      ];
    });
    expect(create(rules, machine)).toEqual([]);
  });

  it('forbids a block device named root next to rootVolume, once per device', () => {
    const devices = [
      { name: 'root', sizeGiB: 10, storage: { type: 'Local' } },
      { name: 'root', sizeGiB: 20, storage: { type: 'Volume' } },
    ];
    const machine = changed(openStackMachine(), (m) => {
      m.spec.rootVolume = { sizeGiB: 50 };
      m.spec.additionalBlockDevices = devices;
    });
    expect(rendered(create(rules, machine))).toEqual([rootDevice, rootDevice]);
    expect(
      create(
        rules,
        changed(machine, (m) => delete m.spec.rootVolume),
      ),
    ).toEqual([]);
  });

  it('forbids security groups on a port without port security, once per port', () => {
    const machine = changed(openStackMachine(), (m) => {
      m.spec.ports = [
        { network: { id: 'net-1' }, enablePortSecurity: false, securityGroups: [{ filter: { name: 'default' } }] },
        { network: { id: 'net-2' }, enablePortSecurity: true, securityGroups: [{ id: 'sg-1' }] },
        { network: { id: 'net-3' }, enablePortSecurity: false, securityGroups: [{ id: 'sg-2' }] },
      ];
    });
    expect(rendered(create(rules, machine))).toEqual([portSecurity, portSecurity]);
  });
});

describe('OpenStackMachine update', () => {
  it('accepts an unchanged spec, and an empty list for an unset one', () => {
    const old = openStackMachine();
    expect(update(rules, old, old)).toEqual([]);
    expect(
      update(
        rules,
        changed(old, (m) => (m.spec.tags = [])),
        old,
      ),
    ).toEqual([]);
  });

  it("lets providerID and instanceID be set while unset, and identityRef and ports' allowedAddressPairs change", () => {
    const old = changed(openStackMachine(), (m) => (m.spec.ports = [{ network: { id: 'net-1' } }]));
    const machine = changed(old, (m) => {
      m.spec.providerID = 'openstack:///5f3c1a0e-8c1d-4a7b-9e2f-0d6b4c3a2e10';
      m.spec.instanceID = '5f3c1a0e-8c1d-4a7b-9e2f-0d6b4c3a2e10';
      m.spec.identityRef = { type: 'Secret', name: 'rotated', cloudName: 'openstack' };
      m.spec.ports[0].allowedAddressPairs = [{ ipAddress: '10.6.0.200' }];
    });
    expect(update(rules, machine, old)).toEqual([]);
  });

  it.each(['providerID', 'instanceID'])('keeps %s once set: no change, no removal', (field) => {
    const old = changed(openStackMachine(), (m) => (m.spec[field] = '5f3c1a0e-8c1d-4a7b-9e2f-0d6b4c3a2e10'));
    expect(update(rules, old, old)).toEqual([]);
    expect(
      rendered(
        update(
          rules,
          changed(old, (m) => (m.spec[field] = '00000000-0000-4000-8000-000000000000')),
          old,
        ),
      ),
    ).toEqual([immutable]);
    expect(
      rendered(
        update(
          rules,
          changed(old, (m) => delete m.spec[field]),
          old,
        ),
      ),
    ).toEqual([immutable]);
  });

  it('accepts changes to the extensions CAPO does not know', () => {
    const old = openStackMachine();
    expect(
      update(
        rules,
        changed(old, (m) => (m.spec.extensions = { networkInterfaces: { keepalived: 'eth0' } })),
        old,
      ),
    ).toEqual([]);
  });

  it('forbids changing anything else', () => {
    const old = openStackMachine();
    expect(
      rendered(
        update(
          rules,
          changed(old, (m) => (m.spec.image = { id: 'c0ffee00-0000-4000-8000-000000000000' })),
          old,
        ),
      ),
    ).toEqual([immutable]);
    expect(
      rendered(
        update(
          rules,
          changed(old, (m) => (m.spec.tags = ['a'])),
          old,
        ),
      ),
    ).toEqual([immutable]);
  });

  it('keeps the region (CRD rule), reporting it alone', () => {
    const old = changed(openStackMachine(), (m) => (m.spec.identityRef.region = 'RegionOne'));
    const machine = changed(old, (m) => {
      m.spec.identityRef.region = 'RegionTwo';
      m.spec.sshKeyName = 'other';
    });
    expect(rendered(update(rules, machine, old))).toEqual([
      { type: 'FieldValueInvalid', field: 'spec.identityRef', message: 'Invalid value: region is immutable' },
    ]);
  });
});
