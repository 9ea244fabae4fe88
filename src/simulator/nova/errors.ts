/**
 * Nova's error bodies and request validation. Nova wraps every error in a
 * fault named after the status (`{"itemNotFound":{"code":404,"message":...}}`)
 * and words schema failures as "Invalid input for field/attribute ...".
 */
import type { z } from 'zod';
import { valueAt, wsgiFault } from '../faults.js';
import { SimulatorError } from '../framework.js';

/** webob's explanations, which Nova shows when a handler gives none. */
const defaultMessages: Record<number, string> = {
  400: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  403: 'Access was denied to this resource.',
  404: 'The resource could not be found.',
  405: 'The method is not allowed for this resource.',
  409: 'There was a conflict when trying to complete your request.',
  413: 'The body of your request was too large for this server.',
  429: 'The user has sent too many requests in a given amount of time.',
  500: "Unexpected API Error. Please report this at http://bugs.launchpad.net/nova/ and attach the Nova API log if possible.\n<class 'Exception'>",
  503: 'The server is currently unavailable. Please try again at a later time.',
};

export const novaFault = wsgiFault(defaultMessages, 'Unexpected error.');

export const badRequest = (message: string) => new SimulatorError(400, message);
export const forbidden = (message: string) => new SimulatorError(403, message);
export const notFound = (message: string) => new SimulatorError(404, message);
export const conflict = (message: string) => new SimulatorError(409, message);
export const policyForbidden = (rule: string) => forbidden(`Policy doesn't allow ${rule} to be performed.`);

/** The conflict Nova reports when an action does not fit the server's vm_state. */
export const invalidState = (action: string, serverId: string, vmState: string) =>
  conflict(`Cannot '${action}' instance ${serverId} while it is in vm_state ${vmState}`);

const show = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

function describe(issue: z.core.$ZodIssue, data: unknown): string {
  const path = issue.path;
  if (issue.code === 'custom' && issue.params?.invalidName) return `An invalid 'name' value was provided. The name must be: ${issue.message}`;
  if ((issue.code === 'invalid_type' || issue.code === 'invalid_union') && path.length > 0 && valueAt(data, path) === undefined) {
    const key = String(path.at(-1));
    const parent = path.slice(0, -1);
    const message = `'${key}' is a required property`;
    return parent.length === 0 ? message : `Invalid input for field/attribute ${String(parent.at(-1))}. Value: ${show(valueAt(data, parent))}. ${message}`;
  }
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => `'${k}'`).join(', ');
    const message = `Additional properties are not allowed (${keys} ${issue.keys.length > 1 ? 'were' : 'was'} unexpected)`;
    return path.length === 0 ? message : `Invalid input for field/attribute ${String(path.at(-1))}. Value: ${show(valueAt(data, path))}. ${message}`;
  }
  const key = path.length === 0 ? 'body' : String(path.at(-1));
  return `Invalid input for field/attribute ${key}. Value: ${show(valueAt(data, path))}. ${issue.message}`;
}

/** A refinement failing the way Nova's name formats do (reported without the field prefix). */
export const invalidName = (reason: string) => ({ message: reason, params: { invalidName: true } });

/** Parses a request body, answering 400 in Nova's wording on the first problem. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  throw badRequest(describe(result.error.issues[0]!, body));
}
