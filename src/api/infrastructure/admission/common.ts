/**
 * Rules that several CAPO kinds share: the CRD's transition rule on every
 * identityRef, the create checks of machine-like specs, and the ClusterClass
 * dry-run exemption from immutability.
 */
import { FieldError } from '../../../apiserver/errors.js';
import type { JsonObject } from '../../../storage/interface.js';
import type { AdmissionContext } from '../../../apiserver/registry/kind.js';
import { isSet, listAt, objectAt, stringAt, valueAt } from './json.js';
import { isJsonObject } from '../../../storage/json.js';

const regionRuleMessage = 'region is immutable';

/**
 * The CRD rule `(!has(self.region) && !has(oldSelf.region)) || self.region ==
 * oldSelf.region` on each OpenStackIdentityReference at `paths`. It reads
 * oldSelf, so schema validation of a single object cannot run it. The CRD
 * rejects before any webhook runs, so callers report these errors alone.
 */
export function regionRuleErrors(object: JsonObject, old: JsonObject, paths: readonly string[]): FieldError[] {
  return paths.flatMap((path) => {
    const identityRef = valueAt(object, path);
    const oldIdentityRef = valueAt(old, path);
    // A transition rule only runs where the old object has the node as well.
    if (!isJsonObject(identityRef) || !isJsonObject(oldIdentityRef)) return [];
    const hasRegion = isSet(identityRef, 'region');
    const hadRegion = isSet(oldIdentityRef, 'region');
    if (!hasRegion && !hadRegion) return [];
    if (hasRegion && hadRegion) {
      return identityRef.region === oldIdentityRef.region ? [] : [FieldError.ruleFailure(path, identityRef, regionRuleMessage)];
    }
    // With one side unset, CEL fails on `self.region == oldSelf.region` itself.
    return [FieldError.ruleFailure(path, identityRef, `no such key: region evaluating rule: ${regionRuleMessage}`)];
  });
}

/**
 * What CAPO's OpenStackMachine and OpenStackServer webhooks check on create;
 * both specs carry rootVolume, additionalBlockDevices and ports alike.
 */
export function serverSpecCreateErrors(spec: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const devices = listAt(spec, 'additionalBlockDevices');
  if (objectAt(spec, 'rootVolume') && devices) {
    for (const device of devices) {
      if (stringAt(device, 'name') === 'root') {
        errors.push(FieldError.forbidden('spec.additionalBlockDevices', 'cannot contain a device named "root" when rootVolume is set'));
      }
    }
  }
  for (const port of listAt(spec, 'ports') ?? []) {
    if (isJsonObject(port) && port.enablePortSecurity === false && (listAt(port, 'securityGroups')?.length ?? 0) > 0) {
      errors.push(FieldError.forbidden('spec.ports', 'cannot have security groups when EnablePortSecurity is set to false'));
    }
  }
  return errors;
}

const topologyDryRunAnnotation = 'topology.cluster.x-k8s.io/dry-run';

/**
 * CAPI's topology controller dry-runs its desired objects with this
 * annotation to detect changes, and CAPO waives immutability for such
 * requests (topology.IsDryRunRequest): both the dry run and the annotation.
 */
export function isTopologyDryRun(object: JsonObject, context: AdmissionContext): boolean {
  if (!context.dryRun) return false;
  const annotations = objectAt(object.metadata, 'annotations');
  return annotations !== undefined && topologyDryRunAnnotation in annotations;
}

/**
 * Ports' allowedAddressPairs may change on machines and machine templates;
 * CAPO clears them before comparing specs.
 */
export function clearAllowedAddressPairs(spec: JsonObject): void {
  for (const port of listAt(spec, 'ports') ?? []) {
    if (isJsonObject(port)) delete port.allowedAddressPairs;
  }
}

/**
 * The additive `extensions` of our kinds are unknown to CAPO's Go types, so
 * its webhooks never see them change.
 */
export function dropExtensions(spec: JsonObject): void {
  delete spec.extensions;
}
