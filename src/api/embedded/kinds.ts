/**
 * What a management cluster's kube-apiserver would serve beside the CAPO
 * kinds, for the embedded mode that runs without one: core v1 Secrets
 * (identity clouds.yaml, bootstrap data) and Events (what the reconciler
 * records, for kubectl describe), Cluster API's Cluster and
 * Machine, which the reconciler reads, and the IPAM claims and addresses
 * OpenStackFloatingIPPool answers. Names, scopes and subresources are those
 * of kube and of Cluster API's CRDs.
 */
import type { KindDefinition } from '../../apiserver/registry/kind.js';
import { clusterV1beta2 } from './cluster.js';
import { eventV1 } from './event.js';
import { ipAddressAdmission, ipAddressClaimAdmission } from './ipam-admission.js';
import { ipAddressClaimV1beta2, ipAddressV1beta2 } from './ipam.js';
import { machineV1beta2 } from './machine.js';
import { secretAdmission } from './secret-admission.js';
import { secretV1 } from './secret.js';

export const clusterApiGroup = 'cluster.x-k8s.io';
export const ipamGroup = 'ipam.cluster.x-k8s.io';

export const secretKind: KindDefinition = {
  group: '',
  kind: 'Secret',
  plural: 'secrets',
  singular: 'secret',
  namespaced: true,
  versions: [secretV1],
  subresources: { status: false },
  admission: secretAdmission,
  builtIn: true,
  // kube's Secret strategy: `kubectl get secrets --field-selector type=kubernetes.io/tls`.
  selectableFields: ['type'],
};

export const eventKind: KindDefinition = {
  group: '',
  kind: 'Event',
  plural: 'events',
  singular: 'event',
  shortNames: ['ev'],
  namespaced: true,
  versions: [eventV1],
  subresources: { status: false },
  builtIn: true,
  // kube's event strategy: what `kubectl describe` and `kubectl get events --field-selector` select by.
  selectableFields: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'type',
  ],
};

export const clusterKind: KindDefinition = {
  group: clusterApiGroup,
  kind: 'Cluster',
  plural: 'clusters',
  singular: 'cluster',
  shortNames: ['cl'],
  categories: ['cluster-api'],
  namespaced: true,
  versions: [clusterV1beta2],
  subresources: { status: true },
};

export const machineKind: KindDefinition = {
  group: clusterApiGroup,
  kind: 'Machine',
  plural: 'machines',
  singular: 'machine',
  shortNames: ['ma'],
  categories: ['cluster-api'],
  namespaced: true,
  versions: [machineV1beta2],
  subresources: { status: true },
};

export const ipAddressClaimKind: KindDefinition = {
  group: ipamGroup,
  kind: 'IPAddressClaim',
  plural: 'ipaddressclaims',
  singular: 'ipaddressclaim',
  categories: ['cluster-api'],
  namespaced: true,
  versions: [ipAddressClaimV1beta2],
  subresources: { status: true },
  admission: ipAddressClaimAdmission,
};

export const ipAddressKind: KindDefinition = {
  group: ipamGroup,
  kind: 'IPAddress',
  plural: 'ipaddresses',
  singular: 'ipaddress',
  categories: ['cluster-api'],
  namespaced: true,
  versions: [ipAddressV1beta2],
  subresources: { status: false },
  admission: ipAddressAdmission,
};

export const embeddedClusterApiKinds: KindDefinition[] = [secretKind, eventKind, clusterKind, machineKind, ipAddressClaimKind, ipAddressKind];
