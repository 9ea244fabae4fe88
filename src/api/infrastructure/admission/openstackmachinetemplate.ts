/**
 * OpenStackMachineTemplate admission: CAPO's openStackMachineTemplateWebhook
 * on v1beta2.
 */
import { FieldError } from '../../../apiserver/errors.js';
import type { AdmissionRules } from '../../../apiserver/registry/kind.js';
import { clearAllowedAddressPairs, dropExtensions, isTopologyDryRun, regionRuleErrors } from './common.js';
import { copyAt, decodedEqual, isSet, objectAt } from './json.js';

export const openStackMachineTemplateAdmission: AdmissionRules = {
  validateCreate(object) {
    const spec = objectAt(objectAt(object.spec, 'template'), 'spec');
    return isSet(spec, 'providerID') ? [FieldError.forbidden('spec.template.spec.providerID', 'cannot be set in templates')] : [];
  },

  validateUpdate(object, old, context) {
    const ruleErrors = regionRuleErrors(object, old, ['spec.template.spec.identityRef']);
    if (ruleErrors.length > 0) return ruleErrors;
    if (isTopologyDryRun(object, context)) return [];
    const spec = copyAt(object, 'spec.template.spec');
    const oldSpec = copyAt(old, 'spec.template.spec');
    for (const s of [spec, oldSpec]) {
      clearAllowedAddressPairs(s);
      dropExtensions(s);
    }
    if (decodedEqual(spec, oldSpec)) return [];
    return [
      FieldError.invalid(
        'spec.template.spec',
        objectAt(objectAt(object.spec, 'template'), 'spec'),
        'OpenStackMachineTemplate spec.template.spec field is immutable. Please create a new resource instead. Ref doc: https://cluster-api.sigs.k8s.io/tasks/change-machine-template.html',
      ),
    ];
  },
};
