/**
 * A simulated Nova (Zed, microversions 2.1-2.93) with one fake compute host
 * per availability zone: by default `ministack` in AZ `nova`, as ministack's
 * FakeDriver setup has.
 */
import express from 'express';
import type { SimulatedService, SimulatorContext } from '../framework.js';
import { novaFault, policyForbidden } from './errors.js';
import { flavorRoutes } from './flavors.js';
import { keypairRoutes } from './keypairs.js';
import { ServerLifecycle } from './lifecycle.js';
import { MAX_MINOR, MIN_MINOR, negotiateMicroversion } from './microversion.js';
import { callerOf, createStore, isoTime, quotaOf, type NovaStore } from './model.js';
import { serverGroupRoutes } from './server-groups.js';
import { serverResourceRoutes } from './server-resources.js';
import { serverRoutes } from './servers.js';
import { restoreStore, snapshotStore } from './snapshot.js';

function versionDocuments(ctx: SimulatorContext) {
  const root = () => `${ctx.baseUrl()}/compute`;
  const v21 = () => ({
    id: 'v2.1',
    status: 'CURRENT',
    version: `2.${MAX_MINOR}`,
    min_version: `2.${MIN_MINOR}`,
    updated: '2013-07-23T11:33:21Z',
  });
  return {
    list: () => ({
      versions: [
        { id: 'v2.0', status: 'SUPPORTED', version: '', min_version: '', updated: '2011-01-21T11:33:21Z', links: [{ rel: 'self', href: `${root()}/v2/` }] },
        { ...v21(), links: [{ rel: 'self', href: `${root()}/v2.1/` }] },
      ],
    }),
    current: () => ({
      version: {
        ...v21(),
        links: [
          { rel: 'self', href: `${root()}/v2.1/` },
          { rel: 'describedby', type: 'text/html', href: 'http://docs.openstack.org/' },
        ],
        'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.compute+json;version=2.1' }],
      },
    }),
  };
}

function miscRoutes(api: express.Router, store: NovaStore, ctx: SimulatorContext): void {
  const zones = [...new Set(store.hosts.map((host) => host.zone))];
  api.get('/os-availability-zone', (_req, res) => {
    res.json({ availabilityZoneInfo: zones.map((zoneName) => ({ zoneName, zoneState: { available: true }, hosts: null })) });
  });

  api.get('/os-availability-zone/detail', (_req, res) => {
    if (!callerOf(res).admin) throw policyForbidden('os_compute_api:os-availability-zone:detail');
    const service = { available: true, active: true, updated_at: isoTime(ctx.clock.now()).replace('Z', '.000000') };
    res.json({
      availabilityZoneInfo: [
        { zoneName: 'internal', zoneState: { available: true }, hosts: { [store.hosts[0].name]: { 'nova-conductor': service, 'nova-scheduler': service } } },
        ...zones.map((zoneName) => ({
          zoneName,
          zoneState: { available: true },
          hosts: Object.fromEntries(store.hosts.filter((host) => host.zone === zoneName).map((host) => [host.name, { 'nova-compute': service }])),
        })),
      ],
    });
  });

  api.get('/limits', (_req, res) => {
    const caller = callerOf(res);
    const limit = (resource: string) => {
      const value = quotaOf(ctx, caller.projectId, resource);
      return Number.isFinite(value) ? value : -1;
    };
    const servers = [...store.servers.values()].filter((s) => s.projectId === caller.projectId);
    const absolute: Record<string, number> = {
      maxServerMeta: limit('metadata_items'),
      maxTotalInstances: limit('instances'),
      maxTotalCores: limit('cores'),
      maxTotalRAMSize: limit('ram'),
      maxTotalKeypairs: limit('key_pairs'),
      maxServerGroups: limit('server_groups'),
      maxServerGroupMembers: limit('server_group_members'),
      totalInstancesUsed: servers.length,
      totalCoresUsed: servers.reduce((sum, s) => sum + s.flavor.vcpus, 0),
      totalRAMUsed: servers.reduce((sum, s) => sum + s.flavor.ram, 0),
      totalServerGroupsUsed: [...store.groups.values()].filter((g) => g.projectId === caller.projectId).length,
    };
    // Image metadata (2.39), nova-network proxies (2.36) and personality files (2.57) left the API over time.
    if (caller.minor < 39) absolute.maxImageMeta = limit('metadata_items');
    if (caller.minor < 57) {
      absolute.maxPersonality = limit('injected_files');
      absolute.maxPersonalitySize = limit('injected_file_content_bytes');
    }
    if (caller.minor < 36) {
      Object.assign(absolute, {
        maxSecurityGroups: limit('security_groups'),
        maxSecurityGroupRules: limit('security_group_rules'),
        maxTotalFloatingIps: limit('floating_ips'),
        totalFloatingIpsUsed: 0,
        totalSecurityGroupsUsed: 0,
      });
    }
    res.json({ limits: { rate: [], absolute } });
  });
}

/** What nova.conf sets that a test may change. */
export interface NovaOptions {
  /** `[api] max_limit`: the most servers one page of a list holds, whatever `limit` asks for (Nova's default 1000). */
  maxLimit?: number;
}

export function createNovaSimulator(ctx: SimulatorContext, options: NovaOptions = {}): SimulatedService {
  const store = createStore(ctx.availabilityZones);
  const lifecycle = new ServerLifecycle(store, ctx);
  const documents = versionDocuments(ctx);

  return {
    type: 'compute',
    name: 'nova',
    prefix: '/compute',
    publicPaths: [/^\/?$/, /^\/v2\.1\/?$/],
    router() {
      const router = express.Router();
      router.get('/', (_req, res) => void res.json(documents.list()));

      const api = express.Router();
      api.use(negotiateMicroversion);
      api.get('/', (_req, res) => void res.json(documents.current()));
      serverRoutes(api, store, ctx, lifecycle, options.maxLimit);
      serverResourceRoutes(api, store, ctx, lifecycle);
      flavorRoutes(api, store, ctx);
      keypairRoutes(api, store, ctx);
      serverGroupRoutes(api, store, ctx);
      miscRoutes(api, store, ctx);
      router.use('/v2.1', api);
      return router;
    },
    formatError: novaFault,
    state: { snapshot: () => snapshotStore(store), restore: (snapshot) => restoreStore(store, snapshot), resume: () => lifecycle.resume() },
    inventory: () => ({
      servers: store.servers.size,
      keypairs: store.keypairs.length,
      server_groups: store.groups.size,
    }),
  };
}
