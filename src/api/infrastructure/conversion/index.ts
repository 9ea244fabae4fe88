/**
 * Converters between the served versions of the CAPO kinds: v1beta1 and
 * v1beta2, the storage version (the hub). See lossless.ts for how fields
 * that one version cannot express survive a round trip.
 */
import type { Converter } from '../../../apiserver/registry/kind.js';
import { openStackClusterTemplateVersions, openStackClusterVersions } from './cluster.js';
import { losslessConverter } from './lossless.js';
import { openStackMachineTemplateVersions, openStackMachineVersions } from './machine.js';

export { conversionDataAnnotation } from './lossless.js';

export const openStackClusterConverter: Converter = losslessConverter(openStackClusterVersions);
export const openStackClusterTemplateConverter: Converter = losslessConverter(openStackClusterTemplateVersions);
export const openStackMachineConverter: Converter = losslessConverter(openStackMachineVersions);
export const openStackMachineTemplateConverter: Converter = losslessConverter(openStackMachineTemplateVersions);
