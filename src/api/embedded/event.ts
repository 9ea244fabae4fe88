/**
 * The core v1 Event, served as kube-apiserver serves it, for the embedded mode's `kubectl describe`
 * and `kubectl get events`: the fields kube's Event type has, the field selectors kube's event
 * strategy declares (`involvedObject.*`, `reason`, `source`, `type`, `reportingComponent`), and the
 * columns of kubectl's built-in event printer. Events expire an hour after their last change
 * (event-ttl.ts), as kube-apiserver's --event-ttl.
 */
import { z } from 'zod';
import type { KindVersion, PrinterColumn } from '../../apiserver/registry/kind.js';
import type { JsonObject } from '../../storage/interface.js';
import { isJsonObject } from '../../storage/json.js';

const objectReference = z
  .object({
    kind: z.string().optional().describe('Kind of the referent.'),
    namespace: z.string().optional().describe('Namespace of the referent.'),
    name: z.string().optional().describe('Name of the referent.'),
    uid: z.string().optional().describe('UID of the referent.'),
    apiVersion: z.string().optional().describe('API version of the referent.'),
    resourceVersion: z.string().optional().describe('The referent resourceVersion the event is about, if any.'),
    fieldPath: z.string().optional().describe('A part of the referent, e.g. spec.containers{name}.'),
  })
  .meta({ 'x-kubernetes-map-type': 'atomic' });

const time = z.iso.datetime({ offset: true });
/** metav1.MicroTime: RFC 3339 with microseconds. */
const microTime = z.iso.datetime({ offset: true, precision: 6 });

/** `kind/name` as kubectl's event printer shows the object, the kind in lower case. */
function objectOf(event: JsonObject): string {
  const involved = isJsonObject(event.involvedObject) ? event.involvedObject : {};
  return `${String(involved.kind ?? '').toLowerCase()}/${String(involved.name ?? '')}`;
}

/** The columns of kubectl's built-in Event printer (and kube-apiserver's Table for events). */
const printerColumns: PrinterColumn[] = [
  {
    name: 'Last Seen',
    type: 'string',
    jsonPath: '.lastTimestamp',
    description: 'Time since the event was last seen.',
    value: (event) => ago(event.lastTimestamp ?? (isJsonObject(event.series) ? event.series.lastObservedTime : undefined) ?? event.eventTime),
  },
  { name: 'Type', type: 'string', jsonPath: '.type', description: 'Normal or Warning.' },
  { name: 'Reason', type: 'string', jsonPath: '.reason', description: 'Why the event happened, in CamelCase.' },
  { name: 'Object', type: 'string', jsonPath: '.involvedObject', description: 'The object the event is about.', value: objectOf },
  { name: 'Message', type: 'string', jsonPath: '.message', description: 'What happened, for people.' },
  { name: 'Source', type: 'string', jsonPath: '.source.component', priority: 1, description: 'The component that reported the event.' },
  {
    name: 'First Seen',
    type: 'string',
    jsonPath: '.firstTimestamp',
    priority: 1,
    description: 'Time since the event was first seen.',
    value: (event) => ago(event.firstTimestamp),
  },
  { name: 'Count', type: 'integer', jsonPath: '.count', priority: 1, description: 'How many times the event was seen.' },
  { name: 'Name', type: 'string', jsonPath: '.metadata.name', priority: 1, description: 'Name of the Event object.' },
];

/** kube's short duration ("5s", "3m", "2h"), as its event printer writes ages. */
function ago(timestamp: unknown): string {
  if (typeof timestamp !== 'string') return '<unknown>';
  const seconds = Math.max(0, Math.floor((Date.now() - Date.parse(timestamp)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

export const eventV1: KindVersion = {
  name: 'v1',
  served: true,
  storage: true,
  schema: z
    .object({
      involvedObject: objectReference.describe('The object this event is about.'),
      reason: z.string().max(128).optional().describe('Why the object changed state, short and in CamelCase, for machines to read.'),
      message: z.string().max(4096).optional().describe('What happened, for people.'),
      source: z
        .object({ component: z.string().optional().describe('The component reporting.'), host: z.string().optional().describe('The node it runs on.') })
        .optional()
        .describe('Who reported the event.'),
      firstTimestamp: time.optional().describe('When the event was first recorded.'),
      lastTimestamp: time.optional().describe('When the event last happened.'),
      count: z.int().min(0).max(2_147_483_647).meta({ format: 'int32' }).optional().describe('How many times it happened.'),
      type: z.string().optional().describe('Normal or Warning.'),
      eventTime: microTime.optional().describe('When the event first happened, for events.k8s.io clients.'),
      series: z
        .object({
          count: z.int().min(0).max(2_147_483_647).meta({ format: 'int32' }).optional().describe('Occurrences in the series up to lastObservedTime.'),
          lastObservedTime: microTime.optional().describe('When the last occurrence was observed.'),
        })
        .optional()
        .describe('The series this event stands for, when it repeats.'),
      action: z.string().max(128).optional().describe('What was done or failed, e.g. Create.'),
      related: objectReference.optional().describe('A second object, for more complex actions.'),
      reportingComponent: z.string().max(128).optional().describe('The controller that reported the event, e.g. capo-apiserver.'),
      reportingInstance: z.string().max(128).optional().describe('Which instance of the controller, e.g. its pod.'),
    })
    .describe('Event is a report of an event somewhere in the cluster.'),
  printerColumns,
};
