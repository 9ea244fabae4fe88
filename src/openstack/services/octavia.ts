/**
 * Octavia (load-balancer service), API v2 under `/v2/lbaas`. Every create,
 * update and delete below a load balancer moves it to PENDING_UPDATE, and
 * Octavia answers 409 to the next mutation until it is ACTIVE again: the
 * caller must wait for `provisioning_status` ACTIVE between mutations of one
 * load balancer (and should treat ERROR as failed, not as "still waiting").
 */
import { z } from 'zod';
import type { ServiceTransport } from '../transport.js';
import { anyBody, linkedList, pick, segment, ServiceCalls, tagQuery, type TagFilters } from './common.js';

const idRefs = z.array(z.looseObject({ id: z.string() }));
const tags = z.array(z.string());

const loadBalancerSchema = z.looseObject({
  id: z.string(),
  name: z.string().nullish(),
  description: z.string().nullish(),
  provisioning_status: z.string(),
  operating_status: z.string(),
  admin_state_up: z.boolean().optional(),
  vip_address: z.string().nullish(),
  vip_port_id: z.string().nullish(),
  vip_subnet_id: z.string().nullish(),
  vip_network_id: z.string().nullish(),
  provider: z.string().nullish(),
  flavor_id: z.string().nullish(),
  availability_zone: z.string().nullish(),
  listeners: idRefs.optional(),
  pools: idRefs.optional(),
  project_id: z.string().optional(),
  tags: tags.optional(),
});
export type LoadBalancer = z.infer<typeof loadBalancerSchema>;

const listenerSchema = z.looseObject({
  id: z.string(),
  name: z.string().nullish(),
  protocol: z.string(),
  protocol_port: z.number(),
  provisioning_status: z.string(),
  operating_status: z.string().optional(),
  loadbalancers: idRefs.optional(),
  default_pool_id: z.string().nullish(),
  allowed_cidrs: z.array(z.string()).nullish(),
  tags: tags.optional(),
});
export type Listener = z.infer<typeof listenerSchema>;

const poolSchema = z.looseObject({
  id: z.string(),
  name: z.string().nullish(),
  protocol: z.string(),
  lb_algorithm: z.string(),
  provisioning_status: z.string(),
  operating_status: z.string().optional(),
  loadbalancers: idRefs.optional(),
  listeners: idRefs.optional(),
  members: idRefs.optional(),
  healthmonitor_id: z.string().nullish(),
  tags: tags.optional(),
});
export type Pool = z.infer<typeof poolSchema>;

const memberSchema = z.looseObject({
  id: z.string(),
  name: z.string().nullish(),
  address: z.string(),
  protocol_port: z.number(),
  subnet_id: z.string().nullish(),
  weight: z.number().optional(),
  provisioning_status: z.string(),
  operating_status: z.string().optional(),
  tags: tags.optional(),
});
export type Member = z.infer<typeof memberSchema>;

const healthMonitorSchema = z.looseObject({
  id: z.string(),
  name: z.string().nullish(),
  type: z.string(),
  delay: z.number(),
  timeout: z.number(),
  max_retries: z.number(),
  max_retries_down: z.number().optional(),
  pools: idRefs.optional(),
  provisioning_status: z.string(),
  operating_status: z.string().optional(),
  tags: tags.optional(),
});
export type HealthMonitor = z.infer<typeof healthMonitorSchema>;

/** One object of a load balancer's status tree: its ID, name and the two statuses, nothing else. */
const statusNode = z.looseObject({ id: z.string(), name: z.string().nullish(), provisioning_status: z.string(), operating_status: z.string().optional() });
const poolStatusSchema = statusNode.extend({ health_monitor: statusNode.optional(), members: z.array(statusNode).optional() });
const listenerStatusSchema = statusNode.extend({ pools: z.array(poolStatusSchema).optional() });
const statusTreeSchema = z.object({ statuses: z.object({ loadbalancer: statusNode.extend({ listeners: z.array(listenerStatusSchema).optional() }) }) });
export type LoadBalancerStatusTree = z.infer<typeof statusTreeSchema>;

/** Every object of a status tree (the load balancer, its listeners, their default pools, monitors and members) by ID: its provisioning status. */
export function provisioningStatuses(tree: LoadBalancerStatusTree): Map<string, string> {
  const found = new Map<string, string>();
  const { loadbalancer } = tree.statuses;
  found.set(loadbalancer.id, loadbalancer.provisioning_status);
  for (const listener of loadbalancer.listeners ?? []) {
    found.set(listener.id, listener.provisioning_status);
    for (const pool of listener.pools ?? []) {
      found.set(pool.id, pool.provisioning_status);
      if (pool.health_monitor) found.set(pool.health_monitor.id, pool.health_monitor.provisioning_status);
      for (const member of pool.members ?? []) found.set(member.id, member.provisioning_status);
    }
  }
  return found;
}

/** Each pool's health monitor in a status tree, by pool ID: its ID and statuses (a fully populated create's answer does not show them). */
export function poolMonitors(tree: LoadBalancerStatusTree): Map<string, z.infer<typeof statusNode>> {
  const found = new Map<string, z.infer<typeof statusNode>>();
  for (const listener of tree.statuses.loadbalancer.listeners ?? []) {
    for (const pool of listener.pools ?? []) if (pool.health_monitor) found.set(pool.id, pool.health_monitor);
  }
  return found;
}

const providerSchema = z.looseObject({ name: z.string(), description: z.string().nullish() });
export type LoadBalancerProvider = z.infer<typeof providerSchema>;

const flavorSchema = z.looseObject({ id: z.string(), name: z.string(), description: z.string().nullish(), enabled: z.boolean().optional() });
export type LoadBalancerFlavor = z.infer<typeof flavorSchema>;

const versionSchema = z.looseObject({ id: z.string(), status: z.string() });
/** One API version the endpoint serves, e.g. `{id: 'v2.12', status: 'SUPPORTED'}`; `allowed_cidrs` needs v2.12. */
export type OctaviaVersion = z.infer<typeof versionSchema>;

const quotaLimit = z.number().nullish();
const quotaSchema = z.looseObject({
  load_balancer: quotaLimit,
  listener: quotaLimit,
  member: quotaLimit,
  pool: quotaLimit,
  health_monitor: quotaLimit,
  l7policy: quotaLimit,
  l7rule: quotaLimit,
  /** Rocky's spellings, which some releases still answer beside the current ones. */
  loadbalancer: quotaLimit,
  healthmonitor: quotaLimit,
});
/** Limits per resource of a project; -1 means unlimited. Octavia reports no usage: count the project's resources. */
export type LoadBalancerQuota = z.infer<typeof quotaSchema>;

export interface LoadBalancerFilters extends TagFilters {
  name?: string;
  vip_port_id?: string;
  /** Admins otherwise see every project's load balancers. */
  project_id?: string;
}

export interface CreateLoadBalancer {
  name?: string;
  description?: string;
  /** One of vip_subnet_id, vip_network_id (or vip_port_id) places the VIP. */
  vip_subnet_id?: string;
  vip_network_id?: string;
  vip_port_id?: string;
  vip_address?: string;
  provider?: string;
  flavor_id?: string;
  availability_zone?: string;
  admin_state_up?: boolean;
  tags?: readonly string[];
  /**
   * A fully populated create: the listeners, each with its default pool and
   * that pool's monitor and members, made with the load balancer in one
   * request and one provisioning transition.
   */
  listeners?: readonly CreateListenerInGraph[];
}

/** A listener inside a fully populated load balancer create. */
export interface CreateListenerInGraph extends Omit<CreateListener, 'loadbalancer_id' | 'default_pool_id'> {
  default_pool?: CreatePoolInGraph;
}

/** A listener's default pool inside a fully populated load balancer create. */
export interface CreatePoolInGraph extends Omit<CreatePool, 'listener_id' | 'loadbalancer_id'> {
  healthmonitor?: Omit<CreateHealthMonitor, 'pool_id'>;
  members?: readonly CreateMember[];
}

export interface ListenerFilters extends TagFilters {
  loadbalancer_id?: string;
  name?: string;
}

export interface CreateListener {
  protocol: 'TCP' | 'UDP' | 'HTTP' | 'HTTPS' | 'TERMINATED_HTTPS' | 'SCTP' | 'PROMETHEUS';
  protocol_port: number;
  loadbalancer_id: string;
  default_pool_id?: string;
  name?: string;
  description?: string;
  /** Not supported by every provider (OVN refuses it); needs API v2.12. */
  allowed_cidrs?: readonly string[];
  tags?: readonly string[];
}

export interface UpdateListener {
  name?: string;
  description?: string;
  default_pool_id?: string | null;
  /** null or [] lets everyone in again. */
  allowed_cidrs?: readonly string[] | null;
  tags?: readonly string[];
}

export interface PoolFilters extends TagFilters {
  loadbalancer_id?: string;
  name?: string;
}

export interface CreatePool {
  protocol: 'TCP' | 'UDP' | 'HTTP' | 'HTTPS' | 'PROXY' | 'PROXYV2' | 'SCTP';
  lb_algorithm: 'ROUND_ROBIN' | 'LEAST_CONNECTIONS' | 'SOURCE_IP' | 'SOURCE_IP_PORT';
  /** One of listener_id (which also makes it the listener's default pool) and loadbalancer_id. */
  listener_id?: string;
  loadbalancer_id?: string;
  name?: string;
  description?: string;
  tags?: readonly string[];
}

export interface MemberFilters extends TagFilters {
  name?: string;
  address?: string;
}

export interface CreateMember {
  address: string;
  protocol_port: number;
  name?: string;
  /** Needed only when the member is not on the VIP's subnet. */
  subnet_id?: string;
  weight?: number;
  tags?: readonly string[];
}

export interface HealthMonitorFilters extends TagFilters {
  name?: string;
}

export interface CreateHealthMonitor {
  pool_id: string;
  type: 'TCP' | 'HTTP' | 'HTTPS' | 'PING' | 'TLS-HELLO' | 'UDP-CONNECT' | 'SCTP';
  delay: number;
  timeout: number;
  max_retries: number;
  max_retries_down?: number;
  name?: string;
  tags?: readonly string[];
}

export type UpdateHealthMonitor = Partial<Pick<CreateHealthMonitor, 'delay' | 'timeout' | 'max_retries' | 'max_retries_down' | 'name' | 'tags'>>;

const loadBalancerBody = z.object({ loadbalancer: loadBalancerSchema });
const loadBalancerList = linkedList('loadbalancers', loadBalancerSchema);
const listenerBody = z.object({ listener: listenerSchema });
const listenerList = linkedList('listeners', listenerSchema);
const poolBody = z.object({ pool: poolSchema });
const poolList = linkedList('pools', poolSchema);
const memberBody = z.object({ member: memberSchema });
const memberList = linkedList('members', memberSchema);
const healthMonitorBody = z.object({ healthmonitor: healthMonitorSchema });
const healthMonitorList = linkedList('healthmonitors', healthMonitorSchema);
const providerList = linkedList('providers', providerSchema);
const flavorList = linkedList('flavors', flavorSchema);
const versionList = z.object({ versions: z.array(versionSchema) });
const quotaBody = z.object({ quota: quotaSchema });

export class OctaviaClient {
  private readonly calls: ServiceCalls;

  constructor(transport: ServiceTransport) {
    this.calls = new ServiceCalls(transport, 'load-balancer');
  }

  /** The API versions served; the highest tells which optional fields (allowed_cidrs: v2.12) are understood. */
  async listVersions(): Promise<OctaviaVersion[]> {
    return (await this.calls.get('/', versionList)).versions;
  }

  async listLoadBalancers(filters: LoadBalancerFilters = {}): Promise<LoadBalancer[]> {
    const query = { ...pick(filters, ['name', 'vip_port_id', 'project_id']), ...tagQuery('load-balancer', filters) };
    return this.calls.list('/v2/lbaas/loadbalancers', loadBalancerList, { query });
  }

  async getLoadBalancer(id: string): Promise<LoadBalancer> {
    return (await this.calls.get(`/v2/lbaas/loadbalancers/${segment(id)}`, loadBalancerBody)).loadbalancer;
  }

  /** The statuses of the load balancer and everything below it in one answer: IDs, names and statuses, not the objects' other fields. */
  async getLoadBalancerStatus(id: string): Promise<LoadBalancerStatusTree> {
    return this.calls.get(`/v2/lbaas/loadbalancers/${segment(id)}/status`, statusTreeSchema);
  }

  /** Answers at once in PENDING_CREATE; poll `getLoadBalancer` for ACTIVE (or ERROR). */
  async createLoadBalancer(loadBalancer: CreateLoadBalancer): Promise<LoadBalancer> {
    return (await this.calls.post('/v2/lbaas/loadbalancers', { loadbalancer: loadBalancer }, loadBalancerBody)).loadbalancer;
  }

  /** With `cascade`, listeners, pools, members and monitors go too; without, 409 while any exist. */
  async deleteLoadBalancer(id: string, options: { cascade?: boolean } = {}): Promise<void> {
    const query = options.cascade === true ? { cascade: true } : undefined;
    return this.calls.delete(`/v2/lbaas/loadbalancers/${segment(id)}`, query === undefined ? {} : { query });
  }

  async listListeners(filters: ListenerFilters = {}): Promise<Listener[]> {
    const query = { ...pick(filters, ['loadbalancer_id', 'name']), ...tagQuery('load-balancer', filters) };
    return this.calls.list('/v2/lbaas/listeners', listenerList, { query });
  }

  async getListener(id: string): Promise<Listener> {
    return (await this.calls.get(`/v2/lbaas/listeners/${segment(id)}`, listenerBody)).listener;
  }

  async createListener(listener: CreateListener): Promise<Listener> {
    return (await this.calls.post('/v2/lbaas/listeners', { listener }, listenerBody)).listener;
  }

  async updateListener(id: string, listener: UpdateListener): Promise<Listener> {
    return (await this.calls.put(`/v2/lbaas/listeners/${segment(id)}`, { listener }, listenerBody)).listener;
  }

  async deleteListener(id: string): Promise<void> {
    return this.calls.delete(`/v2/lbaas/listeners/${segment(id)}`);
  }

  async listPools(filters: PoolFilters = {}): Promise<Pool[]> {
    const query = { ...pick(filters, ['loadbalancer_id', 'name']), ...tagQuery('load-balancer', filters) };
    return this.calls.list('/v2/lbaas/pools', poolList, { query });
  }

  /** Tags are replaced as a whole; the load balancer turns PENDING_UPDATE until Octavia applied them. */
  async updateLoadBalancerTags(id: string, tags: readonly string[]): Promise<LoadBalancer> {
    return (await this.calls.put(`/v2/lbaas/loadbalancers/${segment(id)}`, { loadbalancer: { tags } }, loadBalancerBody)).loadbalancer;
  }

  async updatePoolTags(id: string, tags: readonly string[]): Promise<Pool> {
    return (await this.calls.put(`/v2/lbaas/pools/${segment(id)}`, { pool: { tags } }, poolBody)).pool;
  }

  async updateMemberTags(poolId: string, memberId: string, tags: readonly string[]): Promise<Member> {
    return (await this.calls.put(`/v2/lbaas/pools/${segment(poolId)}/members/${segment(memberId)}`, { member: { tags } }, memberBody)).member;
  }

  async getPool(id: string): Promise<Pool> {
    return (await this.calls.get(`/v2/lbaas/pools/${segment(id)}`, poolBody)).pool;
  }

  async createPool(pool: CreatePool): Promise<Pool> {
    return (await this.calls.post('/v2/lbaas/pools', { pool }, poolBody)).pool;
  }

  /** Also deletes the pool's members and health monitor. */
  async deletePool(id: string): Promise<void> {
    return this.calls.delete(`/v2/lbaas/pools/${segment(id)}`);
  }

  async listMembers(poolId: string, filters: MemberFilters = {}): Promise<Member[]> {
    const query = { ...pick(filters, ['name', 'address']), ...tagQuery('load-balancer', filters) };
    return this.calls.list(`/v2/lbaas/pools/${segment(poolId)}/members`, memberList, { query });
  }

  async getMember(poolId: string, memberId: string): Promise<Member> {
    return (await this.calls.get(`/v2/lbaas/pools/${segment(poolId)}/members/${segment(memberId)}`, memberBody)).member;
  }

  async createMember(poolId: string, member: CreateMember): Promise<Member> {
    return (await this.calls.post(`/v2/lbaas/pools/${segment(poolId)}/members`, { member }, memberBody)).member;
  }

  /**
   * The batch member update: the listed members in one change of the pool
   * (one transition of its load balancer instead of one per member). Octavia
   * matches them to the pool's members by address and port, creates the new
   * ones and updates the matching ones; with `additiveOnly` (API 2.11) it
   * keeps the members not listed, without it deletes them. It answers 202
   * with no body, so the members' IDs come from a list afterwards. A PUT of
   * the whole list, so repeating it has no second effect.
   */
  async updateMembers(poolId: string, members: readonly CreateMember[], options: { additiveOnly: boolean }): Promise<void> {
    await this.calls.put(`/v2/lbaas/pools/${segment(poolId)}/members`, { members }, anyBody, options.additiveOnly ? { query: { additive_only: true } } : {});
  }

  async deleteMember(poolId: string, memberId: string): Promise<void> {
    return this.calls.delete(`/v2/lbaas/pools/${segment(poolId)}/members/${segment(memberId)}`);
  }

  async listHealthMonitors(filters: HealthMonitorFilters = {}): Promise<HealthMonitor[]> {
    const query = { ...pick(filters, ['name']), ...tagQuery('load-balancer', filters) };
    return this.calls.list('/v2/lbaas/healthmonitors', healthMonitorList, { query });
  }

  async getHealthMonitor(id: string): Promise<HealthMonitor> {
    return (await this.calls.get(`/v2/lbaas/healthmonitors/${segment(id)}`, healthMonitorBody)).healthmonitor;
  }

  /** Some providers have no health monitors and answer 501; CAPO then carries on without one. */
  async createHealthMonitor(monitor: CreateHealthMonitor): Promise<HealthMonitor> {
    return (await this.calls.post('/v2/lbaas/healthmonitors', { healthmonitor: monitor }, healthMonitorBody)).healthmonitor;
  }

  async updateHealthMonitor(id: string, monitor: UpdateHealthMonitor): Promise<HealthMonitor> {
    return (await this.calls.put(`/v2/lbaas/healthmonitors/${segment(id)}`, { healthmonitor: monitor }, healthMonitorBody)).healthmonitor;
  }

  async deleteHealthMonitor(id: string): Promise<void> {
    return this.calls.delete(`/v2/lbaas/healthmonitors/${segment(id)}`);
  }

  /** Provider drivers enabled on this cloud (`amphora`, `ovn`, …). */
  async listProviders(): Promise<LoadBalancerProvider[]> {
    return this.calls.list('/v2/lbaas/providers', providerList);
  }

  async listFlavors(): Promise<LoadBalancerFlavor[]> {
    return this.calls.list('/v2/lbaas/flavors', flavorList);
  }

  /** The limits of `projectId`, defaults filled in. */
  async getQuota(projectId: string): Promise<LoadBalancerQuota> {
    return (await this.calls.get(`/v2/lbaas/quotas/${segment(projectId)}`, quotaBody)).quota;
  }
}
