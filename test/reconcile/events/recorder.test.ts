/**
 * The recorder's own rules, against an in-memory sink standing for the store (the Events as kubectl
 * sees them are tested end to end in ../events.test.ts): repeats counted on one Event, a budget
 * per object, and a reconcile never held up or failed by a slow or failing sink.
 */
import { describe, expect, it } from 'vitest';
import { EventRecorder, type EventSink } from '../../../src/reconcile/events/recorder.js';
import type { JsonObject } from '../../../src/storage/interface.js';

class MemorySink implements EventSink {
  readonly events = new Map<string, JsonObject>();
  writes = 0;
  failing = false;

  async create(namespace: string, event: JsonObject): Promise<JsonObject> {
    return this.store(namespace, event);
  }

  async update(namespace: string, event: JsonObject): Promise<JsonObject> {
    const name = String((event.metadata as JsonObject).name);
    if (!this.events.has(`${namespace}/${name}`)) throw new Error('gone');
    return this.store(namespace, event);
  }

  async list(namespace: string): Promise<JsonObject[]> {
    return [...this.events].filter(([key]) => key.startsWith(`${namespace}/`)).map(([, event]) => event);
  }

  private store(namespace: string, event: JsonObject): JsonObject {
    this.writes += 1;
    if (this.failing) throw new Error('the store is down');
    this.events.set(`${namespace}/${String((event.metadata as JsonObject).name)}`, structuredClone(event));
    return event;
  }
}

const machine = (name: string): JsonObject => ({
  apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
  kind: 'OpenStackMachine',
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
});

function clock(start = Date.parse('2026-12-02T06:00:00Z')): { now: () => Date; advance(ms: number): void } {
  let at = start;
  return { now: () => new Date(at), advance: (ms) => (at += ms) };
}

describe('the event recorder', () => {
  it('counts a repeated event on the one Event it made, moving lastTimestamp', async () => {
    const sink = new MemorySink();
    const time = clock();
    const recorder = new EventRecorder(sink, { component: 'capo-apiserver', now: time.now });
    recorder.warning(machine('a'), 'FailedCreateServer', 'quota exceeded');
    time.advance(30_000);
    recorder.warning(machine('a'), 'FailedCreateServer', 'quota exceeded');
    recorder.warning(machine('a'), 'FailedCreateServer', 'another message');
    await recorder.flush();
    const events = [...sink.events.values()];
    expect(events).toHaveLength(2);
    expect(events.find((event) => event.message === 'quota exceeded')).toMatchObject({
      type: 'Warning',
      reason: 'FailedCreateServer',
      count: 2,
      firstTimestamp: '2026-12-02T06:00:00Z',
      lastTimestamp: '2026-12-02T06:00:30Z',
      involvedObject: { kind: 'OpenStackMachine', name: 'a', namespace: 'default', uid: 'uid-a' },
      source: { component: 'capo-apiserver' },
    });
  });

  it('gives each object a budget of 25, refilled one every 5 minutes, without touching the others', async () => {
    const sink = new MemorySink();
    const time = clock();
    const recorder = new EventRecorder(sink, { component: 'capo-apiserver', now: time.now });
    for (let i = 0; i < 30; i++) recorder.normal(machine('a'), 'Progress', `step ${i}`);
    recorder.normal(machine('b'), 'Progress', 'step 0');
    await recorder.flush();
    expect(sink.events.size).toBe(26);
    expect(recorder.dropped).toBe(5);
    time.advance(300_000);
    recorder.normal(machine('a'), 'Progress', 'after a while');
    recorder.normal(machine('a'), 'Progress', 'too soon');
    await recorder.flush();
    expect([...sink.events.values()].map((event) => event.message)).toContain('after a while');
    expect([...sink.events.values()].map((event) => event.message)).not.toContain('too soon');
  });

  it('returns at once and drops what the sink refuses, and what overflows its queue', async () => {
    const sink = new MemorySink();
    sink.failing = true;
    const recorder = new EventRecorder(sink, { component: 'capo-apiserver', maxQueued: 3 });
    for (const name of ['a', 'b', 'c', 'd', 'e']) expect(recorder.warning(machine(name), 'Failed', 'x')).toBeUndefined();
    await recorder.flush();
    expect(sink.events.size).toBe(0);
    // The first is taken off the queue at once, three wait, one finds the queue full; the four written all fail.
    expect(recorder.dropped).toBe(5);
    sink.failing = false;
    recorder.warning(machine('a'), 'Failed', 'x');
    await recorder.flush();
    expect(sink.events.size).toBe(1);
  });

  it('cuts a runaway message at 1 kB', async () => {
    const sink = new MemorySink();
    const recorder = new EventRecorder(sink, { component: 'capo-apiserver' });
    recorder.warning(machine('a'), 'Failed', 'x'.repeat(5000));
    await recorder.flush();
    expect(String([...sink.events.values()][0]!.message)).toHaveLength(1024);
  });
});
