/**
 * Events into the management cluster (aggregated mode), where kube-apiserver serves them to
 * `kubectl describe` beside everything else's; deploy/base/rbac.yaml lets the server create and
 * update them. client-node's typed Event carries Date objects, so times are converted at the edge.
 */
import { CoreV1Api, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';
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
      return stored(event, await core.createNamespacedEvent({ namespace, body: typed(event) }));
    },
    async list(namespace) {
      // Plain JSON, as stored: the typed client's Dates back to the strings kube sent.
      return JSON.parse(JSON.stringify((await core.listNamespacedEvent({ namespace })).items)) as JsonObject[];
    },
    async update(namespace, event) {
      const name = String((event.metadata as JsonObject).name);
      return stored(event, await core.replaceNamespacedEvent({ name, namespace, body: typed(event) }));
    },
  };
}

function typed(event: JsonObject): CoreV1Event {
  const body: Record<string, unknown> = { ...event };
  for (const field of timeFields) if (typeof body[field] === 'string') body[field] = new Date(body[field] as string);
  return body as unknown as CoreV1Event;
}
