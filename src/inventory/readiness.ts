/**
 * The Ready condition of computed objects. They have no history, so the
 * condition carries no lastTransitionTime: it is recomputed on every read.
 */
import type { MissingVariable } from './variables.js';

export interface ComputedCondition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
}

const listedAtMost = 5;

/** Ready unless a blocking problem is listed; the message names the first few variables without a value. */
export function readinessCondition(blockingMissing: MissingVariable[], readyReason: string, readyMessage: string): ComputedCondition {
  if (blockingMissing.length === 0) return { type: 'Ready', status: 'True', reason: readyReason, message: readyMessage };
  const names = blockingMissing.map((m) => (m.machine && !m.variable.includes(m.machine) ? `${m.variable}[${m.machine}]` : m.variable));
  const shown = names.slice(0, listedAtMost).join(', ');
  const more = names.length > listedAtMost ? ` and ${names.length - listedAtMost} more` : '';
  return { type: 'Ready', status: 'False', reason: 'VariablesMissing', message: `no value for ${shown}${more}; see status.missing` };
}
