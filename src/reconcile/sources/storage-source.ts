/**
 * The embedded source: without kube-apiserver, our own API server serves
 * Secrets, Clusters and Machines, so they live in the same storage as every
 * other kind and are read through their ResourceStore keys.
 *
 * watch() follows the three kinds' key prefixes. It starts by reporting every
 * existing object, as an informer's initial list does, so no change made after
 * watch() returns can fall between the list and the storage watch. When the
 * storage ends a watch (etcd compacting past it), it lists again and reports
 * exactly what differs from what it knew: created, changed and deleted keys.
 */
import type { KindDefinition } from '../../apiserver/registry/kind.js';
import { TooOldRevisionError, type Storage, type Watch } from '../../storage/interface.js';
import type { Stores } from '../../apiserver/store/stores.js';
import { ExponentialBackoff, type ExponentialBackoffOptions } from '../runtime/backoff.js';
import { KindClient } from '../objects.js';
import type { ObjectName } from '../../storage/interface.js';
import { sleep } from '../runtime/sleep.js';
import { parseCluster, parseMachine, parseSecret } from './parse.js';
import type { ClusterApiCluster, ClusterApiMachine, ClusterApiSource, SecretData, SourceChange, SourceKind } from './source.js';
import { fallbackLogger } from '../../observability/log.js';

export interface KindDefinitions {
  secret: KindDefinition;
  cluster: KindDefinition;
  machine: KindDefinition;
}

export interface StorageSourceOptions {
  /** Receives ended watches, failed lists and throwing listeners. Default: logged as an error. */
  onError?: (error: unknown) => void;
  /** Delays before listing again after a failed list. Default up to 1 s, doubling up to 30 s. */
  retry?: ExponentialBackoffOptions;
}

/** Images are not among them: the embedded server serves ORC Images itself, and the reconciler reads them there. */
type FollowedKind = Exclude<SourceKind, 'Image'>;

/** Keys per list page: bounds one storage response, as etcd wants. */
const listPageSize = 500;

export class StorageClusterApiSource implements ClusterApiSource {
  private readonly clients: Record<FollowedKind, KindClient>;
  private readonly onError: (error: unknown) => void;
  private readonly retry: ExponentialBackoffOptions;
  private readonly watches = new Set<{ stop(): void }>();
  private readonly storage: Storage;

  /** `stores` are the served kinds' own, and `kinds` must be among them. */
  constructor(stores: Stores, kinds: KindDefinitions, options: StorageSourceOptions = {}) {
    this.storage = stores.storage;
    this.clients = {
      Secret: new KindClient(stores.storeOf(kinds.secret)),
      Cluster: new KindClient(stores.storeOf(kinds.cluster)),
      Machine: new KindClient(stores.storeOf(kinds.machine)),
    };
    for (const [kind, client] of Object.entries(this.clients)) {
      if (client.definition.kind !== kind || !client.definition.namespaced) {
        throw new Error(`the ${kind} definition must be the namespaced kind ${kind}, got ${client.definition.kind}`);
      }
    }
    this.onError = options.onError ?? ((error) => fallbackLogger.error({ component: 'cluster-api-source', err: error }, 'cluster api source error'));
    this.retry = { baseMs: 1000, maxMs: 30_000, ...options.retry };
  }

  getSecret(namespace: string, name: string): Promise<SecretData | undefined> {
    return this.read('Secret', { namespace, name }, parseSecret);
  }

  getCluster(namespace: string, name: string): Promise<ClusterApiCluster | undefined> {
    return this.read('Cluster', { namespace, name }, parseCluster);
  }

  getMachine(namespace: string, name: string): Promise<ClusterApiMachine | undefined> {
    return this.read('Machine', { namespace, name }, parseMachine);
  }

  watch(listener: (change: SourceChange) => void): { stop(): void } {
    const stopped = new AbortController();
    const handle = {
      stop: () => {
        stopped.abort();
        this.watches.delete(handle);
      },
    };
    this.watches.add(handle);
    // Storage delivers events synchronously after commits and its callbacks must not throw.
    const report = (change: SourceChange) => {
      try {
        listener(change);
      } catch (error) {
        this.onError(error);
      }
    };
    for (const kind of ['Secret', 'Cluster', 'Machine'] as const) void this.follow(kind, report, stopped.signal);
    return handle;
  }

  async close(): Promise<void> {
    for (const handle of [...this.watches]) handle.stop();
  }

  private async read<T>(kind: FollowedKind, at: ObjectName, parse: (object: unknown, at: ObjectName) => T): Promise<T | undefined> {
    const object = await this.clients[kind].get(at);
    return object === undefined ? undefined : parse(object, at);
  }

  private async follow(kind: FollowedKind, report: (change: SourceChange) => void, stopped: AbortSignal): Promise<void> {
    const client = this.clients[kind];
    const backoff = new ExponentialBackoff<SourceKind>(this.retry);
    const changed = (key: string) => report({ kind, ...client.nameOf(key) });
    /** The modRevision of every key, as of the last list and the watch events since. */
    let known = new Map<string, number>();
    while (!stopped.aborted) {
      let revision: number;
      try {
        const listed = await this.listModRevisions(client.prefix);
        if (stopped.aborted) return;
        for (const key of differences(known, listed.modRevisions)) changed(key);
        known = listed.modRevisions;
        revision = listed.revision;
        backoff.forget(kind);
      } catch (error) {
        this.onError(error);
        await sleep(backoff.when(kind), stopped);
        continue;
      }
      const failed = await new Promise<boolean>((resolve) => {
        let watch: Watch | undefined;
        const end = (failure = false) => {
          watch?.stop();
          stopped.removeEventListener('abort', abort);
          resolve(failure);
        };
        const abort = () => end();
        stopped.addEventListener('abort', abort, { once: true });
        try {
          watch = this.storage.watch({
            prefix: client.prefix,
            afterRevision: revision,
            onEvent: (event) => {
              if (event.type === 'DELETED') known.delete(event.key);
              else known.set(event.key, event.revision);
              changed(event.key);
            },
            onError: (error) => {
              this.onError(error);
              end();
            },
          });
        } catch (error) {
          // Compacted between the list and the watch: list again at once.
          if (error instanceof TooOldRevisionError) return end();
          this.onError(error);
          end(true);
        }
      });
      if (failed) await sleep(backoff.when(kind), stopped);
    }
  }

  private async listModRevisions(prefix: string): Promise<{ modRevisions: Map<string, number>; revision: number }> {
    const modRevisions = new Map<string, number>();
    let page = await this.storage.list(prefix, { limit: listPageSize });
    const revision = page.revision;
    for (;;) {
      for (const entry of page.entries) modRevisions.set(entry.key, entry.modRevision);
      if (!page.more) return { modRevisions, revision };
      const startAfter = page.entries[page.entries.length - 1].key;
      page = await this.storage.list(prefix, { revision, startAfter, limit: listPageSize });
    }
  }
}

/** Keys created, changed or deleted between two listings. */
function differences(before: Map<string, number>, after: Map<string, number>): string[] {
  const keys = [...after].filter(([key, modRevision]) => before.get(key) !== modRevision).map(([key]) => key);
  for (const key of before.keys()) if (!after.has(key)) keys.push(key);
  return keys;
}
