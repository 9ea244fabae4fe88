/** The simulated Keystone's application credentials: create (secret shown once), list, show, delete. */
import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response, Router } from 'express';
import { z } from 'zod';
import { hexId, timestamp, type ApplicationCredential, type KeystoneStore } from './model.js';

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

export function applicationCredentialRoutes(router: Router, store: KeystoneStore): void {
  const appCredView = (c: ApplicationCredential) => ({
    id: c.id,
    name: c.name,
    description: c.description,
    user_id: c.userId,
    project_id: c.projectId,
    expires_at: c.expiresAt === null ? null : timestamp(c.expiresAt),
    unrestricted: c.unrestricted,
    system: null,
    roles: c.roleIds.map((id) => ({ ...store.roleRef(id), domain_id: null })),
    access_rules: [],
    links: { self: `${store.identityUrl()}/v3/users/${c.userId}/application_credentials/${c.id}` },
  });
  /** Policy `identity:*_application_credential` is "user_id:%(user_id)s" (or admin for reads). */
  const ownCredentials = (action: string, allowAdmin: boolean) => (req: Request, res: Response, next: NextFunction) => {
    const token = store.caller(res);
    if (token.userId !== req.params.userId && !(allowAdmin && store.isAdmin(token))) return store.forbidden(res, action);
    next();
  };
  router.post('/v3/users/:userId/application_credentials', store.authenticated, ownCredentials('create_application_credential', false), (req, res) => {
    const token = store.caller(res);
    if (token.applicationCredentialId && !store.appCreds.get(token.applicationCredentialId)?.unrestricted) {
      return store.fail(res, 403, "Using method 'application_credential' is not allowed for managing additional application credentials.");
    }
    if (!token.projectId) return store.fail(res, 401, 'Unable to create an application credential without a project-scoped token.');
    const parsed = appCredRequestSchema.safeParse(req.body);
    if (!parsed.success) return store.fail(res, 400, `Invalid input for field 'application_credential': ${parsed.error.issues[0]?.message ?? 'malformed'}`);
    const spec = parsed.data.application_credential;
    if ([...store.appCreds.values()].some((c) => c.userId === token.userId && c.name === spec.name)) {
      return store.fail(res, 409, 'Conflict occurred attempting to store application_credential - Duplicate application credential.');
    }
    let roleIds = token.roleIds;
    if (spec.roles?.length) {
      const requested = spec.roles.map((r) => (r.id ? store.roles.get(r.id) : store.roleByName(r.name ?? '')));
      if (requested.some((r) => !r || !token.roleIds.includes(r.id))) {
        return store.fail(res, 403, 'Requested store.roles are not in the token.');
      }
      roleIds = requested.map((r) => r!.id);
    }
    let expiresAt: number | null = null;
    if (spec.expires_at) {
      expiresAt = Date.parse(spec.expires_at.endsWith('Z') || /[+-]\d\d:?\d\d$/.test(spec.expires_at) ? spec.expires_at : `${spec.expires_at}Z`);
      if (Number.isNaN(expiresAt)) return store.fail(res, 400, `Invalid input for field 'expires_at': '${spec.expires_at}' is not a 'date-time'`);
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
    store.appCreds.set(cred.id, cred);
    res.status(201).json({ application_credential: { ...appCredView(cred), secret: cred.secret } });
  });
  router.get('/v3/users/:userId/application_credentials', store.authenticated, ownCredentials('list_application_credentials', true), (req, res) => {
    const name = typeof req.query.name === 'string' ? req.query.name : undefined;
    const items = [...store.appCreds.values()].filter((c) => c.userId === req.params.userId && (name === undefined || c.name === name));
    res.json({
      application_credentials: items.map(appCredView),
      links: { self: `${store.identityUrl()}/v3/users/${req.params.userId}/application_credentials`, previous: null, next: null },
    });
  });
  router.get('/v3/users/:userId/application_credentials/:id', store.authenticated, ownCredentials('get_application_credential', true), (req, res) => {
    const cred = store.appCreds.get(req.params.id as string);
    if (!cred || cred.userId !== req.params.userId) return store.fail(res, 404, `Could not find Application Credential: ${req.params.id}.`);
    res.json({ application_credential: appCredView(cred) });
  });
  router.delete('/v3/users/:userId/application_credentials/:id', store.authenticated, ownCredentials('delete_application_credential', false), (req, res) => {
    const token = store.caller(res);
    if (token.applicationCredentialId && !store.appCreds.get(token.applicationCredentialId)?.unrestricted) {
      return store.fail(res, 403, "Using method 'application_credential' is not allowed for managing additional application credentials.");
    }
    const cred = store.appCreds.get(req.params.id as string);
    if (!cred || cred.userId !== req.params.userId) return store.fail(res, 404, `Could not find Application Credential: ${req.params.id}.`);
    store.appCreds.delete(cred.id);
    // Deleting an application credential revokes the store.tokens issued with it.
    for (const [id, t] of store.tokens) if (t.applicationCredentialId === cred.id) store.tokens.delete(id);
    res.status(204).end();
  });
}
