/**
 * Neutron's faults: `{"NeutronError":{"type","message","detail"}}`, where
 * `type` is the Python exception class name and the status comes from its
 * base class (NotFound 404, InUse/Conflict 409, BadRequest 400, ...). The
 * messages are Neutron's own templates, since clients and tests match them.
 */
import { SimulatorError } from '../framework.js';

export class NeutronError extends SimulatorError {
  constructor(
    status: number,
    readonly type: string,
    message: string,
  ) {
    super(status, message, type);
  }

  body() {
    return { NeutronError: { type: this.type, message: this.message, detail: '' } };
  }
}

const statusTypes: Record<number, string> = {
  400: 'HTTPBadRequest',
  401: 'HTTPUnauthorized',
  403: 'HTTPForbidden',
  404: 'HTTPNotFound',
  405: 'HTTPMethodNotAllowed',
  409: 'HTTPConflict',
  413: 'HTTPRequestEntityTooLarge',
  415: 'HTTPUnsupportedMediaType',
  429: 'HTTPTooManyRequests',
  500: 'HTTPInternalServerError',
  501: 'HTTPNotImplemented',
  503: 'HTTPServiceUnavailable',
};

const statusMessages: Record<number, string> = {
  400: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  403: 'Access was denied to this resource.',
  404: 'The resource could not be found.',
  405: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  409: 'There was a conflict when trying to complete your request.',
  429: 'Too many requests.',
  500: 'Request Failed: internal server error while processing your request.',
  503: 'The server is currently unavailable. Please try again at a later time.',
};

/** A webob HTTP error as Neutron's fault translation renders it. */
export function formatNeutronError(status: number, message?: string) {
  return {
    NeutronError: {
      type: statusTypes[status] ?? 'HTTPError',
      message: message ?? statusMessages[status] ?? 'An unknown exception occurred.',
      detail: '',
    },
  };
}

export const badRequest = (message: string) => new NeutronError(400, 'HTTPBadRequest', message);
export const httpNotFound = (message = 'The resource could not be found.') => new NeutronError(404, 'HTTPNotFound', message);
export const invalidInput = (message: string) => new NeutronError(400, 'InvalidInput', `Invalid input for operation: ${message}.`);
/** neutron_lib BadRequest: "Bad <resource> request: <msg>." */
export const badResourceRequest = (resource: string, message: string) => new NeutronError(400, 'BadRequest', `Bad ${resource} request: ${message}.`);
export const policyDenied = (rule: string) => new NeutronError(403, 'PolicyNotAuthorized', `${rule} is disallowed by policy`);

export const notFound = {
  network: (id: string) => new NeutronError(404, 'NetworkNotFound', `Network ${id} could not be found.`),
  subnet: (id: string) => new NeutronError(404, 'SubnetNotFound', `Subnet ${id} could not be found.`),
  port: (id: string) => new NeutronError(404, 'PortNotFound', `Port ${id} could not be found.`),
  router: (id: string) => new NeutronError(404, 'RouterNotFound', `Router ${id} could not be found`),
  securityGroup: (id: string) => new NeutronError(404, 'SecurityGroupNotFound', `Security group ${id} does not exist`),
  securityGroupRule: (id: string) => new NeutronError(404, 'SecurityGroupRuleNotFound', `Security group rule ${id} does not exist`),
  floatingIp: (id: string) => new NeutronError(404, 'FloatingIPNotFound', `Floating IP ${id} could not be found`),
  trunk: (id: string) => new NeutronError(404, 'TrunkNotFound', `Trunk ${id} could not be found.`),
};

export const overQuota = (resource: string) => new NeutronError(409, 'OverQuota', `Quota exceeded for resources: ['${resource}'].`);

/** Python's repr of a list of strings, as Neutron interpolates lists into messages. */
export const pyList = (items: readonly (string | number | null)[]) =>
  `[${items.map((i) => (i === null ? 'None' : typeof i === 'number' ? String(i) : `'${i}'`)).join(', ')}]`;

/** Python's `%s` of a request value. */
export function pyStr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `'${k}': ${pyRepr(v)}`)
      .join(', ')}}`;
  }
  return String(value);
}

const pyRepr = (value: unknown): string => (typeof value === 'string' ? `'${value}'` : pyStr(value));
