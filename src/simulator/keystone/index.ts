/**
 * Keystone v3: password, token and application-credential authentication,
 * the service catalog of the simulated services, token validation and
 * revocation, application credentials, and the read-only identity objects the
 * CLI touches. Seeded like ministack (domain Default, projects admin/demo/
 * service, users admin/demo and the service user, the same passwords).
 */
import express from 'express';
import type { SimulatedService, SimulatorContext, TokenScope } from '../framework.js';
import { applicationCredentialRoutes } from './application-credentials.js';
import { keystoneError } from './errors.js';
import { identityRoutes } from './identity.js';
import { createKeystoneStore } from './model.js';
import { restoreStore, snapshotStore } from './snapshot.js';
import { tokenRoutes } from './tokens.js';

export { seedUsers } from './model.js';

export interface KeystoneSimulator extends SimulatedService {
  /** The scope of a valid project-scoped token; undefined for unknown, expired, revoked or unscoped tokens. */
  validate(token: string): TokenScope | undefined;
  expireTokens(): void;
  projectId(name: string): string | undefined;
  /** A project id from an id or a name in the Default domain. */
  resolveProject(idOrName: string): string | undefined;
}

export function createKeystoneSimulator(
  ctx: SimulatorContext,
  options: { tokenLifetimeMs: number; services: () => readonly SimulatedService[] },
): KeystoneSimulator {
  const store = createKeystoneStore(ctx, options);
  const versionDoc = () => ({
    id: 'v3.14',
    status: 'stable',
    updated: '2020-04-07T00:00:00Z',
    links: [{ rel: 'self', href: `${store.identityUrl()}/v3/` }],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }],
  });

  const router = express.Router();
  router.get('/', (_req, res) => {
    res.status(300).json({ versions: { values: [versionDoc()] } });
  });
  router.get('/v3', (_req, res) => {
    res.json({ version: versionDoc() });
  });
  tokenRoutes(router, store, options.tokenLifetimeMs);
  identityRoutes(router, store);
  applicationCredentialRoutes(router, store);

  return {
    type: 'identity',
    name: 'keystone',
    prefix: '/identity',
    router: () => router,
    formatError: keystoneError,
    state: { snapshot: () => snapshotStore(store), restore: (snapshot) => restoreStore(store, snapshot) },
    inventory: () => ({ projects: store.projects.size, users: store.users.size, application_credentials: store.appCreds.size }),
    validate(id) {
      const token = store.liveToken(id);
      if (!token?.projectId) return undefined;
      const user = store.users.get(token.userId)!;
      const project = store.projects.get(token.projectId)!;
      return {
        token: token.id,
        userId: user.id,
        userName: user.name,
        projectId: project.id,
        projectName: project.name,
        domainId: project.domainId,
        roles: token.roleIds.map((r) => store.roles.get(r)!.name),
        expiresAt: token.expiresAt,
      };
    },
    expireTokens() {
      store.tokens.clear();
    },
    projectId: store.projectIdByName,
    resolveProject: (idOrName) => (store.projects.has(idOrName) ? idOrName : store.projectIdByName(idOrName)),
  };
}
