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
import { computedApiVersion } from './inventory/computed-group.js';
import { cacheInventory } from './inventory/snapshot.js';
import type { Storage } from './storage/interface.js';
import { adminHandler, adminPrefix, type AdminHooks } from './admin/router.js';
import type { QueryLimits } from './graphql/limits.js';
import { mountGraphql } from './graphql/server.js';
import { dashboardPrefix, dashboardRouter, type DashboardDeps } from './dashboard/routes.js';

export interface InventoryRoutesDeps {
  storage: Storage;
  authorizer: Authorizer;
  authenticate: RequestAuthenticator;
  /** The reconciler's queue status, forced reconcile and preflight report; absent ones answer 503. */
  admin?: AdminHooks;
  /** GraphQL depth and cost limits (defaultQueryLimits otherwise). */
  limits?: QueryLimits;
  /** How the dashboard signs browsers in and where it finds Cluster API's Clusters. */
  dashboard?: Pick<DashboardDeps, 'tokens' | 'clusterApiCluster' | 'readClusterApiCluster' | 'readOrcImage' | 'readEvents' | 'setClusterApiPaused' | 'sessions' | 'assetsDir' | 'openstackCalls'>;
}

/** Mounts the routes; the function it returns, called when the server closes, stops the inventory cache they read and the dashboard's sampling. */
export function inventoryRoutes(deps: InventoryRoutesDeps): (router: express.Router) => () => void {
  return (app) => {
    mountGraphql(app, deps);
    const admin = adminHandler({ ...deps, hooks: deps.admin });
    // Also under the computed kinds' group-version, where kube-apiserver's aggregator routes it.
    app.use([adminPrefix, `/apis/${computedApiVersion}/admin`], (request, response) => admin(request, response));
    const dashboard = dashboardRouter({ ...deps.dashboard, storage: deps.storage, authorizer: deps.authorizer, authenticate: deps.authenticate, hooks: deps.admin });
    app.use([dashboardPrefix, `/apis/${computedApiVersion}/dashboard`], dashboard.router);
    const releaseInventory = cacheInventory(deps.storage);
    return () => {
      dashboard.close();
      releaseInventory();
    };
  };
}
