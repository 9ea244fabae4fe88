/**
 * Events expire, as kube-apiserver's --event-ttl (1 h) makes them: an Event not changed for the TTL
 * is deleted. kube-apiserver puts each Event in etcd under a lease; here a sweep every few minutes
 * deletes what ran out, so an Event lives between the TTL and the TTL plus one sweep.
 */
import { storageVersionOf } from '../../apiserver/registry/registry.js';
import type { ResourceStore } from '../../apiserver/store/resource-store.js';
import { isJsonObject } from '../../storage/json.js';

export const eventTtlMs = 60 * 60 * 1000;
const sweepEveryMs = 5 * 60 * 1000;
const sweeper = { name: 'system:event-ttl', groups: ['system:masters'] };

/** Deletes every Event of `events` (the Event kind's store) older than the TTL now; returns how many. */
export async function sweepEvents(events: ResourceStore, now = Date.now(), ttlMs = eventTtlMs): Promise<number> {
  const version = storageVersionOf(events.definition);
  let deleted = 0;
  for (const event of (await events.list(undefined, version, {})).items) {
    const meta = isJsonObject(event.metadata) ? event.metadata : {};
    const changed = Date.parse(String(event.lastTimestamp ?? meta.creationTimestamp ?? ''));
    if (!(now - changed >= ttlMs)) continue;
    try {
      await events.delete(String(meta.namespace), String(meta.name), version, {
        dryRun: false,
        user: sweeper,
        preconditions: { resourceVersion: String(meta.resourceVersion) },
      });
      deleted += 1;
    } catch {
      // Changed or gone meanwhile: the next sweep judges it again.
    }
  }
  return deleted;
}

/** Sweeps every few minutes until the returned function is called; a failed sweep goes to `onError`, and the next one tries again. */
export function startEventTtl(events: ResourceStore, onError: (error: unknown) => void): () => void {
  const timer = setInterval(() => {
    sweepEvents(events).catch(onError);
  }, sweepEveryMs);
  timer.unref();
  return () => clearInterval(timer);
}
