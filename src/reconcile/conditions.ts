/**
 * metav1.Condition bookkeeping as Cluster API v1beta2 contracts expect it:
 * lastTransitionTime moves only when the status flips, observedGeneration
 * says which spec the condition judged, and conditions stay sorted by type
 * so that rewriting an unchanged set is a no-op write.
 */
import type { JsonObject } from '../storage/interface.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

export interface ConditionUpdate {
  type: string;
  status: ConditionStatus;
  /** CamelCase; the positive reason is the condition type's own convention (CAPI v1beta2 uses e.g. `Ready`). */
  reason: string;
  message?: string;
}

/** Condition messages are for humans; a runaway error text must not bloat the object. */
const maxMessageLength = 4096;

export function conditionsOf(status: JsonObject | undefined): Condition[] {
  return Array.isArray(status?.conditions) ? (status.conditions as unknown as Condition[]) : [];
}

export function findCondition(status: JsonObject | undefined, type: string): Condition | undefined {
  return conditionsOf(status).find((condition) => condition.type === type);
}

export function isConditionTrue(status: JsonObject | undefined, type: string): boolean {
  return findCondition(status, type)?.status === 'True';
}

export function setCondition(status: JsonObject, generation: number | undefined, update: ConditionUpdate, now = new Date()): void {
  const current = conditionsOf(status);
  const previous = current.find((condition) => condition.type === update.type);
  const message = (update.message ?? '').length > maxMessageLength ? `${update.message!.slice(0, maxMessageLength - 3)}...` : (update.message ?? '');
  const next: Condition = {
    type: update.type,
    status: update.status,
    reason: update.reason,
    message,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    lastTransitionTime: previous && previous.status === update.status ? previous.lastTransitionTime : now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
  };
  status.conditions = [...current.filter((condition) => condition.type !== update.type), next].sort((a, b) =>
    a.type < b.type ? -1 : a.type > b.type ? 1 : 0,
  ) as unknown as JsonObject[];
}
