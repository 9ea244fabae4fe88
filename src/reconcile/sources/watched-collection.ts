/**
 * One list+watch of a kube-apiserver collection (client-node's ListWatch,
 * an informer) whose cache answers reads while it is known to be current.
 *
 * ListWatch re-establishes a watch the server closes, and relists after 410
 * Gone, but gives up on any other failure (a refused connection, a 403, a
 * failed list) after reporting it. This restarts it with backoff, resuming
 * from the last resourceVersion, and marks the cache unusable until a start
 * succeeds, so reads fall back to the API server meanwhile.
 *
 * A kube-apiserver, or the path to it, may also stop sending without closing
 * the connection. As client-go's reflector, every watch asks the server to end
 * it after 5 to 10 minutes (timeoutSeconds) and to send bookmarks; a watch
 * that receives nothing (no event, no bookmark, not its end) for longer than
 * that plus the request deadline has stalled, and a list or a watch request
 * not answered within the request deadline has failed. Either is a failure
 * like the others; a stall is logged as a warning and counted
 * (management_cluster_watch_stalls_total).
 */
import { ADD, DELETE, ERROR, ListWatch, UPDATE, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { withDeadline } from '../../apiserver/auth/delegated/deadline.js';
import { fallbackLogger, type Logger } from '../../observability/log.js';
import type { Counter, MetricsRegistry } from '../../observability/metrics.js';
import { ExponentialBackoff, type ExponentialBackoffOptions } from '../runtime/backoff.js';

/** What a source passes on to its collections: where stalls go, and (for tests) a shorter watch timeout. */
export interface WatchSettings {
  /** Where a stalled watch is reported, as a warning. Default: the fallback logger. */
  logger?: Logger;
  /** Where stalls are counted. */
  metrics?: MetricsRegistry;
  /**
   * client-go's minWatchTimeout: each watch asks the server to end it after a random time in
   * [this, twice this), so that the watches of many clients do not end together. Default 5 min,
   * client-go's.
   */
  minWatchTimeoutMs?: number;
}

export interface WatchedCollectionOptions extends WatchSettings {
  /** The collection's URL path, e.g. /api/v1/namespaces/default/secrets. */
  path: string;
  config: KubeConfig;
  list: () => Promise<KubernetesListObject<KubernetesObject>>;
  /** Every object added, changed or deleted, including those of the first list and of relists. */
  onChange: (object: KubernetesObject) => void;
  /** Why the cache stopped following the server, but for stalls (logged as warnings); it restarts by itself. */
  onError: (error: unknown) => void;
  retry: ExponentialBackoffOptions;
  /**
   * The source's deadline for every request: how long the list, and a watch request until its
   * answer, may go unanswered, and how long past its timeout a watch may stay silent.
   */
  requestTimeoutMs: number;
}

export class WatchedCollection {
  private readonly informer: ListWatch<KubernetesObject>;
  private readonly backoff: ExponentialBackoff<string>;
  /** The resource as kubectl names it (secrets, clusters.cluster.x-k8s.io): the metric's label, without the namespace. */
  private readonly resource: string;
  private readonly logger: Logger;
  private readonly stalls: Counter | undefined;
  /** The cache reflects a list and a running watch. */
  private current = false;
  /** Why the cache is not current, after a failure and until a start succeeds. */
  private lastFailure: string | undefined;
  private failures = 0;
  private stopped = false;
  private restart: NodeJS.Timeout | undefined;

  constructor(private readonly options: WatchedCollectionOptions) {
    this.backoff = new ExponentialBackoff(options.retry);
    this.resource = resourceOf(options.path);
    this.logger = options.logger ?? fallbackLogger;
    this.stalls = options.metrics && stallCounter(options.metrics);
    // The series exists from the start, so rate() sees the first stall.
    this.stalls?.inc({ resource: this.resource }, 0);
    const bounds = { minWatchTimeoutMs: options.minWatchTimeoutMs ?? 5 * 60_000, requestTimeoutMs: options.requestTimeoutMs };
    const list = () => withDeadline(options.list(), options.requestTimeoutMs, 'the list');
    this.informer = new ListWatch(options.path, new BoundedWatch(options.config, bounds, () => this.stopped), list, false);
    for (const verb of [ADD, UPDATE, DELETE] as const) this.informer.on(verb, options.onChange);
    this.informer.on(ERROR, (error: unknown) => this.failed(error));
    void this.start();
  }

  /** The cached object, `{ object: undefined }` when the cache knows it is absent, or undefined when the cache cannot tell. */
  lookup(namespace: string, name: string): { object: KubernetesObject | undefined } | undefined {
    return this.current ? { object: this.informer.get(name, namespace) } : undefined;
  }

  /** Why the collection is not followed right now, or undefined while it is (or has not failed yet). */
  problem(): string | undefined {
    return this.current ? undefined : this.lastFailure;
  }

  stop(): void {
    this.stopped = true;
    this.current = false;
    clearTimeout(this.restart);
    void this.informer.stop();
  }

  private async start(): Promise<void> {
    const failuresBefore = this.failures;
    // Resolves once the list (if needed) is done and the watch is connected, or after reporting why not.
    await this.informer.start();
    if (this.stopped || this.failures !== failuresBefore) return;
    this.current = true;
    this.lastFailure = undefined;
    this.backoff.forget(this.options.path);
  }

  private failed(error: unknown): void {
    this.failures++;
    this.current = false;
    // Stopping aborts the watch request, which ListWatch reports as an error too.
    if (this.stopped) return;
    this.lastFailure = `watching ${this.options.path}: ${describeKubeError(error)}`;
    if (error instanceof WatchStalledError) {
      // What a network path that drops connections silently does now and then: a warning, and a count to alert on when it repeats.
      this.stalls?.inc({ resource: this.resource });
      this.logger.warn({ resource: this.resource, path: this.options.path, silenceMs: error.silenceMs }, `${this.lastFailure}; watching again`);
    } else {
      this.options.onError(new Error(this.lastFailure, { cause: error }));
    }
    clearTimeout(this.restart);
    this.restart = setTimeout(() => void this.start(), this.backoff.when(this.options.path));
  }
}

/**
 * client-node's Watch, bounded as client-go's reflector bounds its watches: each asks the server
 * to end it (timeoutSeconds) and to send bookmarks, and its answer has the request deadline.
 *
 * The stall bound is the watch's own timeout plus the request deadline: the server has promised to
 * end the stream by then, so a stream silent that long has stalled whatever the server sends
 * meanwhile. Not a shorter bound on bookmarks: kube-apiserver sends a watch its minute's bookmark
 * only when the resource's watch cache has moved on (a change of the resource, or etcd's progress
 * notifications, which kubeadm has every 5 s and etcd by default every 10 min), so a quiet resource
 * may send none. A connection that died is usually found sooner, within two minutes, by undici's
 * HTTP/2 PING (one a minute; one left unanswered resets the session, and the watch fails with
 * "terminated" like any other failure).
 *
 * client-node has the silence timer (reset by every byte received; on expiry it aborts the
 * request), but at a private 30 s that also bounds the answer, and ListWatch reopens a watch it
 * timed out without a word, so the cache would pass for current meanwhile: here the timer is set to
 * the stall bound of each watch and its expiry becomes a WatchStalledError, which ListWatch reports.
 * The stall test pins the private field: renamed, stalls take 30 s.
 *
 * ListWatch also looks at stop() only before it lists or reconnects, so a stop during a list or
 * a reconnect would leave a new watch running; this one opens nothing after the stop and closes
 * what opened during it.
 */
class BoundedWatch extends Watch {
  constructor(
    config: KubeConfig,
    private readonly bounds: { minWatchTimeoutMs: number; requestTimeoutMs: number },
    private readonly stopped: () => boolean,
  ) {
    super(config);
  }

  override async watch(...[path, query, callback, done]: Parameters<Watch['watch']>): Promise<AbortController> {
    // Nothing is open, and ListWatch only ever aborts what it is given.
    if (this.stopped()) return new AbortController();
    let ended = false;
    const end = (error: unknown) => {
      if (ended) return;
      ended = true;
      done(error);
    };
    const { minWatchTimeoutMs, requestTimeoutMs } = this.bounds;
    const timeoutSeconds = Math.max(1, Math.floor((minWatchTimeoutMs * (1 + Math.random())) / 1000));
    const stallMs = timeoutSeconds * 1000 + requestTimeoutMs;
    // ListWatch runs one watch at a time: the timer of the one starting now.
    Object.assign(this, { requestTimeoutMs: stallMs });
    const startedAt = Date.now();
    const answered = super.watch(path, { ...query, timeoutSeconds, allowWatchBookmarks: true }, callback, (error) => {
      if (isTimeout(error)) return end(new WatchStalledError(stallMs));
      // ListWatch waits before reopening a watch the server ended (1 s, doubling up to 30 s, until an event
      // comes) but not after one that timed out: a watch that lasted the timeout it asked for is the latter.
      if (!error && Date.now() - startedAt >= timeoutSeconds * 1000) return end(new DOMException('the watch reached its timeoutSeconds', 'TimeoutError'));
      end(error);
    });
    let controller: AbortController;
    try {
      controller = await withDeadline(answered, requestTimeoutMs, 'the watch request');
    } catch (error) {
      // Taken and not answered: a failure now rather than at the stall bound, and the request is aborted whenever its answer comes.
      void answered.then((late) => late.abort());
      end(error);
      return new AbortController();
    }
    if (this.stopped()) controller.abort();
    return controller;
  }
}

/** A watch given up after receiving nothing for the stall bound; a failure ListWatch reports, unlike its own timeout. */
class WatchStalledError extends Error {
  override name = 'WatchStalledError';

  constructor(readonly silenceMs: number) {
    super(`no event or bookmark for ${silenceMs / 1000} s`);
  }
}

/** client-node's timer expiring (a DOMException named TimeoutError). */
function isTimeout(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'TimeoutError';
}

/** The sources of one app share its registry, which refuses a family registered twice. */
const stallCounters = new WeakMap<MetricsRegistry, Counter>();

function stallCounter(registry: MetricsRegistry): Counter {
  let counter = stallCounters.get(registry);
  if (counter === undefined) {
    counter = registry.counter(
      'management_cluster_watch_stalls_total',
      'Watches on the management cluster given up after receiving nothing (no event, no bookmark) for the stall bound, by resource.',
      ['resource'],
    );
    stallCounters.set(registry, counter);
  }
  return counter;
}

/** /api/v1/namespaces/default/secrets is secrets, /apis/cluster.x-k8s.io/v1beta2/clusters is clusters.cluster.x-k8s.io. */
function resourceOf(path: string): string {
  const segments = path.split('/');
  const plural = segments.at(-1) ?? path;
  return segments[1] === 'apis' ? `${plural}.${segments[2]}` : plural;
}

/** The server's own message (a Status) and HTTP code when there are any, rather than client-node's dump of headers. */
export function describeKubeError(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const { code, statusCode, body, message } = error as { code?: unknown; statusCode?: unknown; body?: unknown; message?: unknown };
  const status = typeof code === 'number' ? code : typeof statusCode === 'number' ? statusCode : undefined;
  const serverMessage = statusMessage(body);
  if (status !== undefined) return `${serverMessage ?? firstLine(message) ?? 'request failed'} (HTTP ${status})`;
  return serverMessage ?? firstLine(message) ?? String(error);
}

function statusMessage(body: unknown): string | undefined {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  const message = (parsed as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message !== '' ? message : undefined;
}

function firstLine(message: unknown): string | undefined {
  return typeof message === 'string' && message !== '' ? message.split('\n')[0] : undefined;
}
