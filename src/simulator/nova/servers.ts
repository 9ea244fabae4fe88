/**
 * /servers: the routes; list with filters and paging, show, update, delete,
 * the power actions and an admin's os-resetState. The create is in
 * server-create.ts.
 */
import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import type { SimulatorContext } from '../framework.js';
import { badRequest, forbidden, invalidState, parseBody, policyForbidden } from './errors.js';
import type { ServerLifecycle } from './lifecycle.js';
import { callerOf, computeUrls, pageOf, queryAll, queryOne, visibleServer, type NovaStore, type Server } from './model.js';
import { rebootSchema, resetStateSchema, serverUpdateSchema } from './schemas.js';
import { createServers } from './server-create.js';
import { addressesOf, serverDetail, serverSummary, statesByStatus } from './views.js';

const isTrue = (value: string | undefined) => value !== undefined && !['false', '0', 'off', 'no', 'f', 'n'].includes(value.toLowerCase());

export function serverRoutes(api: Router, store: NovaStore, ctx: SimulatorContext, lifecycle: ServerLifecycle): void {
  const urls = computeUrls(ctx);

  api.post('/servers', (req, res) => createServers(req, res, store, ctx, lifecycle));

  function listServers(req: Request, res: Response, detail: boolean): void {
    const caller = callerOf(res);
    const query = req.query as Record<string, unknown>;
    const one = (key: string) => queryOne(query, key);
    const allTenants = query.all_tenants !== undefined && (one('all_tenants') === '' || isTrue(one('all_tenants')));
    if (allTenants && !caller.admin) throw policyForbidden(`os_compute_api:servers:${detail ? 'detail' : 'index'}:get_all_tenants`);
    const extendedFilters = caller.admin || caller.minor >= 83;

    const instant = (key: string) => {
      const text = one(key);
      if (text === undefined) return undefined;
      const ms = Date.parse(text);
      if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(text) || Number.isNaN(ms)) {
        throw badRequest(`Invalid input for query parameters ${key}. Value: ${text}. '${text}' is not a 'date-time'`);
      }
      return ms;
    };
    const changesSince = instant('changes-since');
    const changesBefore = caller.minor >= 66 ? instant('changes-before') : undefined;
    if (changesSince !== undefined && changesBefore !== undefined && changesBefore < changesSince) {
      throw badRequest('The value of changes-since must be less than or equal to changes-before.');
    }

    let vmStates: Set<string> | undefined;
    let taskStates: Set<string | null> | undefined;
    const statuses = queryAll(query, 'status');
    if (statuses.length > 0) {
      const matched = statuses.map((s) => statesByStatus[s.toUpperCase()]).filter((s) => s !== undefined);
      if (matched.length === 0) {
        if (caller.minor >= 38) throw badRequest('Invalid status value');
        res.json({ servers: [] });
        return;
      }
      vmStates = new Set(matched.map((m) => m.vmState));
      if (matched.every((m) => m.taskStates)) taskStates = new Set(matched.flatMap((m) => m.taskStates!));
      if (vmStates.size === 1 && vmStates.has('deleted') && !caller.admin) throw forbidden('Only administrators may list deleted instances');
    }

    let nameFilter: RegExp | undefined;
    const name = one('name');
    if (name !== undefined) {
      try {
        nameFilter = new RegExp(name);
      } catch {
        nameFilter = /(?!)/;
      }
    }
    const tagList = (key: string) => (caller.minor >= 26 && one(key) !== undefined ? one(key)!.split(',') : undefined);
    const [tags, tagsAny, notTags, notTagsAny] = [tagList('tags'), tagList('tags-any'), tagList('not-tags'), tagList('not-tags-any')];
    const image = one('image')?.split('/').at(-1);
    const flavor = one('flavor')?.split('/').at(-1);
    const ipFilter = (key: string) => {
      const text = one(key);
      if (text === undefined) return undefined;
      try {
        return new RegExp(text);
      } catch {
        return /(?!)/;
      }
    };
    const [ip, ip6] = [ipFilter('ip'), ipFilter('ip6')];
    const projectFilter = allTenants ? (one('project_id') ?? one('tenant_id')) : caller.projectId;

    const candidates = [...store.servers.values()];
    if (changesSince !== undefined || changesBefore !== undefined) candidates.push(...store.deleted.values());
    const selected = candidates.filter((s) => {
      if (projectFilter !== undefined && s.projectId !== projectFilter) return false;
      if (nameFilter && !nameFilter.test(s.name)) return false;
      if (vmStates && !vmStates.has(s.vmState)) return false;
      if (taskStates && !taskStates.has(s.taskState)) return false;
      if (changesSince !== undefined && s.updatedAt < changesSince) return false;
      if (changesBefore !== undefined && s.updatedAt > changesBefore) return false;
      if (tags && !tags.every((t) => s.tags.includes(t))) return false;
      if (tagsAny && !tagsAny.some((t) => s.tags.includes(t))) return false;
      if (notTags?.every((t) => s.tags.includes(t))) return false;
      if (notTagsAny?.some((t) => s.tags.includes(t))) return false;
      if (image !== undefined && s.imageId !== image) return false;
      if (flavor !== undefined && s.flavor.id !== flavor) return false;
      if (one('reservation_id') !== undefined && s.reservationId !== one('reservation_id')) return false;
      if (ip || ip6) {
        const addresses = Object.values(addressesOf(s, ctx)).flat();
        if (ip && !addresses.some((a) => a.version === 4 && ip.test(a.addr))) return false;
        if (ip6 && !addresses.some((a) => a.version === 6 && ip6.test(a.addr))) return false;
      }
      if (extendedFilters) {
        if (one('availability_zone') !== undefined && (s.availabilityZone ?? '') !== one('availability_zone')) return false;
        if (one('key_name') !== undefined && s.keyName !== one('key_name')) return false;
        if (one('user_id') !== undefined && s.userId !== one('user_id')) return false;
        if (one('vm_state') !== undefined && s.vmState !== one('vm_state')) return false;
      }
      if (caller.admin && one('host') !== undefined && s.host !== one('host')) return false;
      return true;
    });

    const sortKey = one('sort_key') ?? 'created_at';
    const direction = (one('sort_dir') ?? 'desc') === 'asc' ? 1 : -1;
    const sortValue = (s: Server): string | number =>
      sortKey === 'display_name'
        ? s.name
        : sortKey === 'updated_at'
          ? s.updatedAt
          : sortKey === 'uuid'
            ? s.id
            : sortKey === 'launched_at'
              ? (s.launchedAt ?? 0)
              : s.createdAt;
    selected.sort((a, b) => {
      const [x, y] = [sortValue(a), sortValue(b)];
      if (x !== y) return x < y ? -direction : direction;
      return a.id < b.id ? -direction : direction;
    });

    const { page, limit } = pageOf(selected, query, (s) => s.id);
    const body: Record<string, unknown> = {
      servers: page.map((s) => (detail ? serverDetail(s, caller, ctx, { single: false }) : serverSummary(s, ctx))),
    };
    if (page.length > 0 && page.length === limit) {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) {
        if (key === 'marker') continue;
        for (const v of Array.isArray(value) ? value : [value]) params.append(key, String(v));
      }
      params.set('limit', String(limit));
      params.set('marker', page.at(-1)!.id);
      body.servers_links = [{ rel: 'next', href: `${urls.root()}/v2.1/servers${detail ? '/detail' : ''}?${params.toString()}` }];
    }
    res.json(body);
  }

  api.get('/servers', (req, res) => listServers(req, res, false));
  api.get('/servers/detail', (req, res) => listServers(req, res, true));

  api.get('/servers/:id', (req, res) => {
    const caller = callerOf(res);
    res.json({ server: serverDetail(visibleServer(store, req.params.id, caller), caller, ctx, { single: true }) });
  });

  api.put('/servers/:id', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    const changes = parseBody(serverUpdateSchema(caller.minor), req.body).server;
    if (changes.name !== undefined) server.name = changes.name;
    if (changes.description !== undefined) server.description = changes.description;
    if (changes.accessIPv4 !== undefined) server.accessIPv4 = changes.accessIPv4;
    if (changes.accessIPv6 !== undefined) server.accessIPv6 = changes.accessIPv6;
    if (changes['OS-DCF:diskConfig'] !== undefined) server.diskConfig = changes['OS-DCF:diskConfig'];
    if (changes.hostname !== undefined) server.hostname = changes.hostname;
    server.updatedAt = ctx.clock.now();
    res.json({ server: serverDetail(server, caller, ctx, { single: true }) });
  });

  api.delete('/servers/:id', (req, res) => {
    lifecycle.delete(visibleServer(store, req.params.id, callerOf(res)));
    res.status(204).end();
  });

  api.post('/servers/:id/action', (req, res) => {
    const caller = callerOf(res);
    const server = visibleServer(store, req.params.id, caller);
    const body = z.record(z.string(), z.unknown()).safeParse(req.body);
    const action = body.success ? Object.keys(body.data)[0] : undefined;
    switch (action) {
      case 'os-stop':
        lifecycle.powerAction(server, 'stop');
        break;
      case 'os-start':
        lifecycle.powerAction(server, 'start');
        break;
      case 'reboot': {
        const type = parseBody(rebootSchema, req.body).reboot.type.toUpperCase();
        lifecycle.powerAction(server, 'reboot', type === 'HARD');
        break;
      }
      case 'os-resetState':
        if (!caller.admin) throw policyForbidden('os_compute_api:os-admin-actions:reset_state');
        lifecycle.resetState(server, parseBody(resetStateSchema, req.body)['os-resetState'].state);
        break;
      case 'os-getConsoleOutput':
        if (server.vmState !== 'active') throw invalidState('get_console_output', server.id, server.vmState);
        // What nova's FakeDriver returns.
        res.json({ output: 'FAKE CONSOLE OUTPUT\nANOTHER\nLAST LINE' });
        return;
      default:
        throw badRequest(`There is no such action: ${action ?? ''}`);
    }
    res.status(202).end();
  });
}
