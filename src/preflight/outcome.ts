/**
 * A call's result or its OpenStack error as a value, so checks can start
 * calls at once, share them, and turn failures into check results. Other
 * errors are bugs and still throw.
 */
import { OpenStackError } from '../openstack/index.js';

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: OpenStackError };

export async function outcome<T>(call: Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await call };
  } catch (error) {
    if (error instanceof OpenStackError) return { ok: false, error };
    throw error;
  }
}

/** A message for a call that failed, with what to do where the error does not say it already. */
export function failedCall(what: string, error: OpenStackError): string {
  return `${what} failed: ${error.message}${adviceFor(error)}`;
}

function adviceFor(error: OpenStackError): string {
  if (error.kind === 'Forbidden') return ' — give the user a role that may read them (member or reader)';
  if (error.kind === 'Transient' || error.kind === 'RateLimited' || error.kind === 'Unreachable') return ' — run the check again when the service answers';
  return '';
}
