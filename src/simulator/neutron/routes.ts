/**
 * Neutron's HTTP surface below the service prefix: version documents,
 * extensions, the v2.0 collections with their member actions and tags,
 * and quotas. Every failure is answered in Neutron's fault format.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { TokenScope } from '../framework.js';
import { Invalid, string, uniqueStrings } from './body.js';
import { invalidInput, NeutronError, notFound } from './errors.js';
import { loadedExtensions } from './extensions.js';
import { createFloatingIp, deleteFloatingIp, floatingIpView, updateFloatingIp } from './floating-ips.js';
import type { Caller, Standard } from './model.js';
import { createNetwork, deleteNetwork, networkView, updateNetwork } from './networks.js';
import { createPort, deletePort, portView, updatePort } from './ports.js';
import { listAnswer, project, values, type ListSpec, type Query, type View } from './query.js';
import { defaultQuota, quotaDetails, resetQuota, showQuota, updateQuota } from './quotas.js';
import { addInterface, createRouter, deleteRouter, removeInterface, routerView, updateRouter } from './routers.js';
import { createGroup, createRule, deleteGroup, deleteRule, groupView, listGroups, ruleView, updateGroup } from './security-groups.js';
import type { Store } from './store.js';
import { createSubnet, deleteSubnet, subnetView, updateSubnet } from './subnets.js';
import { addTrunkSubPorts, createTrunk, deleteTrunk, removeTrunkSubPorts, trunkView, updateTrunk } from './trunks.js';

const callerOf = (scope: TokenScope): Caller => ({ projectId: scope.projectId, isAdmin: scope.roles.includes('admin'), roles: scope.roles });

interface Resource<T> extends ListSpec {
  /** URL segment below /v2.0, e.g. 'security-groups'. */
  path: string;
  /** Key of one object in bodies, e.g. 'security_group'. */
  member: string;
  list(caller: Caller, query: Query): T[];
  get(caller: Caller, id: string): T;
  view(caller: Caller, obj: T): View;
  /** The create response, where Neutron's differs from a GET (networks show is_default). */
  createdView?(caller: Caller, obj: T): View;
  create(caller: Caller, body: unknown): T;
  /** Absent where Neutron has no update (security group rules). */
  update?(caller: Caller, id: string, body: unknown): T;
  remove(caller: Caller, id: string): void;
  /**
   * The objects a list's filters on plain string attributes keep, read from the stored objects: a list
   * applies them before rendering, as Neutron's query does, so that finding one port among thousands
   * renders one view, not thousands. The rendered views are filtered again with every filter.
   */
  narrow?(objects: T[], query: Query): T[];
}

/** The objects whose `plainFilters` attributes match the query's; all of them when it pages from a marker, which Neutron finds whatever the filters say. */
function narrowed<T>(objects: T[], query: Query, plainFilters: Record<string, (obj: T) => string>): T[] {
  if (query.marker !== undefined) return objects;
  const tests = Object.entries(plainFilters)
    .filter(([key]) => query[key] !== undefined)
    .map(([key, read]) => {
      const wanted = values(query[key]);
      return (obj: T) => wanted.includes(read(obj));
    });
  return tests.length === 0 ? objects : objects.filter((obj) => tests.every((test) => test(obj)));
}

const byIdAndName = { id: (obj: { id: string }) => obj.id, name: (obj: { name: string }) => obj.name };

const COMMON_FILTERS = ['id', 'tenant_id', 'project_id', 'description', 'revision_number'];
const COMMON_SORT_KEYS = ['id', 'tenant_id', 'project_id', 'created_at', 'updated_at', 'revision_number'];

function resources(s: Store) {
  const visible = <T>(map: Map<string, T>, test: (o: T) => boolean) => [...map.values()].filter(test);
  const networks: Resource<ReturnType<Store['network']>> = {
    path: 'networks',
    collection: 'networks',
    member: 'network',
    filters: [
      ...COMMON_FILTERS,
      'name',
      'admin_state_up',
      'status',
      'shared',
      'router:external',
      'mtu',
      'port_security_enabled',
      'is_default',
      'provider:network_type',
      'provider:physical_network',
      'provider:segmentation_id',
    ],
    sortKeys: [...COMMON_SORT_KEYS, 'name', 'admin_state_up', 'status', 'mtu'],
    notFound: notFound.network,
    narrow: (objects, q) => narrowed(objects, q, byIdAndName),
    list: (c) => visible(s.networks, (n) => s.canSeeNetwork(c, n)),
    get: (c, id) => s.network(c, id),
    view: (c, n) => networkView(s, c, n),
    createdView: (c, n) => networkView(s, c, n, { creating: true }),
    create: (c, b) => createNetwork(s, c, b),
    update: (c, id, b) => updateNetwork(s, c, id, b),
    remove: (c, id) => deleteNetwork(s, c, id),
  };
  const subnets: Resource<ReturnType<Store['subnet']>> = {
    path: 'subnets',
    collection: 'subnets',
    member: 'subnet',
    filters: [
      ...COMMON_FILTERS,
      'name',
      'network_id',
      'ip_version',
      'cidr',
      'gateway_ip',
      'enable_dhcp',
      'ipv6_ra_mode',
      'ipv6_address_mode',
      'subnetpool_id',
      'service_types',
    ],
    sortKeys: [...COMMON_SORT_KEYS, 'name', 'network_id', 'ip_version', 'cidr', 'gateway_ip', 'enable_dhcp'],
    notFound: notFound.subnet,
    narrow: (objects, q) => narrowed(objects, q, { ...byIdAndName, network_id: (sub) => sub.networkId }),
    list: (c) => visible(s.subnets, (sub) => s.canSeeSubnet(c, sub)),
    get: (c, id) => s.subnet(c, id),
    view: (_c, sub) => subnetView(sub),
    create: (c, b) => createSubnet(s, c, b),
    update: (c, id, b) => updateSubnet(s, c, id, b),
    remove: (c, id) => deleteSubnet(s, c, id),
  };
  const ports: Resource<ReturnType<Store['port']>> = {
    path: 'ports',
    collection: 'ports',
    member: 'port',
    filters: [
      ...COMMON_FILTERS,
      'name',
      'network_id',
      'admin_state_up',
      'mac_address',
      'device_id',
      'device_owner',
      'status',
      'security_groups',
      'port_security_enabled',
      'binding:host_id',
    ],
    sortKeys: [...COMMON_SORT_KEYS, 'name', 'network_id', 'admin_state_up', 'mac_address', 'device_id', 'device_owner', 'status'],
    custom: { fixed_ips: fixedIpsFilter },
    notFound: notFound.port,
    narrow: (objects, q) =>
      narrowed(objects, q, { ...byIdAndName, network_id: (p) => p.networkId, device_id: (p) => p.deviceId, device_owner: (p) => p.deviceOwner }),
    list: (c) => visible(s.ports, (p) => s.canSeePort(c, p)),
    get: (c, id) => s.port(c, id),
    view: (c, p) => portView(s, c, p),
    create: (c, b) => createPort(s, c, b),
    update: (c, id, b) => updatePort(s, c, id, b),
    remove: (c, id) => deletePort(s, c, id),
  };
  const routers: Resource<ReturnType<Store['router']>> = {
    path: 'routers',
    collection: 'routers',
    member: 'router',
    filters: [...COMMON_FILTERS, 'name', 'admin_state_up'],
    sortKeys: [...COMMON_SORT_KEYS, 'name', 'admin_state_up', 'status'],
    notFound: notFound.router,
    narrow: (objects, q) => narrowed(objects, q, byIdAndName),
    list: (c) => visible(s.routers, (r) => s.owns(c, r)),
    get: (c, id) => s.router(c, id),
    view: (c, r) => routerView(s, c, r),
    create: (c, b) => createRouter(s, c, b),
    update: (c, id, b) => updateRouter(s, c, id, b),
    remove: (c, id) => deleteRouter(s, c, id),
  };
  const securityGroups: Resource<ReturnType<Store['securityGroup']>> = {
    path: 'security-groups',
    collection: 'security_groups',
    member: 'security_group',
    filters: [...COMMON_FILTERS, 'name', 'shared'],
    sortKeys: [...COMMON_SORT_KEYS, 'name'],
    notFound: notFound.securityGroup,
    narrow: (objects, q) => narrowed(objects, q, byIdAndName),
    list: (c, q) => listGroups(s, c, values(q.project_id)[0] ?? values(q.tenant_id)[0]),
    get: (c, id) => s.securityGroup(c, id),
    view: (_c, g) => groupView(s, g),
    create: (c, b) => createGroup(s, c, b),
    update: (c, id, b) => updateGroup(s, c, id, b),
    remove: (c, id) => deleteGroup(s, c, id),
  };
  const rules: Resource<ReturnType<Store['rule']>> = {
    path: 'security-group-rules',
    collection: 'security_group_rules',
    member: 'security_group_rule',
    filters: [
      ...COMMON_FILTERS,
      'security_group_id',
      'remote_group_id',
      'direction',
      'protocol',
      'port_range_min',
      'port_range_max',
      'ethertype',
      'remote_ip_prefix',
      'remote_address_group_id',
      'normalized_cidr',
    ],
    sortKeys: [
      ...COMMON_SORT_KEYS,
      'security_group_id',
      'remote_group_id',
      'direction',
      'protocol',
      'port_range_min',
      'port_range_max',
      'ethertype',
      'remote_ip_prefix',
    ],
    notFound: notFound.securityGroupRule,
    narrow: (objects, q) => narrowed(objects, q, { id: (r) => r.id, security_group_id: (r) => r.securityGroupId }),
    list: (c) => visible(s.rules, (r) => s.canSeeRule(c, r)),
    get: (c, id) => s.rule(c, id),
    view: (_c, r) => ruleView(r),
    create: (c, b) => createRule(s, c, b),
    remove: (c, id) => deleteRule(s, c, id),
  };
  const floatingIps: Resource<ReturnType<Store['floatingIp']>> = {
    path: 'floatingips',
    collection: 'floatingips',
    member: 'floatingip',
    filters: [...COMMON_FILTERS, 'floating_ip_address', 'floating_network_id', 'router_id', 'port_id', 'fixed_ip_address', 'status'],
    sortKeys: [...COMMON_SORT_KEYS, 'floating_ip_address', 'floating_network_id', 'router_id', 'fixed_ip_address', 'status'],
    notFound: notFound.floatingIp,
    list: (c) => visible(s.floatingIps, (f) => s.owns(c, f)),
    get: (c, id) => s.floatingIp(c, id),
    view: (_c, f) => floatingIpView(s, f),
    create: (c, b) => createFloatingIp(s, c, b),
    update: (c, id, b) => updateFloatingIp(s, c, id, b),
    remove: (c, id) => deleteFloatingIp(s, c, id),
  };
  const trunks: Resource<ReturnType<Store['trunk']>> = {
    path: 'trunks',
    collection: 'trunks',
    member: 'trunk',
    filters: [...COMMON_FILTERS, 'name', 'port_id', 'admin_state_up'],
    sortKeys: [...COMMON_SORT_KEYS, 'name', 'port_id', 'admin_state_up', 'status'],
    notFound: notFound.trunk,
    list: (c) => visible(s.trunks, (t) => s.owns(c, t)),
    get: (c, id) => s.trunk(c, id),
    view: (_c, t) => trunkView(t),
    create: (c, b) => createTrunk(s, c, b),
    update: (c, id, b) => updateTrunk(s, c, id, b),
    remove: (c, id) => deleteTrunk(s, c, id),
  };
  return { networks, subnets, ports, routers, securityGroups, rules, floatingIps, trunks };
}

/**
 * `fixed_ips=ip_address=…`, `subnet_id=…`, `ip_address_substr=…`: a port
 * matches when one of its allocations satisfies every given key.
 */
function fixedIpsFilter(view: View, wanted: string[]): boolean {
  const byKey = new Map<string, string[]>();
  for (const w of wanted) {
    const eq = w.indexOf('=');
    const key = eq < 0 ? '' : w.slice(0, eq);
    if (!['ip_address', 'subnet_id', 'ip_address_substr'].includes(key)) throw invalidInput(`'${w}' is not of the form <key>=[value]`);
    byKey.set(key, [...(byKey.get(key) ?? []), w.slice(eq + 1)]);
  }
  const ips = byKey.get('ip_address');
  const subnets = byKey.get('subnet_id');
  const substrings = byKey.get('ip_address_substr');
  return (view.fixed_ips as { subnet_id: string; ip_address: string }[]).some(
    (f) =>
      (!ips || ips.includes(f.ip_address)) &&
      (!subnets || subnets.includes(f.subnet_id)) &&
      (!substrings || substrings.some((sub) => f.ip_address.includes(sub))),
  );
}

function tagName(raw: string): string {
  try {
    return string(raw, 255);
  } catch (error) {
    if (error instanceof Invalid) throw invalidInput(error.reason);
    throw error;
  }
}

function tagsBody(body: unknown): string[] {
  if (typeof body !== 'object' || body === null || !('tags' in body)) throw invalidInput('Invalid tags body');
  try {
    return uniqueStrings((body as { tags: unknown }).tags, 255);
  } catch (error) {
    if (error instanceof Invalid) throw invalidInput(error.reason);
    throw error;
  }
}

/** The routes below `prefix`, the path the host mounts them at (for the links Neutron puts in answers). */
export function neutronRouter(s: Store, prefix: string): Router {
  const router = express.Router();
  const caller = (res: Response) => callerOf(res.locals.auth as TokenScope);
  const query = (req: Request) => req.query as Query;
  const base = () => `${s.ctx.baseUrl()}${prefix}`;

  // Neutron accepts a `.json` format suffix on every path.
  router.use((req, _res, next) => {
    const [path, search] = req.url.split(/\?(.*)/s, 2);
    if (path!.endsWith('.json')) req.url = path!.slice(0, -'.json'.length) + (search !== undefined ? `?${search}` : '');
    next();
  });

  router.get('/', (_req, res) => {
    res.json({ versions: [{ id: 'v2.0', status: 'CURRENT', links: [{ href: `${base()}/v2.0/`, rel: 'self' }] }] });
  });
  router.get(['/v2.0', '/v2.0/'], (_req, res) => {
    const entry = (name: string, collection: string) => ({ name, collection, links: [{ href: `${base()}/v2.0/${collection}`, rel: 'self' }] });
    res.json({ resources: [entry('subnet', 'subnets'), entry('network', 'networks'), entry('port', 'ports')] });
  });
  const extensions = loadedExtensions(s.options);
  router.get('/v2.0/extensions', (_req, res) => {
    res.json({ extensions });
  });
  router.get('/v2.0/extensions/:alias', (req, res) => {
    const found = extensions.find((e) => e.alias === req.params.alias);
    if (!found) throw new NeutronError(404, 'HTTPNotFound', `Extension with alias ${req.params.alias} does not exist`);
    res.json({ extension: found });
  });

  const all = resources(s);
  const { rules: _untaggable, ...tagSupport } = all;
  const taggable = Object.fromEntries((Object.values(tagSupport) as Resource<Standard>[]).map((r) => [r.path, r]));
  for (const r of Object.values(all) as Resource<{ id: string }>[]) {
    const collection = `/v2.0/${r.path}`;
    const member = `${collection}/:id`;
    const one = (req: Request, res: Response) => r.view(caller(res), r.get(caller(res), req.params.id as string));
    router.get(collection, (req, res) => {
      const c = caller(res);
      const q = query(req);
      const listed = r.list(c, q);
      const kept = r.narrow ? r.narrow(listed, q) : listed;
      res.json(
        listAnswer(
          r,
          q,
          kept.map((o) => r.view(c, o)),
          `${base()}${collection}`,
        ),
      );
    });
    router.post(collection, (req, res) => {
      const c = caller(res);
      const bulk = (req.body as Record<string, unknown> | undefined)?.[r.collection];
      if (Array.isArray(bulk)) {
        res.status(201).json({ [r.collection]: createBulk(r, c, bulk).map((o) => (r.createdView ?? r.view)(c, o)) });
        return;
      }
      res.status(201).json({ [r.member]: (r.createdView ?? r.view)(c, r.create(c, req.body)) });
    });
    router.get(member, (req, res) => {
      res.json({ [r.member]: project(one(req, res), query(req)) });
    });
    const update = r.update;
    if (update) {
      router.put(member, (req, res) => {
        const c = caller(res);
        res.json({ [r.member]: r.view(c, update(c, req.params.id as string, req.body)) });
      });
    }
    router.delete(member, (req, res) => {
      r.remove(caller(res), req.params.id as string);
      res.status(204).end();
    });
  }

  router.put('/v2.0/routers/:id/add_router_interface', (req, res) => {
    res.json(addInterface(s, caller(res), req.params.id, req.body));
  });
  router.put('/v2.0/routers/:id/remove_router_interface', (req, res) => {
    res.json(removeInterface(s, caller(res), req.params.id, req.body));
  });
  router.put('/v2.0/trunks/:id/add_subports', (req, res) => {
    res.json(trunkView(addTrunkSubPorts(s, caller(res), req.params.id, req.body)));
  });
  router.put('/v2.0/trunks/:id/remove_subports', (req, res) => {
    res.json(trunkView(removeTrunkSubPorts(s, caller(res), req.params.id, req.body)));
  });
  router.get('/v2.0/trunks/:id/get_subports', (req, res) => {
    res.json({ sub_ports: trunkView(s.trunk(caller(res), req.params.id)).sub_ports });
  });

  // standard-attr-tag: /v2.0/{collection}/{id}/tags[/{tag}]
  const tagged = (req: Request, res: Response) => {
    const r = taggable[req.params.collection as string];
    if (!r) throw new NeutronError(404, 'HTTPNotFound', 'The resource could not be found.');
    try {
      return r.get(caller(res), req.params.id as string);
    } catch (error) {
      if (!(error instanceof NeutronError) || error.status !== 404) throw error;
      throw new NeutronError(404, 'TagResourceNotFound', `Resource ${r.collection} ${req.params.id} could not be found.`);
    }
  };
  const tagNotFound = (tag: string) => new NeutronError(404, 'TagNotFound', `Tag ${tag} could not be found.`);
  router.get('/v2.0/:collection/:id/tags', (req, res) => {
    res.json({ tags: [...tagged(req, res).tags] });
  });
  router.put('/v2.0/:collection/:id/tags', (req, res) => {
    const wanted = tagsBody(req.body);
    const obj = tagged(req, res);
    obj.tags = [...wanted];
    s.touch(obj);
    res.json({ tags: wanted });
  });
  router.delete('/v2.0/:collection/:id/tags', (req, res) => {
    const obj = tagged(req, res);
    obj.tags = [];
    s.touch(obj);
    res.status(204).end();
  });
  router.get('/v2.0/:collection/:id/tags/:tag', (req, res) => {
    const tag = tagName(req.params.tag);
    if (!tagged(req, res).tags.includes(tag)) throw tagNotFound(tag);
    res.status(204).end();
  });
  router.put('/v2.0/:collection/:id/tags/:tag', (req, res) => {
    const tag = tagName(req.params.tag);
    const obj = tagged(req, res);
    if (!obj.tags.includes(tag)) {
      obj.tags.push(tag);
      s.touch(obj);
    }
    res.status(201).end();
  });
  router.delete('/v2.0/:collection/:id/tags/:tag', (req, res) => {
    const tag = tagName(req.params.tag);
    const obj = tagged(req, res);
    if (!obj.tags.includes(tag)) throw tagNotFound(tag);
    obj.tags = obj.tags.filter((t) => t !== tag);
    s.touch(obj);
    res.status(204).end();
  });

  router.get('/v2.0/quotas/:project/details', (req, res) => {
    res.json(quotaDetails(s, caller(res), req.params.project));
  });
  router.get('/v2.0/quotas/:project/default', (req, res) => {
    res.json(defaultQuota(caller(res), req.params.project));
  });
  router.get('/v2.0/quotas/:project', (req, res) => {
    res.json(showQuota(s, caller(res), req.params.project));
  });
  router.put('/v2.0/quotas/:project', (req, res) => {
    res.json(updateQuota(s, caller(res), req.params.project, req.body));
  });
  router.delete('/v2.0/quotas/:project', (req, res) => {
    resetQuota(s, caller(res), req.params.project);
    res.status(204).end();
  });

  router.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (err instanceof NeutronError) {
      res.status(err.status).json(err.body());
      return;
    }
    next(err);
  });
  return router;
}

/**
 * Neutron's bulk create (`{"<collection>": [...]}`): all or nothing, as ML2's
 * emulated bulk does, so a failing item removes the ones created before it.
 */
function createBulk<T extends { id: string }>(r: Resource<T>, c: Caller, items: unknown[]): T[] {
  if (items.length === 0) throw invalidInput(`no ${r.collection} given for a bulk create`);
  const created: T[] = [];
  try {
    for (const item of items) created.push(r.create(c, { [r.member]: item }));
  } catch (error) {
    for (const done of created.reverse()) r.remove(c, done.id);
    throw error;
  }
  return created;
}
