/**
 * Status fields whose shape changed between v1beta1 (Cluster API v1beta1
 * contract) and v1beta2 (metav1 conditions, failure domains as a list).
 */
import type { JsonObject } from '../../../storage/interface.js';
import { invert, move } from './json.js';
import type { Unit } from './lossless.js';
import { isJsonObject } from '../../../storage/json.js';

/**
 * v1beta1 conditions carry a severity that metav1 conditions lack, and may
 * omit reason and message, which metav1 requires (CAPO's Go types write them
 * as empty strings). CAPO stamps the object's generation on converted
 * conditions of clusters and machines (not of machine templates); Go omits
 * a zero generation, so an object without one gets none.
 */
export function conditionsToHub(status: JsonObject, generation?: unknown): void {
  if (!Array.isArray(status.conditions)) return;
  status.conditions = status.conditions.map((condition: unknown) => {
    if (!isJsonObject(condition)) return condition;
    const out = { ...condition };
    delete out.severity;
    out.reason ??= '';
    out.message ??= '';
    if (typeof generation === 'number' && generation > 0) out.observedGeneration = generation;
    return out;
  });
}

/** The reverse of conditionsToHub: empty reason and message are omitted, as v1beta1's Go types do. */
export function conditionsToSpoke(status: JsonObject): void {
  if (!Array.isArray(status.conditions)) return;
  status.conditions = status.conditions.map((condition: unknown) => {
    if (!isJsonObject(condition)) return condition;
    const out = { ...condition };
    delete out.observedGeneration;
    if (out.reason === '') delete out.reason;
    if (out.message === '') delete out.message;
    return out;
  });
}

/**
 * v1beta1's `status.ready` (the Cluster API v1beta1 infrastructure contract)
 * has no v1beta2 field: CAPO derives it from the Ready condition, and its Go
 * type always writes it, so every v1beta1 status gets one.
 */
function readyFromConditions(status: JsonObject): void {
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  status.ready = conditions.some((c: unknown) => isJsonObject(c) && c.type === 'Ready' && c.status === 'True');
}

/**
 * A map keyed by name in v1beta1, a list sorted by name in v1beta2 (Go sorts
 * strings by their UTF-8 bytes). v1beta2's controlPlane is a pointer that
 * CAPO always sets; v1beta1's is a bool that Go omits when false. An empty
 * map and an empty list stand for each other.
 */
export function failureDomainsToHub(status: JsonObject): void {
  const domains = status.failureDomains;
  if (!isJsonObject(domains)) return;
  status.failureDomains = Object.keys(domains)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    .map((name) => {
      const domain = isJsonObject(domains[name]) ? domains[name] : {};
      return { name, ...domain, controlPlane: domain.controlPlane ?? false };
    });
}

export function failureDomainsToSpoke(status: JsonObject): void {
  const domains = status.failureDomains;
  if (!Array.isArray(domains)) return;
  const map: JsonObject = {};
  for (const domain of domains) {
    if (!isJsonObject(domain)) continue;
    const { name, ...spec } = domain;
    if (spec.controlPlane !== true) delete spec.controlPlane;
    Object.defineProperty(map, String(name), { value: spec, enumerable: true, writable: true, configurable: true });
  }
  status.failureDomains = map;
}

/**
 * `resolved.ports[].disablePortSecurity` became `enablePortSecurity`. The
 * v1beta1 schema requires a description, which CAPO's Go type always writes,
 * empty if need be; v1beta2 made it optional.
 */
export function resolvedPortsToHub(resolved: unknown): void {
  for (const port of portsOf(resolved)) move(port, 'disablePortSecurity', port, 'enablePortSecurity', invert);
}

export function resolvedPortsToSpoke(resolved: unknown): void {
  for (const port of portsOf(resolved)) {
    move(port, 'enablePortSecurity', port, 'disablePortSecurity', invert);
    port.description ??= '';
  }
}

/** The port objects of a machine spec or of a resolved machine spec. */
export function portsOf(parent: unknown): JsonObject[] {
  return isJsonObject(parent) && Array.isArray(parent.ports) ? parent.ports.filter(isJsonObject) : [];
}

/** The object's generation, which CAPO copies into converted conditions. */
export function generationOf(object: JsonObject): unknown {
  return isJsonObject(object.metadata) ? object.metadata.generation : undefined;
}

/**
 * Cluster API v1beta1 status fields: `ready` (derived from the Ready
 * condition) travels with the conditions, since a restored `ready` is only
 * right while the conditions it came with are unchanged. `failureReason` and
 * `failureMessage` have no v1beta2 counterpart.
 */
export const contractStatusUnits: Unit[] = [
  {
    spoke: [
      ['status', 'ready'],
      ['status', 'conditions'],
    ],
    hub: [['status', 'conditions']],
  },
  {
    spoke: [
      ['status', 'failureReason'],
      ['status', 'failureMessage'],
    ],
    hub: [],
  },
];

export function contractStatusToHub(status: JsonObject, generation: unknown): void {
  delete status.ready;
  delete status.failureReason;
  delete status.failureMessage;
  conditionsToHub(status, generation);
}

export function contractStatusToSpoke(status: JsonObject): void {
  conditionsToSpoke(status);
  readyFromConditions(status);
  failureFromConditions(status);
}

/**
 * CAPO v0.14 (the v1beta1 contract) also fails a machine whose server was deleted behind its back,
 * in failureReason and failureMessage, which Cluster API's MachineHealthCheck of that contract
 * reads; v1beta2 says it in the conditions alone (reason InstanceDeleted), from which the v1beta1
 * fields are told again.
 */
function failureFromConditions(status: JsonObject): void {
  if (status.failureReason !== undefined) return;
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  if (!conditions.some((c: unknown) => isJsonObject(c) && c.type === 'Ready' && c.status === 'False' && c.reason === 'InstanceDeleted')) return;
  // capierrors.UpdateMachineError and CAPO's ServerUnexpectedDeletedMessage.
  status.failureReason = 'UpdateError';
  status.failureMessage = 'The server was unexpectedly deleted';
}
