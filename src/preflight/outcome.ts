/**
 * A call's result or its OpenStack error as a value, so checks can start
 * calls at once, share them, and turn failures into check results. Other
 * errors are bugs and still throw.
 */
import { isRetryable, OpenStackError } from '../openstack/index.js';
import type { PreflightCheck } from './report.js';

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: OpenStackError };

export async function outcome<T>(call: Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await call };
  } catch (error) {
    if (error instanceof OpenStackError) return { ok: false, error };
    throw error;
  }
}

/**
 * The failed check for a call that failed, saying what to do where the error
 * does not say it already. A failure that may clear by itself (a 5xx, 429,
 * 409 or an unreachable service) is marked `undecided`: the cloud did not
 * answer the question, so the verdict is not a finding about the cloud.
 */
export function failedCall(name: string, what: string, error: OpenStackError): PreflightCheck {
  const check: PreflightCheck = { name, status: 'fail', message: `${what} failed: ${error.message}${adviceFor(error)}` };
  return mayClearByItself(error) ? { ...check, undecided: true } : check;
}

/** Whether asking again, with nothing changed, may get an answer. */
function mayClearByItself(error: OpenStackError): boolean {
  return error.kind === 'Conflict' || isRetryable(error);
}

function adviceFor(error: OpenStackError): string {
  if (error.kind === 'Forbidden') return ' — give the user a role that may read them (member or reader)';
  if (mayClearByItself(error)) return ' — run the check again when the service answers';
  return '';
}
