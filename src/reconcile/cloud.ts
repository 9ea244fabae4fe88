/**
 * Turns an identityRef into authenticated OpenStack clients.
 *
 * Sessions are cached by what they authenticate with (the clouds.yaml entry,
 * the CA bundle, the region), not by the Secret's name: rotating the
 * credentials in the Secret yields a new session on the next reconcile, and
 * many clusters sharing one identity share one token. Every call of a cloud
 * goes through one concurrency limiter group, so a hundred clusters on one
 * cloud never have more than `perCloud` calls in flight against it.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { labelSelectorFromObject } from '../apiserver/selectors/labels.js';
import type { MetricsRegistry } from '../observability/metrics.js';
import {
  createServiceClients,
  loadCloud,
  OpenStackError,
  OpenStackSession,
  type CloudConfig,
  type ServiceClients,
  type ServiceRequest,
  type ServiceResponse,
  type ServiceTransport,
  type ServiceType,
  type SessionOptions,
} from '../openstack/index.js';
import { TerminalError } from './runtime/controller.js';
import { ConcurrencyLimiter } from './runtime/limiter.js';
import type { KindClient } from './objects.js';
import type { ClusterApiSource } from './sources/source.js';

export const identityRefSchema = z.object({
  type: z.enum(['Secret', 'ClusterIdentity']).default('Secret'),
  name: z.string().min(1),
  cloudName: z.string().min(1),
  region: z.string().optional(),
});

const clusterIdentitySchema = z.object({
  spec: z.object({
    secretRef: z.object({ name: z.string().min(1), namespace: z.string().min(1) }),
    namespaceSelector: z.object({ matchLabels: z.record(z.string(), z.string()).optional(), matchExpressions: z.array(z.any()).optional() }).optional(),
  }),
});

export interface CloudConnection {
  clients: ServiceClients;
  session: OpenStackSession;
  cloud: CloudConfig;
  /** Identifies the credentials (a digest, never the secret itself); also the limiter group. */
  key: string;
  /**
   * Caches a lookup that many objects repeat and that rarely changes (flavor
   * list, image by name), per credentials, for ttlMs. Concurrent callers share
   * one call; a failure is not cached.
   */
  memo<T>(key: string, ttlMs: number, load: () => Promise<T>): Promise<T>;
  /** What this process learned of the cloud's bugs, so that each costs one detour rather than one per object. */
  findings: CloudFindings;
}

export interface CloudFindings {
  /**
   * A fully populated load balancer create left its children PENDING_CREATE
   * under an ACTIVE load balancer (Zed's amphora driver on ministack, whose
   * worker builds it as a load balancer without listeners; the OVN provider
   * by reports): later load balancers get their children one by one.
   */
  fullyPopulatedChildrenStayPending: boolean;
}

/** The identity cannot be used as given: retrying without a change to it cannot help. */
export class IdentityError extends TerminalError {
  override name = 'IdentityError';
}

export interface CloudConnectionsOptions {
  source: ClusterApiSource;
  /** OpenStackClusterIdentity objects, for identityRef type ClusterIdentity. */
  identities: KindClient;
  metrics?: MetricsRegistry;
  sessionOptions?: SessionOptions;
  /** Calls in flight per cloud and overall. */
  concurrency?: { perCloud: number; total: number };
}

export class CloudConnections {
  private readonly sessions = new Map<string, Promise<CloudConnection>>();
  private readonly limiter: ConcurrencyLimiter;

  constructor(private readonly options: CloudConnectionsOptions) {
    const { perCloud = 16, total = 64 } = options.concurrency ?? {};
    this.limiter = new ConcurrencyLimiter({ perGroup: perCloud, total });
  }

  /** Replicas of a sharded reconciler split each cloud's limits (see ConcurrencyLimiter.shareAmong). */
  shareLimitsAmong(replicas: number): void {
    this.limiter.shareAmong(replicas);
  }

  /** Clients for `identityRef` as used from `namespace`; IdentityError when the Secret or cloud entry is missing or malformed. */
  async connect(namespace: string, identityRef: unknown): Promise<CloudConnection> {
    const parsed = identityRefSchema.safeParse(identityRef);
    if (!parsed.success) throw new IdentityError(`identityRef is invalid: ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
    const ref = parsed.data;
    const secretName = ref.type === 'Secret' ? { namespace, name: ref.name } : await this.clusterIdentitySecret(namespace, ref.name);
    const secret = await this.options.source.getSecret(secretName.namespace, secretName.name);
    if (!secret) throw new IdentityError(`identity Secret ${secretName.namespace}/${secretName.name} does not exist`);
    const cloudsYaml = secret.data['clouds.yaml']?.toString('utf8');
    if (cloudsYaml === undefined) throw new IdentityError(`identity Secret ${secretName.namespace}/${secretName.name} has no "clouds.yaml" key`);
    const caCert = secret.data.cacert?.toString('utf8');
    const key = createHash('sha256')
      .update(JSON.stringify([cloudsYaml, caCert ?? '', ref.cloudName, ref.region ?? '']))
      .digest('hex')
      .slice(0, 16);
    let connection = this.sessions.get(key);
    if (!connection) {
      connection = this.open(key, { cloudsYaml, cloudName: ref.cloudName, caCert, region: ref.region });
      this.sessions.set(key, connection);
      connection.catch(() => this.sessions.delete(key));
    }
    return connection;
  }

  close(): void {
    for (const connection of this.sessions.values())
      connection.then(
        (open) => open.session.close(),
        () => undefined,
      );
    this.sessions.clear();
  }

  private async open(key: string, input: { cloudsYaml: string; cloudName: string; caCert?: string; region?: string }): Promise<CloudConnection> {
    let cloud: CloudConfig;
    try {
      cloud = loadCloud(input);
    } catch (error) {
      if (error instanceof OpenStackError) throw new IdentityError(error.message);
      throw error;
    }
    const session = await OpenStackSession.create(cloud, { metrics: this.options.metrics, ...this.options.sessionOptions });
    const limiter = this.limiter;
    const limited: ServiceTransport = {
      request<T>(service: ServiceType, request: ServiceRequest, schema: z.ZodType<T>): Promise<ServiceResponse<T>> {
        return limiter.run(key, () => session.request(service, request, schema));
      },
    };
    const memos = new Map<string, { value: Promise<unknown>; expiresAt: number }>();
    const memo = <T>(name: string, ttlMs: number, load: () => Promise<T>): Promise<T> => {
      const hit = memos.get(name);
      if (hit && hit.expiresAt > Date.now()) return hit.value as Promise<T>;
      const value = load();
      // Keys name things that come and go (a cluster's network): a miss clears the expired, so they do not pile up.
      for (const [key, entry] of memos) if (entry.expiresAt <= Date.now()) memos.delete(key);
      memos.set(name, { value, expiresAt: Date.now() + ttlMs });
      value.catch(() => memos.delete(name));
      return value;
    };
    return { clients: createServiceClients(limited), session, cloud, key, memo, findings: { fullyPopulatedChildrenStayPending: false } };
  }

  private async clusterIdentitySecret(namespace: string, name: string): Promise<{ namespace: string; name: string }> {
    const object = await this.options.identities.get({ namespace: '', name });
    if (!object) throw new IdentityError(`OpenStackClusterIdentity ${name} does not exist`);
    const identity = clusterIdentitySchema.parse(object);
    const selector = identity.spec.namespaceSelector;
    if (selector && (selector.matchLabels || selector.matchExpressions)) {
      // Namespaces always carry their own name as this label; other namespace labels need the namespace object.
      const labels = { 'kubernetes.io/metadata.name': namespace };
      if (!labelSelectorFromObject(selector as never).matches(labels)) {
        throw new IdentityError(`OpenStackClusterIdentity ${name} may not be used from namespace ${namespace} (namespaceSelector)`);
      }
    }
    return identity.spec.secretRef;
  }
}
