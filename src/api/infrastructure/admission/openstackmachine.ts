/**
 * OpenStackMachine admission: CAPO's openStackMachineWebhook on v1beta2.
 */
import { FieldError } from '../../../apiserver/errors.js';
import type { AdmissionRules } from '../../../apiserver/registry/kind.js';
import { clearAllowedAddressPairs, dropExtensions, regionRuleErrors, serverSpecCreateErrors } from './common.js';
import { copyAt, decodedEqual, deleteFields } from './json.js';

export const openStackMachineAdmission: AdmissionRules = {
  validateCreate: (object) => serverSpecCreateErrors(object.spec),

  validateUpdate(object, old) {
    const ruleErrors = regionRuleErrors(object, old, ['spec.identityRef']);
    if (ruleErrors.length > 0) return ruleErrors;
    const spec = copyAt(object, 'spec');
    const oldSpec = copyAt(old, 'spec');
    for (const s of [spec, oldSpec]) {
      // The controller fills providerID in; credentials may be rotated.
      deleteFields([s], 'providerID', 'identityRef');
      clearAllowedAddressPairs(s);
      dropExtensions(s);
    }
    // CAPO compares the specs re-encoded with omitempty, where an empty list is left out.
    if (decodedEqual(spec, oldSpec, { emptyListIsUnset: true })) return [];
    return [FieldError.forbidden('spec', 'cannot be modified')];
  },
};
