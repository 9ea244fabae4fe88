/** Pools and their members. A pool created for a listener becomes its default pool. */
import { isIP } from 'node:net';
import type { Router } from 'express';
import { z } from 'zod';
import { SimulatorError } from '../framework.js';
import { invalidSubresource, notFound, parseBody, resourceNames, validationFailure } from './errors.js';
import { checkPoolProtocol } from './listeners.js';
import { callerOf, listView, queryFlag, requireWriter, selectFields, withChanges, type Caller, type Resource } from './model.js';
import { readRoutes } from './read-routes.js';
import type { Changed, OctaviaState } from './state.js';

const text = z.string().max(255);
const ipAddress = z.string().refine((ip) => isIP(ip) !== 0, { message: 'Value should be IPv4 or IPv6 format' });

const sessionPersistence = z
  .object({
    type: z.enum(['SOURCE_IP', 'HTTP_COOKIE', 'APP_COOKIE']),
    cookie_name: z
      .string()
      .max(255)
      .regex(/^[^\s,;\\]+$/)
      .nullable()
      .optional(),
    persistence_timeout: z.number().int().nullable().optional(),
    persistence_granularity: ipAddress.nullable().optional(),
  })
  .strict();

const poolMutable = {
  name: text.optional(),
  description: text.optional(),
  admin_state_up: z.boolean().optional(),
  lb_algorithm: z.enum(['ROUND_ROBIN', 'LEAST_CONNECTIONS', 'SOURCE_IP', 'SOURCE_IP_PORT']).optional(),
  session_persistence: sessionPersistence.nullable().optional(),
  tags: z.array(text).optional(),
  tls_container_ref: text.nullable().optional(),
  ca_tls_container_ref: text.nullable().optional(),
  crl_container_ref: text.nullable().optional(),
  tls_enabled: z.boolean().optional(),
  tls_ciphers: z.string().max(2048).nullable().optional(),
  tls_versions: z.array(z.string().max(32)).nullable().optional(),
  alpn_protocols: z.array(z.string()).nullable().optional(),
};

/** What a pool is created with, on its own or as a listener's default pool inside a fully populated load balancer. */
export const poolCreateFields = {
  ...poolMutable,
  lb_algorithm: poolMutable.lb_algorithm.unwrap(),
  protocol: z.enum(['HTTP', 'HTTPS', 'PROXY', 'PROXYV2', 'TCP', 'UDP', 'SCTP']),
};
type PoolSpec = z.infer<z.ZodObject<typeof poolCreateFields>>;

const poolCreate = z
  .object({
    pool: z
      .object({
        ...poolCreateFields,
        listener_id: z.guid().optional(),
        loadbalancer_id: z.guid().optional(),
        project_id: z.string().max(36).optional(),
      })
      .strict(),
  })
  .strict();

const poolUpdate = z.object({ pool: z.object(poolMutable).strict() }).strict();

const port = z.number().int().min(1).max(65535);
const memberMutable = {
  name: text.optional(),
  admin_state_up: z.boolean().optional(),
  weight: z.number().int().min(0).max(256).optional(),
  backup: z.boolean().optional(),
  monitor_port: port.nullable().optional(),
  monitor_address: ipAddress.nullable().optional(),
  tags: z.array(text).optional(),
};

/** What a member is created with, on its own or inside a fully populated load balancer. */
export const memberCreateFields = {
  ...memberMutable,
  address: ipAddress,
  protocol_port: port,
  subnet_id: z.guid().optional(),
};
type MemberSpec = z.infer<z.ZodObject<typeof memberCreateFields>>;

const memberPost = z.object({ ...memberCreateFields, project_id: z.string().max(36).optional() }).strict();
const memberCreate = z.object({ member: memberPost }).strict();
/** The batch update's body (MembersRootPUT): the pool's members as they should be. */
const memberBatch = z.object({ members: z.array(memberPost) }).strict();

const memberUpdate = z.object({ member: z.object(memberMutable).strict() }).strict();

/** DuplicateMemberEntry */
function duplicateMember(spec: { address: string; protocol_port: number }): SimulatorError {
  return new SimulatorError(409, `Another member on this pool is already using ip ${spec.address} on protocol_port ${spec.protocol_port}`);
}

/** CONF.networking.reserved_ips */
const reservedIps = new Set(['169.254.169.254']);

function checkPoolOptions(pool: Record<string, unknown>, provider: string): void {
  const persistence = pool.session_persistence as z.infer<typeof sessionPersistence> | null | undefined;
  if (persistence) {
    if (persistence.type === 'APP_COOKIE' && !persistence.cookie_name) {
      throw validationFailure('Field "cookie_name" must be specified when using the "APP_COOKIE" session persistence type.');
    }
    if (persistence.type !== 'APP_COOKIE' && persistence.cookie_name) {
      throw validationFailure('Field "cookie_name" can only be specified with session persistence of type "APP_COOKIE".');
    }
    const udp = pool.protocol === 'UDP' || pool.protocol === 'SCTP';
    if (!udp && (persistence.persistence_timeout || persistence.persistence_granularity)) {
      throw validationFailure('persistence_timeout and persistence_granularity is only for UDP and SCTP protocol pools.');
    }
  }
  // The amphora driver's own check: haproxy has no SOURCE_IP_PORT balancing.
  if (pool.lb_algorithm === 'SOURCE_IP_PORT') {
    throw new SimulatorError(
      501,
      `Provider '${provider}' does not support a requested option: The Amphora provider does not support SOURCE_IP_PORT algorithm.`,
    );
  }
}

/** A new pool of `lb` (PENDING_CREATE, no transition started); the caller links it, locks, counts quota and starts the transition. */
export function addPool(state: OctaviaState, lb: Resource, spec: PoolSpec): Resource {
  checkPoolOptions(spec, lb.attrs.provider as string);
  return state.addChild('pool', lb, {
    name: spec.name ?? '',
    description: spec.description ?? '',
    admin_state_up: spec.admin_state_up ?? true,
    protocol: spec.protocol,
    lb_algorithm: spec.lb_algorithm,
    session_persistence: spec.session_persistence
      ? { cookie_name: null, persistence_timeout: null, persistence_granularity: null, ...spec.session_persistence }
      : null,
    tags: spec.tags ?? [],
    tls_container_ref: spec.tls_container_ref ?? null,
    ca_tls_container_ref: spec.ca_tls_container_ref ?? null,
    crl_container_ref: spec.crl_container_ref ?? null,
    tls_enabled: spec.tls_enabled ?? false,
    tls_ciphers: spec.tls_ciphers ?? null,
    tls_versions: spec.tls_versions ?? null,
    alpn_protocols: spec.alpn_protocols ?? null,
  });
}

/**
 * A new member of `pool` (PENDING_CREATE, no transition started), checked as
 * Octavia checks it; the caller locks, counts quota and starts the transition.
 * `unique`: the caller has already checked the address and port against the
 * pool's members (a batch, in one pass over all of them, rather than one scan
 * of the pool per member).
 */
export function addMember(state: OctaviaState, pool: Resource, spec: MemberSpec, options: { unique?: boolean } = {}): Resource {
  if (reservedIps.has(spec.address)) throw new SimulatorError(400, `${spec.address} is not a valid option for member address`);
  if (spec.subnet_id && !state.ctx.peers.network?.getSubnet(spec.subnet_id)) throw invalidSubresource('Subnet', spec.subnet_id);
  const duplicate =
    !options.unique && state.membersOfPool(pool.id).some((m) => m.attrs.address === spec.address && m.attrs.protocol_port === spec.protocol_port);
  if (duplicate) throw duplicateMember(spec);
  return state.addChild(
    'member',
    pool,
    {
      name: spec.name ?? '',
      admin_state_up: spec.admin_state_up ?? true,
      address: spec.address,
      protocol_port: spec.protocol_port,
      weight: spec.weight ?? 1,
      backup: spec.backup ?? false,
      subnet_id: spec.subnet_id ?? null,
      monitor_address: spec.monitor_address ?? null,
      monitor_port: spec.monitor_port ?? null,
      tags: spec.tags ?? [],
    },
    // No health manager runs, so a member is OFFLINE under a monitor and NO_MONITOR otherwise, for good.
    state.monitorOfPool(pool.id) ? 'OFFLINE' : 'NO_MONITOR',
  );
}

export function poolRoutes(api: Router, state: OctaviaState): void {
  const { ctx, store } = state;

  api.post('/lbaas/pools', (req, res) => {
    const caller = callerOf(res);
    const spec = parseBody(poolCreate, req.body).pool;
    let listener: Resource | undefined;
    let lb: Resource;
    if (spec.loadbalancer_id) {
      lb = state.find('loadbalancer', spec.loadbalancer_id);
      if (spec.listener_id) listener = state.find('listener', spec.listener_id);
    } else if (spec.listener_id) {
      listener = state.find('listener', spec.listener_id);
      lb = state.loadBalancerOf(listener);
    } else {
      throw validationFailure('Must provide at least one of: loadbalancer_id, listener_id');
    }
    requireWriter(caller, lb.projectId);
    if (listener && listener.lbId !== lb.id) throw notFound(resourceNames.listener, listener.id);
    if (listener) checkPoolProtocol(listener.attrs.protocol as string, spec.protocol);
    checkPoolOptions(spec, lb.attrs.provider as string);
    state.checkQuota('pool', lb.projectId);
    if (listener?.attrs.default_pool_id) throw new SimulatorError(409, 'This listener already has a default pool');
    state.lockParents(lb);

    const pool = addPool(state, lb, spec);
    // Linked before the transition, which locks the listeners using the pool.
    if (listener) listener.attrs.default_pool_id = pool.id;
    state.transition(pool, 'CREATE');
    // Octavia's create response has no healthmonitor_id yet; its GET does.
    const { healthmonitor_id: _none, ...created } = state.view(pool);
    res.status(201).json({ pool: created });
  });

  readRoutes(api, state, 'pool');

  api.put('/lbaas/pools/:id', (req, res) => {
    const pool = state.writable('pool', req.params.id, callerOf(res));
    const merged = withChanges(pool.attrs, parseBody(poolUpdate, req.body).pool);
    state.updateChild(pool, merged, { unlocked: () => checkPoolOptions(merged, state.loadBalancerOf(pool).attrs.provider as string) });
    res.json({ pool: state.view(pool) });
  });

  api.delete('/lbaas/pools/:id', (req, res) => {
    state.deleteChild(state.writable('pool', req.params.id, callerOf(res)));
    res.status(204).end();
  });

  // Members.
  const memberOf = (pool: Resource, id: string): Resource => {
    const member = store.member.get(id);
    if (!member || member.poolId !== pool.id) throw notFound(resourceNames.member, id);
    return member;
  };

  api.post('/lbaas/pools/:poolId/members', (req, res) => {
    const caller = callerOf(res);
    const pool = state.find('pool', req.params.poolId);
    const lb = state.loadBalancerOf(pool);
    requireWriter(caller, lb.projectId);
    const { project_id: _project, ...spec } = parseBody(memberCreate, req.body).member;
    if (reservedIps.has(spec.address)) throw new SimulatorError(400, `${spec.address} is not a valid option for member address`);
    if (spec.subnet_id && !ctx.peers.network?.getSubnet(spec.subnet_id)) throw invalidSubresource('Subnet', spec.subnet_id);
    state.checkQuota('member', lb.projectId);
    state.lockParents(lb, pool);
    const member = addMember(state, pool, spec);
    state.transition(member, 'CREATE');
    res.status(201).json({ member: state.view(member) });
  });

  // The batch update (API 2.1; additive_only 2.11): the listed members are matched to the pool's by address and port, new ones
  // created, matching ones updated, and the rest deleted unless additive_only; all in one change of the pool, answered 202.
  api.put('/lbaas/pools/:poolId/members', (req, res) => {
    const caller = callerOf(res);
    const pool = state.find('pool', req.params.poolId);
    const lb = state.loadBalancerOf(pool);
    requireWriter(caller, lb.projectId);
    const listed = parseBody(memberBatch, req.body).members.map(({ project_id: _project, ...spec }) => spec);
    const additiveOnly = queryFlag(req.query.additive_only);
    state.lockParents(lb, pool);
    const key = (address: unknown, port: unknown) => `${String(address)} ${String(port)}`;
    const existing = new Map(state.membersOfPool(pool.id).map((member) => [key(member.attrs.address, member.attrs.protocol_port), member]));
    const listedKeys = new Set(listed.map((spec) => key(spec.address, spec.protocol_port)));
    const fresh = listed.filter((spec) => !existing.has(key(spec.address, spec.protocol_port)));
    const left = [...existing.entries()].filter(([memberKey]) => !listedKeys.has(memberKey)).map(([, member]) => member);
    // Octavia's own early return: nothing listed, nothing there.
    if (listed.length === 0 && left.length === 0) {
      res.status(202).end();
      return;
    }
    // Everything is checked before anything changes: Octavia rolls the whole batch back on any error.
    for (const spec of fresh) if (reservedIps.has(spec.address)) throw new SimulatorError(400, `${spec.address} is not a valid option for member address`);
    state.checkQuota('member', lb.projectId, additiveOnly ? fresh.length : fresh.length - left.length);
    for (const spec of fresh) if (spec.subnet_id && !ctx.peers.network?.getSubnet(spec.subnet_id)) throw invalidSubresource('Subnet', spec.subnet_id);
    // One pass with a set: a body of many thousand members must not cost a quadratic scan.
    const freshKeys = new Set<string>();
    for (const spec of fresh) {
      const freshKey = key(spec.address, spec.protocol_port);
      if (freshKeys.has(freshKey)) throw duplicateMember(spec);
      freshKeys.add(freshKey);
    }

    const changes: Changed[] = fresh.map((spec) => ({ target: addMember(state, pool, spec, { unique: true }), change: 'CREATE' }));
    for (const spec of listed) {
      const member = existing.get(key(spec.address, spec.protocol_port));
      if (member) {
        member.attrs = withChanges(member.attrs, spec);
        changes.push({ target: member, change: 'UPDATE' });
      }
    }
    if (!additiveOnly) changes.push(...left.map((member): Changed => ({ target: member, change: 'DELETE' })));
    state.transitionMembers(pool, changes);
    res.status(202).end();
  });

  api.get('/lbaas/pools/:poolId/members', (req, res) => {
    const pool = state.readable('pool', req.params.poolId, callerOf(res));
    res.json(
      listView(
        req,
        state.membersOfPool(pool.id).map((m) => state.view(m)),
        'members',
        `${ctx.baseUrl()}/load-balancer/v2/lbaas/pools/${pool.id}/members`,
      ),
    );
  });

  api.get('/lbaas/pools/:poolId/members/:id', (req, res) => {
    const pool = state.readable('pool', req.params.poolId, callerOf(res));
    res.json({ member: selectFields(req, state.view(memberOf(pool, req.params.id))) });
  });

  /** A member to change: found below the pool in the URL, and writable by the caller. */
  const writableMember = (poolId: string, id: string, caller: Caller): Resource => {
    const member = memberOf(state.find('pool', poolId), id);
    requireWriter(caller, member.projectId);
    return member;
  };

  api.put('/lbaas/pools/:poolId/members/:id', (req, res) => {
    const member = writableMember(req.params.poolId, req.params.id, callerOf(res));
    state.updateChild(member, withChanges(member.attrs, parseBody(memberUpdate, req.body).member));
    res.json({ member: state.view(member) });
  });

  api.delete('/lbaas/pools/:poolId/members/:id', (req, res) => {
    state.deleteChild(writableMember(req.params.poolId, req.params.id, callerOf(res)));
    res.status(204).end();
  });
}
