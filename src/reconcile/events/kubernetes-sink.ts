/**
 * Events into the management cluster (aggregated mode), where kube-apiserver serves them to
 * `kubectl describe` beside everything else's; deploy/base/rbac.yaml lets the server create and
 * update them. client-node's typed Event carries Date objects, so times are converted at the edge.
 * Each call has the delegated calls' 10 s deadline: a kube-apiserver that does not answer holds up
 * the recorder's queue (which then drops) for that long at most, never for good.
 */
import { CoreV1Api, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';
import { reviewTimeoutMs, withDeadline } from '../../apiserver/auth/delegated/deadline.js';
import type { JsonObject } from '../../storage/interface.js';
import { isJsonObject } from '../../storage/json.js';
import type { EventSink } from './recorder.js';

const timeFields = ['firstTimestamp', 'lastTimestamp'] as const;

export function kubernetesEventSink(kubeconfig: KubeConfig): EventSink {
  const core = kubeconfig.makeApiClient(CoreV1Api);
  // What was sent, with what kube-apiserver assigned (uid, resourceVersion): enough to replace it later.
  const stored = (sent: JsonObject, answer: CoreV1Event): JsonObject => ({
    ...sent,
    metadata: { ...(isJsonObject(sent.metadata) ? sent.metadata : {}), uid: answer.metadata?.uid, resourceVersion: answer.metadata?.resourceVersion },
  });
  return {
    async create(namespace, event) {
      return stored(event, await withDeadline(core.createNamespacedEvent({ namespace, body: typed(event) }), reviewTimeoutMs, 'creating an Event'));
    },
    async list(namespace) {
      // Plain JSON, as stored: the typed client's Dates back to the strings kube sent.
      const listed = await withDeadline(core.listNamespacedEvent({ namespace }), reviewTimeoutMs, `listing Events in ${namespace}`);
      return JSON.parse(JSON.stringify(listed.items)) as JsonObject[];
    },
    async update(namespace, event) {
      const name = String((event.metadata as JsonObject).name);
      return stored(event, await withDeadline(core.replaceNamespacedEvent({ name, namespace, body: typed(event) }), reviewTimeoutMs, 'updating an Event'));
    },
  };
}

function typed(event: JsonObject): CoreV1Event {
  const body: Record<string, unknown> = { ...event };
  for (const field of timeFields) if (typeof body[field] === 'string') body[field] = new Date(body[field] as string);
  return body as unknown as CoreV1Event;
}
