/**
 * GET /servers and /servers/detail: the query read into filters (with the
 * microversion and role each needs), the servers that pass them, sorted and
 * paged, with a next link on a full page.
 */
import type { Request, Response } from 'express';
import type { SimulatorContext } from '../framework.js';
import { badRequest, forbidden, policyForbidden } from './errors.js';
import { callerOf, computeUrls, pageOf, queryAll, queryOne, type Caller, type NovaStore, type Server } from './model.js';
import { addressesOf, serverDetail, serverSummary, statesByStatus } from './views.js';

type Query = Record<string, unknown>;

/** What a listed server must match; an absent field matches every server. */
interface ServerFilter {
  projectId?: string;
  name?: RegExp;
  vmStates?: Set<string>;
  taskStates?: Set<string | null>;
  changesSince?: number;
  changesBefore?: number;
  tags?: string[];
  tagsAny?: string[];
  notTags?: string[];
  notTagsAny?: string[];
  image?: string;
  flavor?: string;
  reservationId?: string;
  ip?: RegExp;
  ip6?: RegExp;
  availabilityZone?: string;
  keyName?: string;
  userId?: string;
  vmState?: string;
  host?: string;
}

const isTrue = (value: string | undefined) => value !== undefined && !['false', '0', 'off', 'no', 'f', 'n'].includes(value.toLowerCase());

/** A regular expression the filter matches with; one that does not compile matches nothing. */
function patternOf(text: string | undefined): RegExp | undefined {
  if (text === undefined) return undefined;
  try {
    return new RegExp(text);
  } catch {
    return /(?!)/;
  }
}

/** `maxLimit`: nova.conf's `[api] max_limit` (pageOf's default, 1000, when not given). */
export function listServers(req: Request, res: Response, detail: boolean, store: NovaStore, ctx: SimulatorContext, maxLimit?: number): void {
  const caller = callerOf(res);
  const query = req.query as Query;
  const filter = serverFilterOf(query, caller, detail);
  if (filter === 'matches nothing') {
    res.json({ servers: [] });
    return;
  }
  const candidates = [...store.servers.values()];
  // Deleted servers are listed only to those asking what changed.
  if (filter.changesSince !== undefined || filter.changesBefore !== undefined) candidates.push(...store.deleted.values());
  const selected = candidates.filter((s) => matches(s, filter, ctx));
  sortServers(selected, query);

  const { page, limit } = pageOf(selected, query, (s) => s.id, maxLimit);
  const body: Record<string, unknown> = {
    servers: page.map((s) => (detail ? serverDetail(s, caller, ctx, { single: false }) : serverSummary(s, ctx))),
  };
  if (page.length > 0 && page.length === limit) body.servers_links = [{ rel: 'next', href: nextPageHref(query, limit, page.at(-1)!.id, detail, ctx) }];
  res.json(body);
}

/** The query's filters, checked in nova-api's order; 'matches nothing' for statuses none of which exists, before 2.38 (which answers 400). */
function serverFilterOf(query: Query, caller: Caller, detail: boolean): ServerFilter | 'matches nothing' {
  const one = (key: string) => queryOne(query, key);
  const allTenants = query.all_tenants !== undefined && (one('all_tenants') === '' || isTrue(one('all_tenants')));
  if (allTenants && !caller.admin) throw policyForbidden(`os_compute_api:servers:${detail ? 'detail' : 'index'}:get_all_tenants`);
  const window = changesWindowOf(query, caller);
  const states = stateFilterOf(query, caller);
  if (states === 'matches nothing') return states;

  const tagList = (key: string) => (caller.minor >= 26 && one(key) !== undefined ? one(key)!.split(',') : undefined);
  // Admins may filter on more fields; since 2.83 everyone may.
  const extendedFilters = caller.admin || caller.minor >= 83;
  const extended = (key: string) => (extendedFilters ? one(key) : undefined);
  return {
    projectId: allTenants ? (one('project_id') ?? one('tenant_id')) : caller.projectId,
    name: patternOf(one('name')),
    ...states,
    ...window,
    tags: tagList('tags'),
    tagsAny: tagList('tags-any'),
    notTags: tagList('not-tags'),
    notTagsAny: tagList('not-tags-any'),
    image: one('image')?.split('/').at(-1),
    flavor: one('flavor')?.split('/').at(-1),
    reservationId: one('reservation_id'),
    ip: patternOf(one('ip')),
    ip6: patternOf(one('ip6')),
    availabilityZone: extended('availability_zone'),
    keyName: extended('key_name'),
    userId: extended('user_id'),
    vmState: extended('vm_state'),
    host: caller.admin ? one('host') : undefined,
  };
}

/** changes-since, and changes-before (2.66): ISO 8601 instants, the first no later than the second. */
function changesWindowOf(query: Query, caller: Caller): { changesSince?: number; changesBefore?: number } {
  const instant = (key: string) => {
    const text = queryOne(query, key);
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
  return { changesSince, changesBefore };
}

/** The vm and task states the `status` values stand for; unknown ones are ignored, or 400 since 2.38. */
function stateFilterOf(query: Query, caller: Caller): Pick<ServerFilter, 'vmStates' | 'taskStates'> | 'matches nothing' {
  const statuses = queryAll(query, 'status');
  if (statuses.length === 0) return {};
  const matched = statuses.map((s) => statesByStatus[s.toUpperCase()]).filter((s) => s !== undefined);
  if (matched.length === 0) {
    if (caller.minor >= 38) throw badRequest('Invalid status value');
    return 'matches nothing';
  }
  const vmStates = new Set(matched.map((m) => m.vmState));
  const taskStates = matched.every((m) => m.taskStates) ? new Set(matched.flatMap((m) => m.taskStates!)) : undefined;
  if (vmStates.size === 1 && vmStates.has('deleted') && !caller.admin) throw forbidden('Only administrators may list deleted instances');
  return { vmStates, taskStates };
}

function matches(s: Server, filter: ServerFilter, ctx: SimulatorContext): boolean {
  const { tags, tagsAny, notTags, notTagsAny, ip, ip6 } = filter;
  if (filter.projectId !== undefined && s.projectId !== filter.projectId) return false;
  if (filter.name && !filter.name.test(s.name)) return false;
  if (filter.vmStates && !filter.vmStates.has(s.vmState)) return false;
  if (filter.taskStates && !filter.taskStates.has(s.taskState)) return false;
  if (filter.changesSince !== undefined && s.updatedAt < filter.changesSince) return false;
  if (filter.changesBefore !== undefined && s.updatedAt > filter.changesBefore) return false;
  if (tags && !tags.every((t) => s.tags.includes(t))) return false;
  if (tagsAny && !tagsAny.some((t) => s.tags.includes(t))) return false;
  if (notTags?.every((t) => s.tags.includes(t))) return false;
  if (notTagsAny?.some((t) => s.tags.includes(t))) return false;
  if (filter.image !== undefined && s.imageId !== filter.image) return false;
  if (filter.flavor !== undefined && s.flavor.id !== filter.flavor) return false;
  if (filter.reservationId !== undefined && s.reservationId !== filter.reservationId) return false;
  if (ip || ip6) {
    const addresses = Object.values(addressesOf(s, ctx)).flat();
    if (ip && !addresses.some((a) => a.version === 4 && ip.test(a.addr))) return false;
    if (ip6 && !addresses.some((a) => a.version === 6 && ip6.test(a.addr))) return false;
  }
  if (filter.availabilityZone !== undefined && (s.availabilityZone ?? '') !== filter.availabilityZone) return false;
  if (filter.keyName !== undefined && s.keyName !== filter.keyName) return false;
  if (filter.userId !== undefined && s.userId !== filter.userId) return false;
  if (filter.vmState !== undefined && s.vmState !== filter.vmState) return false;
  if (filter.host !== undefined && s.host !== filter.host) return false;
  return true;
}

/** sort_key and sort_dir (newest first by default), ties broken by ID in the same direction. */
function sortServers(servers: Server[], query: Query): void {
  const sortKey = queryOne(query, 'sort_key') ?? 'created_at';
  const direction = (queryOne(query, 'sort_dir') ?? 'desc') === 'asc' ? 1 : -1;
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
  servers.sort((a, b) => {
    const [x, y] = [sortValue(a), sortValue(b)];
    if (x !== y) return x < y ? -direction : direction;
    return a.id < b.id ? -direction : direction;
  });
}

/** The same query from after the page's last server. */
function nextPageHref(query: Query, limit: number, lastId: string, detail: boolean, ctx: SimulatorContext): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (key === 'marker') continue;
    for (const v of Array.isArray(value) ? value : [value]) params.append(key, String(v));
  }
  params.set('limit', String(limit));
  params.set('marker', lastId);
  return `${computeUrls(ctx).root()}/v2.1/servers${detail ? '/detail' : ''}?${params.toString()}`;
}
