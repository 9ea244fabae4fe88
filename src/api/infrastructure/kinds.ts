/**
 * The CAPO kinds of group infrastructure.cluster.x-k8s.io, with the names,
 * scopes and subresources CAPO's CRDs declare. Versions are listed in
 * preference order; v1beta2 is the storage version of the kinds served in
 * two versions.
 */
import type { KindDefinition } from '../../apiserver/registry/kind.js';
import * as admission from './admission/index.js';
import * as conversion from './conversion/index.js';
import * as v1alpha1 from './v1alpha1/index.js';
import * as v1beta1 from './v1beta1/index.js';
import * as v1beta2 from './v1beta2/index.js';

export const infrastructureGroup = 'infrastructure.cluster.x-k8s.io';
const categories = ['cluster-api'];

export const openStackClusterKind: KindDefinition = {
  group: infrastructureGroup,
  kind: 'OpenStackCluster',
  plural: 'openstackclusters',
  singular: 'openstackcluster',
  shortNames: ['osc'],
  categories,
  namespaced: true,
  versions: [v1beta2.openStackClusterV1beta2, v1beta1.openStackClusterV1beta1],
  subresources: { status: true },
  converter: conversion.openStackClusterConverter,
  admission: admission.openStackClusterAdmission,
};

export const openStackClusterTemplateKind: KindDefinition = {
  group: infrastructureGroup,
  kind: 'OpenStackClusterTemplate',
  plural: 'openstackclustertemplates',
  singular: 'openstackclustertemplate',
  shortNames: ['osct'],
  categories,
  namespaced: true,
  versions: [v1beta2.openStackClusterTemplateV1beta2, v1beta1.openStackClusterTemplateV1beta1],
  subresources: { status: false },
  converter: conversion.openStackClusterTemplateConverter,
  admission: admission.openStackClusterTemplateAdmission,
};

export const openStackMachineKind: KindDefinition = {
  group: infrastructureGroup,
  kind: 'OpenStackMachine',
  plural: 'openstackmachines',
  singular: 'openstackmachine',
  shortNames: ['osm'],
  categories,
  namespaced: true,
  versions: [v1beta2.openStackMachineV1beta2, v1beta1.openStackMachineV1beta1],
  subresources: { status: true },
  converter: conversion.openStackMachineConverter,
  admission: admission.openStackMachineAdmission,
};

export const openStackMachineTemplateKind: KindDefinition = {
  group: infrastructureGroup,
  kind: 'OpenStackMachineTemplate',
  plural: 'openstackmachinetemplates',
  singular: 'openstackmachinetemplate',
  shortNames: ['osmt'],
  categories,
  namespaced: true,
  versions: [v1beta2.openStackMachineTemplateV1beta2, v1beta1.openStackMachineTemplateV1beta1],
  subresources: { status: true },
  converter: conversion.openStackMachineTemplateConverter,
  admission: admission.openStackMachineTemplateAdmission,
};

export const openStackServerKind: KindDefinition = {
  group: infrastructureGroup,
  kind: 'OpenStackServer',
  plural: 'openstackservers',
  singular: 'openstackserver',
  shortNames: ['oss'],
  categories,
  namespaced: true,
  versions: [v1alpha1.openStackServerV1alpha1],
  subresources: { status: true },
  admission: admission.openStackServerAdmission,
};

export const openStackClusterIdentityKind: KindDefinition = {
  group: infrastructureGroup,
  kind: 'OpenStackClusterIdentity',
  plural: 'openstackclusteridentities',
  singular: 'openstackclusteridentity',
  shortNames: ['osci'],
  categories,
  namespaced: false,
  versions: [v1alpha1.openStackClusterIdentityV1alpha1],
  subresources: { status: false },
};

export const openStackFloatingIPPoolKind: KindDefinition = {
  group: infrastructureGroup,
  kind: 'OpenStackFloatingIPPool',
  plural: 'openstackfloatingippools',
  singular: 'openstackfloatingippool',
  namespaced: true,
  versions: [v1alpha1.openStackFloatingIPPoolV1alpha1],
  subresources: { status: true },
  admission: admission.openStackFloatingIPPoolAdmission,
};

export const infrastructureKinds: KindDefinition[] = [
  openStackClusterKind,
  openStackClusterTemplateKind,
  openStackMachineKind,
  openStackMachineTemplateKind,
  openStackServerKind,
  openStackClusterIdentityKind,
  openStackFloatingIPPoolKind,
];
