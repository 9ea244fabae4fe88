/** The simulated Keystone's read-only identity objects: projects, users, domains, roles, services, endpoints, regions. */
import type { Router } from 'express';
import type { Domain, KeystoneStore } from './model.js';

export function identityRoutes(router: Router, store: KeystoneStore): void {
  /** An admin-only collection that takes Keystone's `?name=` filter. */
  const namedCollection = <T extends { name: string }>(collection: string, items: Map<string, T>, view: (item: T) => unknown) => {
    router.get(`/v3/${collection}`, store.authenticated, (req, res) => {
      if (!store.isAdmin(store.caller(res))) return store.forbidden(res, `list_${collection}`);
      const name = typeof req.query.name === 'string' ? req.query.name : undefined;
      res.json(store.list(collection, [...items.values()].filter((item) => name === undefined || item.name === name).map(view)));
    });
  };

  namedCollection('projects', store.projects, store.projectView);
  router.get('/v3/projects/:id', store.authenticated, (req, res) => {
    const token = store.caller(res);
    const project = store.projects.get(req.params.id as string);
    if (!store.isAdmin(token) && token.projectId !== req.params.id) return store.forbidden(res, 'get_project');
    if (!project) return store.fail(res, 404, `Could not find project: ${req.params.id}.`);
    res.json({ project: store.projectView(project) });
  });
  namedCollection('users', store.users, store.userView);
  router.get('/v3/users/:id', store.authenticated, (req, res) => {
    const token = store.caller(res);
    if (!store.isAdmin(token) && token.userId !== req.params.id) return store.forbidden(res, 'get_user');
    const user = store.users.get(req.params.id as string);
    if (!user) return store.fail(res, 404, `Could not find user: ${req.params.id}.`);
    res.json({ user: store.userView(user) });
  });
  router.get('/v3/users/:id/projects', store.authenticated, (req, res) => {
    const token = store.caller(res);
    if (!store.isAdmin(token) && token.userId !== req.params.id) return store.forbidden(res, 'list_user_projects');
    if (!store.users.has(req.params.id as string)) return store.fail(res, 404, `Could not find user: ${req.params.id}.`);
    res.json(store.list('projects', store.projectsOf(req.params.id as string).map(store.projectView)));
  });
  const domainView3 = (d: Domain) => ({
    id: d.id,
    name: d.name,
    description: d.description,
    enabled: true,
    tags: [],
    options: {},
    links: { self: `${store.identityUrl()}/v3/domains/${d.id}` },
  });
  namedCollection('domains', store.domains, domainView3);
  router.get('/v3/domains/:id', store.authenticated, (req, res) => {
    const token = store.caller(res);
    const domain = store.domains.get(req.params.id as string);
    const ownDomain = token.projectId !== undefined && store.projects.get(token.projectId)?.domainId === req.params.id;
    if (!store.isAdmin(token) && !ownDomain) return store.forbidden(res, 'get_domain');
    if (!domain) return store.fail(res, 404, `Could not find domain: ${req.params.id}.`);
    res.json({ domain: domainView3(domain) });
  });
  router.get('/v3/roles', store.authenticated, (_req, res) => {
    if (!store.isAdmin(store.caller(res))) return store.forbidden(res, 'list_roles');
    res.json(
      store.list(
        'roles',
        [...store.roles.values()].map((r) => ({
          ...r,
          domain_id: null,
          description: null,
          options: {},
          links: { self: `${store.identityUrl()}/v3/roles/${r.id}` },
        })),
      ),
    );
  });
  router.get('/v3/services', store.authenticated, (_req, res) => {
    if (!store.isAdmin(store.caller(res))) return store.forbidden(res, 'list_services');
    const entries = store.catalog(store.caller(res).projectId ?? '');
    res.json(
      store.list(
        'services',
        entries.map((e) => ({ id: e.id, type: e.type, name: e.name, enabled: true, links: { self: `${store.identityUrl()}/v3/services/${e.id}` } })),
      ),
    );
  });
  router.get('/v3/endpoints', store.authenticated, (_req, res) => {
    if (!store.isAdmin(store.caller(res))) return store.forbidden(res, 'list_endpoints');
    const entries = store.catalog('%(project_id)s');
    res.json(
      store.list(
        'endpoints',
        entries.flatMap((e) =>
          e.endpoints.map((ep) => ({ ...ep, service_id: e.id, enabled: true, links: { self: `${store.identityUrl()}/v3/endpoints/${ep.id}` } })),
        ),
      ),
    );
  });
  router.get('/v3/regions', store.authenticated, (_req, res) => {
    res.json(
      store.list('regions', [{ id: 'RegionOne', description: '', parent_region_id: null, links: { self: `${store.identityUrl()}/v3/regions/RegionOne` } }]),
    );
  });
}
