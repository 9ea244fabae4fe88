/** Keystone's identity objects as a state file keeps them, validated when read back. Tokens are not kept: clients authenticate again. */
import { z } from 'zod';
import { epochMs, parseSnapshot, refill, refillEntries } from '../snapshots.js';
import type { ApplicationCredential, Domain, KeystoneStore, Project, Role, User } from './model.js';

const domain = z.object({ id: z.string(), name: z.string(), description: z.string() }) satisfies z.ZodType<Domain>;
const project = z.object({ id: z.string(), name: z.string(), domainId: z.string(), description: z.string() }) satisfies z.ZodType<Project>;
const user = z.object({ id: z.string(), name: z.string(), domainId: z.string(), password: z.string() }) satisfies z.ZodType<User>;
const role = z.object({ id: z.string(), name: z.string() }) satisfies z.ZodType<Role>;
const applicationCredential = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  userId: z.string(),
  projectId: z.string(),
  secret: z.string(),
  roleIds: z.array(z.string()),
  expiresAt: epochMs.nullable(),
  unrestricted: z.boolean(),
}) satisfies z.ZodType<ApplicationCredential>;

const keystoneSnapshotSchema = z.object({
  domains: z.array(domain),
  projects: z.array(project),
  users: z.array(user),
  roles: z.array(role),
  /** [`${userId}/${projectId}`, role ids]. */
  assignments: z.array(z.tuple([z.string(), z.array(z.string())])),
  applicationCredentials: z.array(applicationCredential),
  /** The catalog's service and endpoint ids, by type and `${type}/${interface}`. */
  serviceIds: z.array(z.tuple([z.string(), z.string()])),
  endpointIds: z.array(z.tuple([z.string(), z.string()])),
});

type KeystoneSnapshot = z.infer<typeof keystoneSnapshotSchema>;

export function snapshotStore(store: KeystoneStore): KeystoneSnapshot {
  return {
    domains: [...store.domains.values()],
    projects: [...store.projects.values()],
    users: [...store.users.values()],
    roles: [...store.roles.values()],
    assignments: [...store.assignments],
    applicationCredentials: [...store.appCreds.values()],
    serviceIds: [...store.serviceIds],
    endpointIds: [...store.endpointIds],
  };
}

/** Replaces the seeded identities (and their random ids) with a snapshot's; live tokens are dropped. */
export function restoreStore(store: KeystoneStore, snapshot: unknown): void {
  const data = parseSnapshot('keystone', keystoneSnapshotSchema, snapshot);
  refill(store.domains, data.domains);
  refill(store.projects, data.projects);
  refill(store.users, data.users);
  refill(store.roles, data.roles);
  refill(store.appCreds, data.applicationCredentials);
  refillEntries(store.assignments, data.assignments);
  refillEntries(store.serviceIds, data.serviceIds);
  refillEntries(store.endpointIds, data.endpointIds);
  store.tokens.clear();
}
