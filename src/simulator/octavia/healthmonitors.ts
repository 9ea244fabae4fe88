/** Health monitors: at most one per pool; ONLINE once ACTIVE (enabled) although nothing probes. */
import type { Router } from 'express';
import { z } from 'zod';
import { SimulatorError } from '../framework.js';
import { parseBody, validationFailure } from './errors.js';
import { callerOf, requireWriter, withChanges, type Resource } from './model.js';
import { readRoutes } from './read-routes.js';
import type { OctaviaState } from './state.js';

const types = ['HTTP', 'HTTPS', 'PING', 'TCP', 'TLS-HELLO', 'UDP-CONNECT', 'SCTP'] as const;
const httpTypes = new Set(['HTTP', 'HTTPS']);
const retries = z.number().int().min(1).max(10);

const mutable = {
  name: z.string().max(255).optional(),
  delay: z.number().int().min(0).optional(),
  timeout: z.number().int().min(0).optional(),
  max_retries_down: retries.optional(),
  max_retries: retries.optional(),
  http_method: z.enum(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']).optional(),
  url_path: z.string().regex(/^\//, { message: 'Value should be a valid URL path' }).optional(),
  expected_codes: z
    .string()
    .regex(/^(\d{3}(\s*,\s*\d{3})*)$|^(\d{3}-\d{3})$/)
    .optional(),
  admin_state_up: z.boolean().optional(),
  tags: z.array(z.string().max(255)).optional(),
  http_version: z
    .union([z.literal(1.0), z.literal(1.1)])
    .nullable()
    .optional(),
  domain_name: z.string().min(1).max(255).nullable().optional(),
};

/** What a monitor is created with, on its own or inside a fully populated load balancer. */
export const healthMonitorCreateFields = {
  ...mutable,
  type: z.enum(types),
  delay: z.number().int().min(0),
  timeout: z.number().int().min(0),
  max_retries: retries,
};
type HealthMonitorSpec = z.infer<z.ZodObject<typeof healthMonitorCreateFields>>;

const createSchema = z
  .object({
    healthmonitor: z
      .object({
        ...healthMonitorCreateFields,
        pool_id: z.guid(),
        project_id: z.string().max(36).optional(),
      })
      .strict(),
  })
  .strict();

const updateSchema = z.object({ healthmonitor: z.object(mutable).strict() }).strict();

/** _validate_create_hm: HTTP options only for HTTP(S) monitors, which get GET / 200 by default. */
function checkHttpOptions(monitor: Record<string, unknown>): void {
  const type = monitor.type as string;
  if (!httpTypes.has(type)) {
    for (const option of ['http_method', 'url_path', 'expected_codes']) {
      if (monitor[option]) throw new SimulatorError(400, `${option} is not a valid option for health monitors of type ${type}`);
    }
  }
  if (monitor.domain_name && !monitor.http_version) throw validationFailure("'http_version' must be specified when 'domain_name' is provided.");
  if (monitor.domain_name && (monitor.http_version as number) < 1.1) {
    throw new SimulatorError(400, `http_version ${String(monitor.http_version)} is not a valid option for health monitors HTTP 1.1 domain name health check`);
  }
}

function checkPoolType(pool: Resource, spec: HealthMonitorSpec): void {
  const udpPool = pool.attrs.protocol === 'UDP' || pool.attrs.protocol === 'SCTP';
  if (udpPool && !['UDP-CONNECT', 'SCTP', 'TCP', 'HTTP'].includes(spec.type)) {
    throw validationFailure(`The associated pool protocol is ${String(pool.attrs.protocol)}, so only a UDP-CONNECT/SCTP/TCP/HTTP health monitor is supported.`);
  }
  if (!udpPool && (spec.type === 'UDP-CONNECT' || spec.type === 'SCTP')) {
    throw validationFailure(`The ${spec.type} type is only supported for pools of type UDP/SCTP.`);
  }
}

/** The monitor of `pool` (PENDING_CREATE, no transition started), checked; the caller locks, counts quota and starts the transition. */
export function addHealthMonitor(state: OctaviaState, pool: Resource, spec: HealthMonitorSpec): Resource {
  checkPoolType(pool, spec);
  if (state.monitorOfPool(pool.id)) throw new SimulatorError(409, 'This pool already has a health monitor');
  checkHttpOptions(spec);
  const http = httpTypes.has(spec.type);
  return state.addChild('healthmonitor', pool, {
    name: spec.name ?? '',
    type: spec.type,
    delay: spec.delay,
    timeout: spec.timeout,
    max_retries: spec.max_retries,
    max_retries_down: spec.max_retries_down ?? 3,
    http_method: spec.http_method ?? (http ? 'GET' : null),
    url_path: spec.url_path ?? (http ? '/' : null),
    expected_codes: spec.expected_codes ?? (http ? '200' : null),
    admin_state_up: spec.admin_state_up ?? true,
    tags: spec.tags ?? [],
    http_version: spec.http_version ?? null,
    domain_name: spec.domain_name ?? null,
  });
}

export function healthMonitorRoutes(api: Router, state: OctaviaState): void {
  api.post('/lbaas/healthmonitors', (req, res) => {
    const caller = callerOf(res);
    const spec = parseBody(createSchema, req.body).healthmonitor;
    const pool = state.find('pool', spec.pool_id);
    const lb = state.loadBalancerOf(pool);
    requireWriter(caller, lb.projectId);
    checkPoolType(pool, spec);
    state.checkQuota('healthmonitor', lb.projectId);
    state.lockParents(lb, pool);
    const monitor = addHealthMonitor(state, pool, spec);
    state.transition(monitor, 'CREATE');
    res.status(201).json({ healthmonitor: state.view(monitor) });
  });

  readRoutes(api, state, 'healthmonitor');

  api.put('/lbaas/healthmonitors/:id', (req, res) => {
    const monitor = state.writable('healthmonitor', req.params.id, callerOf(res));
    const merged = withChanges(monitor.attrs, parseBody(updateSchema, req.body).healthmonitor);
    state.updateChild(monitor, merged, { locked: () => checkHttpOptions(merged) });
    res.json({ healthmonitor: state.view(monitor) });
  });

  api.delete('/lbaas/healthmonitors/:id', (req, res) => {
    state.deleteChild(state.writable('healthmonitor', req.params.id, callerOf(res)));
    res.status(204).end();
  });
}
