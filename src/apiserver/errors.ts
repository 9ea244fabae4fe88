/**
 * Kubernetes Status errors. Every failure under /api*, /apis*, /openapi* is
 * answered with one of these, so clients can key on `reason` and `code`.
 */

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Expired'
  | 'Gone'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'Invalid'
  | 'TooManyRequests'
  | 'InternalError'
  | 'Timeout'
  | 'ServiceUnavailable';

export type CauseType =
  | 'FieldValueInvalid'
  | 'FieldValueTypeInvalid'
  | 'FieldValueRequired'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueDuplicate'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldManagerConflict'
  | 'NamespaceTerminating'
  | 'ResourceVersionTooLarge'
  | 'UnexpectedServerResponse';

/** On the wire the cause type is the `reason` key (Go's StatusCause.Type). */
export interface StatusCause {
  reason?: CauseType;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusObject {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string; resourceVersion?: string };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** A validation failure on one field, rendered as kube's field.Error. */
export class FieldError {
  constructor(
    readonly type: Exclude<CauseType, 'FieldManagerConflict' | 'NamespaceTerminating' | 'ResourceVersionTooLarge' | 'UnexpectedServerResponse'>,
    /** Dotted path with [i] indices and [key] map keys, e.g. spec.ports[0].name */
    readonly field: string,
    readonly detail: string,
    readonly value?: unknown,
    /** For FieldValueNotSupported: the allowed values. */
    readonly supported?: readonly string[],
  ) {}

  static required(field: string, detail = ''): FieldError {
    return new FieldError('FieldValueRequired', field, detail);
  }
  static invalid(field: string, value: unknown, detail: string): FieldError {
    return new FieldError('FieldValueInvalid', field, detail, value);
  }
  static forbidden(field: string, detail: string): FieldError {
    return new FieldError('FieldValueForbidden', field, detail);
  }
  static notSupported(field: string, value: unknown, supported: readonly string[]): FieldError {
    return new FieldError('FieldValueNotSupported', field, '', value, supported);
  }
  static duplicate(field: string, value: unknown): FieldError {
    return new FieldError('FieldValueDuplicate', field, '', value);
  }
  static tooLong(field: string, value: unknown, max: number): FieldError {
    return new FieldError('FieldValueTooLong', field, `may not be more than ${max} bytes`, value);
  }
  /**
   * A failed validation rule (CEL) at `field`, where `self` is the value the
   * rule judged. Since Kubernetes 1.35 the value is shown only for scalars.
   */
  static ruleFailure(field: string, self: unknown, message: string): FieldError {
    if (typeof self === 'object' || self === undefined) return new ValuelessInvalid(field, message);
    return FieldError.invalid(field, self, message);
  }
  static tooMany(field: string, actual: number, max: number): FieldError {
    return new FieldError('FieldValueTooMany', field, `must have at most ${max} items`, actual);
  }

  /** The text after "<field>: ", as kube's field.Error.ErrorBody formats it. */
  body(): string {
    const detail = this.detail;
    switch (this.type) {
      case 'FieldValueRequired':
        return detail ? `Required value: ${detail}` : 'Required value';
      case 'FieldValueForbidden':
        return detail ? `Forbidden: ${detail}` : 'Forbidden';
      case 'FieldValueNotSupported': {
        const allowed = (this.supported ?? []).map((s) => JSON.stringify(s)).join(', ');
        return `Unsupported value: ${formatValue(this.value)}${allowed ? `: supported values: ${allowed}` : ''}`;
      }
      case 'FieldValueDuplicate':
        return `Duplicate value: ${formatValue(this.value)}`;
      case 'FieldValueTooLong':
        return `Too long: ${detail}`;
      case 'FieldValueTooMany':
        return `Too many: ${formatValue(this.value)}: ${detail}`;
      case 'FieldValueInvalid':
      case 'FieldValueTypeInvalid':
        return `Invalid value: ${formatValue(this.value)}${detail ? `: ${detail}` : ''}`;
    }
  }

  toString(): string {
    return this.field ? `${this.field}: ${this.body()}` : this.body();
  }
}

class ValuelessInvalid extends FieldError {
  constructor(field: string, detail: string) {
    super('FieldValueInvalid', field, detail);
  }

  override body(): string {
    return `Invalid value: ${this.detail}`;
  }
}

function formatValue(value: unknown): string {
  if (value === undefined) return '""';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  const text = JSON.stringify(value);
  return text.length > 256 ? `${text.slice(0, 253)}...` : text;
}

/** An error that is answered as a Status object. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
    /** Extra response headers (e.g. Retry-After). */
    readonly headers: Record<string, string> = {},
    readonly statusMetadata: StatusObject['metadata'] = {},
  ) {
    super(message);
  }

  toStatus(): StatusObject {
    const status: StatusObject = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.statusMetadata,
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** A resource as named in messages: "<plural>.<group>" (or just plural for the core group). */
export interface ResourceRef {
  group: string;
  resource: string;
}

function qualified(ref: ResourceRef): string {
  return ref.group ? `${ref.resource}.${ref.group}` : ref.resource;
}

const closeConnection = { Connection: 'close' };

export const errors = {
  badRequest(message: string): ApiError {
    return new ApiError(400, 'BadRequest', message);
  },
  unauthorized(): ApiError {
    return new ApiError(401, 'Unauthorized', 'Unauthorized');
  },
  forbidden(message: string, details?: StatusDetails): ApiError {
    return new ApiError(403, 'Forbidden', message, details);
  },
  notFound(ref: ResourceRef, name: string): ApiError {
    return new ApiError(404, 'NotFound', `${qualified(ref)} "${name}" not found`, {
      name,
      group: ref.group,
      kind: ref.resource,
    });
  },
  pathNotFound(): ApiError {
    return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  },
  methodNotAllowed(ref: ResourceRef, verb: string): ApiError {
    return new ApiError(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${qualified(ref)}"`, {
      group: ref.group,
      kind: ref.resource,
    });
  },
  notAcceptable(message = 'only the following media types are accepted: application/json, application/yaml'): ApiError {
    return new ApiError(406, 'NotAcceptable', message);
  },
  alreadyExists(ref: ResourceRef, name: string): ApiError {
    return new ApiError(409, 'AlreadyExists', `${qualified(ref)} "${name}" already exists`, {
      name,
      group: ref.group,
      kind: ref.resource,
    });
  },
  conflict(ref: ResourceRef, name: string, why: string, causes?: StatusCause[]): ApiError {
    const details: StatusDetails = { name, group: ref.group, kind: ref.resource };
    if (causes) details.causes = causes;
    return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(ref)} "${name}": ${why}`, details);
  },
  modified(ref: ResourceRef, name: string): ApiError {
    return errors.conflict(ref, name, 'the object has been modified; please apply your changes to the latest version and try again');
  },
  expired(message: string, continueToken?: string): ApiError {
    return new ApiError(410, 'Expired', message, undefined, {}, continueToken ? { continue: continueToken } : {});
  },
  tooLarge(message = 'Request entity too large: limit is 3145728'): ApiError {
    return new ApiError(413, 'RequestEntityTooLarge', message);
  },
  /**
   * A body refused before its end: the connection closes, or Node would wait on it for the rest;
   * unless the refusing reader drains the rest itself (`drained`), as readBody does.
   */
  bodyTooLarge(limit: number, drained = false): ApiError {
    return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`, undefined, drained ? {} : closeConnection);
  },
  /** kube's --request-timeout answer; the body may still be arriving, so the connection closes. */
  requestTimeout(): ApiError {
    return new ApiError(
      504,
      'Timeout',
      'Timeout: request did not complete within requested timeout - context deadline exceeded',
      { retryAfterSeconds: 0 },
      closeConnection,
    );
  },
  unsupportedMediaType(message: string): ApiError {
    return new ApiError(415, 'UnsupportedMediaType', message);
  },
  /** 422 for kind K: message and details name the Kind, not the resource. */
  invalid(group: string, kind: string, name: string, fieldErrors: readonly FieldError[]): ApiError {
    const qualifiedKind = group ? `${kind}.${group}` : kind;
    const list = fieldErrors.map((e) => e.toString());
    const joined = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
    return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${joined}`, {
      name,
      group,
      kind,
      causes: fieldErrors.map((e) => ({ reason: e.type, message: e.body(), field: e.field })),
    });
  },
  tooManyRequests(retryAfterSeconds: number, message = 'Too many requests, please try again later.'): ApiError {
    return new ApiError(429, 'TooManyRequests', message, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  },
  internal(message: string): ApiError {
    return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, {
      causes: [{ message }],
    });
  },
  resourceVersionTooLarge(requested: number, current: number): ApiError {
    return new ApiError(
      504,
      'Timeout',
      `Too large resource version: ${requested}, current: ${current}`,
      { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
      { 'Retry-After': '1' },
    );
  },
};
