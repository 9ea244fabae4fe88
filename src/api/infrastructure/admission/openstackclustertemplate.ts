/**
 * OpenStackClusterTemplate admission: CAPO's openStackClusterTemplateWebhook
 * on v1beta2. The cluster spec a template stamps out never changes; its
 * template metadata may.
 */
import { FieldError } from '../../../apiserver/errors.js';
import type { AdmissionRules } from '../../../apiserver/registry/kind.js';
import { dropExtensions, regionRuleErrors } from './common.js';
import { copyAt, decodedEqual } from './json.js';

const identityRefPaths = ['spec.template.spec.identityRef', 'spec.template.spec.bastion.spec.identityRef'];

export const openStackClusterTemplateAdmission: AdmissionRules = {
  validateUpdate(object, old) {
    const ruleErrors = regionRuleErrors(object, old, identityRefPaths);
    if (ruleErrors.length > 0) return ruleErrors;
    const spec = copyAt(object, 'spec.template.spec');
    const oldSpec = copyAt(old, 'spec.template.spec');
    dropExtensions(spec);
    dropExtensions(oldSpec);
    if (decodedEqual(spec, oldSpec)) return [];
    // CAPO names the kind in the path and reports the whole object as the value.
    return [
      FieldError.invalid(
        'OpenStackClusterTemplate.spec.template.spec',
        object,
        'OpenStackClusterTemplate spec.template.spec field is immutable. Please create new resource instead.',
      ),
    ];
  },
};
