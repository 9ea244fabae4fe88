/** Listeners: one per L4 protocol and port on a load balancer, each locking it while it changes. */
import { isIP } from 'node:net';
import type { Router } from 'express';
import { z } from 'zod';
import { SimulatorError } from '../framework.js';
import { notFound, parseBody, resourceNames, validationFailure } from './errors.js';
import { callerOf, requireWriter, withChanges, type Resource } from './model.js';
import { readRoutes } from './read-routes.js';
import type { OctaviaState } from './state.js';

const listenerProtocols = ['HTTP', 'HTTPS', 'TCP', 'TERMINATED_HTTPS', 'UDP', 'SCTP', 'PROMETHEUS'] as const;

/** constants.VALID_LISTENER_POOL_PROTOCOL_MAP */
const poolProtocolsFor: Record<string, string[]> = {
  TCP: ['HTTP', 'HTTPS', 'PROXY', 'PROXYV2', 'TCP'],
  HTTP: ['HTTP', 'PROXY', 'PROXYV2'],
  HTTPS: ['HTTPS', 'PROXY', 'PROXYV2', 'TCP'],
  TERMINATED_HTTPS: ['HTTP', 'PROXY', 'PROXYV2'],
  UDP: ['UDP'],
  SCTP: ['SCTP'],
  PROMETHEUS: [],
};

export function checkPoolProtocol(listenerProtocol: string, poolProtocol: string): void {
  if (!poolProtocolsFor[listenerProtocol]?.includes(poolProtocol)) {
    throw validationFailure(`The pool protocol '${poolProtocol}' is invalid while the listener protocol is '${listenerProtocol}'.`);
  }
}

const l4Protocol = (protocol: string) => (protocol === 'UDP' || protocol === 'SCTP' ? protocol : 'TCP');

const cidr = z.string().refine(
  (value) => {
    const [address, bits, extra] = value.split('/');
    const version = isIP(address ?? '');
    return extra === undefined && version !== 0 && (bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128)));
  },
  { message: 'Value should be CIDR format' },
);
const text = z.string().max(255);
const timeout = z
  .number()
  .int()
  .min(0)
  .max(24 * 60 * 60 * 1000);

const mutableFields = {
  name: text.optional(),
  description: text.optional(),
  admin_state_up: z.boolean().optional(),
  connection_limit: z.number().int().min(-1).optional(),
  default_tls_container_ref: text.nullable().optional(),
  sni_container_refs: z.array(text).optional(),
  default_pool_id: z.guid().nullable().optional(),
  insert_headers: z.record(z.string(), text).optional(),
  timeout_client_data: timeout.nullable().optional(),
  timeout_member_connect: timeout.nullable().optional(),
  timeout_member_data: timeout.nullable().optional(),
  timeout_tcp_inspect: timeout.nullable().optional(),
  tags: z.array(text).optional(),
  client_ca_tls_container_ref: text.nullable().optional(),
  client_authentication: z.enum(['NONE', 'OPTIONAL', 'MANDATORY']).optional(),
  client_crl_container_ref: text.nullable().optional(),
  allowed_cidrs: z.array(cidr).nullable().optional(),
  tls_ciphers: z.string().max(2048).nullable().optional(),
  tls_versions: z.array(z.string().max(32)).nullable().optional(),
  alpn_protocols: z.array(z.string()).nullable().optional(),
};

/** What a listener is created with, on its own or inside a fully populated load balancer. */
export const listenerCreateFields = {
  ...mutableFields,
  protocol: z.enum(listenerProtocols),
  protocol_port: z.number().int().min(1).max(65535),
  l7policies: z.array(z.unknown()).max(0).optional(),
};
type ListenerSpec = z.infer<z.ZodObject<typeof listenerCreateFields>>;

const createSchema = z
  .object({
    listener: z
      .object({
        ...listenerCreateFields,
        loadbalancer_id: z.guid(),
        project_id: z.string().max(36).optional(),
      })
      .strict(),
  })
  .strict();

const updateSchema = z.object({ listener: z.object(mutableFields).strict() }).strict();

/** haproxy_amphora defaults Octavia fills in for unset timeouts. */
const timeoutDefaults = { timeout_client_data: 50000, timeout_member_connect: 5000, timeout_member_data: 50000, timeout_tcp_inspect: 0 };

/** _validate_pool: the default pool must be on the same load balancer and speak a compatible protocol. */
function checkDefaultPool(state: OctaviaState, listener: Record<string, unknown>, lb: Resource): void {
  const poolId = listener.default_pool_id as string | null;
  if (!poolId) return;
  const pool = state.store.pool.get(poolId);
  if (!pool || pool.lbId !== lb.id) throw notFound(resourceNames.pool, poolId);
  checkPoolProtocol(listener.protocol as string, pool.attrs.protocol as string);
}

function validate(state: OctaviaState, listener: Record<string, unknown>, lb: Resource, self?: Resource): void {
  const protocol = listener.protocol as string;
  const tls = protocol === 'TERMINATED_HTTPS';
  const hasCerts = Boolean(listener.default_tls_container_ref || (listener.sni_container_refs as string[] | undefined)?.length);
  if ((protocol === 'UDP' || protocol === 'SCTP') && (hasCerts || Object.keys((listener.insert_headers as object | undefined) ?? {}).length > 0)) {
    throw validationFailure(`${protocol} protocol listener does not support TLS.`);
  }
  if (!tls && hasCerts) throw validationFailure(`Certificate container references are not allowed on ${protocol} protocol listeners.`);
  if (tls && !hasCerts) throw validationFailure(`An SNI or default certificate container reference must be provided for ${protocol} protocol listeners.`);
  if (listener.client_authentication !== 'NONE' && !listener.client_ca_tls_container_ref) {
    throw validationFailure(`Client authentication setting ${String(listener.client_authentication)} requires a client CA container reference.`);
  }
  const vip = lb.attrs.vip_address as string;
  for (const entry of (listener.allowed_cidrs as string[] | null) ?? []) {
    if ((isIP(entry.split('/')[0]!) === 6) !== (isIP(vip) === 6)) {
      throw validationFailure(`CIDR ${entry} IP version incompatible with all VIPs ['${vip}'] IP version.`);
    }
  }
  if (!self) {
    const clash = state
      .listenersOfLb(lb.id)
      .find((l) => l.attrs.protocol_port === listener.protocol_port && l4Protocol(l.attrs.protocol as string) === l4Protocol(protocol));
    if (clash) {
      throw new SimulatorError(
        409,
        `Another Listener on this Load Balancer is already using protocol ${String(clash.attrs.protocol)} and protocol_port ${String(listener.protocol_port)}`,
      );
    }
  }
}

/**
 * A new listener of `lb` (PENDING_CREATE, no transition started), its
 * defaults filled in and checked; the caller locks, counts quota and starts
 * the transition.
 */
export function addListener(state: OctaviaState, lb: Resource, spec: ListenerSpec): Resource {
  const tls = spec.protocol === 'TERMINATED_HTTPS';
  const attrs: Record<string, unknown> = {
    name: spec.name ?? '',
    description: spec.description ?? '',
    admin_state_up: spec.admin_state_up ?? true,
    protocol: spec.protocol,
    protocol_port: spec.protocol_port,
    connection_limit: spec.connection_limit ?? -1,
    default_tls_container_ref: spec.default_tls_container_ref ?? null,
    sni_container_refs: spec.sni_container_refs ?? [],
    default_pool_id: spec.default_pool_id ?? null,
    insert_headers: spec.insert_headers ?? {},
    timeout_client_data: spec.timeout_client_data ?? timeoutDefaults.timeout_client_data,
    timeout_member_connect: spec.timeout_member_connect ?? timeoutDefaults.timeout_member_connect,
    timeout_member_data: spec.timeout_member_data ?? timeoutDefaults.timeout_member_data,
    timeout_tcp_inspect: spec.timeout_tcp_inspect ?? timeoutDefaults.timeout_tcp_inspect,
    tags: spec.tags ?? [],
    client_ca_tls_container_ref: spec.client_ca_tls_container_ref ?? null,
    client_authentication: spec.client_authentication ?? 'NONE',
    client_crl_container_ref: spec.client_crl_container_ref ?? null,
    allowed_cidrs: spec.allowed_cidrs?.length ? spec.allowed_cidrs : null,
    // Octavia's default listener TLS settings apply to TERMINATED_HTTPS only.
    tls_ciphers:
      spec.tls_ciphers ?? (tls ? 'ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256' : null),
    tls_versions: spec.tls_versions ?? (tls ? ['TLSv1.2', 'TLSv1.3'] : null),
    alpn_protocols: spec.alpn_protocols ?? (tls ? ['h2', 'http/1.1', 'http/1.0'] : null),
  };
  checkDefaultPool(state, attrs, lb);
  validate(state, attrs, lb);
  return state.addChild('listener', lb, attrs);
}

export function listenerRoutes(api: Router, state: OctaviaState): void {
  api.post('/lbaas/listeners', (req, res) => {
    const caller = callerOf(res);
    const { loadbalancer_id: lbId, project_id: _project, ...spec } = parseBody(createSchema, req.body).listener;
    const lb = state.find('loadbalancer', lbId);
    requireWriter(caller, lb.projectId);
    state.checkQuota('listener', lb.projectId);
    checkDefaultPool(state, spec, lb);
    state.lockParents(lb);
    const listener = addListener(state, lb, spec);
    state.transition(listener, 'CREATE');
    res.status(201).json({ listener: state.view(listener) });
  });

  readRoutes(api, state, 'listener', { stats: true });

  api.put('/lbaas/listeners/:id', (req, res) => {
    const listener = state.writable('listener', req.params.id, callerOf(res));
    const changes = parseBody(updateSchema, req.body).listener;
    const lb = state.loadBalancerOf(listener);
    // Clearing a timeout restores its default rather than leaving it unset.
    const merged = withChanges(listener.attrs, changes, (key, value) =>
      value === null && key in timeoutDefaults ? timeoutDefaults[key as keyof typeof timeoutDefaults] : value,
    );
    if (Array.isArray(merged.allowed_cidrs) && merged.allowed_cidrs.length === 0) merged.allowed_cidrs = null;
    state.updateChild(listener, merged, { unlocked: () => checkDefaultPool(state, merged, lb), locked: () => validate(state, merged, lb, listener) });
    res.json({ listener: state.view(listener) });
  });

  api.delete('/lbaas/listeners/:id', (req, res) => {
    state.deleteChild(state.writable('listener', req.params.id, callerOf(res)));
    res.status(204).end();
  });
}
