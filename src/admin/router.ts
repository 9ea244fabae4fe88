/**
 * The REST admin API under /admin/v1: a cluster's inventory as
 * `ansible-inventory --list` JSON, the reconcile queue, forcing a reconcile,
 * a cluster's preflight report (runs limited per user, preflight-runs.ts), and the leak audit with its cleanup. Same authentication and authorizer as
 * the Kubernetes routes; every failure is a Kubernetes Status (401, 403,
 * 404, 405, 503).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Authorizer } from '../apiserver/auth/authorizer.js';
import type { RequestAuthenticator } from '../apiserver/auth/authenticator.js';
import { anonymousUser } from '../apiserver/auth/user.js';
import { ApiError, errors } from '../apiserver/errors.js';
import { decodeJson, readBody } from '../apiserver/http/body.js';
import { sendError, sendJson } from '../apiserver/http/respond.js';
import { toAnsibleListJson } from '../inventory/index.js';
import type { Storage } from '../storage/interface.js';
import { ForbiddenError, InventoryAccess } from '../inventory/access.js';
import { ClusterNotFoundError, InvalidSelectionError, InventoryRequest } from '../inventory/request.js';
import type { PreflightRuns } from './preflight-runs.js';

export const adminPrefix = '/admin/v1';
/** The leak audit's path, which authorization names for both the audit (get) and its cleanup (post). */
export const leaksPath = `${adminPrefix}/leaks`;
/** A cleanup names the resources to delete, as the audit listed them. */
export const cleanupRequest = z.strictObject({
  resources: z
    .array(z.strictObject({ kind: z.string().min(1).max(40), id: z.string().min(1).max(100) }))
    .min(1)
    .max(1000),
});
/** A cleanup of 1,000 resources fits with room to spare. */
export const maxCleanupBytes = 128 * 1024;

/** What the reconciler offers the admin API; a missing hook answers 503. */
export interface AdminHooks {
  /** The reconcile queue's status, as JSON. */
  queue?: () => unknown;
  /** Queues a reconcile of the object now; false when there is no such object. */
  reconcile?: (kind: string, namespace: string, name: string) => Promise<boolean>;
  /** The preflight report of a cluster, as JSON. */
  preflight?: (namespace: string, name: string) => Promise<unknown>;
  /** Resources of ours in the clouds whose owner object is gone (the dashboard's leak audit). */
  leaks?: () => Promise<unknown>;
  /** Deletes the named leaks that are still leaks; the outcome per resource. */
  cleanUpLeaks?: (targets: { kind: string; id: string }[]) => Promise<unknown>;
}

export interface AdminDeps {
  storage: Storage;
  authorizer: Authorizer;
  authenticate: RequestAuthenticator;
  hooks?: AdminHooks;
  /** Preflight runs per user, shared with the dashboard. */
  preflightRuns: PreflightRuns;
}

const infrastructureGroup = 'infrastructure.cluster.x-k8s.io';

/** The kinds whose reconcile can be forced, by the plural the URL names them with (`clusters` as in the other admin paths). */
const clusterTarget = { kind: 'OpenStackCluster', resource: 'openstackclusters', version: 'v1beta2' };
const reconcilableKinds: Record<string, { kind: string; resource: string; version: string }> = {
  clusters: clusterTarget,
  openstackclusters: clusterTarget,
  openstackmachines: { kind: 'OpenStackMachine', resource: 'openstackmachines', version: 'v1beta2' },
  openstackservers: { kind: 'OpenStackServer', resource: 'openstackservers', version: 'v1alpha1' },
};

interface Route {
  method: 'GET' | 'POST';
  path: RegExp;
  handle(request: AdminRequest, params: string[]): Promise<void>;
}

interface AdminRequest {
  request: IncomingMessage;
  response: ServerResponse;
  access: InventoryAccess;
  inventory: InventoryRequest;
  path: string;
}

const segment = '([a-z0-9]([-a-z0-9.]*[a-z0-9])?)';

export function adminHandler(deps: AdminDeps): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const hooks = deps.hooks ?? {};
  const routes: Route[] = [
    {
      method: 'GET',
      path: new RegExp(`^/namespaces/${segment}/clusters/${segment}/inventory$`),
      async handle({ response, inventory }, [namespace, name]) {
        sendJson(response, 200, toAnsibleListJson(await inventory.inventory({ namespace, name })));
      },
    },
    {
      method: 'GET',
      path: /^\/queue$/,
      async handle({ response, access, path }) {
        await access.requirePath('get', path);
        sendJson(response, 200, requireHook(hooks.queue, 'reconcile queue')());
      },
    },
    {
      method: 'POST',
      path: new RegExp(`^/namespaces/${segment}/${segment}/${segment}/reconcile$`),
      async handle({ response, access }, [namespace, plural, name]) {
        const target = reconcilableKinds[plural!];
        if (!target) throw errors.pathNotFound();
        const { resource, version, kind } = target;
        await access.requireResource('update', { group: infrastructureGroup, version, resource, namespace: namespace!, name: name! });
        const queued = await requireHook(hooks.reconcile, 'forced reconcile')(kind, namespace!, name!);
        if (!queued) throw errors.notFound({ group: infrastructureGroup, resource }, name!);
        sendJson(response, 202, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Success',
          message: `${kind} ${namespace}/${name} is queued for reconcile`,
          code: 202,
          details: { name, group: infrastructureGroup, kind: resource },
        });
      },
    },
    {
      method: 'GET',
      path: new RegExp(`^/namespaces/${segment}/clusters/${segment}/preflight$`),
      async handle({ response, access, inventory }, [namespace, name]) {
        const preflight = requireHook(hooks.preflight, 'preflight report');
        await inventory.cluster(namespace!, name!);
        deps.preflightRuns.admit(access.user.name);
        sendJson(response, 200, await preflight(namespace!, name!));
      },
    },
    {
      method: 'GET',
      path: /^\/leaks$/,
      async handle({ response, access }) {
        await access.requirePath('get', leaksPath);
        sendJson(response, 200, await reconcilerAnswer(requireHook(hooks.leaks, 'leak audit')()));
      },
    },
    {
      method: 'POST',
      path: /^\/leaks\/cleanup$/,
      async handle({ request, response, access }) {
        await access.requirePath('post', leaksPath);
        const body = cleanupRequest.safeParse(decodeJson(await readBody(request, maxCleanupBytes)));
        if (!body.success) throw errors.badRequest(cleanupRefusal(body.error));
        sendJson(response, 200, { outcomes: await reconcilerAnswer(requireHook(hooks.cleanUpLeaks, 'leak cleanup')(body.data.resources)) });
      },
    },
  ];

  return async (request, response) => {
    try {
      const user = await deps.authenticate(request);
      if (user === anonymousUser) throw errors.unauthorized();
      const path = new URL(request.url ?? '/', 'https://localhost').pathname;
      const matching = routes.map((route) => ({ route, match: route.path.exec(path) })).filter(({ match }) => match !== null);
      if (matching.length === 0) throw errors.pathNotFound();
      const found = matching.find(({ route }) => route.method === request.method);
      if (!found) {
        response.setHeader('Allow', [...new Set(matching.map(({ route }) => route.method))].join(', '));
        throw new ApiError(
          405,
          'MethodNotAllowed',
          `${request.method} is not supported on ${adminPrefix}${path}; use ${matching.map(({ route }) => route.method).join(' or ')}`,
        );
      }
      const access = new InventoryAccess(user, deps.authorizer);
      // Route patterns capture each segment with an inner group, so parameters are every other capture.
      const params = found.match!.slice(1).filter((_, i) => i % 2 === 0);
      await found.route.handle({ request, response, access, inventory: new InventoryRequest(deps.storage, access), path: `${adminPrefix}${path}` }, params);
    } catch (error) {
      sendError(response, asStatus(error));
    }
  };
}

/** The hook, or 503 when this server runs no reconciler to offer it. */
export function requireHook<T>(hook: T | undefined, what: string): T {
  if (!hook) throw new ApiError(503, 'ServiceUnavailable', `this server runs no reconciler, so it offers no ${what}`);
  return hook;
}

/** What to send instead of a cleanup body that does not parse. */
export function cleanupRefusal(error: z.ZodError): string {
  return `name the resources to delete: {"resources": [{"kind": "networks", "id": "..."}]} (1 to 1000): ${error.issues[0]?.message ?? ''}`;
}

/** A hook's answer; undefined means the reconciler does not run on this replica (it lost the leader lease, say). */
export async function reconcilerAnswer<T>(answer: Promise<T | undefined>): Promise<T> {
  const value = await answer;
  if (value === undefined) throw new ApiError(503, 'ServiceUnavailable', 'the reconciler does not run on this replica');
  return value;
}

/** The inventory's refusals as the Kubernetes Status they stand for. */
export function asStatus(error: unknown): unknown {
  if (error instanceof ForbiddenError) return errors.forbidden(error.message);
  if (error instanceof ClusterNotFoundError) return new ApiError(404, 'NotFound', error.message, { group: infrastructureGroup, kind: 'openstackclusters' });
  if (error instanceof InvalidSelectionError) return errors.badRequest(error.message);
  return error;
}
