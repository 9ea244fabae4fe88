import { describe, expect, it } from 'vitest';
import { openStackMachineTemplateAdmission as rules } from '../../../../src/api/infrastructure/admission/index.js';
import { changed, create, identityRef, openStackMachineTemplate, rendered, update } from './objects.js';

const immutableMessage =
  'OpenStackMachineTemplate spec.template.spec field is immutable. Please create a new resource instead. Ref doc: https://cluster-api.sigs.k8s.io/tasks/change-machine-template.html';

describe('OpenStackMachineTemplate create', () => {
  it("accepts the cluster template's machine template", () => {
    expect(create(rules, openStackMachineTemplate())).toEqual([]);
  });

  it('forbids providerID', () => {
    const template = changed(openStackMachineTemplate(), (t) => (t.spec.template.spec.providerID = 'openstack:///x'));
    expect(rendered(create(rules, template))).toEqual([
      { type: 'FieldValueForbidden', field: 'spec.template.spec.providerID', message: 'Forbidden: cannot be set in templates' },
    ]);
  });
});

describe('OpenStackMachineTemplate update', () => {
  it('accepts an unchanged spec', () => {
    const old = openStackMachineTemplate();
    expect(update(rules, old, old)).toEqual([]);
  });

  it('forbids changing spec.template.spec, identityRef included', () => {
    const old = openStackMachineTemplate();
    for (const change of [
      (t: Record<string, any>) => (t.spec.template.spec.flavor = { filter: { name: 'm1.large' } }),
      (t: Record<string, any>) => (t.spec.template.spec.identityRef = identityRef()),
    ]) {
      const template = changed(old, change);
      expect(update(rules, template, old).map((e) => ({ type: e.type, field: e.field, detail: e.detail, value: e.value }))).toEqual([
        { type: 'FieldValueInvalid', field: 'spec.template.spec', detail: immutableMessage, value: (template.spec as Record<string, any>).template.spec },
      ]);
    }
  });

  it("lets ports' allowedAddressPairs and the extensions change", () => {
    const old = changed(openStackMachineTemplate(), (t) => (t.spec.template.spec.ports = [{ network: { id: 'net-1' } }]));
    const template = changed(old, (t) => {
      t.spec.template.spec.ports[0].allowedAddressPairs = [{ ipAddress: '10.6.0.200', macAddress: 'fa:16:3e:00:00:01' }];
      t.spec.template.spec.extensions = { networkInterfaces: { keepalived: 'ens3' } };
    });
    expect(update(rules, template, old)).toEqual([]);
  });

  it('lets ClusterClass dry runs through, but not real writes carrying the annotation', () => {
    const old = openStackMachineTemplate();
    const template = changed(old, (t) => {
      t.metadata.annotations = { 'topology.cluster.x-k8s.io/dry-run': '' };
      t.spec.template.spec.flavor = { filter: { name: 'm1.large' } };
    });
    expect(update(rules, template, old, { dryRun: true })).toEqual([]);
    expect(update(rules, template, old)).not.toEqual([]);
  });

  it('keeps the region (CRD rule), even in dry runs', () => {
    const old = changed(openStackMachineTemplate(), (t) => (t.spec.template.spec.identityRef = { ...identityRef(), region: 'RegionOne' }));
    const template = changed(old, (t) => {
      t.metadata.annotations = { 'topology.cluster.x-k8s.io/dry-run': '' };
      t.spec.template.spec.identityRef.region = 'RegionTwo';
    });
    expect(rendered(update(rules, template, old, { dryRun: true }))).toEqual([
      { type: 'FieldValueInvalid', field: 'spec.template.spec.identityRef', message: 'Invalid value: region is immutable' },
    ]);
  });
});
