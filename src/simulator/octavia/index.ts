/**
 * A simulated Octavia (Zed, API v2.26) with ministack's setup: the amphora
 * provider (and its `octavia` alias) on no-op amphora/compute drivers, a real
 * Neutron VIP port, no flavors or availability zones, unlimited quotas.
 */
import express from 'express';
import { z } from 'zod';
import { SimulatorError, type SimulatedService, type SimulatorContext } from '../framework.js';
import { octaviaFault, parseBody, policyForbidden } from './errors.js';
import { healthMonitorRoutes } from './healthmonitors.js';
import { listenerRoutes } from './listeners.js';
import { loadBalancerRoutes, providers } from './loadbalancers.js';
import { callerOf, createStore, octaviaTime, requireReader, type OctaviaQuirks } from './model.js';
import { poolRoutes } from './pools.js';
import { restoreStore, snapshotStore } from './snapshot.js';
import { OctaviaState } from './state.js';

/** Octavia 11's API versions and their dates, as its root document lists them. */
const apiVersions: [string, string][] = [
  ['v2.0', '2016-12-11T00:00:00Z'],
  ['v2.1', '2018-04-20T00:00:00Z'],
  ['v2.2', '2018-07-31T00:00:00Z'],
  ['v2.3', '2018-12-18T00:00:00Z'],
  ['v2.4', '2018-12-19T00:00:00Z'],
  ['v2.5', '2019-01-21T00:00:00Z'],
  ['v2.6', '2019-01-25T00:00:00Z'],
  ['v2.7', '2018-01-25T12:00:00Z'],
  ['v2.8', '2019-02-12T00:00:00Z'],
  ['v2.9', '2019-03-04T00:00:00Z'],
  ['v2.10', '2019-03-05T00:00:00Z'],
  ['v2.11', '2019-06-24T00:00:00Z'],
  ['v2.12', '2019-09-11T00:00:00Z'],
  ['v2.13', '2019-09-13T00:00:00Z'],
  ['v2.14', '2019-11-10T00:00:00Z'],
  ['v2.15', '2020-03-10T00:00:00Z'],
  ['v2.16', '2020-03-15T00:00:00Z'],
  ['v2.17', '2020-04-29T00:00:00Z'],
  ['v2.18', '2020-04-29T01:00:00Z'],
  ['v2.19', '2020-05-12T00:00:00Z'],
  ['v2.20', '2020-08-02T00:00:00Z'],
  ['v2.21', '2020-09-03T00:00:00Z'],
  ['v2.22', '2020-09-04T00:00:00Z'],
  ['v2.23', '2020-09-07T00:00:00Z'],
  ['v2.24', '2020-10-15T00:00:00Z'],
  ['v2.25', '2021-10-02T00:00:00Z'],
  ['v2.26', '2022-08-29T00:00:00Z'],
];

const quotaNames = ['load_balancer', 'listener', 'member', 'pool', 'health_monitor', 'l7policy', 'l7rule'] as const;
const quotaValue = z.number().int().min(-1).max(2_000_000_000).nullable().optional();
const quotaSchema = z
  .object({
    quota: z
      .object({
        load_balancer: quotaValue,
        listener: quotaValue,
        member: quotaValue,
        pool: quotaValue,
        health_monitor: quotaValue,
        l7policy: quotaValue,
        l7rule: quotaValue,
        // Rocky's spellings, still accepted.
        loadbalancer: quotaValue,
        healthmonitor: quotaValue,
      })
      .strict(),
  })
  .strict();

function miscRoutes(api: express.Router, state: OctaviaState, ctx: SimulatorContext): void {
  api.get('/lbaas/providers', (_req, res) => {
    requireReader(callerOf(res));
    res.json({ providers });
  });

  api.get('/lbaas/flavors', (_req, res) => {
    requireReader(callerOf(res));
    res.json({ flavors: [], flavors_links: [] });
  });
  api.get('/lbaas/flavors/:id', (req) => {
    throw new SimulatorError(404, `Flavor ${req.params.id} not found.`);
  });
  api.get('/lbaas/availabilityzones', (_req, res) => {
    requireReader(callerOf(res));
    res.json({ availability_zones: [], availability_zones_links: [] });
  });

  const quotaOf = (projectId: string) =>
    Object.fromEntries(
      quotaNames.map((name) => {
        const limit = ctx.quota(projectId, name);
        return [name, Number.isFinite(limit) ? limit : -1];
      }),
    );

  api.get('/lbaas/quotas', (_req, res) => {
    const caller = callerOf(res);
    requireReader(caller);
    res.json({ quotas: [{ project_id: caller.projectId, ...quotaOf(caller.projectId) }], quotas_links: [] });
  });

  api.get('/lbaas/quotas/defaults', (_req, res) => {
    requireReader(callerOf(res));
    res.json({ quota: Object.fromEntries(quotaNames.map((name) => [name, -1])) });
  });

  api.get('/lbaas/quotas/:projectId', (req, res) => {
    requireReader(callerOf(res), req.params.projectId);
    res.json({ quota: quotaOf(req.params.projectId) });
  });

  api.put('/lbaas/quotas/:projectId', (req, res) => {
    if (!callerOf(res).quotaAdmin) throw policyForbidden();
    const { loadbalancer, healthmonitor, ...limits } = parseBody(quotaSchema, req.body).quota;
    const changes: Record<string, number | null | undefined> = {
      ...limits,
      load_balancer: limits.load_balancer ?? loadbalancer,
      health_monitor: limits.health_monitor ?? healthmonitor,
    };
    for (const [name, limit] of Object.entries(changes)) {
      if (limit !== undefined) ctx.setQuota(req.params.projectId, name, limit === null || limit < 0 ? Infinity : limit);
    }
    res.status(202).json({ quota: quotaOf(req.params.projectId) });
  });

  api.delete('/lbaas/quotas/:projectId', (req, res) => {
    if (!callerOf(res).quotaAdmin) throw policyForbidden();
    for (const name of quotaNames) ctx.setQuota(req.params.projectId, name, Infinity);
    res.status(202).end();
  });

  /** One no-op amphora per load balancer (SINGLE topology), visible to admins. */
  const amphorae = () =>
    [...state.store.loadbalancer.values()].map((lb) => ({
      id: lb.amphoraId!,
      loadbalancer_id: lb.id,
      compute_id: lb.amphoraId!,
      lb_network_ip: null,
      vrrp_ip: null,
      ha_ip: lb.attrs.vip_address,
      vrrp_port_id: null,
      ha_port_id: lb.attrs.vip_port_id,
      cert_expiration: null,
      cert_busy: false,
      role: 'STANDALONE',
      status: lb.provisioningStatus === 'PENDING_CREATE' ? 'PENDING_CREATE' : lb.provisioningStatus === 'PENDING_DELETE' ? 'PENDING_DELETE' : 'ALLOCATED',
      vrrp_interface: null,
      vrrp_id: 1,
      vrrp_priority: null,
      cached_zone: null,
      created_at: octaviaTime(lb.createdAt),
      updated_at: lb.updatedAt === null ? null : octaviaTime(lb.updatedAt),
      image_id: null,
      compute_flavor: null,
    }));

  api.get('/octavia/amphorae', (_req, res) => {
    if (!callerOf(res).admin) throw policyForbidden();
    res.json({ amphorae: amphorae(), amphorae_links: [] });
  });

  api.get('/octavia/amphorae/:id', (req, res) => {
    if (!callerOf(res).admin) throw policyForbidden();
    const amphora = amphorae().find((a) => a.id === req.params.id);
    if (!amphora) throw new SimulatorError(404, `Amphora ${req.params.id} not found.`);
    res.json({ amphora });
  });
}

/** A factory for a simulated Octavia with `quirks`, for SimulatorOptions.services. */
export function octaviaWithQuirks(quirks: OctaviaQuirks): (ctx: SimulatorContext) => SimulatedService {
  return (ctx) => createOctaviaSimulator(ctx, quirks);
}

export function createOctaviaSimulator(ctx: SimulatorContext, quirks: OctaviaQuirks = {}): SimulatedService {
  const state = new OctaviaState(createStore(), ctx, quirks);

  return {
    type: 'load-balancer',
    name: 'octavia',
    prefix: '/load-balancer',
    publicPaths: [/^\/?$/],
    router() {
      const router = express.Router();
      router.get('/', (_req, res) => {
        const href = `${ctx.baseUrl()}/load-balancer/v2`;
        res.json({
          versions: apiVersions.map(([id, updated], index) => ({
            id,
            status: index === apiVersions.length - 1 ? 'CURRENT' : 'SUPPORTED',
            updated,
            links: [{ href, rel: 'self' }],
          })),
        });
      });

      const api = express.Router();
      loadBalancerRoutes(api, state);
      listenerRoutes(api, state);
      poolRoutes(api, state);
      healthMonitorRoutes(api, state);
      miscRoutes(api, state, ctx);
      // Octavia serves its v2 API under both /v2 and /v2.0 (gophercloud uses the latter).
      router.use(['/v2', '/v2.0'], api);
      return router;
    },
    formatError: octaviaFault,
    state: { snapshot: () => snapshotStore(state.store), restore: (snapshot) => restoreStore(state.store, snapshot), resume: () => state.resume() },
    inventory: () => ({
      loadbalancers: state.store.loadbalancer.size,
      listeners: state.store.listener.size,
      pools: state.store.pool.size,
      members: state.store.member.size,
      healthmonitors: state.store.healthmonitor.size,
    }),
  };
}
