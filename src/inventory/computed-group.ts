/**
 * The API group and version of the computed, read-only kinds (not CAPO's group: CAPO's
 * controllers must never see them). The inventory builds these objects, so it owns their apiVersion;
 * inventory/kinds serves them.
 */
export const computedGroup = 'extensions.capo-apiserver.io';
export const computedVersion = 'v1alpha1';
export const computedApiVersion = `${computedGroup}/${computedVersion}`;
