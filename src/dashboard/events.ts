/**
 * The dashboard's live updates as server-sent events: a `change` event
 * (data: the namespace and storage revision) whenever an object a page shows
 * changes in a namespace the caller may list, at most every 250 ms per
 * stream, so a burst of reconcile writes is one refetch. The browser's
 * EventSource reconnects by itself, and refetches on each (re)connection, so
 * nothing is lost when a stream ends (a compacted watch, a restart).
 *
 * One storage watch per kind per stream: through the watch cache these are
 * in-memory subscriptions, not watches of the backend.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InventoryAccess } from '../inventory/access.js';
import { keysOf } from '../apiserver/registry/keys.js';
import type { Storage, Watch, WatchEvent } from '../storage/interface.js';

/** The kinds the pages show: CAPO's three and Cluster API's Cluster where this server stores it. */
export const watchedPrefixes = [
  { group: 'infrastructure.cluster.x-k8s.io', plural: 'openstackclusters', namespaced: true },
  { group: 'infrastructure.cluster.x-k8s.io', plural: 'openstackmachines', namespaced: true },
  { group: 'infrastructure.cluster.x-k8s.io', plural: 'openstackservers', namespaced: true },
  { group: 'cluster.x-k8s.io', plural: 'clusters', namespaced: true },
].map((kind) => keysOf(kind).root);
const coalesceMs = 250;
/** A comment line this often keeps proxies from closing an idle stream. */
const heartbeatMs = 15_000;

export function streamChanges(storage: Storage, access: InventoryAccess, request: IncomingMessage, response: ServerResponse): void {
  response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
  // Reconnect after a second when the stream ends.
  response.write('retry: 1000\n\n');
  const watches: Watch[] = [];
  let pending: { namespaces: Set<string>; revision: number } | undefined;
  let flushTimer: NodeJS.Timeout | undefined;
  const heartbeat = setInterval(() => response.write(': keep-alive\n\n'), heartbeatMs);
  const end = () => {
    clearInterval(heartbeat);
    clearTimeout(flushTimer);
    for (const watch of watches) watch.stop();
    watches.length = 0;
    response.end();
  };
  request.once('close', end);

  const flush = () => {
    flushTimer = undefined;
    if (!pending) return;
    const { namespaces, revision } = pending;
    pending = undefined;
    response.write(`event: change\ndata: ${JSON.stringify({ namespaces: [...namespaces].sort(), revision })}\n\n`);
  };
  const onEvent = async (event: WatchEvent) => {
    const namespace = namespaceOf(event.key);
    if (namespace === undefined || !(await access.mayListClusters(namespace))) return;
    pending ??= { namespaces: new Set(), revision: 0 };
    pending.namespaces.add(namespace);
    pending.revision = Math.max(pending.revision, event.revision);
    flushTimer ??= setTimeout(flush, coalesceMs);
  };

  storage.currentRevision().then((revision) => {
    if (response.writableEnded) return;
    for (const prefix of watchedPrefixes) {
      watches.push(
        storage.watch({
          prefix,
          afterRevision: revision,
          onEvent: (event) => void onEvent(event).catch(end),
          // Compacted or closed under us: end the stream; the browser reconnects and refetches.
          onError: end,
        }),
      );
    }
    response.write(`event: ready\ndata: ${JSON.stringify({ revision })}\n\n`);
  }, end);
}

/** The namespace segment of `<prefix><namespace>/<name>`. */
function namespaceOf(key: string): string | undefined {
  const prefix = watchedPrefixes.find((candidate) => key.startsWith(candidate));
  if (!prefix) return undefined;
  const rest = key.slice(prefix.length);
  const slash = rest.indexOf('/');
  return slash > 0 ? rest.slice(0, slash) : undefined;
}
