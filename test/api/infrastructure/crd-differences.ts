/**
 * Where the schemas we serve differ from a kept CAPO release's CRDs, on purpose, each with why.
 * The schema comparison (capo-contract.test.ts) fails on a difference not listed here, and on a
 * listing that no longer matches anything, so the list stays exactly what we decided.
 *
 * The two releases disagree with each other in places (CAPO changed OpenStackServer and
 * OpenStackFloatingIPPool v1alpha1 in place, and added to v1beta1), so one kind version cannot
 * equal both: we serve what v0.14.2, the released one, accepts, and keep what v0.15 adds where an
 * object written by it would otherwise lose a field.
 */
import type { CapoRelease } from '../../reference/capo.js';

export interface ListedDifference {
  release: CapoRelease;
  plural: string;
  version: string;
  /** crdMismatches' line. */
  differences: string[];
  reason: string;
}

const v014: CapoRelease = 'v0.14.2';
const v015: CapoRelease = 'v0.15.0-beta.0';

/** metav1.Condition (Cluster API v1beta2) against Cluster API v1beta1's condition, in v0.14's v1alpha1 kinds. */
const metav1Conditions = [
  'status.conditions[]: required ["type","status","lastTransitionTime","reason","message"] != ["lastTransitionTime","status","type"]',
  'status.conditions[].message: minLength (none) != 1',
  'status.conditions[].message: maxLength 32768 != 10240',
  'status.conditions[].reason: pattern "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$" != (none)',
  'status.conditions[].reason: maxLength 1024 != 256',
  'status.conditions[].severity: missing',
  'status.conditions[].status: enum ["True","False","Unknown"] != (none)',
  'status.conditions[].type: pattern "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$" != (none)',
  'status.conditions[].type: minLength (none) != 1',
  'status.conditions[].type: maxLength 316 != 256',
  'status.conditions[].observedGeneration: not in the CRD',
];

const statusIsTheControllers =
  "A status is written by the controller alone (clusterctl move does not carry it: the target's controller rebuilds it), and ours writes v0.15's: metav1 conditions with observedGeneration, as Cluster API v1beta2 contracts ask, and v0.15's resolved ports.";

export const listedDifferences: ListedDifference[] = [
  {
    release: v014,
    plural: 'openstackclusters',
    version: 'v1beta1',
    differences: ['spec.primarySubnet: not in the CRD'],
    reason: 'v0.15 added primarySubnet to v1beta1 (to convert v1beta2 losslessly); an optional field, kept so that a v0.15 object keeps it.',
  },
  {
    release: v015,
    plural: 'openstackclusters',
    version: 'v1beta1',
    differences: ['spec.subnets: maxItems 2 != (none)'],
    reason:
      'v0.14 takes at most two subnets (one per IP version); v0.15 lifts the bound together with primarySubnet. The released bound stays on v1beta1; v1beta2 has none.',
  },
  {
    release: v014,
    plural: 'openstackclustertemplates',
    version: 'v1beta1',
    differences: ['spec.template.spec.primarySubnet: not in the CRD'],
    reason: 'As OpenStackCluster v1beta1: the template carries its spec.',
  },
  {
    release: v015,
    plural: 'openstackclustertemplates',
    version: 'v1beta1',
    differences: ['spec.template.spec.subnets: maxItems 2 != (none)'],
    reason: 'As OpenStackCluster v1beta1: the template carries its spec.',
  },
  {
    release: v014,
    plural: 'openstackmachinetemplates',
    version: 'v1beta1',
    differences: ['status.conditions: not in the CRD'],
    reason:
      'v0.15 added status.conditions to v1beta1 OpenStackMachineTemplates (the template reconciler reports capacity through them); status only, and optional.',
  },
  {
    release: v015,
    plural: 'openstackservers',
    version: 'v1alpha1',
    differences: [
      'spec.additionalBlockDevices[].name: minLength (none) != 1',
      'spec.additionalBlockDevices[].sizeGiB: format (none) != "int32"',
      'spec.additionalBlockDevices[].storage.type: enum (none) != ["Local","Volume"]',
      'spec.identityRef: required ["type","name","cloudName"] != ["cloudName","name"]',
      'spec.image.imageRef.name: minLength (none) != 1',
      'spec.ports[].allowedAddressPairs: x-kubernetes-list-type (none) != "atomic"',
      'spec.ports[].allowedAddressPairs[].ipAddress: minLength (none) != 1',
      'spec.ports[].fixedIPs[].subnet.filter.ipVersion: format (none) != "int32"',
      'spec.ports[].valueSpecs[].key: minLength (none) != 1',
      'spec.ports[].valueSpecs[].name: minLength (none) != 1',
      'spec.ports[].valueSpecs[].value: minLength (none) != 1',
      'spec.rootVolume.sizeGiB: format (none) != "int32"',
      'spec.schedulerHintAdditionalProperties[].value.number: format (none) != "int32"',
      'spec.serverMetadata[].key: minLength (none) != 1',
      'spec.serverMetadata[].value: minLength (none) != 1',
    ],
    reason:
      "The spec is v0.14's (built from v1beta1's types), which accepts more than v0.15's (built from v1beta2's): every object either release accepts is accepted. identityRef.type is defaulted before validation, so requiring it refuses nothing.",
  },
  {
    release: v015,
    plural: 'openstackservers',
    version: 'v1alpha1',
    differences: ['spec.ports[].disablePortSecurity: not in the CRD'],
    reason:
      "v0.14's spelling of a port's security; served beside v0.15's enablePortSecurity so a server from either release keeps its setting (admission refuses both on one port).",
  },
  {
    release: v014,
    plural: 'openstackservers',
    version: 'v1alpha1',
    differences: ['spec.ports[].enablePortSecurity: not in the CRD'],
    reason: "v0.15's spelling of a port's security, which our reconciler writes for OpenStackMachines' ports (v1beta2); kept beside disablePortSecurity.",
  },
  {
    release: v014,
    plural: 'openstackservers',
    version: 'v1alpha1',
    differences: [
      ...metav1Conditions,
      'status.resolved.ports[]: required ["name","networkID"] != ["description","name","networkID"]',
      'status.resolved.ports[].allowedAddressPairs: x-kubernetes-list-type "atomic" != (none)',
      'status.resolved.ports[].allowedAddressPairs[].ipAddress: minLength 1 != (none)',
      'status.resolved.ports[].disablePortSecurity: missing',
      'status.resolved.ports[].name: minLength 1 != (none)',
      'status.resolved.ports[].networkID: minLength 1 != (none)',
      'status.resolved.ports[].valueSpecs[].key: minLength 1 != (none)',
      'status.resolved.ports[].valueSpecs[].name: minLength 1 != (none)',
      'status.resolved.ports[].valueSpecs[].value: minLength 1 != (none)',
      'status.resolved.ports[].enablePortSecurity: not in the CRD',
      'status.resources.ports[].id: minLength 1 != (none)',
    ],
    reason: statusIsTheControllers,
  },
  {
    release: v014,
    plural: 'openstackfloatingippools',
    version: 'v1alpha1',
    differences: [
      ...metav1Conditions,
      'status.floatingIPNetwork.id: minLength 1 != (none)',
      'status.floatingIPNetwork.name: minLength 1 != (none)',
      'status.floatingIPNetwork.tags: x-kubernetes-list-type "set" != (none)',
    ],
    reason: statusIsTheControllers,
  },
  {
    release: v015,
    plural: 'openstackfloatingippools',
    version: 'v1alpha1',
    differences: ['spec.identityRef: required ["type","name","cloudName"] != ["cloudName","name"]'],
    reason: 'v0.14 requires identityRef.type; its default fills it in before validation, so requiring it refuses nothing v0.15 accepts.',
  },
];
