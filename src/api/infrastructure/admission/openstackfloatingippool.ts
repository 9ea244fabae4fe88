/**
 * OpenStackFloatingIPPool admission. CAPO has no webhook for this kind; only
 * its CRD's transition rule on identityRef needs the old object.
 */
import type { AdmissionRules } from '../../../apiserver/registry/kind.js';
import { regionRuleErrors } from './common.js';

export const openStackFloatingIPPoolAdmission: AdmissionRules = {
  validateUpdate: (object, old) => regionRuleErrors(object, old, ['spec.identityRef']),
};
