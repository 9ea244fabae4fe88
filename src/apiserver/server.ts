/**
 * The HTTPS API server: authentication, authorization, routing and request
 * metrics around the discovery, OpenAPI and resource handlers.
 */
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import type { Storage } from '../storage/interface.js';
import { forbiddenMessage, type Authorizer, type RequestAttributes } from './auth/authorizer.js';
import { createRequestAuthenticator, type RequestAuthenticator, type TokenAuthenticator } from './auth/authenticator.js';
import { anonymousUser, type UserInfo } from './auth/user.js';
import { errors } from './errors.js';
import { DiscoveryHandler } from './handlers/discovery.js';
import { OpenApiHandler } from './handlers/openapi.js';
import { ResourceHandler } from './handlers/resource.js';
import { parseRequestInfo, type RequestInfo } from './http/request-info.js';
import { sendError, sendJson } from './http/respond.js';
import { HealthChecks, healthContentType, type HealthEndpoint } from '../observability/health.js';
import { MetricsRegistry, metricsContentType } from '../observability/metrics.js';
import type { Registry } from './registry/registry.js';
import { parseFieldSelector } from './selectors/fields.js';

export interface ApiServerOptions {
  host: string;
  port: number;
  tls: { key: string; cert: string; clientCa: string };
  registry: Registry;
  storage: Storage;
  authorizer: Authorizer;
  /** Bearer tokens (StaticTokenFile); without it only client certificates authenticate. */
  tokens?: TokenAuthenticator;
  metrics: MetricsRegistry;
  health: HealthChecks;
  bookmarkIntervalMs?: number;
  /**
   * Requests served at once before new ones get 429 + Retry-After, as
   * kube-apiserver's max-requests-inflight / max-mutating-requests-inflight
   * (watches are long-running and not counted).
   */
  maxInFlight?: { readOnly: number; mutating: number };
  /**
   * Mount further routers (GraphQL, admin API) before the Kubernetes routes;
   * they authenticate and authorize with the server's own `auth`. A function
   * they return is called once the server has closed, to release what they hold.
   */
  extraRoutes?: (app: express.Express, auth: { authenticate: RequestAuthenticator; authorizer: Authorizer }) => void | (() => void);
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
  const { registry, storage, authorizer, metrics, health } = options;
  const authenticate = createRequestAuthenticator(options.tokens);
  const requestsTotal = metrics.counter('apiserver_request_total', 'Counter of apiserver requests broken out by verb, group, version, resource, subresource, scope and HTTP code.', [
    'verb',
    'group',
    'version',
    'resource',
    'subresource',
    'scope',
    'code',
  ]);
  const requestDuration = metrics.histogram(
    'apiserver_request_duration_seconds',
    'Response latency distribution in seconds for each verb, group, version, resource and subresource.',
    ['verb', 'group', 'version', 'resource', 'subresource'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  );
  const registeredWatchers = metrics.gauge('apiserver_registered_watchers', 'Number of currently registered watchers.', []);

  const discovery = new DiscoveryHandler(registry);
  const openapi = new OpenApiHandler(registry);
  const resources = new ResourceHandler(registry, storage, {
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    maxWatchBufferBytes: 64 * 1024 * 1024,
    onWatchCountChange: (delta) => registeredWatchers.inc({}, delta),
  });

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  for (const endpoint of ['livez', 'readyz', 'healthz'] as HealthEndpoint[]) {
    app.get([`/${endpoint}`, `/${endpoint}/:check`], async (request, response) => {
      const query = new URL(request.originalUrl, 'https://localhost').searchParams;
      const check = request.params.check;
      const result = await health.evaluate(endpoint, typeof check === 'string' ? check : undefined, query);
      response.set({ 'Content-Type': healthContentType, 'X-Content-Type-Options': 'nosniff' }).status(result.status).send(result.body);
    });
  }

  const releaseExtraRoutes = options.extraRoutes?.(app, { authenticate, authorizer });

  const limits = options.maxInFlight ?? { readOnly: 400, mutating: 200 };
  const inFlight = { readOnly: 0, mutating: 0 };

  app.use(async (request: IncomingMessage, response: ServerResponse) => {
    const started = process.hrtime.bigint();
    const url = new URL(request.url ?? '/', 'https://localhost');
    let info: RequestInfo = { kind: 'nonResource', verb: (request.method ?? 'GET').toLowerCase(), path: url.pathname };
    let slot: keyof typeof inFlight | undefined;
    try {
      info = parseRequestInfo(request.method ?? 'GET', url.pathname, url.searchParams);
      if (info.verb !== 'watch') {
        slot = mutatingMethods.has(request.method ?? 'GET') ? 'mutating' : 'readOnly';
        if (inFlight[slot] >= limits[slot]) {
          slot = undefined;
          throw errors.tooManyRequests(1);
        }
        inFlight[slot]++;
      }
      const user = await authenticate(request);
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
    } finally {
      if (slot) inFlight[slot]--;
      const labels = metricLabels(info);
      requestsTotal.inc({ ...labels, scope: scopeOf(info), code: String(response.statusCode) });
      // A watch returns here once streaming starts; its lifetime is not a latency.
      if (info.verb !== 'watch') requestDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
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
      const body = metrics.render();
      response.writeHead(200, { 'Content-Type': metricsContentType });
      response.end(body);
      return;
    }
    throw errors.pathNotFound();
  }

  const server = https.createServer(
    {
      key: options.tls.key,
      cert: options.tls.cert,
      ca: options.tls.clientCa,
      requestCert: true,
      rejectUnauthorized: false,
    },
    app,
  );
  // Watches are long-lived: never cut an idle-looking request.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 65_000;

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
        server.closeAllConnections();
      }),
  };
}

const mutatingMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** kube authorizes a list or watch pinned to one name as a request for that name. */
function nameFromFieldSelector(query: URLSearchParams): string | undefined {
  const selector = query.get('fieldSelector');
  return selector ? parseFieldSelector(selector).name : undefined;
}

function forbiddenDetails(info: RequestInfo) {
  if (info.kind !== 'resource') return undefined;
  return { group: info.group, kind: info.resource, ...(info.name ? { name: info.name } : {}) };
}

function metricLabels(info: RequestInfo): Record<string, string> {
  if (info.kind === 'resource') {
    return { verb: info.verb.toUpperCase(), group: info.group, version: info.version, resource: info.resource, subresource: info.subresource ?? '' };
  }
  return { verb: info.verb.toUpperCase(), group: '', version: '', resource: '', subresource: '' };
}

function scopeOf(info: RequestInfo): string {
  if (info.kind !== 'resource') return '';
  if (info.name) return 'resource';
  return info.namespace ? 'namespace' : 'cluster';
}
