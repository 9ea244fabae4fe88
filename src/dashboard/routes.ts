/**
 * The admin dashboard at /dashboard/: the built page (web/dashboard) and the
 * JSON it reads under /dashboard/api. A browser signs in with a bearer
 * token and gets a session cookie (sessions.ts); every read and action is
 * then asked of the server's authorizer as that user, with the attributes
 * kubectl would need for the same thing, so the dashboard never lets anyone
 * do more than the API does. Failures are Kubernetes Status objects.
 */
import { existsSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import express from 'express';
import { z } from 'zod';
import type { Authorizer } from '../apiserver/auth/authorizer.js';
import type { RequestAuthenticator, TokenAuthenticator } from '../apiserver/auth/authenticator.js';
import { anonymousUser, type UserInfo } from '../apiserver/auth/user.js';
import { ApiError, errors } from '../apiserver/errors.js';
import { sendError, sendJson } from '../apiserver/http/respond.js';
import type { ExtraRoutesAuth } from '../apiserver/server.js';
import { storageVersionOf } from '../apiserver/registry/registry.js';
import type { ResourceStore } from '../apiserver/store/resource-store.js';
import type { PreflightRuns } from '../admin/preflight-runs.js';
import { asStatus, cleanupRefusal, cleanupRequest, leaksPath, maxCleanupBytes, reconcilerAnswer, requireHook, type AdminHooks } from '../admin/router.js';
import { ForbiddenError, InventoryAccess, readableKinds, type ResourceKind } from '../inventory/access.js';
import { toAnsibleListJson } from '../inventory/index.js';
import { InventoryRequest } from '../inventory/request.js';
import type { JsonObject, Storage } from '../storage/interface.js';
import { CallsHistory, type CallTotals } from './calls-history.js';
import { clusterDetail, imagesNamed, type HiddenParts, type PagePart } from './cluster-view.js';
import type { ClusterApiView, ClusterPageData, ImageView } from './view-types.js';
import { streamChanges } from './events.js';
import { csrfTokenMatches, SessionStore, type Session, type SessionOptions } from './sessions.js';
import { currentUserOf, referenceTo } from './session-tokens.js';
import { SignInThrottle, type ThrottleOptions } from './sign-in-throttle.js';

export const dashboardPrefix = '/dashboard';
const cookieName = 'capo-dashboard-session';
const csrfHeader = 'x-csrf-token';
const infrastructureGroup = 'infrastructure.cluster.x-k8s.io';
const openStackClusters = { group: infrastructureGroup, version: 'v1beta2', resource: 'openstackclusters' };
/** Cluster API's Clusters in a management cluster, as an authorizer is asked about them: any version. */
const managementClusters = { group: 'cluster.x-k8s.io', version: '*', resource: 'clusters' };

/**
 * The page's own files only: no inline script or style, no other origin, no
 * framing. What an injected string could do is limited to text.
 */
const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface DashboardDeps {
  storage: Storage;
  authorizer: Authorizer;
  /** Checks the token a browser signs in with; without one the dashboard cannot sign anyone in (503). */
  tokens?: TokenAuthenticator;
  /** The server's authentication of the request itself (kube-apiserver's front proxy, a client certificate, a bearer header). */
  authenticate: RequestAuthenticator;
  /** The reconciler's forced reconcile, preflight and queue; absent ones answer 503. */
  hooks?: AdminHooks;
  /** The store of Cluster API's Cluster where this server stores it (embedded mode), which pause/resume patch. */
  clusterApiCluster?: ResourceStore;
  /** Reads Cluster API's Cluster (phase, paused) where it lives: this server's storage, or the management cluster. */
  readClusterApiCluster?: (namespace: string, name: string) => Promise<ClusterApiView | undefined>;
  /**
   * In a management cluster: sets a Cluster's spec.paused there, with this server's own credentials,
   * once `user` was found allowed to patch it; undefined when it does not exist.
   */
  setClusterApiPaused?: (namespace: string, name: string, paused: boolean, user: UserInfo) => Promise<ClusterApiView | undefined>;
  sessions?: SessionOptions;
  /** How often clients and users may sign in (default: 20 attempts per address, then one per 6 s; 5 per user, then one per 12 s). */
  signIns?: ThrottleOptions;
  /** Where failed sign-ins are told, with the client's address (never the token). */
  logger?: WarningLog;
  /** The server's in-flight limits count a signed-in browser's requests against its session's user through this. */
  countSessionsBy?: ExtraRoutesAuth['countSessionsBy'];
  /** Preflight runs per user, shared with the admin API. */
  preflightRuns: PreflightRuns;
  /** The built page (default: dist/src/dashboard/ui, written by `npm run build`). */
  assetsDir?: string;
  /** The Events of a namespace where they live (this server, or the management cluster); none without. */
  readEvents?: (namespace: string) => Promise<JsonObject[]>;
  /** Reads an ORC Image where it lives (served here, or ORC's in the management cluster); undefined when it does not exist. */
  readOrcImage?: (namespace: string, name: string) => Promise<ImageView | undefined>;
  /** OpenStack calls so far per service, when a reconciler runs: sampled for the calls chart. */
  openstackCalls?: CallTotals;
}

/** What the dashboard logs: pino's logger is one. */
export interface WarningLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

/** No call needs more than a cleanup of 1,000 resources. */
const maxBodyBytes = maxCleanupBytes;
const loginBody = z.strictObject({ token: z.string().min(1).max(4096) });

interface Caller {
  session: Session;
  access: InventoryAccess;
  inventory: InventoryRequest;
}

/** The router, and a release for the timer its calls chart samples with. */
export function dashboardRouter(deps: DashboardDeps): { router: express.Router; close(): void } {
  const sessions = new SessionStore(deps.sessions);
  const throttle = new SignInThrottle(deps.signIns);
  const calls = deps.openstackCalls && new CallsHistory(deps.openstackCalls);
  /** Cluster API's Clusters when this server stores them (embedded mode): pause and resume patch them here. */
  const storedClusters = deps.clusterApiCluster && {
    definition: deps.clusterApiCluster.definition,
    store: deps.clusterApiCluster,
    version: storageVersionOf(deps.clusterApiCluster.definition),
  };
  const canPause = storedClusters !== undefined || deps.setClusterApiPaused !== undefined;
  /** Cluster API's Cluster as the authorizer is asked about it: in this server's storage, or the management cluster's. */
  const clusterApiKind: ResourceKind = storedClusters
    ? { group: storedClusters.definition.group, version: storedClusters.version.name, resource: storedClusters.definition.plural }
    : managementClusters;
  /** What the caller must be allowed to patch. */
  const clusterApiAttributes = (namespace: string, name: string) => ({ ...clusterApiKind, namespace, name });
  /** The kind each part of a cluster's page shows, which the caller must be allowed to list to see it. */
  const pageKinds: Record<PagePart, ResourceKind> = {
    machines: readableKinds.machines,
    servers: readableKinds.servers,
    variables: readableKinds.clusterExtensions,
    events: readableKinds.events,
    images: readableKinds.images,
    cluster: clusterApiKind,
  };
  /** The parts of a page in `namespace` the caller may not read (asked once per namespace and kind in a request). */
  const hiddenParts = async (access: InventoryAccess, namespace: string): Promise<HiddenParts> => {
    const parts = Object.entries(pageKinds) as [PagePart, ResourceKind][];
    const allowed = await Promise.all(parts.map(([, kind]) => access.mayList(kind, namespace)));
    return Object.fromEntries(parts.filter((_, i) => !allowed[i]).map(([part, kind]) => [part, kind.group ? `${kind.resource}.${kind.group}` : kind.resource]));
  };
  /** Sets spec.paused where the Cluster lives; its paused state after, or undefined when it does not exist. */
  const setPaused = async (namespace: string, name: string, paused: boolean, user: UserInfo): Promise<boolean | undefined> => {
    if (!storedClusters) return (await deps.setClusterApiPaused!(namespace, name, paused, user))?.paused;
    const { object } = await storedClusters.store.patch(
      namespace,
      name,
      (current) => ({ ...current, spec: { ...(current.spec as JsonObject), paused } }),
      storedClusters.version,
      undefined,
      // Decoded as a client's patch is, with kube's default for unknown fields; the dashboard reads no warnings.
      { dryRun: false, fieldManager: 'capo-dashboard', fieldValidation: 'Warn', user },
    );
    return (object.spec as JsonObject).paused === true;
  };
  const router = express.Router();
  router.use((_request, response, next) => {
    response.set({
      'Content-Security-Policy': contentSecurityPolicy,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
    });
    next();
  });

  deps.countSessionsBy?.((request) => sessions.get(sessionIdOf(request))?.user);

  const api = express.Router();
  // A body is read only once the caller may send one: a signed-in session with its CSRF token, or a sign-in the throttle let through.
  const json = express.json({ limit: maxBodyBytes, type: () => true });

  const admitSignIn: express.RequestHandler = (request, _response, next) => {
    const clientWait = throttle.attempt(clientOf(request));
    if (clientWait !== undefined) throw errors.tooManyRequests(clientWait, `too many sign-in attempts from this address; try again in ${clientWait} s`);
    // A form on another site cannot send this type without the browser asking first: no signing a browser into someone else's session.
    if (!request.is('application/json')) throw errors.unsupportedMediaType('sign in with Content-Type: application/json');
    if (!deps.tokens) throw new ApiError(503, 'ServiceUnavailable', 'this server checks no bearer tokens, so the dashboard cannot sign anyone in');
    next();
  };

  api.post('/session', admitSignIn, json, async (request, response) => {
    const body = loginBody.safeParse(request.body);
    if (!body.success) throw errors.badRequest('sign in with a JSON body {"token": "<bearer token>"}');
    const tokens = deps.tokens!;
    const user = await tokens.authenticateToken(body.data.token).catch(() => undefined);
    if (!user) {
      deps.logger?.warn({ client: clientOf(request) }, 'dashboard sign-in refused: the token is not valid');
      throw errors.unauthorized();
    }
    const userWait = throttle.signIn(user.name);
    if (userWait !== undefined) throw errors.tooManyRequests(userWait, `too many sign-ins as ${user.name}; try again in ${userWait} s`);
    const session = sessions.create(user, referenceTo(body.data.token, tokens));
    response.setHeader('Set-Cookie', serializeCookie(cookieName, session.id, { httpOnly: true, secure: true, sameSite: 'strict', path: dashboardPrefix }));
    sendJson(response, 200, sessionBody(session));
  });

  // Past this point every call has a session (a signed-in browser's, or one for credentials the request
  // brings, as through kubectl proxy), and every mutating one its CSRF token.
  api.use(async (request, response, next) => {
    const session = (await signedInSession(request)) ?? (await ownCredentialsSession(request));
    if (!session) throw errors.unauthorized();
    if (request.method !== 'GET' && request.method !== 'HEAD' && !csrfTokenMatches(session, request.get(csrfHeader))) {
      throw errors.forbidden(`a ${request.method} needs the session's CSRF token in the ${csrfHeader} header`);
    }
    const access = new InventoryAccess(session.user, deps.authorizer);
    response.locals.caller = { session, access, inventory: new InventoryRequest(deps.storage, access) } satisfies Caller;
    next();
  });

  api.get('/session', (_request, response) => sendJson(response, 200, sessionBody(callerOf(response).session)));

  api.delete('/session', (_request, response) => {
    const { id } = callerOf(response).session;
    if (id !== '') sessions.delete(id);
    response.setHeader('Set-Cookie', serializeCookie(cookieName, '', { httpOnly: true, secure: true, sameSite: 'strict', path: dashboardPrefix, maxAge: 0 }));
    response.status(204).end();
  });

  api.get('/clusters', async (_request, response) => {
    const { inventory, access } = callerOf(response);
    const records = await inventory.clusters({});
    const snapshot = await inventory.snapshot();
    const summaries = await Promise.all(
      records.map(async ({ metadata }) => {
        const hidden = await hiddenParts(access, metadata.namespace);
        const clusterApi = hidden.cluster ? undefined : await clusterApiClusterOf(metadata.namespace, metadata.labels);
        return clusterDetail(snapshot, metadata.namespace, metadata.name, clusterApi, [], [], hidden)?.summary;
      }),
    );
    sendJson(response, 200, { clusters: summaries.filter((summary) => summary !== undefined) });
  });

  api.get('/namespaces/:namespace/clusters/:name', async (request, response) => {
    const { inventory, access } = callerOf(response);
    const { namespace, name } = namesOf(request);
    const record = await inventory.cluster(namespace, name);
    const hidden = await hiddenParts(access, namespace);
    const clusterApi = hidden.cluster ? undefined : await clusterApiClusterOf(namespace, record.metadata.labels);
    const snapshot = await inventory.snapshot();
    const images = await Promise.all(
      (hidden.images ? [] : imagesNamed(snapshot, namespace, name, hidden)).map(
        async (image) =>
          (await deps.readOrcImage?.(namespace, image)) ?? { name: image, state: 'NotFound', ready: false, message: `no ORC Image ${namespace}/${image}` },
      ),
    );
    // The timeline's marks: a failure to read them leaves the page without them, not without the rest.
    const events = hidden.events ? [] : ((await deps.readEvents?.(namespace).catch(() => [])) ?? []);
    const detail = clusterDetail(snapshot, namespace, name, clusterApi, images, events, hidden);
    if (!detail) throw errors.notFound({ group: infrastructureGroup, resource: 'openstackclusters' }, name);
    const actions = {
      reconcile: Boolean(deps.hooks?.reconcile) && (await allowed(access, 'update', { ...openStackClusters, namespace, name })),
      pause: clusterApi !== undefined && canPause && (await allowed(access, 'patch', clusterApiAttributes(namespace, clusterApi.name))),
      preflight: Boolean(deps.hooks?.preflight),
    };
    sendJson(response, 200, { ...detail, actions } satisfies ClusterPageData);
  });

  api.get('/namespaces/:namespace/clusters/:name/inventory', async (request, response) => {
    const { inventory } = callerOf(response);
    const { namespace, name } = namesOf(request);
    response.setHeader('Content-Disposition', `attachment; filename="${namespace}-${name}-inventory.json"`);
    sendJson(response, 200, toAnsibleListJson(await inventory.inventory({ namespace, name })));
  });

  api.get('/namespaces/:namespace/clusters/:name/preflight', async (request, response) => {
    const { inventory, session } = callerOf(response);
    const { namespace, name } = namesOf(request);
    const preflight = requireHook(deps.hooks?.preflight, 'preflight report');
    await inventory.cluster(namespace, name);
    deps.preflightRuns.admit(session.user.name);
    sendJson(response, 200, await preflight(namespace, name));
  });

  api.post('/namespaces/:namespace/clusters/:name/reconcile', async (request, response) => {
    const { access } = callerOf(response);
    const { namespace, name } = namesOf(request);
    await access.requireResource('update', { ...openStackClusters, namespace, name });
    const queued = await requireHook(deps.hooks?.reconcile, 'forced reconcile')('OpenStackCluster', namespace, name);
    if (!queued) throw errors.notFound({ group: infrastructureGroup, resource: 'openstackclusters' }, name);
    sendJson(response, 202, { message: `OpenStackCluster ${namespace}/${name} is queued for reconcile` });
  });

  for (const [action, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    api.post(`/namespaces/:namespace/clusters/:name/${action}`, async (request, response) => {
      const { access, inventory, session } = callerOf(response);
      const { namespace, name } = namesOf(request);
      if (!canPause)
        throw new ApiError(
          503,
          'ServiceUnavailable',
          `Cluster API's Clusters live in the management cluster, and this server does not follow them there: ${action} with kubectl patch cluster`,
        );
      const record = await inventory.cluster(namespace, name);
      const clusterName = record.metadata.labels?.['cluster.x-k8s.io/cluster-name'] ?? name;
      await access.requireResource('patch', clusterApiAttributes(namespace, clusterName));
      const now = await setPaused(namespace, clusterName, paused, session.user);
      if (now === undefined) throw errors.notFound({ group: managementClusters.group, resource: managementClusters.resource }, clusterName);
      sendJson(response, 200, { paused: now });
    });
  }

  // The leak audit reads every cloud in use: on demand only, for whoever may run it through the admin API.
  api.get('/leaks', async (_request, response) => {
    const { access } = callerOf(response);
    await access.requirePath('get', leaksPath);
    const audit = await reconcilerAnswer(requireHook(deps.hooks?.leaks, 'leak audit')());
    sendJson(response, 200, { ...(audit as object), mayCleanUp: await allowedPath(access, 'post', leaksPath) });
  });

  api.post('/leaks/cleanup', json, async (request, response) => {
    const { access } = callerOf(response);
    await access.requirePath('post', leaksPath);
    const body = cleanupRequest.safeParse(request.body);
    if (!body.success) throw errors.badRequest(cleanupRefusal(body.error));
    sendJson(response, 200, { outcomes: await reconcilerAnswer(requireHook(deps.hooks?.cleanUpLeaks, 'leak cleanup')(body.data.resources)) });
  });

  api.get('/queue', async (_request, response) => {
    const { access } = callerOf(response);
    await access.requirePath('get', '/admin/v1/queue');
    sendJson(response, 200, requireHook(deps.hooks?.queue, 'reconcile queue')());
  });

  api.get('/calls', async (_request, response) => {
    const { access } = callerOf(response);
    // The same right as scraping the counters it is read from.
    await access.requirePath('get', '/metrics');
    const history = requireHook(calls, 'OpenStack call history');
    sendJson(response, 200, { intervalSeconds: history.intervalMs / 1000, samples: history.history() });
  });

  api.get('/events', (request, response) => {
    const { access } = callerOf(response);
    streamChanges(deps.storage, access, request, response);
  });

  api.use(() => {
    throw errors.pathNotFound();
  });
  api.use((error: unknown, _request: express.Request, response: express.Response, _next: express.NextFunction) => {
    sendError(response, statusOf(error));
  });
  router.use('/api', api);

  const assets = deps.assetsDir ?? builtAssetsDir();
  router.use('/assets', express.static(`${assets}/assets`, { index: false, fallthrough: false, immutable: true, maxAge: '1y' }));
  // Every other path is a page of the dashboard: the same document, which routes in the browser.
  // The page is built for /dashboard/. Its files are linked relative to the page's own path instead, so they are
  // found wherever the dashboard is reached (under kube-apiserver's group-version through kubectl proxy, whose
  // proxy rewrites absolute links in HTML to kube-apiserver's own address).
  router.get('/{*page}', async (request, response) => {
    if (!existsSync(`${assets}/index.html`))
      throw new ApiError(503, 'ServiceUnavailable', `the dashboard is not built (no ${assets}/index.html): run npm run build`);
    const depth = request.path.split('/').length - 2;
    const page = (await readFile(`${assets}/index.html`, 'utf8')).replaceAll(`"${dashboardPrefix}/`, `"${depth > 0 ? '../'.repeat(depth) : './'}`);
    response.type('html').send(page);
  });
  router.use((error: unknown, _request: express.Request, response: express.Response, _next: express.NextFunction) => sendError(response, statusOf(error)));
  return { router, close: () => calls?.stop() };

  /**
   * The cookie's session while its token still names its user, with that user as the token names
   * them now (groups may have changed); a session whose token was revoked ends here.
   */
  async function signedInSession(request: express.Request): Promise<Session | undefined> {
    const session = sessions.get(sessionIdOf(request));
    if (!session?.token || !deps.tokens) return undefined;
    const user = await currentUserOf(session.token, session.user, deps.tokens).catch(() => {
      throw new ApiError(503, 'ServiceUnavailable', 'the token of this session cannot be checked now; try again');
    });
    if (user) return { ...session, user };
    sessions.delete(session.id);
    return undefined;
  }

  async function ownCredentialsSession(request: express.Request): Promise<Session | undefined> {
    const user = await deps.authenticate(request).catch(() => anonymousUser);
    return user === anonymousUser ? undefined : sessions.ofRequest(user);
  }

  async function clusterApiClusterOf(namespace: string, labels: Record<string, string> | undefined): Promise<ClusterApiView | undefined> {
    const name = labels?.['cluster.x-k8s.io/cluster-name'];
    return name === undefined ? undefined : deps.readClusterApiCluster?.(namespace, name);
  }
}

function sessionBody(session: Session): unknown {
  return { user: { name: session.user.name, groups: session.user.groups }, csrfToken: session.csrfToken };
}

function sessionIdOf(request: IncomingMessage): string | undefined {
  return parseCookies(request.headers.cookie ?? '')[cookieName];
}

function clientOf(request: express.Request): string {
  return request.socket.remoteAddress ?? 'unknown';
}

function callerOf(response: express.Response): Caller {
  return response.locals.caller as Caller;
}

const dnsLabel = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function namesOf(request: express.Request): { namespace: string; name: string } {
  const { namespace, name } = request.params as Record<string, string>;
  if (!dnsLabel.test(namespace!) || !dnsLabel.test(name!)) throw errors.pathNotFound();
  return { namespace: namespace!, name: name! };
}

async function allowed(access: InventoryAccess, verb: string, resource: Parameters<InventoryAccess['requireResource']>[1]): Promise<boolean> {
  return refusalAsFalse(access.requireResource(verb, resource));
}

async function allowedPath(access: InventoryAccess, verb: string, path: string): Promise<boolean> {
  return refusalAsFalse(access.requirePath(verb, path));
}

async function refusalAsFalse(decision: Promise<void>): Promise<boolean> {
  return decision.then(
    () => true,
    (error: unknown) => {
      if (error instanceof ForbiddenError) return false;
      throw error;
    },
  );
}

/** body-parser's, express.static's and the router's refusals, then the inventory's, as Kubernetes Status. */
function statusOf(error: unknown): unknown {
  const { type, status } = (error ?? {}) as { type?: unknown; status?: unknown };
  if (type === 'entity.too.large') return errors.bodyTooLarge(maxBodyBytes);
  if (type === 'entity.parse.failed') return errors.badRequest(`the body is not JSON: ${(error as Error).message}`);
  if (type === undefined) {
    // The router's and express.static's: a path that does not decode (%zz; %00 for express.static).
    if (status === 400) return errors.badRequest('the request path is not valid');
    // express.static's for a file that is not there, or a path that leaves its folder (403), which is not there either.
    if (status === 403 || status === 404) return errors.pathNotFound();
  }
  return asStatus(error);
}

/** Run from dist/ the page sits beside this module; run from the sources (tests) it is in the build output. */
function builtAssetsDir(): string {
  const beside = new URL('./ui', import.meta.url);
  return fileURLToPath(beside.pathname.includes('/dist/src/') ? beside : new URL('../../dist/src/dashboard/ui', import.meta.url));
}
