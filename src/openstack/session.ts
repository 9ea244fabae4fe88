/**
 * The authenticated HTTP session to one cloud (one clouds.yaml entry): a
 * Keystone v3 token shared by all callers, endpoint selection from its
 * catalog, and bounded retries. Typed service calls go through
 * `request()` (the ServiceTransport seam) and never see tokens or URLs.
 *
 * Paths join onto the selected endpoint as follows (the typed calls rely on it):
 *   network, load-balancer, image, identity: unversioned root; paths carry
 *     the version (`/v2.0/networks`, `/v2/lbaas/loadbalancers`, `/v2/images`,
 *     `/v3/projects`). A version suffix in the catalog URL is stripped.
 *   compute: the versioned root (`…/v2.1`, `/v2.1` appended when the catalog
 *     has none); paths start below it (`/servers`).
 *   block-storage: `…/v3/{project_id}` (completed from the token's project
 *     when the catalog omits it); paths start below it (`/volumes`).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { Readable } from 'node:stream';
import https from 'node:https';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { Counter, Histogram, MetricsRegistry } from '../observability/metrics.js';
import type { CloudConfig, EndpointInterface, PasswordAuth, ApplicationCredentialAuth, UserRef, DomainRef } from './clouds.js';
import { derivedError, errorFromNetwork, errorFromResponse, OpenStackError, isRetryable, requestIdOf } from './errors.js';
import type { HttpMethod, ServiceRequest, ServiceResponse, ServiceTransport, ServiceType } from './transport.js';

/**
 * got, loaded with the first request: a replica that does not hold the reconciler's lease never
 * talks to a cloud, and loading got builds `Intl.ListFormat`s (in its `@sindresorhus/is`), which
 * faults in about 4 MB of ICU data that would stay resident for nothing.
 */
let gotLoading: Promise<typeof import('got')> | undefined;
const loadGot = () => (gotLoading ??= import('got'));

export interface SessionOptions {
  metrics?: MetricsRegistry;
  /** Receives one line per HTTP attempt; lines never contain tokens or passwords. */
  logger?: (line: string) => void;
  /** Per attempt, covering connect to last byte; default 30 s. */
  timeoutMs?: number;
  /**
   * The same for a request that is never repeated (a create): default 120 s. Giving up on one
   * while the service is still working leaves its outcome unknown, and the next lookup can miss
   * what it is about to create: a loaded Nova took 35 s to answer a boot, and a second boot on
   * the same port followed (a port cannot be bound twice, so one or both failed). Proxies in front of
   * OpenStack APIs cut at about a minute, so this waits out any answer that can still come.
   */
  unrepeatableTimeoutMs?: number;
  /** Retries after the first attempt, for requests that may be repeated; default 4. */
  retries?: number;
  /** Wall clock in ms, for token expiry and Retry-After dates. */
  now?: () => number;
  /** Waits between retries; tests replace it to run backoff instantly. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Runs before every attempt of a service request that changes the cloud (any method but GET and
   * HEAD; not token requests) and throws to refuse it: a replica that lost its leader lease stops here.
   */
  fence?: () => void;
}

/** What the current token is scoped to. */
export interface SessionScope {
  projectId: string;
  projectName?: string;
  userId: string;
  expiresAt: Date;
}

const backoffBaseMs = 250;
const backoffCapMs = 8_000;
/** A dead host should fail fast even when the request timeout is long. */
const connectTimeoutMs = 10_000;
/** Refresh this long before expiry, so no request starts with a token about to lapse. */
const refreshMarginMs = 60_000;

const packageSchema = z.object({ name: z.string(), version: z.string() });
const userAgent = `capo-apiserver/${packageVersion()}`;

/** Catalog types per service, newest first; Cinder has been registered under several over the years. */
const catalogTypes: Record<ServiceType, readonly string[]> = {
  identity: ['identity'],
  network: ['network'],
  compute: ['compute'],
  'load-balancer': ['load-balancer'],
  image: ['image'],
  'block-storage': ['block-storage', 'volumev3', 'volume'],
};

/** Service names in the `OpenStack-API-Version` header (Cinder's is `volume`). */
const microversionNames: Record<ServiceType, string> = {
  identity: 'identity',
  network: 'network',
  compute: 'compute',
  'load-balancer': 'load-balancer',
  image: 'image',
  'block-storage': 'volume',
};

const catalogEndpointSchema = z.object({
  interface: z.string(),
  region_id: z.string().nullish(),
  region: z.string().nullish(),
  url: z.string(),
});

const tokenBodySchema = z.object({
  token: z.object({
    expires_at: z.string(),
    issued_at: z.string().optional(),
    user: z.object({ id: z.string() }),
    project: z.object({ id: z.string(), name: z.string().optional() }),
    catalog: z.array(z.object({ type: z.string(), endpoints: z.array(catalogEndpointSchema) })).optional(),
  }),
});

type CatalogEndpoint = z.infer<typeof catalogEndpointSchema>;
type Catalog = { type: string; endpoints: CatalogEndpoint[] }[];

interface Token {
  value: string;
  scope: SessionScope;
  /** Local clock times (ms). */
  refreshAt: number;
  catalog: Catalog;
  endpoints: Map<ServiceType, string>;
}

interface Attempt {
  service: ServiceType;
  method: HttpMethod;
  /** As shown in logs and errors: the caller's path plus query. */
  path: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  stream?: Readable;
  contentType?: string;
  timeoutMs: number;
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  requestId?: string;
}

export class OpenStackSession implements ServiceTransport {
  private token?: Token;
  private pendingToken?: Promise<Token>;
  private readonly budgets = new Map<ServiceType, RetryBudget>();
  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  private readonly metrics?: SessionMetrics;
  private readonly timeoutMs: number;
  private readonly unrepeatableTimeoutMs: number;
  private readonly retries: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly log: (line: string) => void;
  private readonly fence: (() => void) | undefined;

  /** Reads the CA file named in clouds.yaml, if any; does not contact the cloud (the first request authenticates). */
  static async create(cloud: CloudConfig, options: SessionOptions = {}): Promise<OpenStackSession> {
    let ca = cloud.caCert;
    if (cloud.verify && ca === undefined && cloud.caCertPath !== undefined) {
      try {
        ca = await readFile(cloud.caCertPath, 'utf8');
      } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code ?? String(error);
        throw new OpenStackError({
          kind: 'Config',
          detail: `cloud "${cloud.name}": cacert file ${cloud.caCertPath} cannot be read (${reason}); put the CA bundle in the identity secret's cacert key instead`,
        });
      }
    }
    return new OpenStackSession(cloud, ca, options);
  }

  private constructor(
    private readonly cloud: CloudConfig,
    private readonly ca: string | undefined,
    options: SessionOptions,
  ) {
    this.metrics = options.metrics === undefined ? undefined : sessionMetrics(options.metrics);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.unrepeatableTimeoutMs = options.unrepeatableTimeoutMs ?? 120_000;
    this.retries = options.retries ?? 4;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.log = options.logger ?? (() => undefined);
    this.fence = options.fence;
  }

  async request<T>(service: ServiceType, request: ServiceRequest, schema: z.ZodType<T>): Promise<ServiceResponse<T>> {
    const token = await this.currentToken();
    try {
      return await this.send(service, request, schema, token);
    } catch (error) {
      // Tokens can be revoked or expire early (Keystone restart with new fernet keys): one fresh token, one more try.
      if (!(error instanceof OpenStackError) || error.kind !== 'Unauthorized') throw error;
      this.invalidate(token);
      const fresh = await this.currentToken();
      try {
        return await this.send(service, request, schema, fresh);
      } catch (second) {
        if (second instanceof OpenStackError && second.kind === 'Unauthorized') {
          throw annotated(second, ' (rejected again with a freshly issued token)');
        }
        throw second;
      }
    }
  }

  /** Authenticates if needed; tells what the credentials are scoped to. */
  async authenticate(): Promise<SessionScope> {
    return (await this.currentToken()).scope;
  }

  /** The base URL requests to `service` go to; throws OpenStackError kind 'Config' when the catalog has none. */
  async endpoint(service: ServiceType): Promise<string> {
    return this.endpointOf(await this.currentToken(), service);
  }

  /** Closes idle keep-alive connections; the session stays usable. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private async send<T>(service: ServiceType, request: ServiceRequest, schema: z.ZodType<T>, token: Token): Promise<ServiceResponse<T>> {
    const query = queryString(request.query);
    const relative = request.path.startsWith('/') ? request.path : `/${request.path}`;
    const headers: Record<string, string> = { 'X-Auth-Token': token.value };
    if (request.microversion !== undefined) {
      headers['OpenStack-API-Version'] = `${microversionNames[service]} ${request.microversion}`;
      if (service === 'compute') headers['X-OpenStack-Nova-API-Version'] = request.microversion;
    }
    const idempotent = request.stream === undefined && (request.idempotent ?? (request.method === 'GET' || request.method === 'HEAD'));
    const attempt: Attempt = {
      service,
      method: request.method,
      path: relative + query,
      url: this.endpointOf(token, service) + relative + query,
      headers,
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      ...(request.stream === undefined ? {} : { stream: request.stream }),
      ...(request.contentType === undefined ? {} : { contentType: request.contentType }),
      // An upload's limit is a stall, whatever the request.
      timeoutMs: idempotent || request.stream !== undefined ? this.timeoutMs : this.unrepeatableTimeoutMs,
    };
    const expect = request.expect;
    const accepts = (status: number) => (expect === undefined ? status >= 200 && status < 300 : expect.includes(status));
    // Every attempt of a request that changes the cloud passes the fence; token requests change nothing.
    const response = await this.withRetries(attempt, idempotent, accepts, request.method !== 'GET' && request.method !== 'HEAD');
    return {
      status: response.status,
      body: parseBody(attempt, response, schema),
      headers: response.headers,
      ...(response.requestId === undefined ? {} : { requestId: response.requestId }),
    };
  }

  private currentToken(): Promise<Token> {
    const token = this.token;
    if (token !== undefined && this.now() < token.refreshAt) return Promise.resolve(token);
    // Concurrent callers share one issue instead of each asking Keystone.
    if (this.pendingToken === undefined) {
      const pending = this.issueToken();
      this.pendingToken = pending;
      const settle = () => {
        if (this.pendingToken === pending) this.pendingToken = undefined;
      };
      pending.then((issued) => {
        this.token = issued;
        settle();
      }, settle);
    }
    return this.pendingToken;
  }

  /** Drops the token only if no one has replaced it since the caller used it. */
  private invalidate(token: Token): void {
    if (this.token === token) this.token = undefined;
  }

  private async issueToken(): Promise<Token> {
    this.metrics?.tokenIssues.inc();
    const attempt: Attempt = {
      service: 'identity',
      method: 'POST',
      path: '/v3/auth/tokens',
      url: `${this.cloud.authUrl}/auth/tokens`,
      headers: {},
      body: JSON.stringify({ auth: authRequest(this.cloud.auth) }),
      timeoutMs: this.timeoutMs,
    };
    const started = this.now();
    let response: RawResponse;
    try {
      // Issuing a token twice is harmless, so the POST may be repeated like a read.
      response = await this.withRetries(attempt, true, (status) => status === 201 || status === 200);
    } catch (error) {
      if (error instanceof OpenStackError && error.kind === 'Unauthorized') {
        throw annotated(error, `; check the credentials of cloud "${this.cloud.name}"`);
      }
      throw error;
    }
    const subject = response.headers['x-subject-token'];
    if (typeof subject !== 'string' || subject === '') {
      throw unexpected(attempt, response, 'the response has no X-Subject-Token header');
    }
    const body = parseBody(attempt, response, tokenBodySchema).token;
    const expiresAt = Date.parse(body.expires_at);
    const issuedAt = body.issued_at === undefined ? Number.NaN : Date.parse(body.issued_at);
    if (Number.isNaN(expiresAt)) throw unexpected(attempt, response, `token.expires_at "${body.expires_at}" is not a time`);
    // Measure the lifetime on Keystone's clock and count it on ours, so clock skew between the two does not matter.
    const lifetime = Number.isNaN(issuedAt) ? expiresAt - started : expiresAt - issuedAt;
    const localExpiry = started + lifetime;
    return {
      value: subject,
      scope: { projectId: body.project.id, projectName: body.project.name, userId: body.user.id, expiresAt: new Date(expiresAt) },
      refreshAt: localExpiry - Math.min(refreshMarginMs, lifetime / 2),
      catalog: body.catalog ?? [],
      endpoints: new Map(),
    };
  }

  private endpointOf(token: Token, service: ServiceType): string {
    let url = token.endpoints.get(service);
    if (url === undefined) {
      const selected = selectEndpoint(token.catalog, service, this.cloud.interface, this.cloud.region);
      url = serviceRoot(service, selected, token.scope.projectId);
      token.endpoints.set(service, url);
    }
    return url;
  }

  private budgetFor(service: ServiceType): RetryBudget {
    let budget = this.budgets.get(service);
    if (budget === undefined) {
      budget = new RetryBudget();
      this.budgets.set(service, budget);
    }
    return budget;
  }

  /** Sends `attempt` until accepted, a failure that must not be repeated, or the retries run out. */
  private async withRetries(attempt: Attempt, idempotent: boolean, accepts: (status: number) => boolean, fenced = false): Promise<RawResponse> {
    const budget = this.budgetFor(attempt.service);
    for (let tries = 0; ; tries++) {
      if (fenced) this.fence?.();
      let error: OpenStackError;
      try {
        const response = await this.exchange(attempt, tries);
        if (accepts(response.status)) {
          budget.refill();
          return response;
        }
        error = errorFromResponse({
          service: attempt.service,
          method: attempt.method,
          path: attempt.path,
          url: attempt.url,
          status: response.status,
          headers: response.headers,
          body: response.body,
          now: this.now(),
        });
      } catch (thrown) {
        if (!(thrown instanceof OpenStackError)) throw thrown;
        error = thrown;
      }
      if (!isRetryable(error)) budget.refill();
      // A stream has been read (at least in part): it cannot be sent again.
      const delay = attempt.stream === undefined ? this.retryDelay(error, idempotent, tries) : undefined;
      if (delay === undefined || !budget.take()) throw error;
      await this.sleep(delay);
    }
  }

  private retryDelay(error: OpenStackError, idempotent: boolean, tries: number): number | undefined {
    if (tries >= this.retries || !isRetryable(error)) return undefined;
    // A POST that reached the service may have created something; repeating it could create a second one.
    if (!idempotent && !error.notSent) return undefined;
    const backoff = Math.random() * Math.min(backoffCapMs, backoffBaseMs * 2 ** tries);
    if (error.retryAfterSeconds === undefined) return backoff;
    const asked = error.retryAfterSeconds * 1000;
    // Waiting longer would hold a reconcile worker; the caller requeues after retryAfterSeconds instead.
    return asked > backoffCapMs ? undefined : Math.max(asked, backoff);
  }

  /** One HTTP exchange; any HTTP status is a response, only failures to get one throw. */
  private async exchange(attempt: Attempt, tries: number): Promise<RawResponse> {
    const started = performance.now();
    const headers: Record<string, string> = { 'User-Agent': userAgent, Accept: 'application/json', ...attempt.headers };
    if (attempt.body !== undefined) headers['Content-Type'] = attempt.contentType ?? 'application/json';
    if (attempt.stream !== undefined) headers['Content-Type'] = 'application/octet-stream';
    let outcome = 'error';
    let requestId: string | undefined;
    const client = await loadGot();
    try {
      const response = await client.got(attempt.url, {
        method: attempt.method,
        headers,
        ...(attempt.body === undefined ? {} : { body: attempt.body }),
        ...(attempt.stream === undefined ? {} : { body: attempt.stream }),
        responseType: 'text',
        throwHttpErrors: false,
        followRedirect: false,
        retry: { limit: 0 },
        timeout: {
          connect: Math.min(connectTimeoutMs, attempt.timeoutMs),
          secureConnect: Math.min(connectTimeoutMs, attempt.timeoutMs),
          // An upload takes as long as its data; only a stall ends it.
          ...(attempt.stream === undefined ? { request: attempt.timeoutMs } : { socket: attempt.timeoutMs }),
        },
        agent: this.agents,
        https: { rejectUnauthorized: this.cloud.verify, ...(this.ca === undefined ? {} : { certificateAuthority: this.ca }) },
      });
      outcome = String(response.statusCode);
      requestId = requestIdOf(response.headers);
      return { status: response.statusCode, headers: response.headers, body: response.body, ...(requestId === undefined ? {} : { requestId }) };
    } catch (thrown) {
      const error = networkError(attempt, thrown, client);
      outcome = error.kind;
      throw error;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      this.metrics?.requests.inc({ service: attempt.service, method: attempt.method, status: outcome });
      this.metrics?.duration.observe({ service: attempt.service, method: attempt.method }, seconds);
      const retry = tries === 0 ? '' : ` retry=${tries}`;
      this.log(
        `openstack ${attempt.service} ${attempt.method} ${attempt.path} ${outcome} ${Math.round(seconds * 1000)}ms${requestId === undefined ? '' : ` ${requestId}`}${retry}`,
      );
    }
  }
}

/**
 * Bounds how much an outage multiplies traffic: each retry spends a token,
 * each answered request earns a tenth of one back. A burst of failures stops
 * retrying after `capacity` retries; then at most one retry per ten answers.
 */
class RetryBudget {
  private tokens: number;

  constructor(private readonly capacity = 10) {
    this.tokens = capacity;
  }

  take(): boolean {
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  refill(): void {
    this.tokens = Math.min(this.capacity, this.tokens + 0.1);
  }
}

function networkError(attempt: Attempt, thrown: unknown, { RequestError, TimeoutError }: typeof import('got')): OpenStackError {
  const base = { service: attempt.service, method: attempt.method, path: attempt.path, url: attempt.url, cause: thrown };
  if (thrown instanceof TimeoutError) {
    const phase = thrown.event;
    const limit = phase === 'request' ? attempt.timeoutMs : Math.min(connectTimeoutMs, attempt.timeoutMs);
    return errorFromNetwork({ ...base, code: thrown.code, timeoutPhase: phase, timeoutMs: limit });
  }
  if (thrown instanceof RequestError) return errorFromNetwork({ ...base, code: thrown.code });
  return errorFromNetwork({ ...base, code: undefined });
}

function authRequest(auth: PasswordAuth | ApplicationCredentialAuth): unknown {
  if (auth.method === 'application_credential') {
    const credential = 'id' in auth.credential ? { id: auth.credential.id } : { name: auth.credential.name, user: userBody(auth.credential.user) };
    // An application credential is bound to its project; asking for a scope is an error in Keystone.
    return { identity: { methods: ['application_credential'], application_credential: { ...credential, secret: auth.secret } } };
  }
  const project = 'id' in auth.project ? { id: auth.project.id } : { name: auth.project.name, domain: domainBody(auth.project.domain) };
  return {
    identity: { methods: ['password'], password: { user: { ...userBody(auth.user), password: auth.password } } },
    scope: { project },
  };
}

function userBody(user: UserRef): Record<string, unknown> {
  return 'id' in user ? { id: user.id } : { name: user.name, domain: domainBody(user.domain) };
}

function domainBody(domain: DomainRef): Record<string, string> {
  return 'id' in domain ? { id: domain.id } : { name: domain.name };
}

function selectEndpoint(catalog: Catalog, service: ServiceType, endpointInterface: EndpointInterface, region: string | undefined): string {
  const offered: CatalogEndpoint[] = [];
  for (const type of catalogTypes[service]) {
    const endpoints = catalog.filter((entry) => entry.type === type).flatMap((entry) => entry.endpoints);
    offered.push(...endpoints);
    const candidates = endpoints.filter((endpoint) => endpoint.interface === endpointInterface);
    if (region !== undefined) {
      const inRegion = candidates.find((endpoint) => regionOf(endpoint) === region);
      if (inRegion !== undefined) return inRegion.url;
      continue;
    }
    const regions = distinct(candidates.map(regionOf));
    if (regions.length > 1) {
      throw configError(
        service,
        `the catalog offers ${service} in several regions (${regions.join(', ')}); set region_name in clouds.yaml or the identityRef region`,
      );
    }
    if (candidates.length > 0) return candidates[0].url;
  }
  const where = region === undefined ? '' : ` in region ${region}`;
  let detail = `the catalog has no ${service} endpoint with interface ${endpointInterface}${where}`;
  if (offered.length > 0) {
    const elsewhere = offered.map((endpoint) => `${endpoint.interface}@${regionOf(endpoint) || '(no region)'}`);
    detail += `; it offers ${distinct(elsewhere).join(', ')}`;
  } else {
    detail += ` (the cloud does not run it, or the user has no role in the project)`;
  }
  throw configError(service, detail);
}

function regionOf(endpoint: CatalogEndpoint): string {
  return endpoint.region_id ?? endpoint.region ?? '';
}

/** See the module comment for how each service's paths join onto the endpoint. */
function serviceRoot(service: ServiceType, catalogUrl: string, projectId: string): string {
  const url = catalogUrl.replace(/\/+$/, '').replace(/%\(project_id\)s|\$\(project_id\)s|\{project_id\}/g, projectId);
  switch (service) {
    case 'compute':
      return /\/v2(\.1)?(\/[^/]+)?$/.test(url) ? url : `${url}/v2.1`;
    case 'block-storage':
      if (/\/v3\/[^/]+$/.test(url)) return url;
      return /\/v3$/.test(url) ? `${url}/${projectId}` : `${url}/v3/${projectId}`;
    default:
      return url.replace(/\/v\d+(\.\d+)?$/, '');
  }
}

function queryString(query: ServiceRequest['query']): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (typeof value === 'object') {
      for (const item of value) params.append(key, item);
    } else {
      params.append(key, String(value));
    }
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

function parseBody<T>(attempt: Attempt, response: RawResponse, schema: z.ZodType<T>): T {
  let json: unknown;
  if (response.body.trim() !== '') {
    try {
      json = JSON.parse(response.body);
    } catch {
      throw unexpected(attempt, response, 'the body is not JSON');
    }
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.slice(0, 3).map((issue) => `${issue.path.length === 0 ? '(body)' : issue.path.map(String).join('.')}: ${issue.message}`);
  const more = parsed.error.issues.length > 3 ? ` (+${parsed.error.issues.length - 3} more)` : '';
  throw unexpected(attempt, response, `the response does not have the expected shape: ${issues.join('; ')}${more}`);
}

function unexpected(attempt: Attempt, response: RawResponse, reason: string): OpenStackError {
  return new OpenStackError({
    kind: 'Unexpected',
    detail: `${response.status}${http.STATUS_CODES[response.status] ? ` ${http.STATUS_CODES[response.status]}` : ''} but ${reason}`,
    service: attempt.service,
    method: attempt.method,
    path: attempt.path,
    url: attempt.url,
    status: response.status,
    requestId: response.requestId,
  });
}

function configError(service: ServiceType, detail: string): OpenStackError {
  return new OpenStackError({ kind: 'Config', detail, service });
}

/** The same error with more explanation; the original stays reachable as the cause. */
function annotated(error: OpenStackError, note: string): OpenStackError {
  return derivedError(error, { detail: error.detail + note });
}

function distinct(values: string[]): string[] {
  return [...new Set(values)];
}

interface SessionMetrics {
  requests: Counter;
  duration: Histogram;
  tokenIssues: Counter;
}

/** Sessions come and go with identities but share one registry, which refuses a family registered twice. */
const metricsByRegistry = new WeakMap<MetricsRegistry, SessionMetrics>();

function sessionMetrics(registry: MetricsRegistry): SessionMetrics {
  let metrics = metricsByRegistry.get(registry);
  if (metrics === undefined) {
    metrics = {
      requests: registry.counter(
        'openstack_api_requests_total',
        'HTTP requests to OpenStack APIs by service, method and status code (or error kind when there was no response); retries count.',
        ['service', 'method', 'status'],
      ),
      duration: registry.histogram(
        'openstack_api_request_duration_seconds',
        'Duration of HTTP requests to OpenStack APIs, per attempt.',
        ['service', 'method'],
        [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      ),
      tokenIssues: registry.counter('openstack_token_issues_total', 'Keystone tokens requested (POST /v3/auth/tokens).'),
    };
    metricsByRegistry.set(registry, metrics);
  }
  return metrics;
}

/** Found by walking up from this module, which runs from src/ under vitest and from dist/src/ in production. */
function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    let text: string | undefined;
    try {
      text = readFileSync(path.join(dir, 'package.json'), 'utf8');
    } catch {
      // No package.json at this level; keep climbing.
    }
    if (text !== undefined) {
      const pkg = packageSchema.safeParse(JSON.parse(text));
      if (pkg.success && pkg.data.name === 'capo-apiserver') return pkg.data.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}
