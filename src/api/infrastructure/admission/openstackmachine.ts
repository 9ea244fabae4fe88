/**
 * OpenStackMachine admission: CAPO's openStackMachineWebhook on v1beta2.
 */
import { FieldError } from '../../../apiserver/errors.js';
import type { AdmissionRules } from '../../../apiserver/registry/kind.js';
import { clearAllowedAddressPairs, dropExtensions, regionRuleErrors, serverSpecCreateErrors } from './common.js';
import { copyAt, decodedEqual, deleteFields, isSet } from './json.js';

export const openStackMachineAdmission: AdmissionRules = {
  validateCreate: (object) => serverSpecCreateErrors(object.spec),

  validateUpdate(object, old) {
    const ruleErrors = regionRuleErrors(object, old, ['spec.identityRef']);
    if (ruleErrors.length > 0) return ruleErrors;
    const spec = copyAt(object, 'spec');
    const oldSpec = copyAt(old, 'spec');
    // The controller fills providerID and instanceID in once: settable while unset, fixed after
    // (CAPO v0.14.2's webhook; v0.15 lets them change, which lets a machine be pointed at another
    // server). Credentials may be rotated.
    for (const field of ['providerID', 'instanceID']) if (!isSet(oldSpec, field)) deleteFields([spec, oldSpec], field);
    for (const s of [spec, oldSpec]) {
      deleteFields([s], 'identityRef');
      clearAllowedAddressPairs(s);
      dropExtensions(s);
    }
    // CAPO compares the specs re-encoded with omitempty, where an empty list is left out.
    if (decodedEqual(spec, oldSpec, { emptyListIsUnset: true })) return [];
    return [FieldError.forbidden('spec', 'cannot be modified')];
  },
};
