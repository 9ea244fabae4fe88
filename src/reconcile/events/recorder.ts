/**
 * Records core v1 Events about our objects as client-go's event recorder does, so that
 * `kubectl describe` and `kubectl get events` show what the reconciler did and what failed:
 *
 * - an event is Normal or Warning with a CamelCase reason, about one object (involvedObject),
 *   from one component (source.component, reportingComponent);
 * - the same event again (same object, type, reason and message) is not a new object: its count
 *   goes up and lastTimestamp moves, as client-go's EventCorrelator does;
 * - each object has a budget (a token bucket of 25, refilled one every 5 minutes, client-go's
 *   spam filter), so a reconcile failing in a loop cannot flood the store;
 * - recording never blocks or fails a reconcile: events wait in a bounded queue that one loop
 *   writes out; when the queue is full or a write fails, the event is dropped and counted.
 *
 * Hand-written: client-node has no recorder, and the correlation is a few dozen lines.
 */
import type { Logger } from '../../observability/log.js';
import type { JsonObject } from '../../storage/interface.js';
import { KeyedTokenBuckets } from '../../apiserver/http/keyed-token-buckets.js';
import { metaOf } from '../objects.js';

export type EventType = 'Normal' | 'Warning';

/** Where events are written: this server's storage (embedded) or the management cluster. */
export interface EventSink {
  /** Creates the event in its namespace; the stored object (with its resourceVersion) comes back. */
  create(namespace: string, event: JsonObject): Promise<JsonObject>;
  /** Replaces the stored event (its resourceVersion as the sink last returned it); the stored object comes back. */
  update(namespace: string, event: JsonObject): Promise<JsonObject>;
  /** The events of a namespace, for the dashboard. */
  list(namespace: string): Promise<JsonObject[]>;
}

export interface EventRecorderOptions {
  /** source.component and reportingComponent. */
  component: string;
  /** reportingInstance, e.g. the pod name. */
  instance?: string;
  logger?: Logger;
  now?: () => Date;
  /** Events waiting to be written at most; more are dropped. */
  maxQueued?: number;
  /** Per object: events at once, and how often one more is allowed. */
  burst?: number;
  refillMs?: number;
}

/** The longest message kept: kube's events.k8s.io note is at most 1 kB. */
const maxMessageLength = 1024;
/** Distinct events remembered for correlation (client-go's LRU holds 4096). */
const correlationCacheSize = 4096;

interface Pending {
  object: JsonObject;
  type: EventType;
  reason: string;
  message: string;
  at: Date;
}

export class EventRecorder {
  private readonly queue: Pending[] = [];
  /** The stored event of each correlation key, most recently used last. */
  private readonly stored = new Map<string, JsonObject>();
  /** Each object's budget, by uid. */
  private readonly budgets: KeyedTokenBuckets;
  private draining: Promise<void> | undefined;
  private sequence = 0;
  /** Events dropped: a full queue, a spent budget or a failed write. */
  dropped = 0;

  constructor(
    private readonly sink: EventSink,
    private readonly options: EventRecorderOptions,
  ) {
    this.budgets = new KeyedTokenBuckets(options.burst ?? 25, options.refillMs ?? 300_000);
  }

  normal(object: JsonObject, reason: string, message: string): void {
    this.record(object, 'Normal', reason, message);
  }

  warning(object: JsonObject, reason: string, message: string): void {
    this.record(object, 'Warning', reason, message);
  }

  /** Queues the event; returns at once. */
  record(object: JsonObject, type: EventType, reason: string, message: string): void {
    const at = (this.options.now ?? (() => new Date()))();
    if (this.budgets.take(metaOf(object).uid, at.getTime()) !== undefined || this.queue.length >= (this.options.maxQueued ?? 1000)) {
      this.dropped += 1;
      return;
    }
    const text = message.length > maxMessageLength ? `${message.slice(0, maxMessageLength - 3)}...` : message;
    this.queue.push({ object, type, reason, message: text, at });
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  /** Resolves once every queued event was written (or dropped). */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    for (let next = this.queue.shift(); next; next = this.queue.shift()) {
      try {
        await this.write(next);
      } catch (error) {
        this.dropped += 1;
        this.options.logger?.debug({ err: error, reason: next.reason }, 'an event could not be written');
      }
    }
  }

  private async write({ object, type, reason, message, at }: Pending): Promise<void> {
    const meta = metaOf(object);
    const namespace = meta.namespace ?? 'default';
    const key = [meta.uid, type, reason, message].join('\u0000');
    const timestamp = at.toISOString().replace(/\.\d{3}Z$/, 'Z');
    const previous = this.stored.get(key);
    if (previous) {
      this.stored.delete(key);
      try {
        const updated = await this.sink.update(namespace, { ...previous, count: Number(previous.count ?? 1) + 1, lastTimestamp: timestamp });
        this.remember(key, updated);
        return;
      } catch {
        // Expired (TTL) or changed by someone else: record it anew, as client-go does when its patch fails.
      }
    }
    const event: JsonObject = {
      apiVersion: 'v1',
      kind: 'Event',
      // client-go's name: the object's, then the time in hex nanoseconds; the sequence keeps two in one millisecond apart.
      metadata: { name: `${meta.name}.${(BigInt(at.getTime()) * 1_000_000n + BigInt(this.sequence++ % 1_000_000)).toString(16)}`, namespace },
      involvedObject: {
        apiVersion: String(object.apiVersion ?? ''),
        kind: String(object.kind ?? ''),
        name: meta.name,
        ...(meta.namespace === undefined ? {} : { namespace: meta.namespace }),
        uid: meta.uid,
        ...(meta.resourceVersion === undefined ? {} : { resourceVersion: meta.resourceVersion }),
      },
      reason,
      message,
      type,
      source: { component: this.options.component },
      reportingComponent: this.options.component,
      ...(this.options.instance === undefined ? {} : { reportingInstance: this.options.instance }),
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      count: 1,
    };
    this.remember(key, await this.sink.create(namespace, event));
  }

  private remember(key: string, event: JsonObject): void {
    this.stored.set(key, event);
    if (this.stored.size > correlationCacheSize) this.stored.delete(this.stored.keys().next().value as string);
  }
}
