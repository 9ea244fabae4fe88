/**
 * The HTTPS API server: authentication, authorization, routing and request
 * metrics around the discovery, OpenAPI and resource handlers.
 */
import { randomUUID } from 'node:crypto';
import http2 from 'node:http2';
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import express from 'express';
import type { Stores } from './store/stores.js';
import { answerClientErrors } from './http/client-errors.js';
import { http2HeaderOptions } from './http/header-limits.js';
import { http2App } from './http/http2-express.js';
import { forbiddenMessage, type Authorizer, type RequestAttributes } from './auth/authorizer.js';
import { acceptedCaPem, createRequestAuthenticator, type AuthenticationConfig, type RequestAuthenticator } from './auth/authenticator.js';
import { anonymousUser, type UserInfo } from './auth/user.js';
import { type ApiError, errors } from './errors.js';
import { DiscoveryHandler } from './handlers/discovery.js';
import { OpenApiHandler } from './handlers/openapi.js';
import { ResourceHandler } from './handlers/resource.js';
import { parseRequestInfo, type RequestInfo } from './http/request-info.js';
import { defaultRequestLimits, InFlightLimiter, startDeadline, type Pool, type RequestLimits } from './http/request-limits.js';
import { sendError, sendJson } from './http/respond.js';
import { type HealthChecks, healthContentType, type HealthEndpoint } from '../observability/health.js';
import { fallbackLogger, type Logger } from '../observability/log.js';
import type { MetricsRegistry } from '../observability/metrics.js';
import type { Registry } from './registry/registry.js';
import { parseFieldSelector } from './selectors/fields.js';

export interface ApiServerOptions {
  host: string;
  port: number;
  tls: { key: string; cert: string };
  /** Who may authenticate how: client CAs, the front proxy, bearer tokens. */
  authentication: AuthenticationConfig;
  registry: Registry;
  /** The one store of each kind of `registry`, shared with the rest of the process. */
  stores: Stores;
  authorizer: Authorizer;
  metrics: MetricsRegistry;
  /** Request lines at debug level (-v 1), with the Audit-Id each response carries. */
  logger?: Logger;
  health: HealthChecks;
  bookmarkIntervalMs?: number;
  /** In-flight slots, per-user shares, watches per user and the request deadline (defaultRequestLimits otherwise). */
  limits?: Partial<RequestLimits>;
  /**
   * Mount further routers (GraphQL, admin API) before the Kubernetes routes;
   * they authenticate and authorize with the server's own `auth`. A function
   * they return is called once the server has closed, to release what they hold.
   */
  extraRoutes?: (router: express.Router, auth: ExtraRoutesAuth) => (() => void) | undefined;
}

/**
 * The user of a live session a request names (the dashboard's cookie), or undefined. It decides only
 * whose in-flight share a request without other credentials takes; the routes that own the session
 * still authenticate and authorize the request themselves.
 */
export type SessionUserLookup = (request: IncomingMessage) => UserInfo | undefined;

export interface ExtraRoutesAuth {
  authenticate: RequestAuthenticator;
  authorizer: Authorizer;
  /** Counts requests that bring a session of the routes' own against that session's user, not the anonymous share (one lookup, the last given). */
  countSessionsBy(lookup: SessionUserLookup): void;
}

export interface RunningApiServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export const serverVersion = {
  major: '1',
  minor: '33',
  gitVersion: 'v1.33.0-capo-apiserver',
  gitCommit: 'unknown',
  gitTreeState: 'clean',
  buildDate: '1970-01-01T00:00:00Z',
  goVersion: `node${process.versions.node}`,
  compiler: 'tsc',
  platform: `${process.platform}/${process.arch}`,
};

export async function startApiServer(options: ApiServerOptions): Promise<RunningApiServer> {
  const { registry, stores, authorizer, metrics, health } = options;
  const limits: RequestLimits = { ...defaultRequestLimits, ...options.limits };
  const authenticate = createRequestAuthenticator(options.authentication);
  const log = options.logger ?? fallbackLogger;
  const requestsTotal = metrics.counter(
    'apiserver_request_total',
    'Counter of apiserver requests broken out by verb, group, version, resource, subresource, scope and HTTP code.',
    ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'code'],
  );
  const requestDuration = metrics.histogram(
    'apiserver_request_duration_seconds',
    'Response latency distribution in seconds for each verb, group, version, resource and subresource.',
    ['verb', 'group', 'version', 'resource', 'subresource'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  );
  const registeredWatchers = metrics.gauge('apiserver_registered_watchers', 'Number of currently registered watchers.', []);

  const discovery = new DiscoveryHandler(registry);
  const openapi = new OpenApiHandler(registry);
  const resources = new ResourceHandler(registry, stores, {
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    maxWatchBufferBytes: 64 * 1024 * 1024,
    onWatchCountChange: (delta) => registeredWatchers.inc({}, delta),
  });

  // One router, served to each protocol by an express app of its own (see http2-express.ts).
  const app = express.Router();

  for (const endpoint of ['livez', 'readyz', 'healthz'] as HealthEndpoint[]) {
    app.get([`/${endpoint}`, `/${endpoint}/:check`], async (request, response) => {
      const query = new URL(request.originalUrl, 'https://localhost').searchParams;
      const check = request.params.check;
      const result = await health.evaluate(endpoint, typeof check === 'string' ? check : undefined, query);
      response.set({ 'Content-Type': healthContentType, 'X-Content-Type-Options': 'nosniff' }).status(result.status).send(result.body);
    });
  }

  const limiter = new InFlightLimiter(limits);
  let sessionUserOf: SessionUserLookup = () => undefined;

  // Every route past the health checks: who asks, a fair share of the in-flight slots, a deadline
  // and one metrics sample. A failed authentication is kept, not answered: GraphQL answers it in
  // its own error shape, the Kubernetes routes with a Status.
  app.use(async (request: IncomingMessage, response: ServerResponse, next: () => void) => {
    const started = process.hrtime.bigint();
    const requestId = auditId(request.headers['audit-id']);
    response.setHeader('Audit-Id', requestId);
    const url = new URL(request.url ?? '/', 'https://localhost');
    const authentication = await authenticate(request).then(
      (user): Authentication => ({ user }),
      (error: unknown): Authentication => ({ error }),
    );
    const user = authentication.user ?? anonymousUser;
    // As kube-apiserver since CVE-2023-44487 (rapid reset): a caller refused as unknown may speak HTTP/2 but not keep
    // its connection. Only when refused: the dashboard's page and its cookie-signed calls arrive without credentials here.
    if (user === anonymousUser && request instanceof http2.Http2ServerRequest) {
      const { session } = request.stream;
      response.once('finish', () => {
        if (response.statusCode === 401) session?.close();
      });
    }
    const parsed = parseRequestInfoSafely(request.method ?? 'GET', url);
    const info = 'error' in parsed ? { kind: 'nonResource' as const, verb: (request.method ?? 'GET').toLowerCase(), path: url.pathname } : parsed;
    // A server-sent event stream (the dashboard's) is long-running like a watch, and counts as one.
    const pool: Pool =
      info.verb === 'watch' || request.headers.accept === 'text/event-stream'
        ? 'watch'
        : mutatingMethods.has(request.method ?? 'GET')
          ? 'mutating'
          : 'readOnly';
    response.once('close', () => {
      const labels = metricLabels(info, user, registry);
      requestsTotal.inc({ ...labels, scope: user === anonymousUser ? '' : scopeOf(info), code: String(response.statusCode) });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (pool !== 'watch') requestDuration.observe(labels, seconds);
      const target =
        info.kind === 'resource' ? { resource: info.resource, subresource: info.subresource, namespace: info.namespace, name: info.name } : { path: info.path };
      log.debug({ requestId, verb: info.verb, ...target, user: user.name, code: response.statusCode, durationMs: Math.round(seconds * 1000) }, 'request');
    });
    // A signed-in dashboard browser sends no credentials the server checks: its session names whose share it takes.
    const shareHolder = user === anonymousUser ? (sessionUserOf(request) ?? user) : user;
    let release: () => void;
    try {
      release = limiter.acquire(pool, shareHolder.name);
    } catch (error) {
      sendError(response, error);
      return;
    }
    const stopDeadline = pool === 'watch' ? () => {} : startDeadline(response, limits.requestTimeoutMs);
    // The slot is free once the whole answer is handed to the socket ('prefinish'), as kube frees it when its
    // handler returns. 'close' comes only after the socket's write callback, a loop turn or more later, by
    // which time a client on another connection may already have sent its next request: counted twice, a
    // client using exactly its share would be refused. 'close' still frees what an aborted request held.
    // HTTP/2's compatibility response has no 'prefinish'; its 'finish' is when the stream is handed the last frame.
    response.once('prefinish', release);
    response.once('finish', release);
    response.once('close', () => {
      release();
      stopDeadline();
    });
    (request as Admitted)[admission] = { authentication, parsed, url };
    next();
  });

  const releaseExtraRoutes = options.extraRoutes?.(app, {
    // Authenticated once above; the routes read that outcome instead of verifying again.
    authenticate: async (request) => {
      const known = (request as Admitted)[admission]?.authentication;
      if (!known) return authenticate(request);
      if (known.error !== undefined) throw known.error;
      return known.user!;
    },
    authorizer,
    countSessionsBy: (lookup) => {
      sessionUserOf = lookup;
    },
  });

  app.use(async (request: IncomingMessage, response: ServerResponse) => {
    const { authentication, parsed, url } = (request as Admitted)[admission]!;
    try {
      if (authentication.error !== undefined) throw authentication.error;
      const user = authentication.user!;
      // A path that cannot be decoded is a bad request, but only a caller we know may learn that.
      if ('error' in parsed) throw user === anonymousUser ? errors.unauthorized() : parsed.error;
      const info = parsed;
      const attributes: RequestAttributes =
        info.kind === 'resource'
          ? {
              user,
              resource: {
                verb: info.verb,
                group: info.group,
                version: info.version,
                resource: info.resource,
                subresource: info.subresource,
                namespace: info.namespace,
                name: info.name ?? nameFromFieldSelector(url.searchParams),
              },
            }
          : { user, nonResource: { verb: info.verb, path: info.path } };
      const decision = await authorizer.authorize(attributes);
      if (!decision.allowed) {
        if (user === anonymousUser) throw errors.unauthorized();
        throw errors.forbidden(forbiddenMessage(attributes), forbiddenDetails(info));
      }
      await route(request, response, info, user, url);
    } catch (error) {
      sendError(response, error);
    }
  });

  async function route(request: IncomingMessage, response: ServerResponse, info: RequestInfo, user: UserInfo, url: URL): Promise<void> {
    if (info.kind === 'resource') return resources.handle(request, response, info, user, url.searchParams);
    const method = request.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') throw errors.methodNotAllowed({ group: '', resource: info.path }, info.verb);
    if (discovery.handle(request, response, url.pathname)) return;
    if (openapi.handle(request, response, url.pathname, url.searchParams)) return;
    if (url.pathname === '/version' || url.pathname === '/version/') return sendJson(response, 200, serverVersion);
    if (url.pathname === '/metrics') {
      const { body, contentType } = await metrics.scrape();
      response.writeHead(200, { 'Content-Type': contentType });
      response.end(body);
      return;
    }
    throw errors.pathNotFound();
  }

  const [forHttp1, forHttp2] = [express(), http2App()];
  for (const protocolApp of [forHttp1, forHttp2]) {
    protocolApp.disable('x-powered-by');
    protocolApp.disable('etag');
    protocolApp.use(app);
  }
  const server = http2.createSecureServer(
    {
      key: options.tls.key,
      cert: options.tls.cert,
      ca: acceptedCaPem(options.authentication.current()),
      requestCert: true,
      rejectUnauthorized: false,
      allowHTTP1: true,
      // Each write goes out at once, as from Go's servers and node:http's (both default to it): with Nagle's algorithm, a
      // small write waits for the ACK of the one before, which the client may delay by up to 40 ms (a watch event, a list's tail).
      noDelay: true,
      // kube-apiserver's limit since CVE-2023-44487, and Go's client default: a client past it opens another connection.
      settings: { maxConcurrentStreams: http2StreamsPerConnection, ...http2HeaderOptions.settings },
      maxHeaderListPairs: http2HeaderOptions.maxHeaderListPairs,
      maxSessionMemory: http2SessionMemoryMb,
    },
    // The handlers are written against node:http's types; HTTP/2's compatibility objects offer what they use.
    (request, response) =>
      (request instanceof http2.Http2ServerRequest ? forHttp2 : forHttp1)(request as unknown as IncomingMessage, response as unknown as ServerResponse),
  );
  options.authentication.onChange?.(() => {
    server.setSecureContext({ key: options.tls.key, cert: options.tls.cert, ca: acceptedCaPem(options.authentication.current()) });
  });
  answerClientErrors(server);
  // What close() cuts: HTTP/2's server has no closeAllConnections, and its sessions hold their sockets.
  const connections = new Set<Socket>();
  server.on('secureConnection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  // Watches are long-lived: never cut an idle-looking request.
  // (These govern the HTTP/1.1 connections, which node:http2 hands to node:http's machinery.)
  Object.assign(server, { requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: limits.idleConnectionMs } satisfies Partial<HttpServer>);
  server.on('session', (session: http2.ServerHttp2Session) => closeWhenIdle(session, limits.idleConnectionMs));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const hostForUrl = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `https://${hostForUrl}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          releaseExtraRoutes?.();
          resolve();
        });
        for (const socket of connections) socket.destroy();
      }),
  };
}

const http2StreamsPerConnection = 100;
/** Frames queued per connection before new streams are refused: a LIST of 10,000 objects is about 20 MB. */
const http2SessionMemoryMb = 64;

/**
 * Closes an HTTP/2 connection once it has carried no stream for `idleMs`, as keep-alive does for
 * HTTP/1.1 (node:http2's own timeout counts frames, and would cut a quiet watch).
 */
function closeWhenIdle(session: http2.ServerHttp2Session, idleMs: number): void {
  let open = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => session.close(), idleMs);
    timer.unref();
  };
  session.on('stream', (stream: http2.ServerHttp2Stream) => {
    open++;
    clearTimeout(timer);
    stream.once('close', () => {
      if (--open === 0 && !session.closed) arm();
    });
  });
  session.once('close', () => clearTimeout(timer));
  arm();
}

const mutatingMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The request's audit id: the one kube-apiserver's aggregator passes along (so its audit log and
 * ours name the same request), else a new one; a value that does not look like an id is replaced.
 */
function auditId(header: string | string[] | undefined): string {
  const given = Array.isArray(header) ? header[0] : header;
  return given && /^[A-Za-z0-9-]{1,64}$/.test(given) ? given : randomUUID();
}

/** Who a request comes from, or why its credentials did not verify. */
interface Authentication {
  user?: UserInfo;
  error?: unknown;
}

interface AdmittedRequest {
  authentication: Authentication;
  parsed: RequestInfo | { error: ApiError };
  url: URL;
}

/**
 * What the first middleware learned about a request, carried on the request itself. Not in a
 * WeakMap keyed by the request: measured with --trace-gc-nvp, V8's young-generation collections
 * then kept each request in flight at one collection alive through the next, which moved it to the
 * old generation: 0.3-0.4 MB per collection at 6,000 requests/s, garbage that only a full
 * collection frees (now 0-0.04 MB).
 */
const admission = Symbol('admission');
type Admitted = IncomingMessage & { [admission]?: AdmittedRequest };

/** A path whose percent-encoding does not decode is kept as an error, answered once the caller is known. */
function parseRequestInfoSafely(method: string, url: URL): RequestInfo | { error: ApiError } {
  try {
    return parseRequestInfo(method, url.pathname, url.searchParams);
  } catch (error) {
    if (error instanceof URIError) return { error: errors.badRequest(`the request path is not valid: ${error.message}`) };
    throw error;
  }
}

/** kube authorizes a list or watch pinned to one name as a request for that name. */
function nameFromFieldSelector(query: URLSearchParams): string | undefined {
  const selector = query.get('fieldSelector');
  return selector ? parseFieldSelector(selector).name : undefined;
}

function forbiddenDetails(info: RequestInfo) {
  if (info.kind !== 'resource') return undefined;
  return { group: info.group, kind: info.resource, ...(info.name ? { name: info.name } : {}) };
}

/**
 * Labels from the server's own vocabulary only: what an unauthenticated caller sends, and any
 * group, resource or subresource the registry does not serve, folds into one value, so no client
 * can grow the number of series.
 */
function metricLabels(info: RequestInfo, user: UserInfo, registry: Registry): Record<string, string> {
  const verb = info.verb.toUpperCase();
  if (info.kind !== 'resource' || user === anonymousUser) return { verb, group: '', version: '', resource: '', subresource: '' };
  const served = registry.lookup(info.group, info.version, info.resource);
  if (!served) return { verb, group: unknownLabel, version: unknownLabel, resource: unknownLabel, subresource: '' };
  const subresource = info.subresource === undefined ? '' : info.subresource === 'status' && served.definition.subresources.status ? 'status' : unknownLabel;
  return { verb, group: info.group, version: info.version, resource: info.resource, subresource };
}

const unknownLabel = 'unknown';

function scopeOf(info: RequestInfo): string {
  if (info.kind !== 'resource') return '';
  if (info.name) return 'resource';
  return info.namespace ? 'namespace' : 'cluster';
}
