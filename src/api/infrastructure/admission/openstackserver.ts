/**
 * OpenStackServer admission: CAPO's openStackServerWebhook on v1alpha1.
 */
import { FieldError } from '../../../apiserver/errors.js';
import type { AdmissionRules } from '../../../apiserver/registry/kind.js';
import { isTopologyDryRun, regionRuleErrors, serverSpecCreateErrors } from './common.js';
import { decodedEqual } from './json.js';

export const openStackServerAdmission: AdmissionRules = {
  validateCreate: (object) => serverSpecCreateErrors(object.spec),

  validateUpdate(object, old, context) {
    const ruleErrors = regionRuleErrors(object, old, ['spec.identityRef']);
    if (ruleErrors.length > 0) return ruleErrors;
    // CAPO means to let identityRef change but compares the whole typed spec,
    // so it rejects that too; clients rely on what it does.
    if (isTopologyDryRun(object, context) || decodedEqual(object.spec, old.spec)) return [];
    return [FieldError.forbidden('spec', 'OpenStackServer spec field is immutable. Please create a new resource instead.')];
  },
};
