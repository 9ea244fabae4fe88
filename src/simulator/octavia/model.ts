/**
 * Octavia's objects in the simulator. Each keeps its API attributes as shown
 * on the wire (`attrs`) next to the status and relations the routes manage.
 */
import type { Request, Response } from 'express';
import { SimulatorError, type TokenScope } from '../framework.js';
import { policyForbidden } from './errors.js';

export type Kind = 'loadbalancer' | 'listener' | 'pool' | 'member' | 'healthmonitor';

export interface Resource {
  kind: Kind;
  id: string;
  projectId: string;
  /** The load balancer this object belongs to (its own id for a load balancer). */
  lbId: string;
  /** Pool of a member or health monitor. */
  poolId?: string;
  attrs: Record<string, unknown>;
  provisioningStatus: string;
  operatingStatus: string;
  createdAt: number;
  updatedAt: number | null;
  /** Load balancer only: whether Octavia created the VIP port (and so deletes it). */
  vipOwned?: boolean;
  /** Load balancer only: its (no-op) amphora. */
  amphoraId?: string;
}

/**
 * One kind's objects by id, with each load balancer's and each pool's kept apart as well: a view of
 * a load balancer names its listeners and pools, a pool's its members, and a count against quota
 * is per project. Found by scanning the whole kind, each of those cost O(objects), so that a cloud
 * of a thousand load balancers spent most of its time scanning. Iteration follows creation order.
 */
export class ResourceTable {
  readonly #byId = new Map<string, Resource>();
  readonly #byLoadBalancer = new Map<string, Set<Resource>>();
  readonly #byPool = new Map<string, Set<Resource>>();
  readonly #countByProject = new Map<string, number>();

  get size(): number {
    return this.#byId.size;
  }

  get(id: string): Resource | undefined {
    return this.#byId.get(id);
  }

  values(): IterableIterator<Resource> {
    return this.#byId.values();
  }

  add(resource: Resource): void {
    this.delete(resource.id);
    this.#byId.set(resource.id, resource);
    addTo(this.#byLoadBalancer, resource.lbId, resource);
    if (resource.poolId !== undefined) addTo(this.#byPool, resource.poolId, resource);
    this.#countByProject.set(resource.projectId, this.countInProject(resource.projectId) + 1);
  }

  delete(id: string): void {
    const resource = this.#byId.get(id);
    if (!resource) return;
    this.#byId.delete(id);
    removeFrom(this.#byLoadBalancer, resource.lbId, resource);
    if (resource.poolId !== undefined) removeFrom(this.#byPool, resource.poolId, resource);
    this.#countByProject.set(resource.projectId, this.countInProject(resource.projectId) - 1);
  }

  ofLoadBalancer(lbId: string): Resource[] {
    return [...(this.#byLoadBalancer.get(lbId) ?? [])];
  }

  ofPool(poolId: string): Resource[] {
    return [...(this.#byPool.get(poolId) ?? [])];
  }

  countInProject(projectId: string): number {
    return this.#countByProject.get(projectId) ?? 0;
  }

  /** Empties the table (and its indexes) and adds `resources`, in their order. */
  refill(resources: readonly Resource[]): void {
    this.#byId.clear();
    this.#byLoadBalancer.clear();
    this.#byPool.clear();
    this.#countByProject.clear();
    for (const resource of resources) this.add(resource);
  }
}

function addTo(index: Map<string, Set<Resource>>, key: string, resource: Resource): void {
  const members = index.get(key);
  if (members) members.add(resource);
  else index.set(key, new Set([resource]));
}

function removeFrom(index: Map<string, Set<Resource>>, key: string, resource: Resource): void {
  const members = index.get(key);
  members?.delete(resource);
  if (members?.size === 0) index.delete(key);
}

export type OctaviaStore = Record<Kind, ResourceTable>;

export const createStore = (): OctaviaStore => ({
  loadbalancer: new ResourceTable(),
  listener: new ResourceTable(),
  pool: new ResourceTable(),
  member: new ResourceTable(),
  healthmonitor: new ResourceTable(),
});

export interface Caller {
  projectId: string;
  /** Sees and changes every project's objects (admin, load-balancer_admin). */
  admin: boolean;
  /** May read every project's objects. */
  globalReader: boolean;
  /** May create, change and delete (its own project's) objects. */
  writer: boolean;
  reader: boolean;
  /** May change quotas (admin, load-balancer_quota_admin). */
  quotaAdmin: boolean;
}

/** Octavia's Zed default policy: without a load-balancer_* role (or admin) nothing is allowed. */
export function callerOf(res: Response): Caller {
  const auth = res.locals.auth as TokenScope;
  const roles = new Set(auth.roles);
  const admin = roles.has('admin') || roles.has('load-balancer_admin');
  const globalReader = admin || roles.has('load-balancer_global_observer');
  const writer = admin || roles.has('load-balancer_member');
  return {
    projectId: auth.projectId,
    admin,
    globalReader,
    writer,
    reader: writer || globalReader || roles.has('load-balancer_observer'),
    quotaAdmin: admin || roles.has('load-balancer_quota_admin'),
  };
}

export function requireWriter(caller: Caller, projectId: string): void {
  if (!caller.writer || (!caller.admin && projectId !== caller.projectId)) throw policyForbidden();
}

export function requireReader(caller: Caller, projectId?: string): void {
  if (!caller.reader || (projectId !== undefined && !caller.globalReader && projectId !== caller.projectId)) throw policyForbidden();
}

/** A PUT body over the current attributes: what it leaves out keeps its value, and `convert` may stand in for what it sets. */
export function withChanges(
  attrs: Record<string, unknown>,
  changes: Record<string, unknown>,
  convert: (key: string, value: unknown) => unknown = (_key, value) => value,
): Record<string, unknown> {
  const merged = { ...attrs };
  for (const [key, value] of Object.entries(changes)) if (value !== undefined) merged[key] = convert(key, value);
  return merged;
}

/** oslo's bool_from_string, as Octavia reads a query flag (cascade, additive_only): anything else is false. */
export function queryFlag(value: unknown): boolean {
  return ['1', 't', 'true', 'on', 'y', 'yes'].includes(
    String(value ?? '')
      .trim()
      .toLowerCase(),
  );
}

/** Octavia prints naive UTC datetimes without fractions. */
export const octaviaTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '');

function queryValues(req: Request, key: string): string[] {
  const value = (req.query as Record<string, unknown>)[key];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(','));
}

/** One attribute filter on one value: equal ignoring case, an empty value matching null; object values are not filtered on. */
function passes(actual: unknown, wanted: string[]): boolean {
  if (actual !== null && typeof actual === 'object') return true;
  return wanted.some((value) => String(actual).toLowerCase() === value.toLowerCase() || (actual === null && value === ''));
}

/**
 * The resources the id, name and tag filters keep, judged on what is stored, which their views show as is:
 * applied before rendering (as Octavia's query is), so that finding one load balancer among
 * thousands renders one view, not thousands with their listeners and pools. `listView` applies
 * every filter to the views again.
 */
export function narrowedBeforeViews<R extends { id: string; attrs: Record<string, unknown> }>(req: Request, resources: R[]): R[] {
  const ids = queryValues(req, 'id');
  const names = queryValues(req, 'name');
  const [all, any] = ['tags', 'tags-any'].map((key) => queryValues(req, key));
  if (ids.length === 0 && names.length === 0 && all!.length === 0 && any!.length === 0) return resources;
  const tagsOf = (r: R) => (Array.isArray(r.attrs.tags) ? (r.attrs.tags as string[]) : []);
  return resources.filter(
    (r) =>
      (ids.length === 0 || passes(r.id, ids)) &&
      (names.length === 0 || !('name' in r.attrs) || passes(r.attrs.name, names)) &&
      (all!.length === 0 || !('tags' in r.attrs) || all!.every((tag) => tagsOf(r).includes(tag))) &&
      (any!.length === 0 || !('tags' in r.attrs) || any!.some((tag) => tagsOf(r).includes(tag))),
  );
}

const paging = new Set(['limit', 'marker', 'page_reverse', 'sort', 'sort_key', 'sort_dir', 'fields', 'tags', 'tags-any', 'not-tags', 'not-tags-any']);

/**
 * GET on a collection: attribute filters (any scalar attribute of the view),
 * tag filters, sorting, limit/marker paging with links, and `fields`.
 */
export function listView(req: Request, views: Record<string, unknown>[], collection: string, baseHref: string): Record<string, unknown> {
  const query = req.query as Record<string, unknown>;
  let items = views.filter((view) => Object.keys(query).every((key) => paging.has(key) || !(key in view) || passes(view[key], queryValues(req, key))));
  const tagsOf = (view: Record<string, unknown>) => (Array.isArray(view.tags) ? (view.tags as string[]) : []);
  const [all, any, notAll, notAny] = ['tags', 'tags-any', 'not-tags', 'not-tags-any'].map((k) => queryValues(req, k));
  items = items.filter((view) => {
    const tags = tagsOf(view);
    if (all!.length && !all!.every((t) => tags.includes(t))) return false;
    if (any!.length && !any!.some((t) => tags.includes(t))) return false;
    if (notAll!.length && notAll!.every((t) => tags.includes(t))) return false;
    if (notAny!.length && notAny!.some((t) => tags.includes(t))) return false;
    return true;
  });

  const sort = queryValues(req, 'sort')[0] ?? queryValues(req, 'sort_key')[0];
  if (sort) {
    const [key, dir = queryValues(req, 'sort_dir')[0] ?? 'asc'] = sort.split(':');
    if (!items.every((v) => key! in v)) throw new SimulatorError(400, `Supplied sort key '${key}' is not valid.`);
    if (dir !== 'asc' && dir !== 'desc') throw new SimulatorError(400, `Supplied sort direction '${dir}' is not valid.`);
    const sign = dir === 'asc' ? 1 : -1;
    items.sort((a, b) => (String(a[key!]) < String(b[key!]) ? -sign : String(a[key!]) > String(b[key!]) ? sign : 0));
  }

  const links: { href: string; rel: string }[] = [];
  const limitText = queryValues(req, 'limit')[0];
  const marker = queryValues(req, 'marker')[0];
  if (marker !== undefined) {
    const index = items.findIndex((v) => v.id === marker);
    if (index < 0) throw new SimulatorError(400, `Supplied pagination marker '${marker}' is not valid.`);
    items = items.slice(index + 1);
  }
  if (limitText !== undefined) {
    const limit = Number(limitText);
    if (!Number.isInteger(limit) || limit < 0) throw new SimulatorError(400, `Supplied pagination limit '${limitText}' is not valid.`);
    if (marker !== undefined && items.length > 0)
      links.push({ href: `${baseHref}?limit=${limit}&marker=${String(items[0]!.id)}&page_reverse=True`, rel: 'previous' });
    if (items.length > limit && limit > 0) {
      items = items.slice(0, limit);
      links.push({ href: `${baseHref}?limit=${limit}&marker=${String(items.at(-1)!.id)}`, rel: 'next' });
    } else {
      items = items.slice(0, limit);
    }
  }

  const fields = queryValues(req, 'fields');
  if (fields.length > 0) items = items.map((view) => Object.fromEntries(fields.filter((f) => f in view).map((f) => [f, view[f]])));
  return { [collection]: items, [`${collection}_links`]: links };
}

/** `fields` on a single object. */
export function selectFields(req: Request, view: Record<string, unknown>): Record<string, unknown> {
  const fields = queryValues(req, 'fields');
  return fields.length > 0 ? Object.fromEntries(fields.filter((f) => f in view).map((f) => [f, view[f]])) : view;
}

/** How the simulated Octavia differs from a correct one, to test what clients do when a cloud has these bugs. */
export interface OctaviaQuirks {
  /**
   * A fully populated create leaves the listeners, pools, monitors and
   * members PENDING_CREATE for good while the load balancer turns ACTIVE, as
   * Zed's amphora driver does on ministack (its worker's flow builds the load
   * balancer as one without listeners, so nothing marks the children
   * ACTIVE); the OVN provider has been reported doing the same.
   */
  fullyPopulatedChildrenStayPending?: boolean;
}
