import { describe, expect, it } from 'vitest';
import { openStackClusterTemplateAdmission as rules } from '../../../../src/api/infrastructure/admission/index.js';
import { changed, machineSpec, openStackClusterTemplate, rendered, update } from './objects.js';

describe('OpenStackClusterTemplate', () => {
  it('has no create rules', () => {
    expect(rules.validateCreate).toBeUndefined();
  });

  it('accepts an unchanged spec, and changed template metadata', () => {
    const old = openStackClusterTemplate();
    expect(update(rules, old, old)).toEqual([]);
    const relabelled = changed(old, (t) => (t.spec.template.metadata.labels.tier = 'gold'));
    expect(update(rules, relabelled, old)).toEqual([]);
  });

  it('accepts changes to the extensions CAPO does not know', () => {
    const old = openStackClusterTemplate();
    const template = changed(old, (t) => (t.spec.template.spec.extensions = { networking: { kubeNetworkPlugin: 'calico' } }));
    expect(update(rules, template, old)).toEqual([]);
  });

  it('forbids any change to spec.template.spec, even one a cluster allows', () => {
    const old = openStackClusterTemplate();
    const template = changed(old, (t) => (t.spec.template.spec.managedSubnets[0].dnsNameservers = ['1.1.1.1']));
    const errors = update(rules, template, old);
    expect(errors.map((e) => ({ type: e.type, field: e.field, detail: e.detail, value: e.value }))).toEqual([
      {
        type: 'FieldValueInvalid',
        field: 'OpenStackClusterTemplate.spec.template.spec',
        detail: 'OpenStackClusterTemplate spec.template.spec field is immutable. Please create new resource instead.',
        value: template,
      },
    ]);
  });

  it('keeps the identityRef regions (CRD rules), reporting them alone', () => {
    const old = changed(openStackClusterTemplate(), (t) => {
      t.spec.template.spec.identityRef.region = 'RegionOne';
      const bastionIdentity = { name: 'bastion-creds', cloudName: 'openstack', region: 'RegionOne' };
      t.spec.template.spec.bastion = { enabled: true, spec: { ...machineSpec(), identityRef: bastionIdentity } };
    });
    const template = changed(old, (t) => {
      t.spec.template.spec.identityRef.region = 'RegionTwo';
      t.spec.template.spec.bastion.spec.identityRef.region = 'RegionTwo';
    });
    expect(rendered(update(rules, template, old))).toEqual([
      { type: 'FieldValueInvalid', field: 'spec.template.spec.identityRef', message: 'Invalid value: region is immutable' },
      { type: 'FieldValueInvalid', field: 'spec.template.spec.bastion.spec.identityRef', message: 'Invalid value: region is immutable' },
    ]);
  });
});
