/** The API group of the computed, read-only kinds (not CAPO's group: CAPO's controllers must never see them). */
export const computedGroup = 'extensions.capo-apiserver.io';
export const computedVersion = 'v1alpha1';
export const computedApiVersion = `${computedGroup}/${computedVersion}`;
