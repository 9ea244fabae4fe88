/**
 * Kubernetes watch semantics over a storage watch: initial state, resume
 * from a resourceVersion, watch-list (sendInitialEvents) and selector
 * enter/leave transitions. Encoding and streaming belong to the handler.
 */
import { FutureRevisionError, TooOldRevisionError, type JsonObject, type WatchEvent } from '../../storage/interface.js';
import { type ApiError, errors } from '../errors.js';
import type { KindVersion } from '../registry/kind.js';
import { groupVersionOf } from '../registry/registry.js';
import { ensureMetadata } from './object.js';
import { parseResourceVersion, type ResourceStore, type Selection } from './resource-store.js';

export type ApiEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface ApiEvent {
  type: ApiEventType;
  object: JsonObject;
  /** Set when the same storage event fans out to many watchers, to share encodings. */
  revision: number;
}

export interface WatchOptions extends Selection {
  resourceVersion?: string;
  /** Watch-list: stream the current state, then a bookmark marking its end. */
  sendInitialEvents: boolean;
  allowWatchBookmarks: boolean;
}

export interface ActiveWatch {
  stop(): void;
  /** Revision up to which this watcher has been sent everything. */
  currentRevision(): Promise<number>;
}

/** Set on the bookmark that ends a watch-list's initial events. */
export const initialEventsEndAnnotation = 'k8s.io/initial-events-end';

export async function startWatch(
  store: ResourceStore,
  namespace: string | undefined,
  version: KindVersion,
  options: WatchOptions,
  emit: (event: ApiEvent) => void,
  /** The storage ended the watch on its own (e.g. compaction on etcd): the client must relist. */
  fail: (error: ApiError) => void,
): Promise<ActiveWatch> {
  const { storage } = store;
  const matches = store.matcher(options) ?? (() => true);
  const present = (value: JsonObject) => store.present(value, version);
  let afterRevision: number;

  const rv = options.resourceVersion;
  if (options.sendInitialEvents || !rv || rv === '0') {
    if (options.sendInitialEvents && rv && rv !== '0') await store.waitForRevision(parseResourceVersion(rv));
    const snapshot = await storage.list(store.prefix(namespace), { filter: matches });
    for (const entry of snapshot.entries) emit({ type: 'ADDED', object: present(entry.value), revision: entry.modRevision });
    afterRevision = snapshot.revision;
    if (options.sendInitialEvents && options.allowWatchBookmarks) {
      emit({ type: 'BOOKMARK', object: bookmarkObject(store, version, afterRevision, true), revision: afterRevision });
    }
  } else {
    afterRevision = parseResourceVersion(rv);
    await store.waitForRevision(afterRevision);
    // Answered before the stream starts, a 410 the client sees as a status (kube's cacher sends the same Status as the
    // stream's one ERROR event; reflectors relist on either).
    // A watch from the revision the cache reflects, or later, needs no history; the cache asks only for older ones.
    if (afterRevision < (storage.cachedRevision() ?? Number.POSITIVE_INFINITY)) {
      const compacted = await storage.compactedRevision();
      if (afterRevision < compacted) throw expired(new TooOldRevisionError(afterRevision, compacted));
    }
  }

  let delivered = afterRevision;
  const onEvent = (event: WatchEvent) => {
    delivered = event.revision;
    const type = transition(event, matches);
    if (type) emit({ type, object: store.presentToWatchers(event.value, version), revision: event.revision });
  };
  try {
    const watch = storage.watch({
      prefix: store.prefix(namespace),
      afterRevision,
      onEvent,
      onError: (error) => fail(error instanceof TooOldRevisionError ? expired(error) : errors.internal(error.message)),
    });
    return {
      stop: () => watch.stop(),
      // What storage vouches this watch has been given: on etcd, events arrive after their commit.
      currentRevision: async () => Math.max(delivered, await watch.progress()),
    };
  } catch (error) {
    if (error instanceof TooOldRevisionError) throw expired(error);
    if (error instanceof FutureRevisionError) throw errors.resourceVersionTooLarge(error.requested, error.current);
    throw error;
  }
}

function expired(error: TooOldRevisionError): ApiError {
  return errors.expired(`too old resource version: ${error.requested} (${error.compacted})`);
}

/** How a storage event looks through a selector: objects entering or leaving it appear as ADDED or DELETED. */
function transition(event: WatchEvent, matches: (value: JsonObject) => boolean): ApiEventType | undefined {
  const now = event.type !== 'DELETED' && matches(event.value);
  const before = event.type === 'DELETED' ? matches(event.value) : event.prevValue !== undefined && matches(event.prevValue);
  if (event.type === 'ADDED') return now ? 'ADDED' : undefined;
  if (event.type === 'DELETED') return before ? 'DELETED' : undefined;
  if (now && before) return 'MODIFIED';
  if (now) return 'ADDED';
  if (before) return 'DELETED';
  return undefined;
}

export function bookmarkObject(store: ResourceStore, version: KindVersion, revision: number, initialEventsEnd = false): JsonObject {
  const object: JsonObject = {
    kind: store.definition.kind,
    apiVersion: groupVersionOf(store.definition.group, version.name),
    metadata: { resourceVersion: String(revision) },
  };
  if (initialEventsEnd) ensureMetadata(object).annotations = { [initialEventsEndAnnotation]: 'true' };
  return object;
}
