/**
 * What Cluster API's IPAM webhooks check beyond the CRD schema: an
 * IPAddress holds a valid address, a prefix its family allows and a valid
 * gateway; neither a claim's nor an address's spec changes once written.
 */
import { isIP } from 'node:net';
import { FieldError } from '../../apiserver/errors.js';
import type { AdmissionRules } from '../../apiserver/registry/kind.js';
import type { JsonObject } from '../../storage/interface.js';
import { isJsonObject, jsonEqual } from '../../storage/json.js';

function specOf(object: JsonObject): JsonObject {
  return isJsonObject(object.spec) ? object.spec : {};
}

function immutableSpec(kind: string): NonNullable<AdmissionRules['validateUpdate']> {
  return (object, old) => (jsonEqual(specOf(object), specOf(old)) ? [] : [FieldError.forbidden('spec', `${kind} spec is immutable`)]);
}

function addressErrors(object: JsonObject): FieldError[] {
  const spec = specOf(object);
  const errors: FieldError[] = [];
  const family = typeof spec.address === 'string' ? isIP(spec.address) : 0;
  if (family === 0) errors.push(FieldError.invalid('spec.address', spec.address, 'not a valid IP address'));
  if (family === 4 && typeof spec.prefix === 'number' && spec.prefix > 32) {
    errors.push(FieldError.invalid('spec.prefix', spec.prefix, 'prefix is too large for an IPv4 address'));
  }
  if (typeof spec.gateway === 'string' && isIP(spec.gateway) === 0) errors.push(FieldError.invalid('spec.gateway', spec.gateway, 'not a valid IP address'));
  return errors;
}

export const ipAddressClaimAdmission: AdmissionRules = {
  validateUpdate: immutableSpec('IPAddressClaim'),
};

export const ipAddressAdmission: AdmissionRules = {
  validateCreate: addressErrors,
  validateUpdate: (object, old, context) => [...immutableSpec('IPAddress')(object, old, context), ...addressErrors(object)],
};
