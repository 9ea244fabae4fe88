/**
 * The inventory APIs on the API server's HTTPS port: GraphQL at /graphql (and under
 * /apis/extensions.capo-apiserver.io/v1alpha1, for clients behind kube-apiserver) and the REST
 * admin API at /admin/v1 (and /apis/extensions.capo-apiserver.io/v1alpha1/admin), and the dashboard at
 * /dashboard/ (and under the same group-version, for `kubectl proxy`), which reads what they read and acts
 * through the same hooks. Pass the result as startApiServer's
 * `extraRoutes`, which hands over the server's authenticator and authorizer.
 */
import type express from 'express';
import type { Authorizer } from './apiserver/auth/authorizer.js';
import type { RequestAuthenticator } from './apiserver/auth/authenticator.js';
import type { ExtraRoutesAuth } from './apiserver/server.js';
import { computedApiVersion } from './inventory/computed-group.js';
import { cacheInventory } from './inventory/snapshot.js';
import type { Storage } from './storage/interface.js';
import { adminHandler, adminPrefix, type AdminHooks } from './admin/router.js';
import { PreflightRuns, type PreflightRunLimit } from './admin/preflight-runs.js';
import type { QueryLimits } from './graphql/limits.js';
import { mountGraphql } from './graphql/server.js';
import { dashboardPrefix, dashboardRouter, type DashboardDeps } from './dashboard/routes.js';

export interface InventoryRoutesDeps {
  storage: Storage;
  authorizer: Authorizer;
  authenticate: RequestAuthenticator;
  /** How the server counts a signed-in dashboard browser's requests against its user's in-flight share. */
  countSessionsBy?: ExtraRoutesAuth['countSessionsBy'];
  /** The reconciler's queue status, forced reconcile and preflight report; absent ones answer 503. */
  admin?: AdminHooks;
  /** GraphQL depth and cost limits (defaultQueryLimits otherwise). */
  limits?: QueryLimits;
  /** Preflight runs per user, through the admin API and the dashboard together (by default 3 at once, then one every 20 s). */
  preflightRuns?: PreflightRunLimit;
  /** How the dashboard signs browsers in and where it finds Cluster API's Clusters. */
  dashboard?: Pick<
    DashboardDeps,
    | 'tokens'
    | 'clusterApiCluster'
    | 'readClusterApiCluster'
    | 'readOrcImage'
    | 'readEvents'
    | 'setClusterApiPaused'
    | 'sessions'
    | 'signIns'
    | 'logger'
    | 'assetsDir'
    | 'openstackCalls'
  >;
}

/** Mounts the routes; the function it returns, called when the server closes, stops the inventory cache they read and the dashboard's sampling. */
export function inventoryRoutes(deps: InventoryRoutesDeps): (router: express.Router) => () => void {
  return (app) => {
    mountGraphql(app, deps);
    const preflightRuns = new PreflightRuns(deps.preflightRuns);
    const admin = adminHandler({ ...deps, hooks: deps.admin, preflightRuns });
    // Also under the computed kinds' group-version, where kube-apiserver's aggregator routes it.
    app.use([adminPrefix, `/apis/${computedApiVersion}/admin`], (request, response) => admin(request, response));
    const dashboard = dashboardRouter({
      ...deps.dashboard,
      storage: deps.storage,
      authorizer: deps.authorizer,
      authenticate: deps.authenticate,
      countSessionsBy: deps.countSessionsBy,
      hooks: deps.admin,
      preflightRuns,
    });
    app.use([dashboardPrefix, `/apis/${computedApiVersion}/dashboard`], dashboard.router);
    const releaseInventory = cacheInventory(deps.storage);
    return () => {
      dashboard.close();
      releaseInventory();
    };
  };
}
