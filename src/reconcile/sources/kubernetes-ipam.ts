/**
 * Cluster API's IPAM objects (IPAddressClaim, IPAddress) in the management
 * cluster, for OpenStackFloatingIPPool in the aggregated mode: Cluster API
 * installs their CRDs there, and servers and pools meet through them as they
 * do under CAPO.
 *
 * Reads and writes go to kube-apiserver directly: a pool reads its claims
 * only when one of them changes, so an informer cache would hold every claim
 * of the cluster for little. Changes come from one cluster-wide watch per
 * kind, for as long as the reconciler routes them. The version is the newest
 * of v1beta2 and v1beta1 the server serves (found once); the fields used
 * here are the same in both. Writes that must not land on a replacement are
 * pinned to the uid, and retried on a resourceVersion conflict.
 */
import { ApiException, CustomObjectsApi, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { reviewTimeoutMs, withDeadline } from '../../apiserver/auth/delegated/deadline.js';
import { fallbackLogger } from '../../observability/log.js';
import type { JsonObject, ObjectName } from '../../storage/interface.js';
import type { IpamClients, ObjectClient } from '../deps.js';
import { metaOf, statusOf } from '../objects.js';
import { ExponentialBackoff } from '../runtime/backoff.js';
import { servedVersion } from './discovery.js';
import { describeKubeError, WatchedCollection, type WatchSettings } from './watched-collection.js';

const group = 'ipam.cluster.x-k8s.io';
const versions = ['v1beta2', 'v1beta1'] as const;
/** As client-go's reflector: from 800 ms, doubling up to 30 s. */
const retry = { baseMs: 800, maxMs: 30_000 };
/** Conflicting writers (the pool and the server both touch a claim) settle within a few tries. */
const conflictAttempts = 5;

type Plural = 'ipaddressclaims' | 'ipaddresses';

export interface KubernetesIpamOptions extends WatchSettings {
  /** Receives failed watches and discovery. Default: logged as an error. */
  onError?: (error: unknown) => void;
}

export class KubernetesIpam implements IpamClients {
  readonly claims: ObjectClient;
  readonly addresses: ObjectClient;
  private readonly custom: CustomObjectsApi;
  private version: Promise<string> | undefined;
  private readonly onError: (error: unknown) => void;
  private readonly watchSettings: WatchSettings;

  constructor(
    private readonly config: KubeConfig,
    options: KubernetesIpamOptions = {},
  ) {
    const logger = options.logger ?? fallbackLogger.child({ component: 'ipam' });
    this.onError = options.onError ?? ((error) => logger.error({ err: error }, 'watching IPAM objects failed'));
    this.watchSettings = { logger, metrics: options.metrics, minWatchTimeoutMs: options.minWatchTimeoutMs };
    this.custom = config.makeApiClient(CustomObjectsApi);
    this.claims = this.client('ipaddressclaims', 'IPAddressClaim');
    this.addresses = this.client('ipaddresses', 'IPAddress');
  }

  watch(listener: (object: JsonObject) => void): { stop(): void } {
    const collections: WatchedCollection[] = [];
    const discovery = new ExponentialBackoff<'discovery'>(retry);
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    // Cluster API may be installed after this server starts: discovery is retried until it works.
    const start = async () => {
      let version: string;
      try {
        version = await this.servedVersion();
      } catch (error) {
        if (stopped) return;
        this.onError(error);
        timer = setTimeout(() => void start(), discovery.when('discovery'));
        return;
      }
      for (const plural of ['ipaddressclaims', 'ipaddresses'] as const) {
        if (stopped) return;
        collections.push(
          new WatchedCollection({
            path: `/apis/${group}/${version}/${plural}`,
            config: this.config,
            list: () => this.custom.listClusterCustomObject({ group, version, plural }) as Promise<KubernetesListObject<KubernetesObject>>,
            onChange: (object) => listener(object as unknown as JsonObject),
            onError: this.onError,
            retry,
            requestTimeoutMs: reviewTimeoutMs,
            ...this.watchSettings,
          }),
        );
      }
    };
    void start();
    return {
      stop() {
        stopped = true;
        clearTimeout(timer);
        for (const collection of collections) collection.stop();
      },
    };
  }

  /** v1beta2 where Cluster API serves it (1.11 on), else v1beta1; a failed discovery is tried again by the next call. */
  private servedVersion(): Promise<string> {
    this.version ??= servedVersion({
      custom: this.custom,
      group,
      versions,
      plural: 'ipaddressclaims',
      label: 'IPAddressClaims',
      deadline: (request) => withDeadline(request, reviewTimeoutMs, `discovering ${group}`),
    });
    this.version.catch(() => {
      this.version = undefined;
    });
    return this.version;
  }

  private client(plural: Plural, kind: string): ObjectClient {
    const call = async <T>(what: string, request: (version: string) => Promise<T>): Promise<T> => {
      const version = await this.servedVersion();
      try {
        return await withDeadline(request(version), reviewTimeoutMs, what);
      } catch (error) {
        if (error instanceof ApiException) throw new KubeRequestError(`${what}: ${describeKubeError(error)}`, error.code);
        throw error;
      }
    };
    const get = async ({ namespace, name }: ObjectName): Promise<JsonObject | undefined> => {
      try {
        return (await call(`reading ${kind} ${namespace}/${name}`, (version) =>
          this.custom.getNamespacedCustomObject({ group, version, namespace, plural, name }),
        )) as JsonObject;
      } catch (error) {
        if (error instanceof KubeRequestError && error.code === 404) return undefined;
        throw error;
      }
    };
    /** Reads, mutates and replaces (main resource or status) until no conflict; undefined when gone or replaced. */
    const update = async (target: ObjectName & { uid: string }, mutate: (object: JsonObject) => void, status: boolean): Promise<JsonObject | undefined> => {
      for (let attempt = 1; ; attempt++) {
        const current = await get(target);
        if (!current || metaOf(current).uid !== target.uid) return undefined;
        mutate(current);
        const { namespace, name } = target;
        try {
          return (await call(`updating ${kind} ${namespace}/${name}`, (version) =>
            status
              ? this.custom.replaceNamespacedCustomObjectStatus({ group, version, namespace, plural, name, body: current })
              : this.custom.replaceNamespacedCustomObject({ group, version, namespace, plural, name, body: current }),
          )) as JsonObject;
        } catch (error) {
          if (error instanceof KubeRequestError && error.code === 404) return undefined;
          if (!(error instanceof KubeRequestError && error.code === 409) || attempt === conflictAttempts) throw error;
        }
      }
    };
    return {
      get,
      list: async (namespace) => {
        const list = (await call(`listing ${kind}s in ${namespace}`, (version) =>
          this.custom.listNamespacedCustomObject({ group, version, namespace, plural }),
        )) as { items?: JsonObject[] };
        return list.items ?? [];
      },
      create: async (namespace, body) =>
        (await call(`creating ${kind} in ${namespace}`, async (version) =>
          this.custom.createNamespacedCustomObject({ group, version, namespace, plural, body: { ...body, apiVersion: `${group}/${version}`, kind } }),
        )) as JsonObject,
      updateStatus: (target, mutate) =>
        update(
          target,
          (object) => {
            const status = statusOf(object);
            object.status = status;
            mutate(status);
          },
          true,
        ),
      removeFinalizer: async (target, finalizer) => {
        await update(
          target,
          (object) => {
            const meta = metaOf(object);
            meta.finalizers = (meta.finalizers ?? []).filter((candidate) => candidate !== finalizer);
          },
          false,
        );
      },
      delete: async ({ namespace, name }, uid) => {
        try {
          await call(`deleting ${kind} ${namespace}/${name}`, (version) =>
            this.custom.deleteNamespacedCustomObject({ group, version, namespace, plural, name, body: uid === undefined ? {} : { preconditions: { uid } } }),
          );
        } catch (error) {
          if (error instanceof KubeRequestError && (error.code === 404 || error.code === 409)) return;
          throw error;
        }
      },
    };
  }
}

/** A refused request to the management cluster, with kube's status code for the callers that tell 404 and 409 apart. */
class KubeRequestError extends Error {
  override name = 'KubeRequestError';

  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}
