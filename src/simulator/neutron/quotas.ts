/**
 * The quotas extension: per-project limits (stored through the host's
 * quota table so tests and `Simulator.setQuota` see the same numbers),
 * their defaults, and usage details. -1 is unlimited, as in Neutron.
 */
import { attr, field, integer, parseBody } from './body.js';
import { NeutronError, policyDenied } from './errors.js';
import type { Caller } from './model.js';
import { DEFAULT_QUOTAS, QUOTA_RESOURCES, type QuotaResource, type Store } from './store.js';

const limit = (n: number) => (n === Infinity ? -1 : n);

const quotaSpec = Object.fromEntries([
  ...QUOTA_RESOURCES.map((r) => [
    r,
    attr(
      field((v) => integer(v, -1, 2147483647)),
      false,
      true,
    ),
  ]),
  [
    'force',
    attr(
      field((v) => v),
      false,
      true,
    ),
  ],
  [
    'check_limit',
    attr(
      field((v) => v),
      false,
      true,
    ),
  ],
]);

function mayRead(caller: Caller, projectId: string): void {
  if (projectId !== caller.projectId && !caller.isAdmin) throw policyDenied('rule:get_quota');
}

export function showQuota(s: Store, caller: Caller, projectId: string) {
  mayRead(caller, projectId);
  return { quota: Object.fromEntries(QUOTA_RESOURCES.map((r) => [r, limit(s.quotaLimit(projectId, r))])) };
}

export function defaultQuota(caller: Caller, projectId: string) {
  mayRead(caller, projectId);
  return { quota: { ...DEFAULT_QUOTAS } };
}

export function quotaDetails(s: Store, caller: Caller, projectId: string) {
  if (projectId !== caller.projectId && !caller.isAdmin) {
    throw new NeutronError(403, 'AdminRequired', 'User does not have admin privileges: Only admin is authorized to access quotas for another project.');
  }
  return {
    quota: Object.fromEntries(QUOTA_RESOURCES.map((r) => [r, { used: s.usage(projectId, r), limit: limit(s.quotaLimit(projectId, r)), reserved: 0 }])),
  };
}

export function updateQuota(s: Store, caller: Caller, projectId: string, body: unknown) {
  if (!caller.isAdmin) throw policyDenied('rule:update_quota');
  const v = parseBody(quotaSpec, 'quota', body, 'PUT') as Partial<Record<QuotaResource | 'force' | 'check_limit', unknown>>;
  const changes = QUOTA_RESOURCES.filter((r) => v[r] !== undefined).map((r) => [r, v[r] as number] as const);
  if (v.check_limit) {
    for (const [resource, wanted] of changes) {
      const used = s.usage(projectId, resource);
      if (wanted !== -1 && used > wanted) {
        throw new NeutronError(400, 'HTTPBadRequest', `Quota limit ${wanted} for ${resource} must be greater than or equal to already used ${used}`);
      }
    }
  }
  for (const [resource, wanted] of changes) s.ctx.setQuota(projectId, resource, wanted === -1 ? Infinity : wanted);
  return showQuota(s, caller, projectId);
}

/** DELETE: the project falls back to the defaults. */
export function resetQuota(s: Store, caller: Caller, projectId: string): void {
  if (!caller.isAdmin) throw policyDenied('rule:delete_quota');
  for (const resource of QUOTA_RESOURCES) s.ctx.setQuota(projectId, resource, DEFAULT_QUOTAS[resource]);
}
