/** The simulated Keystone's authentication: issuing tokens (password, token, application credential), validating and revoking them, and what a token's owner may list. */
import { randomBytes } from 'node:crypto';
import type { Router } from 'express';
import { z } from 'zod';
import { domainRef, userRef, type ApplicationCredential, type KeystoneStore, type Token, type User } from './model.js';

const authRequestSchema = z.object({
  auth: z.object({
    identity: z.object({
      methods: z.array(z.string()).min(1),
      password: z.object({ user: userRef.extend({ password: z.string() }) }).optional(),
      token: z.object({ id: z.string() }).optional(),
      application_credential: z.object({ id: z.string().optional(), name: z.string().optional(), secret: z.string(), user: userRef.optional() }).optional(),
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

export function tokenRoutes(router: Router, store: KeystoneStore, tokenLifetimeMs: number): void {
  router.post('/v3/auth/tokens', (req, res) => {
    const parsed = authRequestSchema.safeParse(req.body);
    if (!parsed.success) return store.fail(res, 400, `Invalid input for field 'auth': ${parsed.error.issues[0]?.message ?? 'malformed'}`);
    const { identity, scope } = parsed.data.auth;
    const method = identity.methods[0];
    let user: User | undefined;
    let appCred: ApplicationCredential | undefined;
    let base: Token | undefined;
    if (method === 'password' && identity.password) {
      user = store.findUser(identity.password.user);
      if (!user || user.password !== identity.password.user.password) return store.fail(res, 401);
    } else if (method === 'token' && identity.token) {
      base = store.liveToken(identity.token.id);
      if (!base) return store.fail(res, 404, `Could not find token: ${identity.token.id}.`);
      user = store.users.get(base.userId);
    } else if (method === 'application_credential' && identity.application_credential) {
      const ref = identity.application_credential;
      if (ref.id) appCred = store.appCreds.get(ref.id);
      else if (ref.name && ref.user) {
        const owner = store.findUser(ref.user);
        appCred = [...store.appCreds.values()].find((c) => c.name === ref.name && c.userId === owner?.id);
      }
      if (!appCred || appCred.secret !== ref.secret || (appCred.expiresAt !== null && appCred.expiresAt <= store.ctx.clock.now())) return store.fail(res, 401);
      if (scope) return store.fail(res, 401, 'Application credentials cannot request a scope.');
      user = store.users.get(appCred.userId);
    } else {
      return store.fail(res, 401);
    }
    if (!user) return store.fail(res, 401);

    let projectId: string | undefined = appCred?.projectId;
    if (scope && scope !== 'unscoped') {
      if (!('project' in scope)) return store.fail(res, 401, 'The request you have made requires authentication.');
      const ref = scope.project;
      const domain = ref.domain?.id ?? [...store.domains.values()].find((d) => d.name === ref.domain?.name)?.id;
      const project = ref.id ? store.projects.get(ref.id) : [...store.projects.values()].find((p) => p.name === ref.name && p.domainId === domain);
      if (!project || !store.assignments.has(`${user.id}/${project.id}`)) return store.fail(res, 401);
      projectId = project.id;
    } else if (base?.projectId && !scope) {
      projectId = base.projectId;
    }
    const now = store.ctx.clock.now();
    const roleIds = appCred ? store.withImplied(appCred.roleIds) : projectId ? store.withImplied(store.assignments.get(`${user.id}/${projectId}`) ?? []) : [];
    const token: Token = {
      id: `gAAAAAB${randomBytes(135).toString('base64url')}`,
      userId: user.id,
      projectId,
      methods: base ? [...new Set([...base.methods, 'token'])] : [method],
      roleIds,
      issuedAt: now,
      expiresAt: base
        ? Math.min(base.expiresAt, now + tokenLifetimeMs)
        : appCred?.expiresAt
          ? Math.min(appCred.expiresAt, now + tokenLifetimeMs)
          : now + tokenLifetimeMs,
      auditId: randomBytes(16).toString('base64url').slice(0, 22),
      applicationCredentialId: appCred?.id,
    };
    store.tokens.set(token.id, token);
    res.setHeader('X-Subject-Token', token.id);
    res.status(201).json(store.tokenBody(token, req.query.nocatalog === undefined));
  });

  router.get('/v3/auth/tokens', store.authenticated, (req, res) => {
    const subjectId = req.get('x-subject-token');
    const subject = store.liveToken(subjectId);
    if (!subject) return store.fail(res, 404, `Could not find token: ${subjectId ?? ''}.`);
    res.setHeader('X-Subject-Token', subject.id);
    res.json(store.tokenBody(subject, req.query.nocatalog === undefined));
  });
  router.delete('/v3/auth/tokens', store.authenticated, (req, res) => {
    const subjectId = req.get('x-subject-token');
    if (!subjectId || !store.liveToken(subjectId)) return store.fail(res, 404, `Could not find token: ${subjectId ?? ''}.`);
    store.tokens.delete(subjectId);
    res.status(204).end();
  });
  router.get('/v3/auth/catalog', store.authenticated, (_req, res) => {
    const token = store.caller(res);
    if (!token.projectId) return store.fail(res, 403, 'A project-scoped token is required to produce a service store.catalog.');
    res.json({ catalog: store.catalog(token.projectId), links: { self: `${store.identityUrl()}/v3/auth/catalog`, previous: null, next: null } });
  });
  router.get('/v3/auth/projects', store.authenticated, (_req, res) => {
    res.json({
      projects: store.projectsOf(store.caller(res).userId).map(store.projectView),
      links: { self: `${store.identityUrl()}/v3/auth/projects`, previous: null, next: null },
    });
  });
  router.get('/v3/auth/domains', store.authenticated, (_req, res) => {
    res.json({ domains: [], links: { self: `${store.identityUrl()}/v3/auth/domains`, previous: null, next: null } });
  });
}
