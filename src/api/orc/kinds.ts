/**
 * The ORC kinds CAPO uses (group openstack.k-orc.cloud): only Image, which
 * `image.imageRef` of a machine points at. Served in the embedded mode, and
 * behind kube-apiserver when ORC itself is not installed.
 */
import { FieldError } from '../../apiserver/errors.js';
import type { AdmissionRules, KindDefinition } from '../../apiserver/registry/kind.js';
import { jsonEqual } from '../../storage/json.js';
import { valueAt } from '../infrastructure/admission/json.js';
import { imageV1alpha1 } from './image.js';

export const orcGroup = 'openstack.k-orc.cloud';

/** The CRD's transition rules (`self == oldSelf`): they read the old object, so only update admission can run them. */
const immutableFields = ['spec.managementPolicy', 'spec.resource.properties', 'spec.resource.content', 'spec.resource.content.download.hash'];

const imageAdmission: AdmissionRules = {
  validateUpdate(object, old) {
    const errors: FieldError[] = [];
    for (const path of immutableFields) {
      const now = valueAt(object, path);
      const before = valueAt(old, path);
      // A transition rule runs only where both objects have the node.
      if (now === undefined || before === undefined || jsonEqual(now, before)) continue;
      errors.push(FieldError.ruleFailure(path, now, `${path.slice(path.lastIndexOf('.') + 1)} is immutable`));
    }
    return errors;
  },
};

export const imageKind: KindDefinition = {
  group: orcGroup,
  kind: 'Image',
  plural: 'images',
  singular: 'image',
  categories: ['openstack'],
  namespaced: true,
  versions: [imageV1alpha1],
  subresources: { status: true },
  admission: imageAdmission,
};

export const orcKinds: KindDefinition[] = [imageKind];
