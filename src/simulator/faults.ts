/**
 * Error-body pieces that several simulated services render alike. Only the
 * shape is shared: each service passes its own wording, because the fidelity
 * suite compares every body with what the real service says.
 */

/** Nova and Cinder each carry a copy of this table in their wsgi.Fault; the copies agree. */
const wsgiFaultNames: Record<number, string> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

export type WsgiFault = Record<string, { code: number; message: string }>;

/**
 * The `formatError` of a service whose faults are named after the status,
 * `{"itemNotFound":{"code":404,"message":...}}`. `messages` and `fallback`
 * are what the service says when a handler gives no message.
 */
export function wsgiFault(messages: Record<number, string>, fallback: string): (status: number, message?: string) => WsgiFault {
  // Statuses without a name of their own (406, 500, ...) are reported as computeFault.
  return (status, message) => ({ [wsgiFaultNames[status] ?? 'computeFault']: { code: status, message: message ?? messages[status] ?? fallback } });
}

/** What the request body holds at a validation issue's path, for messages that quote the value. */
export function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let current = data;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}
