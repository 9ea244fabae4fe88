/**
 * The simulated Keystone's state, seeded like ministack (domain Default, projects admin/demo/
 * service, users admin/demo and the service user, the same passwords, keystone-manage bootstrap's
 * roles and implications), and what the routes share: views, the catalog, live tokens and the
 * X-Auth-Token check.
 */
import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import type { SimulatedService, SimulatorContext } from '../framework.js';
import { keystoneError } from './errors.js';

export const seedUsers = {
  admin: { name: 'admin', password: 'ministack-admin', project: 'admin' },
  demo: { name: 'demo', password: 'ministack-demo', project: 'demo' },
  service: { name: 'ministack-svc', password: 'ministack-service', project: 'service' },
} as const;

export interface Domain {
  id: string;
  name: string;
  description: string;
}
export interface Project {
  id: string;
  name: string;
  domainId: string;
  description: string;
}
export interface User {
  id: string;
  name: string;
  domainId: string;
  password: string;
}
export interface Role {
  id: string;
  name: string;
}
export interface ApplicationCredential {
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
export interface Token {
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

export function timestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export const hexId = () => randomBytes(16).toString('hex');

export const domainRef = z.object({ id: z.string().optional(), name: z.string().optional() }).optional();
export const userRef = z.object({ id: z.string().optional(), name: z.string().optional(), domain: domainRef });

const catalogSuffix: Record<string, string> = { compute: '/v2.1', 'block-storage': '/v3/{project_id}' };

export type KeystoneStore = ReturnType<typeof createKeystoneStore>;

export function createKeystoneStore(ctx: SimulatorContext, options: { services: () => readonly SimulatedService[] }) {
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
  for (const name of [
    'admin',
    'member',
    'reader',
    'service',
    'load-balancer_member',
    'load-balancer_observer',
    'load-balancer_admin',
    'load-balancer_global_observer',
    'load-balancer_quota_admin',
  ]) {
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
      project = {
        id: hexId(),
        name: user.project,
        domainId: 'default',
        description: user.project === 'admin' ? 'Bootstrap project for initializing the cloud.' : user.project,
      };
      projects.set(project.id, project);
    }
    const u = { id: hexId(), name: user.name, domainId: 'default', password: user.password };
    users.set(u.id, u);
    assignments.set(
      `${u.id}/${project.id}`,
      roleNames.map((n) => roleByName(n)!.id),
    );
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

  /** keystonemiddleware's job in the other services; Keystone checks X-Auth-Token itself. */
  const authenticated = (req: Request, res: Response, next: NextFunction) => {
    const token = liveToken(req.get('x-auth-token'));
    if (!token) return fail(res, 401);
    res.locals.token = token;
    next();
  };
  const caller = (res: Response): Token => res.locals.token as Token;
  const isAdmin = (token: Token) => token.roleIds.some((id) => roles.get(id)?.name === 'admin');
  const projectsOf = (userId: string) => [...projects.values()].filter((p) => assignments.has(`${userId}/${p.id}`));
  const projectIdByName = (name: string) => [...projects.values()].find((p) => p.name === name && p.domainId === 'default')?.id;

  const list = (collection: string, items: unknown[]) => ({
    [collection]: items,
    links: { self: `${identityUrl()}/v3/${collection}`, previous: null, next: null },
  });
  const forbidden = (res: Response, action: string) => fail(res, 403, `You are not authorized to perform the requested action: identity:${action}.`);

  return {
    ctx,
    domains,
    projects,
    users,
    roles,
    assignments,
    appCreds,
    tokens,
    serviceIds,
    endpointIds,
    roleByName,
    withImplied,
    identityUrl,
    domainView,
    projectView,
    userView,
    roleRef,
    catalog,
    liveToken,
    tokenBody,
    fail,
    findUser,
    authenticated,
    caller,
    isAdmin,
    projectsOf,
    projectIdByName,
    list,
    forbidden,
  };
}
