/**
 * One list+watch of a kube-apiserver collection (client-node's ListWatch,
 * an informer) whose cache answers reads while it is known to be current.
 *
 * ListWatch re-establishes a watch the server closes, and relists after 410
 * Gone, but gives up on any other failure (a refused connection, a 403, a
 * failed list) after reporting it. This restarts it with backoff, resuming
 * from the last resourceVersion, and marks the cache unusable until a start
 * succeeds, so reads fall back to the API server meanwhile.
 */
import { ADD, DELETE, ERROR, ListWatch, UPDATE, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { ExponentialBackoff, type ExponentialBackoffOptions } from '../runtime/backoff.js';

export interface WatchedCollectionOptions {
  /** The collection's URL path, e.g. /api/v1/namespaces/default/secrets. */
  path: string;
  config: KubeConfig;
  list: () => Promise<KubernetesListObject<KubernetesObject>>;
  /** Every object added, changed or deleted, including those of the first list and of relists. */
  onChange: (object: KubernetesObject) => void;
  /** Why the cache stopped following the server; it restarts by itself. */
  onError: (error: unknown) => void;
  retry: ExponentialBackoffOptions;
}

export class WatchedCollection {
  private readonly informer: ListWatch<KubernetesObject>;
  private readonly backoff: ExponentialBackoff<string>;
  /** The cache reflects a list and a running watch. */
  private current = false;
  /** Why the cache is not current, after a failure and until a start succeeds. */
  private lastFailure: string | undefined;
  private failures = 0;
  private stopped = false;
  private restart: NodeJS.Timeout | undefined;

  constructor(private readonly options: WatchedCollectionOptions) {
    this.backoff = new ExponentialBackoff(options.retry);
    this.informer = new ListWatch(options.path, new StoppableWatch(options.config, () => this.stopped), options.list, false);
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
    this.options.onError(new Error(this.lastFailure, { cause: error }));
    clearTimeout(this.restart);
    this.restart = setTimeout(() => void this.start(), this.backoff.when(this.options.path));
  }
}

/**
 * ListWatch looks at stop() only before it lists or reconnects, so a stop
 * during a list or a reconnect would leave a new watch running; this one
 * opens nothing after the stop and closes what opened during it.
 */
class StoppableWatch extends Watch {
  constructor(
    config: KubeConfig,
    private readonly stopped: () => boolean,
  ) {
    super(config);
  }

  override async watch(...args: Parameters<Watch['watch']>): Promise<AbortController> {
    const controller = this.stopped() ? new AbortController() : await super.watch(...args);
    if (this.stopped()) controller.abort();
    return controller;
  }
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
