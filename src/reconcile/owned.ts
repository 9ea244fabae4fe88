/**
 * status.extensions.ownedResources: the IDs of what the reconciler created
 * that CAPO's status has no field for, by role (`listener/6443`,
 * `volume/root`, `ingress/member/80`, ...).
 */
import type { JsonObject } from '../storage/interface.js';

export function ownedResources(status: JsonObject): Record<string, string> {
  return ((status.extensions as JsonObject | undefined)?.ownedResources as Record<string, string> | undefined) ?? {};
}

/** Records an ID under its role, or forgets the role with undefined. */
export function setOwned(status: JsonObject, role: string, id: string | undefined): void {
  const extensions = ((status.extensions as JsonObject | undefined) ?? {}) as JsonObject;
  const resources = { ...ownedResources(status) };
  if (id === undefined) delete resources[role];
  else resources[role] = id;
  status.extensions = { ...extensions, ownedResources: resources };
}
