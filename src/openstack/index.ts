/** The OpenStack client: clouds.yaml, the authenticated session, its error type, and typed calls per service. */
export { loadCloud } from './clouds.js';
export type { CloudConfig } from './clouds.js';
export { OpenStackError, derivedError, isNotFound, isRetryable } from './errors.js';
export type { OpenStackErrorKind } from './errors.js';
export { OpenStackSession } from './session.js';
export type { SessionOptions, SessionScope } from './session.js';
export type { HttpMethod, ServiceRequest, ServiceResponse, ServiceTransport, ServiceType } from './transport.js';
export * from './services/index.js';
