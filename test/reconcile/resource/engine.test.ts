/**
 * The engine's ordering and outcome rules against an in-memory actuator,
 * where every call can be observed; network.test.ts runs the same rules
 * against the simulated cloud.
 */
import { describe, expect, it } from 'vitest';
import { OpenStackError, type OpenStackErrorKind } from '../../../src/openstack/index.js';
import { TerminalError } from '../../../src/reconcile/runtime/controller.js';
import {
  humanTag,
  maxTagLength,
  ownerTag,
  ownerTags,
  type Owner,
  type Progress,
  type Readiness,
  type ResourceActuator,
} from '../../../src/reconcile/resource/actuator.js';
import { classify, ensure, remove, ResourceTerminalError, retryAfterMs } from '../../../src/reconcile/resource/engine.js';

const owner: Owner = { uid: '6f0a1a52-3f7e-4b8e-9a51-0c9b7a1d2e34', namespace: 'default', name: 'demo', kind: 'OpenStackCluster' };

interface Thing {
  id: string;
  name: string;
  tags: string[];
}

/** Records every call in `calls`; behaviour is tuned per test through the fields. */
class FakeActuator implements ResourceActuator<{ name: string }, Thing> {
  readonly kind = 'thing';
  readonly things = new Map<string, Thing>();
  readonly calls: string[] = [];
  postCreateProgress: Progress = { done: true };
  readinessOf: Readiness = { ready: true };
  deleteProgress: Progress = { done: true };
  deleteError: unknown;
  private next = 0;

  async getById(id: string) {
    this.calls.push(`get ${id}`);
    return this.things.get(id);
  }
  async findAdoptable(name: string, of: Owner) {
    this.calls.push(`find ${name}`);
    return [...this.things.values()].filter((thing) => thing.name === name && thing.tags.includes(ownerTag(of)));
  }
  async create(desired: { name: string }, of: Owner) {
    const thing = { id: `id-${++this.next}`, name: desired.name, tags: ownerTags(of) };
    this.things.set(thing.id, thing);
    this.calls.push(`create ${thing.id}`);
    return thing;
  }
  async postCreate(thing: Thing) {
    this.calls.push(`postCreate ${thing.id}`);
    return this.postCreateProgress;
  }
  readiness(thing: Thing) {
    this.calls.push(`readiness ${thing.id}`);
    return this.readinessOf;
  }
  async delete(thing: Thing) {
    this.calls.push(`delete ${thing.id}`);
    if (this.deleteError !== undefined) throw this.deleteError;
    if ('done' in this.deleteProgress) this.things.delete(thing.id);
    return this.deleteProgress;
  }
  describe(thing: Thing) {
    return { id: thing.id, name: thing.name };
  }
}

function recorder(actuator: FakeActuator): { ids: string[]; record: (id: string) => Promise<void> } {
  const ids: string[] = [];
  return {
    ids,
    record: async (id) => {
      actuator.calls.push(`record ${id}`);
      ids.push(id);
    },
  };
}

describe('ensure', () => {
  it('records a created ID before post-create steps and readiness, and reports waiting from them', async () => {
    const actuator = new FakeActuator();
    actuator.postCreateProgress = { waitingFor: 'thing id-1 to settle', requeueAfterMs: 2_000 };
    const { record } = recorder(actuator);
    const result = await ensure(actuator, { recordedId: undefined, desired: { name: 'a' }, owner, record });
    expect(actuator.calls).toEqual(['find a', 'create id-1', 'record id-1', 'postCreate id-1']);
    expect(result).toMatchObject({ ready: false, found: 'created', waitingFor: 'thing id-1 to settle', requeueAfterMs: 2_000 });
  });

  it('throws a terminal Failed error for a failed resource, whose ID is recorded all the same', async () => {
    const actuator = new FakeActuator();
    actuator.readinessOf = { failed: 'status ERROR' };
    const { ids, record } = recorder(actuator);
    const error = await ensure(actuator, { recordedId: undefined, desired: { name: 'a' }, owner, record }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResourceTerminalError);
    expect(error).toMatchObject({ reason: 'Failed', ids: ['id-1'], message: 'thing id-1 failed: status ERROR' });
    expect(classify(error)).toBe('terminal');
    expect(ids).toEqual(['id-1']);
  });

  it('does not record again when the recorded resource exists', async () => {
    const actuator = new FakeActuator();
    const created = await actuator.create({ name: 'a' }, owner);
    actuator.calls.length = 0;
    const { ids, record } = recorder(actuator);
    const result = await ensure(actuator, { recordedId: created.id, desired: { name: 'a' }, owner, record });
    expect(result).toMatchObject({ ready: true, found: 'recorded' });
    expect(result.goneId).toBeUndefined();
    expect(ids).toEqual([]);
    expect(actuator.calls).toEqual(['get id-1', 'postCreate id-1', 'readiness id-1']);
  });

  it('with ifGone fail, refuses to replace a recorded resource that is gone', async () => {
    const actuator = new FakeActuator();
    const { record } = recorder(actuator);
    const error = await ensure(actuator, { recordedId: 'lost', desired: { name: 'a' }, owner, record, ifGone: 'fail' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'Gone', ids: ['lost'] });
    expect(actuator.calls).toEqual(['get lost']);
  });
});

describe('remove', () => {
  it('reports an asynchronous delete as waiting, then done once the resource is gone', async () => {
    const actuator = new FakeActuator();
    const created = await actuator.create({ name: 'a' }, owner);
    actuator.deleteProgress = { waitingFor: 'thing id-1 to be deleted', requeueAfterMs: 1_000 };
    expect(await remove(actuator, { recordedId: created.id, name: 'a', owner })).toEqual({ waitingFor: 'thing id-1 to be deleted', requeueAfterMs: 1_000 });
    actuator.things.delete(created.id);
    expect(await remove(actuator, { recordedId: created.id, name: 'a', owner })).toEqual({ deleted: true });
  });

  it('deletes every owner-tagged copy, not only the recorded one', async () => {
    const actuator = new FakeActuator();
    const recorded = await actuator.create({ name: 'a' }, owner);
    await actuator.create({ name: 'a' }, owner);
    expect(await remove(actuator, { recordedId: recorded.id, name: 'a', owner })).toEqual({ deleted: true });
    expect(actuator.things.size).toBe(0);
  });

  it('rethrows transient errors for backoff', async () => {
    const actuator = new FakeActuator();
    const created = await actuator.create({ name: 'a' }, owner);
    actuator.deleteError = new OpenStackError({ kind: 'Transient', detail: '503 Service Unavailable', service: 'network' });
    await expect(remove(actuator, { recordedId: created.id, name: 'a', owner })).rejects.toBe(actuator.deleteError);
  });
});

describe('classify', () => {
  const table: [OpenStackErrorKind, string][] = [
    ['BadRequest', 'terminal'],
    ['Forbidden', 'terminal'],
    ['Config', 'terminal'],
    ['TLS', 'terminal'],
    ['NotFound', 'terminal'],
    ['Conflict', 'blocked'],
    ['OverQuota', 'blocked'],
    ['Transient', 'transient'],
    ['RateLimited', 'transient'],
    ['Unreachable', 'transient'],
    ['Unauthorized', 'transient'],
    ['Unexpected', 'transient'],
  ];
  it.each(table)('%s is %s', (kind, expected) => {
    expect(classify(new OpenStackError({ kind, detail: kind }))).toBe(expected);
  });

  it('treats TerminalError as terminal and anything else as transient', () => {
    expect(classify(new TerminalError('bad spec'))).toBe('terminal');
    expect(classify(new Error('storage conflict'))).toBe('transient');
  });

  it('passes on Retry-After in milliseconds', () => {
    expect(retryAfterMs(new OpenStackError({ kind: 'RateLimited', detail: '429', retryAfterSeconds: 30 }))).toBe(30_000);
    expect(retryAfterMs(new OpenStackError({ kind: 'Transient', detail: '503' }))).toBeUndefined();
  });
});

describe('tags', () => {
  it('keeps the owner tag within the limit and free of the characters Nova refuses', () => {
    const tag = ownerTag(owner);
    expect(tag).toBe(`capo-apiserver:owner=${owner.uid}`);
    expect(tag.length).toBeLessThanOrEqual(maxTagLength);
    expect(ownerTags(owner).every((t) => !/[,/]/.test(t))).toBe(true);
  });

  it('cuts a long human tag to the limit', () => {
    expect(humanTag(owner)).toBe('capo-apiserver:OpenStackCluster=default.demo');
    const long = humanTag({ ...owner, name: 'x'.repeat(200) });
    expect(long).toHaveLength(maxTagLength);
    expect(long.endsWith('...')).toBe(true);
  });

  it('refuses a uid that cannot form an owner tag', () => {
    expect(() => ownerTag({ ...owner, uid: 'a/b' })).toThrow(TerminalError);
    expect(() => ownerTag({ ...owner, uid: 'u'.repeat(40) })).toThrow(/at most 60 characters/);
  });
});
