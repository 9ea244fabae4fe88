/**
 * OpenStackMachine and OpenStackMachineTemplate, v1beta1 ↔ v1beta2, and the
 * machine spec they share with the cluster's bastion.
 */
import type { JsonObject } from '../../../storage/interface.js';
import { invert, move, type Path } from './json.js';
import { capoVersionPair, type Unit } from './lossless.js';
import {
  conditionsToHub,
  conditionsToSpoke,
  contractStatusToHub,
  contractStatusToSpoke,
  contractStatusUnits,
  generationOf,
  portsOf,
  resolvedPortsToHub,
  resolvedPortsToSpoke,
} from './status.js';
import { isJsonObject } from '../../../storage/json.js';

/**
 * `flavorID` / `flavor` (a name) became `flavor: {id}` / `flavor: {filter:
 * {name}}`. When both are set, CAPO keeps the ID. Ports'
 * `disablePortSecurity` became `enablePortSecurity`.
 */
export function machineSpecToHub(spec: JsonObject): void {
  if (Object.hasOwn(spec, 'flavorID')) spec.flavor = { id: spec.flavorID };
  else if (Object.hasOwn(spec, 'flavor')) spec.flavor = { filter: { name: spec.flavor } };
  delete spec.flavorID;
  for (const port of portsOf(spec)) move(port, 'disablePortSecurity', port, 'enablePortSecurity', invert);
}

export function machineSpecToSpoke(spec: JsonObject): void {
  const flavor = spec.flavor;
  delete spec.flavor;
  if (isJsonObject(flavor)) {
    if (Object.hasOwn(flavor, 'id')) spec.flavorID = flavor.id;
    else if (isJsonObject(flavor.filter) && Object.hasOwn(flavor.filter, 'name')) spec.flavor = flavor.filter.name;
  }
  for (const port of portsOf(spec)) move(port, 'enablePortSecurity', port, 'disablePortSecurity', invert);
}

/** Both flavor fields set in v1beta1; in v1beta2 a flavor with both an ID and a filter, or neither. */
export function machineSpecUnits(at: Path): Unit[] {
  return [
    {
      spoke: [
        [...at, 'flavor'],
        [...at, 'flavorID'],
      ],
      hub: [[...at, 'flavor']],
    },
  ];
}

export const openStackMachineVersions = capoVersionPair('OpenStackMachine', {
  toHub(out) {
    if (isJsonObject(out.spec)) machineSpecToHub(out.spec);
    if (isJsonObject(out.status)) {
      contractStatusToHub(out.status, generationOf(out));
      resolvedPortsToHub(out.status.resolved);
    }
  },
  toSpoke(out) {
    if (isJsonObject(out.spec)) machineSpecToSpoke(out.spec);
    if (isJsonObject(out.status)) {
      contractStatusToSpoke(out.status);
      resolvedPortsToSpoke(out.status.resolved);
    }
  },
  units: [...machineSpecUnits(['spec']), ...contractStatusUnits, { spoke: [['status', 'resolved', 'ports']], hub: [['status', 'resolved', 'ports']] }],
});

const templateConditions: Path = ['status', 'conditions'];

/** spec.template.spec is a machine spec. The status (capacity, nodeInfo) is unchanged but for the conditions. */
export const openStackMachineTemplateVersions = capoVersionPair('OpenStackMachineTemplate', {
  toHub(out) {
    editTemplateSpec(out, machineSpecToHub);
    if (isJsonObject(out.status)) conditionsToHub(out.status);
  },
  toSpoke(out) {
    editTemplateSpec(out, machineSpecToSpoke);
    if (isJsonObject(out.status)) conditionsToSpoke(out.status);
  },
  units: [...machineSpecUnits(['spec', 'template', 'spec']), { spoke: [templateConditions], hub: [templateConditions] }],
});

/** Edits `spec.template.spec` of a template kind, where there is one. */
export function editTemplateSpec(object: JsonObject, edit: (spec: JsonObject) => void): void {
  const template = isJsonObject(object.spec) ? object.spec.template : undefined;
  if (isJsonObject(template) && isJsonObject(template.spec)) edit(template.spec);
}
