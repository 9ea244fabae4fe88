/**
 * OpenStackServer admission: CAPO's openStackServerWebhook on v1alpha1, with
 * a port's security in either release's spelling (v0.14's
 * `disablePortSecurity`, v0.15's `enablePortSecurity`; see the schema).
 */
import { FieldError } from '../../../apiserver/errors.js';
import type { AdmissionRules } from '../../../apiserver/registry/kind.js';
import { isJsonObject } from '../../../storage/json.js';
import { isTopologyDryRun, regionRuleErrors, serverSpecCreateErrors } from './common.js';
import { decodedEqual, isSet, listAt } from './json.js';

export const openStackServerAdmission: AdmissionRules = {
  validateCreate: (object) => [...serverSpecCreateErrors(object.spec), ...portSecurityErrors(object.spec)],

  validateUpdate(object, old, context) {
    const ruleErrors = regionRuleErrors(object, old, ['spec.identityRef']);
    if (ruleErrors.length > 0) return ruleErrors;
    // CAPO means to let identityRef change but compares the whole typed spec,
    // so it rejects that too; clients rely on what it does.
    if (isTopologyDryRun(object, context) || decodedEqual(object.spec, old.spec)) return [];
    return [FieldError.forbidden('spec', 'OpenStackServer spec field is immutable. Please create a new resource instead.')];
  },
};

/** CAPO v0.14's rule in its spelling, and the two spellings never together. */
function portSecurityErrors(spec: unknown): FieldError[] {
  const errors: FieldError[] = [];
  for (const port of listAt(spec, 'ports') ?? []) {
    if (!isJsonObject(port)) continue;
    if (port.disablePortSecurity === true && (listAt(port, 'securityGroups')?.length ?? 0) > 0) {
      errors.push(FieldError.forbidden('spec.ports', 'cannot have security groups when DisablePortSecurity is set to true'));
    }
    if (isSet(port, 'disablePortSecurity') && isSet(port, 'enablePortSecurity')) {
      errors.push(FieldError.forbidden('spec.ports', 'disablePortSecurity (CAPO v0.14) and enablePortSecurity (v0.15) are one setting: set one'));
    }
  }
  return errors;
}
