/**
 * Keystone v3: password, token and application-credential authentication,
 * the service catalog of the simulated services, token validation and
 * revocation, application credentials, and the read-only identity objects the
 * CLI touches. Seeded like ministack (domain Default, projects admin/demo/
 * service, users admin/demo and the service user, the same passwords).
 */
import { randomBytes } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import type { SimulatedService, SimulatorContext, TokenScope } from './framework.js';

export const seedUsers = {
  admin: { name: 'admin', password: 'ministack-admin', project: 'admin' },
  demo: { name: 'demo', password: 'ministack-demo', project: 'demo' },
  service: { name: 'ministack-svc', password: 'ministack-service', project: 'service' },
} as const;

export interface KeystoneSimulator extends SimulatedService {
  /** The scope of a valid project-scoped token; undefined for unknown, expired, revoked or unscoped tokens. */
  validate(token: string): TokenScope | undefined;
  expireTokens(): void;
  projectId(name: string): string | undefined;
  /** A project id from an id or a name in the Default domain. */
  resolveProject(idOrName: string): string | undefined;
}

interface Domain { id: string; name: string; description: string }
interface Project { id: string; name: string; domainId: string; description: string }
interface User { id: string; name: string; domainId: string; password: string }
interface Role { id: string; name: string }
interface ApplicationCredential {
  id: string;
  name: string;
  description: string | null;
  userId: string;
  projectId: string;
  secret: string;
  roleIds: string[];
  expiresAt: number | null;
  unrestricted: boolean;
}
interface Token {
  id: string;
  userId: string;
  projectId?: string;
  methods: string[];
  roleIds: string[];
  issuedAt: number;
  expiresAt: number;
  auditId: string;
  applicationCredentialId?: string;
}

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
const defaultMessages: Record<number, string> = {
  400: 'The request you have made is malformed.',
  401: 'The request you have made requires authentication.',
  403: 'You are not authorized to perform the requested action.',
  404: 'The resource could not be found.',
  409: 'Conflict occurred attempting to store the resource.',
  500: 'An unexpected error prevented the server from fulfilling your request.',
  503: 'The service is unavailable.',
};

export function keystoneError(status: number, message?: string) {
  return { error: { code: status, message: message ?? defaultMessages[status] ?? titles[status] ?? 'Error', title: titles[status] ?? 'Error' } };
}

/** Keystone's timestamps carry microseconds. */
function timestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

const hexId = () => randomBytes(16).toString('hex');

const domainRef = z.object({ id: z.string().optional(), name: z.string().optional() }).optional();
const userRef = z.object({ id: z.string().optional(), name: z.string().optional(), domain: domainRef });
const authRequestSchema = z.object({
  auth: z.object({
    identity: z.object({
      methods: z.array(z.string()).min(1),
      password: z.object({ user: userRef.extend({ password: z.string() }) }).optional(),
      token: z.object({ id: z.string() }).optional(),
      application_credential: z
        .object({ id: z.string().optional(), name: z.string().optional(), secret: z.string(), user: userRef.optional() })
        .optional(),
    }),
    scope: z
      .union([
        z.object({ project: z.object({ id: z.string().optional(), name: z.string().optional(), domain: domainRef }) }),
        z.literal('unscoped'),
        z.object({ domain: domainRef.unwrap() }),
        z.object({ system: z.unknown() }),
      ])
      .optional(),
  }),
});

const appCredRequestSchema = z.object({
  application_credential: z.object({
    name: z.string().min(1).max(255),
    description: z.string().nullable().optional(),
    secret: z.string().min(1).optional(),
    expires_at: z.string().nullable().optional(),
    roles: z.array(z.object({ id: z.string().optional(), name: z.string().optional() })).optional(),
    unrestricted: z.boolean().optional(),
  }),
});

/** The catalog path of each service type below its prefix, as devstack registers them. */
const catalogSuffix: Record<string, string> = { compute: '/v2.1', 'block-storage': '/v3/{project_id}' };

export function createKeystoneSimulator(
  ctx: SimulatorContext,
  options: { tokenLifetimeMs: number; services: () => readonly SimulatedService[] },
): KeystoneSimulator {
  const domains = new Map<string, Domain>();
  const projects = new Map<string, Project>();
  const users = new Map<string, User>();
  const roles = new Map<string, Role>();
  /** `${userId}/${projectId}` → role ids. */
  const assignments = new Map<string, string[]>();
  const appCreds = new Map<string, ApplicationCredential>();
  const tokens = new Map<string, Token>();
  const serviceIds = new Map<string, string>();
  const endpointIds = new Map<string, string>();

  domains.set('default', { id: 'default', name: 'Default', description: 'The default domain' });
  const roleByName = (name: string) => [...roles.values()].find((r) => r.name === name);
  for (const name of ['admin', 'member', 'reader', 'service', 'load-balancer_member', 'load-balancer_observer', 'load-balancer_admin', 'load-balancer_global_observer', 'load-balancer_quota_admin']) {
    const role = { id: hexId(), name };
    roles.set(role.id, role);
  }
  /** keystone-manage bootstrap's inference rules: admin implies member, member implies reader. */
  const implied: Record<string, string[]> = { admin: ['member'], member: ['reader'] };
  const withImplied = (roleIds: string[]): string[] => {
    const names = new Set<string>();
    const visit = (name: string) => {
      if (names.has(name)) return;
      names.add(name);
      for (const next of implied[name] ?? []) visit(next);
    };
    for (const id of roleIds) {
      const role = roles.get(id);
      if (role) visit(role.name);
    }
    return [...names].map((n) => roleByName(n)!.id);
  };
  const seed = (user: { name: string; password: string; project: string }, roleNames: string[]) => {
    let project = [...projects.values()].find((p) => p.name === user.project);
    if (!project) {
      project = { id: hexId(), name: user.project, domainId: 'default', description: user.project === 'admin' ? 'Bootstrap project for initializing the cloud.' : user.project };
      projects.set(project.id, project);
    }
    const u = { id: hexId(), name: user.name, domainId: 'default', password: user.password };
    users.set(u.id, u);
    assignments.set(`${u.id}/${project.id}`, roleNames.map((n) => roleByName(n)!.id));
  };
  seed(seedUsers.admin, ['admin', 'load-balancer_admin']);
  seed(seedUsers.demo, ['member', 'reader', 'load-balancer_member']);
  seed(seedUsers.service, ['admin', 'service']);

  const identityUrl = () => `${ctx.baseUrl()}/identity`;
  const domainView = (id: string) => ({ id, name: domains.get(id)?.name ?? id });
  const projectView = (p: Project) => ({
    id: p.id,
    name: p.name,
    domain_id: p.domainId,
    description: p.description,
    enabled: true,
    parent_id: p.domainId,
    is_domain: false,
    tags: [],
    options: {},
    links: { self: `${identityUrl()}/v3/projects/${p.id}` },
  });
  const userView = (u: User) => ({
    id: u.id,
    name: u.name,
    domain_id: u.domainId,
    enabled: true,
    password_expires_at: null,
    options: {},
    links: { self: `${identityUrl()}/v3/users/${u.id}` },
  });
  const roleRef = (id: string) => ({ id, name: roles.get(id)!.name });

  const catalog = (projectId: string) =>
    options.services().flatMap((service) => {
      const url = `${ctx.baseUrl()}${service.prefix}${(catalogSuffix[service.type] ?? '').replace('{project_id}', projectId)}`;
      const entry = (type: string, name: string) => {
        if (!serviceIds.has(type)) serviceIds.set(type, hexId());
        return {
          id: serviceIds.get(type)!,
          type,
          name,
          endpoints: (['public', 'internal', 'admin'] as const).map((iface) => {
            const key = `${type}/${iface}`;
            if (!endpointIds.has(key)) endpointIds.set(key, hexId());
            return { id: endpointIds.get(key)!, interface: iface, region: 'RegionOne', region_id: 'RegionOne', url };
          }),
        };
      };
      return service.type === 'block-storage' ? [entry('block-storage', 'cinder'), entry('volumev3', 'cinderv3')] : [entry(service.type, service.name)];
    });

  const liveToken = (id: string | undefined): Token | undefined => {
    if (!id) return undefined;
    const token = tokens.get(id);
    if (!token) return undefined;
    if (token.expiresAt <= ctx.clock.now()) {
      tokens.delete(id);
      return undefined;
    }
    return token;
  };

  const tokenBody = (token: Token, withCatalog: boolean) => {
    const user = users.get(token.userId)!;
    const body: Record<string, unknown> = {
      methods: token.methods,
      user: { domain: domainView(user.domainId), id: user.id, name: user.name, password_expires_at: null },
      audit_ids: [token.auditId],
      expires_at: timestamp(token.expiresAt),
      issued_at: timestamp(token.issuedAt),
    };
    if (token.projectId) {
      const project = projects.get(token.projectId)!;
      body.project = { domain: domainView(project.domainId), id: project.id, name: project.name };
      body.is_domain = false;
      body.roles = token.roleIds.map(roleRef);
      if (withCatalog) body.catalog = catalog(project.id);
    }
    if (token.applicationCredentialId) {
      const cred = appCreds.get(token.applicationCredentialId);
      if (cred) body.application_credential = { id: cred.id, name: cred.name, restricted: !cred.unrestricted };
    }
    return { token: body };
  };

  const fail = (res: Response, status: number, message?: string) => {
    if (status === 401) res.setHeader('WWW-Authenticate', `Keystone uri="${identityUrl()}"`);
    res.status(status).json(keystoneError(status, message));
  };

  const findUser = (ref: z.infer<typeof userRef>): User | undefined => {
    if (ref.id) return users.get(ref.id);
    const domain = ref.domain?.id ?? [...domains.values()].find((d) => d.name === ref.domain?.name)?.id;
    return [...users.values()].find((u) => u.name === ref.name && u.domainId === domain);
  };

  const versionDoc = () => ({
    id: 'v3.14',
    status: 'stable',
    updated: '2020-04-07T00:00:00Z',
    links: [{ rel: 'self', href: `${identityUrl()}/v3/` }],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
  });

  const router = express.Router();
  router.get('/', (_req, res) => {
    res.status(300).json({ versions: { values: [versionDoc()] } });
  });
  router.get('/v3', (_req, res) => {
    res.json({ version: versionDoc() });
  });

  router.post('/v3/auth/tokens', (req, res) => {
    const parsed = authRequestSchema.safeParse(req.body);
    if (!parsed.success) return fail(res, 400, `Invalid input for field 'auth': ${parsed.error.issues[0]?.message ?? 'malformed'}`);
    const { identity, scope } = parsed.data.auth;
    const method = identity.methods[0];
    let user: User | undefined;
    let appCred: ApplicationCredential | undefined;
    let base: Token | undefined;
    if (method === 'password' && identity.password) {
      user = findUser(identity.password.user);
      if (!user || user.password !== identity.password.user.password) return fail(res, 401);
    } else if (method === 'token' && identity.token) {
      base = liveToken(identity.token.id);
      if (!base) return fail(res, 404, `Could not find token: ${identity.token.id}.`);
      user = users.get(base.userId);
    } else if (method === 'application_credential' && identity.application_credential) {
      const ref = identity.application_credential;
      if (ref.id) appCred = appCreds.get(ref.id);
      else if (ref.name && ref.user) {
        const owner = findUser(ref.user);
        appCred = [...appCreds.values()].find((c) => c.name === ref.name && c.userId === owner?.id);
      }
      if (!appCred || appCred.secret !== ref.secret || (appCred.expiresAt !== null && appCred.expiresAt <= ctx.clock.now())) return fail(res, 401);
      if (scope) return fail(res, 401, 'Application credentials cannot request a scope.');
      user = users.get(appCred.userId);
    } else {
      return fail(res, 401);
    }
    if (!user) return fail(res, 401);

    let projectId: string | undefined = appCred?.projectId;
    if (scope && scope !== 'unscoped') {
      if (!('project' in scope)) return fail(res, 401, 'The request you have made requires authentication.');
      const ref = scope.project;
      const domain = ref.domain?.id ?? [...domains.values()].find((d) => d.name === ref.domain?.name)?.id;
      const project = ref.id ? projects.get(ref.id) : [...projects.values()].find((p) => p.name === ref.name && p.domainId === domain);
      if (!project || !assignments.has(`${user.id}/${project.id}`)) return fail(res, 401);
      projectId = project.id;
    } else if (base?.projectId && !scope) {
      projectId = base.projectId;
    }
    const now = ctx.clock.now();
    const roleIds = appCred ? withImplied(appCred.roleIds) : projectId ? withImplied(assignments.get(`${user.id}/${projectId}`) ?? []) : [];
    const token: Token = {
      id: `gAAAAAB${randomBytes(135).toString('base64url')}`,
      userId: user.id,
      projectId,
      methods: base ? [...new Set([...base.methods, 'token'])] : [method],
      roleIds,
      issuedAt: now,
      expiresAt: base ? Math.min(base.expiresAt, now + options.tokenLifetimeMs) : appCred?.expiresAt ? Math.min(appCred.expiresAt, now + options.tokenLifetimeMs) : now + options.tokenLifetimeMs,
      auditId: randomBytes(16).toString('base64url').slice(0, 22),
      applicationCredentialId: appCred?.id,
    };
    tokens.set(token.id, token);
    res.setHeader('X-Subject-Token', token.id);
    res.status(201).json(tokenBody(token, req.query.nocatalog === undefined));
  });

  /** keystonemiddleware's job in the other services; Keystone checks X-Auth-Token itself. */
  const authenticated = (req: Request, res: Response, next: NextFunction) => {
    const token = liveToken(req.get('x-auth-token'));
    if (!token) return fail(res, 401);
    res.locals.token = token;
    next();
  };
  const caller = (res: Response): Token => res.locals.token as Token;
  const isAdmin = (token: Token) => token.roleIds.some((id) => roles.get(id)?.name === 'admin');

  router.get('/v3/auth/tokens', authenticated, (req, res) => {
    const subjectId = req.get('x-subject-token');
    const subject = liveToken(subjectId);
    if (!subject) return fail(res, 404, `Could not find token: ${subjectId ?? ''}.`);
    res.setHeader('X-Subject-Token', subject.id);
    res.json(tokenBody(subject, req.query.nocatalog === undefined));
  });
  router.delete('/v3/auth/tokens', authenticated, (req, res) => {
    const subjectId = req.get('x-subject-token');
    if (!subjectId || !liveToken(subjectId)) return fail(res, 404, `Could not find token: ${subjectId ?? ''}.`);
    tokens.delete(subjectId);
    res.status(204).end();
  });
  router.get('/v3/auth/catalog', authenticated, (_req, res) => {
    const token = caller(res);
    if (!token.projectId) return fail(res, 403, 'A project-scoped token is required to produce a service catalog.');
    res.json({ catalog: catalog(token.projectId), links: { self: `${identityUrl()}/v3/auth/catalog`, previous: null, next: null } });
  });
  const projectsOf = (userId: string) => [...projects.values()].filter((p) => assignments.has(`${userId}/${p.id}`));
  router.get('/v3/auth/projects', authenticated, (_req, res) => {
    res.json({ projects: projectsOf(caller(res).userId).map(projectView), links: { self: `${identityUrl()}/v3/auth/projects`, previous: null, next: null } });
  });
  router.get('/v3/auth/domains', authenticated, (_req, res) => {
    res.json({ domains: [], links: { self: `${identityUrl()}/v3/auth/domains`, previous: null, next: null } });
  });

  const list = (collection: string, items: unknown[]) => ({ [collection]: items, links: { self: `${identityUrl()}/v3/${collection}`, previous: null, next: null } });
  const forbidden = (res: Response, action: string) => fail(res, 403, `You are not authorized to perform the requested action: identity:${action}.`);
  /** An admin-only collection that takes Keystone's `?name=` filter. */
  const namedCollection = <T extends { name: string }>(collection: string, items: Map<string, T>, view: (item: T) => unknown) => {
    router.get(`/v3/${collection}`, authenticated, (req, res) => {
      if (!isAdmin(caller(res))) return forbidden(res, `list_${collection}`);
      const name = typeof req.query.name === 'string' ? req.query.name : undefined;
      res.json(list(collection, [...items.values()].filter((item) => name === undefined || item.name === name).map(view)));
    });
  };

  namedCollection('projects', projects, projectView);
  router.get('/v3/projects/:id', authenticated, (req, res) => {
    const token = caller(res);
    const project = projects.get(req.params.id as string);
    if (!isAdmin(token) && token.projectId !== req.params.id) return forbidden(res, 'get_project');
    if (!project) return fail(res, 404, `Could not find project: ${req.params.id}.`);
    res.json({ project: projectView(project) });
  });
  namedCollection('users', users, userView);
  router.get('/v3/users/:id', authenticated, (req, res) => {
    const token = caller(res);
    if (!isAdmin(token) && token.userId !== req.params.id) return forbidden(res, 'get_user');
    const user = users.get(req.params.id as string);
    if (!user) return fail(res, 404, `Could not find user: ${req.params.id}.`);
    res.json({ user: userView(user) });
  });
  router.get('/v3/users/:id/projects', authenticated, (req, res) => {
    const token = caller(res);
    if (!isAdmin(token) && token.userId !== req.params.id) return forbidden(res, 'list_user_projects');
    if (!users.has(req.params.id as string)) return fail(res, 404, `Could not find user: ${req.params.id}.`);
    res.json(list('projects', projectsOf(req.params.id as string).map(projectView)));
  });
  const domainView3 = (d: Domain) => ({ id: d.id, name: d.name, description: d.description, enabled: true, tags: [], options: {}, links: { self: `${identityUrl()}/v3/domains/${d.id}` } });
  namedCollection('domains', domains, domainView3);
  router.get('/v3/domains/:id', authenticated, (req, res) => {
    const token = caller(res);
    const domain = domains.get(req.params.id as string);
    const ownDomain = token.projectId !== undefined && projects.get(token.projectId)?.domainId === req.params.id;
    if (!isAdmin(token) && !ownDomain) return forbidden(res, 'get_domain');
    if (!domain) return fail(res, 404, `Could not find domain: ${req.params.id}.`);
    res.json({ domain: domainView3(domain) });
  });
  router.get('/v3/roles', authenticated, (_req, res) => {
    if (!isAdmin(caller(res))) return forbidden(res, 'list_roles');
    res.json(list('roles', [...roles.values()].map((r) => ({ ...r, domain_id: null, description: null, options: {}, links: { self: `${identityUrl()}/v3/roles/${r.id}` } }))));
  });
  router.get('/v3/services', authenticated, (_req, res) => {
    if (!isAdmin(caller(res))) return forbidden(res, 'list_services');
    const entries = catalog(caller(res).projectId ?? '');
    res.json(list('services', entries.map((e) => ({ id: e.id, type: e.type, name: e.name, enabled: true, links: { self: `${identityUrl()}/v3/services/${e.id}` } }))));
  });
  router.get('/v3/endpoints', authenticated, (_req, res) => {
    if (!isAdmin(caller(res))) return forbidden(res, 'list_endpoints');
    const entries = catalog('%(project_id)s');
    res.json(list('endpoints', entries.flatMap((e) => e.endpoints.map((ep) => ({ ...ep, service_id: e.id, enabled: true, links: { self: `${identityUrl()}/v3/endpoints/${ep.id}` } })))));
  });
  router.get('/v3/regions', authenticated, (_req, res) => {
    res.json(list('regions', [{ id: 'RegionOne', description: '', parent_region_id: null, links: { self: `${identityUrl()}/v3/regions/RegionOne` } }]));
  });

  const appCredView = (c: ApplicationCredential) => ({
    id: c.id,
    name: c.name,
    description: c.description,
    user_id: c.userId,
    project_id: c.projectId,
    expires_at: c.expiresAt === null ? null : timestamp(c.expiresAt),
    unrestricted: c.unrestricted,
    system: null,
    roles: c.roleIds.map((id) => ({ ...roleRef(id), domain_id: null })),
    access_rules: [],
    links: { self: `${identityUrl()}/v3/users/${c.userId}/application_credentials/${c.id}` },
  });
  /** Policy `identity:*_application_credential` is "user_id:%(user_id)s" (or admin for reads). */
  const ownCredentials = (action: string, allowAdmin: boolean) => (req: Request, res: Response, next: NextFunction) => {
    const token = caller(res);
    if (token.userId !== req.params.userId && !(allowAdmin && isAdmin(token))) return forbidden(res, action);
    next();
  };
  router.post('/v3/users/:userId/application_credentials', authenticated, ownCredentials('create_application_credential', false), (req, res) => {
    const token = caller(res);
    if (token.applicationCredentialId && !appCreds.get(token.applicationCredentialId)?.unrestricted) {
      return fail(res, 403, "Using method 'application_credential' is not allowed for managing additional application credentials.");
    }
    if (!token.projectId) return fail(res, 401, 'Unable to create an application credential without a project-scoped token.');
    const parsed = appCredRequestSchema.safeParse(req.body);
    if (!parsed.success) return fail(res, 400, `Invalid input for field 'application_credential': ${parsed.error.issues[0]?.message ?? 'malformed'}`);
    const spec = parsed.data.application_credential;
    if ([...appCreds.values()].some((c) => c.userId === token.userId && c.name === spec.name)) {
      return fail(res, 409, 'Conflict occurred attempting to store application_credential - Duplicate application credential.');
    }
    let roleIds = token.roleIds;
    if (spec.roles?.length) {
      const requested = spec.roles.map((r) => (r.id ? roles.get(r.id) : roleByName(r.name ?? '')));
      if (requested.some((r) => !r || !token.roleIds.includes(r.id))) {
        return fail(res, 403, 'Requested roles are not in the token.');
      }
      roleIds = requested.map((r) => r!.id);
    }
    let expiresAt: number | null = null;
    if (spec.expires_at) {
      expiresAt = Date.parse(spec.expires_at.endsWith('Z') || /[+-]\d\d:?\d\d$/.test(spec.expires_at) ? spec.expires_at : `${spec.expires_at}Z`);
      if (Number.isNaN(expiresAt)) return fail(res, 400, `Invalid input for field 'expires_at': '${spec.expires_at}' is not a 'date-time'`);
    }
    const cred: ApplicationCredential = {
      id: hexId(),
      name: spec.name,
      description: spec.description ?? null,
      userId: token.userId,
      projectId: token.projectId,
      secret: spec.secret ?? randomBytes(64).toString('base64url'),
      roleIds,
      expiresAt,
      unrestricted: spec.unrestricted ?? false,
    };
    appCreds.set(cred.id, cred);
    res.status(201).json({ application_credential: { ...appCredView(cred), secret: cred.secret } });
  });
  router.get('/v3/users/:userId/application_credentials', authenticated, ownCredentials('list_application_credentials', true), (req, res) => {
    const name = typeof req.query.name === 'string' ? req.query.name : undefined;
    const items = [...appCreds.values()].filter((c) => c.userId === req.params.userId && (name === undefined || c.name === name));
    res.json({ application_credentials: items.map(appCredView), links: { self: `${identityUrl()}/v3/users/${req.params.userId}/application_credentials`, previous: null, next: null } });
  });
  router.get('/v3/users/:userId/application_credentials/:id', authenticated, ownCredentials('get_application_credential', true), (req, res) => {
    const cred = appCreds.get(req.params.id as string);
    if (!cred || cred.userId !== req.params.userId) return fail(res, 404, `Could not find Application Credential: ${req.params.id}.`);
    res.json({ application_credential: appCredView(cred) });
  });
  router.delete('/v3/users/:userId/application_credentials/:id', authenticated, ownCredentials('delete_application_credential', false), (req, res) => {
    const token = caller(res);
    if (token.applicationCredentialId && !appCreds.get(token.applicationCredentialId)?.unrestricted) {
      return fail(res, 403, "Using method 'application_credential' is not allowed for managing additional application credentials.");
    }
    const cred = appCreds.get(req.params.id as string);
    if (!cred || cred.userId !== req.params.userId) return fail(res, 404, `Could not find Application Credential: ${req.params.id}.`);
    appCreds.delete(cred.id);
    // Deleting an application credential revokes the tokens issued with it.
    for (const [id, t] of tokens) if (t.applicationCredentialId === cred.id) tokens.delete(id);
    res.status(204).end();
  });

  const projectIdByName = (name: string) => [...projects.values()].find((p) => p.name === name && p.domainId === 'default')?.id;

  return {
    type: 'identity',
    name: 'keystone',
    prefix: '/identity',
    router: () => router,
    formatError: keystoneError,
    inventory: () => ({ projects: projects.size, users: users.size, application_credentials: appCreds.size }),
    validate(id) {
      const token = liveToken(id);
      if (!token?.projectId) return undefined;
      const user = users.get(token.userId)!;
      const project = projects.get(token.projectId)!;
      return {
        token: token.id,
        userId: user.id,
        userName: user.name,
        projectId: project.id,
        projectName: project.name,
        domainId: project.domainId,
        roles: token.roleIds.map((r) => roles.get(r)!.name),
        expiresAt: token.expiresAt,
      };
    },
    expireTokens() {
      tokens.clear();
    },
    projectId: projectIdByName,
    resolveProject: (idOrName) => (projects.has(idOrName) ? idOrName : projectIdByName(idOrName)),
  };
}
