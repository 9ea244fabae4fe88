/**
 * Octavia's error bodies (wsme: faultcode/faultstring/debuginfo) and its
 * validation wording, plus the API exceptions the simulator raises.
 */
import type { z } from 'zod';
import { valueAt } from '../faults.js';
import { SimulatorError } from '../framework.js';

const defaultMessages: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Policy does not allow this request to be performed.',
  404: 'The resource could not be found.',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Request Entity Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function octaviaFault(status: number, message?: string) {
  return { faultcode: status >= 500 ? 'Server' : 'Client', faultstring: message ?? defaultMessages[status] ?? 'Error', debuginfo: null };
}

/** Octavia's names of its data models (`data_models.X._name()`), used in messages. */
export const resourceNames = {
  loadbalancer: 'Load Balancer',
  listener: 'Listener',
  pool: 'Pool',
  member: 'Member',
  healthmonitor: 'Health Monitor',
} as const;

export const notFound = (resource: string, id: string) => new SimulatorError(404, `${resource} ${id} not found.`);
/** InvalidSubresource: a referenced object (subnet, port, network) that does not exist is a 400. */
export const invalidSubresource = (resource: string, id: string) => new SimulatorError(400, `${resource} ${id} not found.`);
export const validationFailure = (detail: string) => new SimulatorError(400, `Validation failure: ${detail}`);
export const immutable = (resource: string, id: string) => new SimulatorError(409, `${resource} ${id} is immutable and cannot be updated.`);
export const policyForbidden = () => new SimulatorError(403, defaultMessages[403]!);

const show = (value: unknown) => (value === undefined ? 'None' : typeof value === 'string' ? value : JSON.stringify(value));

/** Parses a body the way wsme reports problems: the field, its value, and what is wrong. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    throw new SimulatorError(400, `Unknown attribute for argument ${String(issue.path.at(-1) ?? 'body')}: ${issue.keys.join(', ')}`);
  }
  const field = String(issue.path.at(-1) ?? 'body');
  const value = valueAt(body, issue.path);
  const reason = value === undefined ? 'Mandatory field missing.' : issue.message;
  throw new SimulatorError(400, `Invalid input for field/attribute ${field}. Value: '${show(value)}'. ${reason}`);
}
