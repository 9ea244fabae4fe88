/**
 * Server groups. Before 2.64 a group carries `policies` (a one-element
 * list) and `metadata`; from 2.64 on a single `policy` plus `rules`.
 */
import type { Router } from 'express';
import { z } from 'zod';
import type { SimulatorContext } from '../framework.js';
import { badRequest, forbidden, invalidName, notFound, parseBody, policyForbidden } from './errors.js';
import { callerOf, queryOne, quotaOf, type Caller, type NovaStore, type ServerGroup } from './model.js';

const basePolicies = ['anti-affinity', 'affinity'] as const;
const softPolicies = ['soft-anti-affinity', 'soft-affinity'] as const;

const groupName = z
  .string()
  .min(1)
  .max(255)
  .refine((n) => n.trim() === n, invalidName('printable characters. Can not start or end with whitespace.'));

function createSchema(minor: number) {
  const policies = minor >= 15 ? ([...basePolicies, ...softPolicies] as const) : basePolicies;
  const group =
    minor >= 64
      ? z
          .object({
            name: groupName,
            policy: z.enum(policies),
            rules: z.object({ max_server_per_host: z.coerce.number().int().positive().optional() }).strict().optional(),
          })
          .strict()
      : z.object({ name: groupName, policies: z.array(z.enum(policies)).length(1) }).strict();
  return z.object({ server_group: group }).strict();
}

function serverGroupView(group: ServerGroup, minor: number, liveMembers: string[]) {
  return {
    id: group.id,
    name: group.name,
    ...(minor >= 64 ? { policy: group.policy, rules: { ...group.rules } } : { policies: [group.policy] }),
    members: liveMembers,
    ...(minor >= 64 ? {} : { metadata: {} }),
    ...(minor >= 13 ? { project_id: group.projectId, user_id: group.userId } : {}),
  };
}

export function serverGroupRoutes(api: Router, store: NovaStore, ctx: SimulatorContext): void {
  const visible = (group: ServerGroup, caller: Caller) => caller.admin || group.projectId === caller.projectId;
  const live = (group: ServerGroup) => group.members.filter((id) => store.servers.has(id));

  const find = (id: string, caller: Caller) => {
    const group = store.groups.get(id);
    if (!group || !visible(group, caller)) throw notFound(`Instance group ${id} could not be found.`);
    return group;
  };

  api.post('/os-server-groups', (req, res) => {
    const caller = callerOf(res);
    const body = parseBody(createSchema(caller.minor), req.body).server_group;
    const policy = 'policy' in body ? body.policy : body.policies[0]!;
    const rules: Record<string, number> = {};
    if ('rules' in body && body.rules?.max_server_per_host !== undefined) {
      if (policy !== 'anti-affinity') throw badRequest('Only anti-affinity policy supports rules.');
      rules.max_server_per_host = body.rules.max_server_per_host;
    }
    const owned = [...store.groups.values()].filter((g) => g.projectId === caller.projectId).length;
    if (owned + 1 > quotaOf(ctx, caller.projectId, 'server_groups')) throw forbidden('Quota exceeded, too many server groups.');
    const group: ServerGroup = { id: ctx.newId(), name: body.name, policy, rules, projectId: caller.projectId, userId: caller.userId, members: [] };
    store.groups.set(group.id, group);
    res.json({ server_group: serverGroupView(group, caller.minor, []) });
  });

  api.get('/os-server-groups', (req, res) => {
    const caller = callerOf(res);
    const allProjects = queryOne(req.query, 'all_projects') !== undefined;
    if (allProjects && !caller.admin) throw policyForbidden('os_compute_api:os-server-groups:index:all_projects');
    const offset = Number(queryOne(req.query, 'offset') ?? 0);
    const limit = Number(queryOne(req.query, 'limit') ?? 1000);
    const groups = [...store.groups.values()].filter((g) => (allProjects ? true : g.projectId === caller.projectId)).slice(offset, offset + limit);
    res.json({ server_groups: groups.map((g) => serverGroupView(g, caller.minor, live(g))) });
  });

  api.get('/os-server-groups/:id', (req, res) => {
    const caller = callerOf(res);
    const group = find(req.params.id, caller);
    res.json({ server_group: serverGroupView(group, caller.minor, live(group)) });
  });

  api.delete('/os-server-groups/:id', (req, res) => {
    const group = find(req.params.id, callerOf(res));
    store.groups.delete(group.id);
    res.status(204).end();
  });
}
