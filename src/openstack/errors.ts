/**
 * One error type for everything that can go wrong talking to OpenStack, so
 * callers branch on `kind` (requeue, treat 404 as gone, surface a terminal
 * condition) instead of on HTTP statuses and Node error codes.
 */
import { STATUS_CODES } from 'node:http';
import type { HttpMethod, ServiceType } from './transport.js';
import { isJsonObject } from '../storage/json.js';

export type OpenStackErrorKind =
  | 'NotFound'
  | 'Conflict'
  | 'Unauthorized'
  | 'Forbidden'
  | 'OverQuota'
  | 'RateLimited'
  | 'Transient'
  | 'BadRequest'
  | 'Unreachable'
  | 'TLS'
  | 'Config'
  | 'Unexpected';

export interface OpenStackErrorInit {
  kind: OpenStackErrorKind;
  /** The actionable explanation; the request context is prefixed to form `message`. */
  detail: string;
  service?: ServiceType;
  method?: HttpMethod;
  /** The path as the caller gave it, below the service endpoint; shown in the message. */
  path?: string;
  url?: string;
  status?: number;
  requestId?: string;
  retryAfterSeconds?: number;
  serviceMessage?: string;
  fault?: string;
  /** True when the request never reached the service (connection refused, DNS), so even a POST may be resent. */
  notSent?: boolean;
  cause?: unknown;
}

/** Project names read better in messages than catalog types (`neutron` rather than `network`). */
const projectNames: Record<ServiceType, string> = {
  identity: 'keystone',
  network: 'neutron',
  compute: 'nova',
  'load-balancer': 'octavia',
  image: 'glance',
  'block-storage': 'cinder',
};

export class OpenStackError extends Error {
  override readonly name = 'OpenStackError';
  readonly kind: OpenStackErrorKind;
  readonly detail: string;
  /** Absent for configuration errors found before any request was made (clouds.yaml). */
  readonly service?: ServiceType;
  readonly method?: HttpMethod;
  readonly path?: string;
  /** The request URL; never carries credentials (tokens travel in headers). */
  readonly url?: string;
  readonly status?: number;
  readonly requestId?: string;
  readonly retryAfterSeconds?: number;
  /** The message from the service's own error body, verbatim but on one line. */
  readonly serviceMessage?: string;
  /** The service's machine-readable error name: Neutron's `type` (e.g. `SecurityGroupInUse`), Nova's body key (`itemNotFound`), Keystone's `title`. */
  readonly fault?: string;
  readonly notSent: boolean;

  constructor(init: OpenStackErrorInit) {
    super(formatMessage(init), init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.detail = init.detail;
    this.service = init.service;
    this.method = init.method;
    this.path = init.path;
    this.url = init.url;
    this.status = init.status;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.serviceMessage = init.serviceMessage;
    this.fault = init.fault;
    this.notSent = init.notSent ?? false;
  }
}

function formatMessage(init: OpenStackErrorInit): string {
  let context = '';
  if (init.service !== undefined) {
    context = projectNames[init.service];
    if (init.method !== undefined && init.path !== undefined) context += ` ${init.method} ${init.path}`;
    context += ': ';
  }
  const suffix = init.requestId === undefined ? '' : ` [${init.requestId}]`;
  return `${context}${init.detail}${suffix}`;
}

/** A copy of `error` with some fields changed (a longer detail, another kind); the original stays reachable as the cause. */
export function derivedError(error: OpenStackError, changes: Partial<OpenStackErrorInit>): OpenStackError {
  return new OpenStackError({
    kind: error.kind,
    detail: error.detail,
    service: error.service,
    method: error.method,
    path: error.path,
    url: error.url,
    status: error.status,
    requestId: error.requestId,
    retryAfterSeconds: error.retryAfterSeconds,
    serviceMessage: error.serviceMessage,
    fault: error.fault,
    notSent: error.notSent,
    ...changes,
    cause: error,
  });
}

export function isNotFound(error: unknown): error is OpenStackError {
  return error instanceof OpenStackError && error.kind === 'NotFound';
}

/**
 * True when the same request may succeed later without anyone changing
 * anything: the reconciler should requeue (after `retryAfterSeconds` when
 * set) rather than report a terminal condition.
 */
export function isRetryable(error: unknown): error is OpenStackError {
  return error instanceof OpenStackError && (error.kind === 'Transient' || error.kind === 'RateLimited' || error.kind === 'Unreachable');
}

export interface ResponseErrorInput {
  service: ServiceType;
  method: HttpMethod;
  path: string;
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Wall-clock milliseconds, for Retry-After given as an HTTP date. */
  now: number;
}

/** Builds the error for a response whose status the caller did not expect. */
export function errorFromResponse(input: ResponseErrorInput): OpenStackError {
  const { status, headers } = input;
  const extracted = extractServiceError(input.body);
  const kind = kindForStatus(status, extracted);
  const retryAfterSeconds = parseRetryAfter(header(headers, 'retry-after'), input.now);
  const reason = STATUS_CODES[status];
  const statusText = `${status} ${reason ?? 'Unknown'}`;
  // Keystone's title only repeats the reason phrase.
  const fault = extracted.fault === reason ? undefined : extracted.fault;
  const faultText = kind === 'OverQuota' && fault !== 'OverQuota' ? 'OverQuota' : fault;
  let detail = faultText === undefined ? statusText : `${statusText} (${faultText})`;
  if (extracted.message !== undefined) detail += `: ${extracted.message}`;
  if (kind === 'RateLimited' && retryAfterSeconds !== undefined) detail += `; retry after ${retryAfterSeconds}s`;
  return new OpenStackError({
    kind,
    detail,
    service: input.service,
    method: input.method,
    path: input.path,
    url: input.url,
    status,
    requestId: requestIdOf(headers),
    retryAfterSeconds,
    serviceMessage: extracted.message,
    fault: extracted.fault,
  });
}

/** Quota refusals that do not say so in their status: Nova and Octavia answer 403, Cinder 413. */
const quotaMessage = /quota|limit exceeded|maximum number of .* exceeded/i;

function kindForStatus(status: number, extracted: ServiceErrorBody): OpenStackErrorKind {
  if (status === 429) return 'RateLimited';
  if (status === 413 || extracted.fault === 'OverQuota' || extracted.fault === 'overLimit') return 'OverQuota';
  if (status === 403 && quotaMessage.test(extracted.message ?? '')) return 'OverQuota';
  switch (status) {
    case 400:
    case 422:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 408:
      return 'Transient';
    case 409:
    case 412:
      return 'Conflict';
    // Not Implemented is a property of the cloud (e.g. an Octavia provider lacking a feature): repeating cannot help.
    case 501:
      return 'BadRequest';
  }
  return status >= 500 ? 'Transient' : 'Unexpected';
}

interface ServiceErrorBody {
  message?: string;
  fault?: string;
}

const maxMessageLength = 500;

/**
 * Pulls the human message out of the error body formats OpenStack services
 * use; bodies we cannot read still yield their text so nothing is hidden.
 */
export function extractServiceError(body: string): ServiceErrorBody {
  const text = body.trim();
  if (text === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { message: oneLine(htmlToText(text)) || undefined };
  }
  const found = fromJson(json);
  return {
    // Glance (webob) answers JSON whose message still carries HTML line breaks.
    message: found.message === undefined ? oneLine(text) : oneLine(found.message.replace(/<br\s*\/?>/gi, ' ')),
    fault: found.fault,
  };
}

function fromJson(json: unknown): ServiceErrorBody {
  if (!isJsonObject(json)) return {};
  const neutron = json.NeutronError;
  if (isJsonObject(neutron)) return { message: stringOf(neutron.message), fault: stringOf(neutron.type) };
  const keystone = json.error;
  if (isJsonObject(keystone)) return { message: stringOf(keystone.message), fault: stringOf(keystone.title) };
  if (typeof json.faultstring === 'string') return { message: json.faultstring };
  if (typeof json.message === 'string') return { message: json.message };
  // Placement-style `{"errors":[{"title","detail"}]}`, which Nova relays in some scheduling failures.
  if (Array.isArray(json.errors) && isJsonObject(json.errors[0])) {
    return { message: stringOf(json.errors[0].detail) ?? stringOf(json.errors[0].title), fault: stringOf(json.errors[0].code) };
  }
  // Nova and Cinder: `{"itemNotFound": {"message", "code"}}`, the key naming the fault.
  const keys = Object.keys(json);
  if (keys.length === 1 && isJsonObject(json[keys[0]])) {
    const inner = json[keys[0]] as Record<string, unknown>;
    if (typeof inner.message === 'string') return { message: inner.message, fault: keys[0] };
  }
  return {};
}

/** Glance and proxies answer with HTML whose title and heading only repeat the status line. */
function htmlToText(text: string): string {
  if (!/^\s*</.test(text)) return text;
  return text
    .replace(/<head[\s\S]*?<\/head>/gi, ' ')
    .replace(/<h1[\s\S]*?<\/h1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

function oneLine(text: string): string {
  const collapsed = text.replace(/\s+/g, ' ').trim();
  return collapsed.length > maxMessageLength ? `${collapsed.slice(0, maxMessageLength - 1)}…` : collapsed;
}

/** Retry-After is either delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** Nova sends both ids (identical); other services only the first. */
export function requestIdOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  return header(headers, 'x-openstack-request-id') ?? header(headers, 'x-compute-request-id');
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export interface NetworkErrorInput {
  service: ServiceType;
  method: HttpMethod;
  path: string;
  url: string;
  /** Node/got error code, e.g. ECONNREFUSED, ETIMEDOUT, DEPTH_ZERO_SELF_SIGNED_CERT. */
  code: string | undefined;
  /** For timeouts: the phase that ran out (got's `event`: lookup, connect, secureConnect, request, …). */
  timeoutPhase?: string;
  timeoutMs?: number;
  cause: unknown;
}

/** Failures in which the connection was never established, so no request reached the service. */
const unreachableCodes: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed temporarily',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
};

const certificateCodes: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unable to verify the certificate',
  UNABLE_TO_GET_ISSUER_CERT: 'issuer certificate unknown',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'issuer certificate unknown',
  CERT_UNTRUSTED: 'certificate untrusted',
  CERT_HAS_EXPIRED: 'certificate expired',
  CERT_NOT_YET_VALID: 'certificate not yet valid',
  CERT_SIGNATURE_FAILURE: 'certificate signature invalid',
  ERR_TLS_CERT_ALTNAME_INVALID: 'certificate does not match the host name',
};

const trustAdvice = 'set cacert in the identity secret, or verify: false in clouds.yaml';

/** Builds the error for a request that got no HTTP response at all. */
export function errorFromNetwork(input: NetworkErrorInput): OpenStackError {
  const base = { service: input.service, method: input.method, path: input.path, url: input.url, cause: input.cause };
  const code = input.code ?? '';
  const host = hostOf(input.url);
  if (code in certificateCodes) {
    return new OpenStackError({
      ...base,
      kind: 'TLS',
      detail: `TLS: certificate not trusted (${certificateCodes[code]}) for ${host}: ${trustAdvice}`,
      notSent: true,
    });
  }
  if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || code.startsWith('EPROTO')) {
    return new OpenStackError({ ...base, kind: 'TLS', detail: `TLS handshake with ${host} failed (${code})`, notSent: true });
  }
  if (code in unreachableCodes) {
    return new OpenStackError({ ...base, kind: 'Unreachable', detail: `cannot reach ${host}: ${unreachableCodes[code]} (${code})`, notSent: true });
  }
  if (input.timeoutPhase !== undefined) {
    const seconds = input.timeoutMs === undefined ? '' : ` within ${input.timeoutMs / 1000}s`;
    // Before the connection is up nothing was sent; afterwards the service may be working on it.
    if (input.timeoutPhase === 'lookup' || input.timeoutPhase === 'connect' || input.timeoutPhase === 'secureConnect') {
      return new OpenStackError({ ...base, kind: 'Unreachable', detail: `cannot reach ${host}: no connection${seconds}`, notSent: true });
    }
    return new OpenStackError({ ...base, kind: 'Transient', detail: `timed out: no response${seconds}` });
  }
  const reason = code === '' ? errorText(input.cause) : code;
  return new OpenStackError({ ...base, kind: 'Transient', detail: `connection to ${host} failed (${reason})` });
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
