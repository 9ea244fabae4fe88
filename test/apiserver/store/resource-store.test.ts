/**
 * ResourceStore through its public methods on a real SQLite storage, with the test widget kind:
 * what the server sets on create, optimistic concurrency, generation, the status subresource,
 * two-phase deletion, dry runs, selectors with pagination, and the errors each refusal carries.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { UserInfo } from '../../../src/apiserver/auth/user.js';
import { ApiError } from '../../../src/apiserver/errors.js';
import { ResourceStore, type WriteOptions } from '../../../src/apiserver/store/resource-store.js';
import { parseFieldSelector } from '../../../src/apiserver/selectors/fields.js';
import { parseLabelSelector } from '../../../src/apiserver/selectors/labels.js';
import type { Entry, JsonObject, Storage } from '../../../src/storage/interface.js';
import { deepFreeze } from '../../../src/storage/values.js';
import { SqliteStorage } from '../../../src/storage/sqlite.js';
import { widgetKind } from '../../../harness/widget-kind.js';

const v1 = widgetKind.versions.find((version) => version.name === 'v1')!;
const user: UserInfo = { name: 'alice', groups: ['system:authenticated'] };
const write: WriteOptions = { dryRun: false, fieldManager: 'test', fieldValidation: 'Strict', user };
const remove = { dryRun: false, user };

let storage: SqliteStorage;
let store: ResourceStore;

beforeEach(() => {
  storage = SqliteStorage.open(':memory:');
  store = new ResourceStore(widgetKind, storage);
});

afterEach(async () => {
  await storage.close();
});

function widget(name: string, spec: JsonObject = { color: 'red' }, metadata: JsonObject = {}): JsonObject {
  return { apiVersion: 'testing.capo.dev/v1', kind: 'Widget', metadata: { name, ...metadata }, spec };
}

async function create(name: string, spec?: JsonObject, metadata?: JsonObject): Promise<JsonObject> {
  return (await store.create('default', widget(name, spec, metadata), v1, write)).object;
}

const meta = (object: JsonObject) => object.metadata as Record<string, any>;

/** The Status a refused call carries. */
async function refusal(call: Promise<unknown>): Promise<{ code: number; reason: string; message: string; details?: any }> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return error.toStatus() as never;
}

describe('create', () => {
  it('sets uid, creationTimestamp, generation 1, a resourceVersion, defaults and managedFields', async () => {
    const created = await create('first');
    expect(meta(created)).toMatchObject({ name: 'first', namespace: 'default', generation: 1 });
    expect(meta(created).uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(meta(created).creationTimestamp)).not.toBeNaN();
    expect(Number(meta(created).resourceVersion)).toBeGreaterThan(0);
    expect(created.spec).toEqual({ color: 'red', replicas: 1 });
    expect(meta(created).managedFields).toEqual([expect.objectContaining({ manager: 'test', operation: 'Update', apiVersion: 'testing.capo.dev/v1' })]);
    expect(await store.get('default', 'first', v1)).toEqual(created);
  });

  it('completes generateName with a random suffix', async () => {
    const created = (await store.create('default', widget('', undefined, { generateName: 'gen-' }), v1, write)).object;
    expect(meta(created).name).toMatch(/^gen-[a-z0-9]{5}$/);
  });

  it('refuses a name taken (409 AlreadyExists) and a resourceVersion on create (400)', async () => {
    await create('taken');
    expect(await refusal(store.create('default', widget('taken'), v1, write))).toMatchObject({ code: 409, reason: 'AlreadyExists' });
    expect(await refusal(store.create('default', widget('rv', undefined, { resourceVersion: '5' }), v1, write))).toMatchObject({ code: 400 });
  });

  it('stores nothing on a dry run', async () => {
    const dry = (await store.create('default', widget('dry'), v1, { ...write, dryRun: true })).object;
    expect(meta(dry).name).toBe('dry');
    expect(await refusal(store.get('default', 'dry', v1))).toMatchObject({ code: 404, reason: 'NotFound' });
  });
});

describe('update', () => {
  it('refuses a stale resourceVersion with 409 Conflict', async () => {
    const created = await create('contended');
    const first = { ...created, spec: { color: 'green', replicas: 1 } };
    await store.replace('default', 'contended', first, v1, undefined, write);
    const stale = { ...created, spec: { color: 'blue', replicas: 1 } };
    const status = await refusal(store.replace('default', 'contended', stale, v1, undefined, write));
    expect(status).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(status.message).toContain('the object has been modified');
    expect((await store.get('default', 'contended', v1)).spec).toMatchObject({ color: 'green' });
  });

  it('bumps generation for spec changes only', async () => {
    const created = await create('generations');
    const labelled = (
      await store.patch('default', 'generations', (current) => ({ ...current!, metadata: { ...meta(current!), labels: { a: 'b' } } }), v1, undefined, write)
    ).object;
    expect(meta(labelled).generation).toBe(1);
    const changed = (await store.patch('default', 'generations', (current) => ({ ...current!, spec: { color: 'blue', replicas: 2 } }), v1, undefined, write))
      .object;
    expect(meta(changed).generation).toBe(2);
    expect(Number(meta(changed).resourceVersion)).toBeGreaterThan(Number(meta(created).resourceVersion));
  });

  it('keeps spec and status apart: the status subresource writes only status, the main resource never status', async () => {
    await create('split');
    const viaStatus = (
      await store.patch('default', 'split', (current) => ({ ...current!, spec: { color: 'blue', replicas: 9 }, status: { ready: true } }), v1, 'status', write)
    ).object;
    expect(viaStatus.spec).toEqual({ color: 'red', replicas: 1 });
    expect(viaStatus.status).toEqual({ ready: true });
    expect(meta(viaStatus).generation).toBe(1);
    const viaMain = (await store.patch('default', 'split', (current) => ({ ...current!, status: { ready: false } }), v1, undefined, write)).object;
    expect(viaMain.status).toEqual({ ready: true });
  });

  it('answers 404 for an object that does not exist', async () => {
    expect(await refusal(store.patch('default', 'ghost', (current) => current!, v1, undefined, write))).toMatchObject({ code: 404, reason: 'NotFound' });
  });
});

describe('delete', () => {
  it('deletes at once without finalizers', async () => {
    await create('plain');
    expect((await store.delete('default', 'plain', v1, remove)).deleted).toBe(true);
    expect(await refusal(store.get('default', 'plain', v1))).toMatchObject({ code: 404 });
  });

  it('marks an object with finalizers terminating, then removes it when the last finalizer goes', async () => {
    await create('held', undefined, { finalizers: ['testing.capo.dev/hold'] });
    const first = await store.delete('default', 'held', v1, remove);
    expect(first.deleted).toBe(false);
    expect(meta(first.object).deletionTimestamp).toBeDefined();
    expect(meta(first.object).generation).toBe(2);
    // Deleting again changes nothing while the finalizer is there.
    expect((await store.delete('default', 'held', v1, remove)).object).toEqual(first.object);
    const added = await refusal(
      store.patch(
        'default',
        'held',
        (current) => ({ ...current!, metadata: { ...meta(current!), finalizers: ['testing.capo.dev/hold', 'testing.capo.dev/new'] } }),
        v1,
        undefined,
        write,
      ),
    );
    expect(added.code).toBe(422);
    await store.patch('default', 'held', (current) => ({ ...current!, metadata: { ...meta(current!), finalizers: [] } }), v1, undefined, write);
    expect(await refusal(store.get('default', 'held', v1))).toMatchObject({ code: 404 });
  });

  it('checks preconditions and keeps the object on a dry run', async () => {
    const created = await create('guarded');
    expect(await refusal(store.delete('default', 'guarded', v1, { ...remove, preconditions: { uid: 'another-uid' } }))).toMatchObject({
      code: 409,
      reason: 'Conflict',
    });
    expect((await store.delete('default', 'guarded', v1, { ...remove, dryRun: true, preconditions: { uid: meta(created).uid } })).deleted).toBe(true);
    expect(meta(await store.get('default', 'guarded', v1)).uid).toBe(meta(created).uid);
  });
});

describe('the fence', () => {
  it('is passed before every write reaches storage, and a refusing one writes nothing (a reconciler that lost its lease)', async () => {
    let passed = 0;
    let refusing = false;
    const fence = () => {
      passed++;
      if (refusing) throw new Error('not the leader');
    };
    const fenced = { ...write, fence };
    await store.create('default', widget('fenced'), v1, fenced);
    await store.create('default', widget('other'), v1, fenced);
    await store.patch('default', 'fenced', (current) => ({ ...current, spec: { color: 'blue' } }), v1, undefined, fenced);
    await store.patch(
      'default',
      'fenced',
      (current) => ({ ...current, metadata: { ...meta(current), finalizers: ['testing.capo.dev/hold'] } }),
      v1,
      undefined,
      fenced,
    );
    await store.delete('default', 'fenced', v1, { ...remove, fence });
    // Dry runs write nothing, so they pass no fence.
    await store.create('default', widget('dry'), v1, { ...fenced, dryRun: true });
    expect(passed).toBe(5);

    refusing = true;
    const before = await storage.currentRevision();
    await expect(
      store.patch('default', 'fenced', (current) => ({ ...current, metadata: { ...meta(current), finalizers: [] } }), v1, undefined, fenced),
    ).rejects.toThrow('not the leader');
    await expect(store.delete('default', 'other', v1, { ...remove, fence })).rejects.toThrow('not the leader');
    await expect(store.create('default', widget('refused'), v1, fenced)).rejects.toThrow('not the leader');
    expect(await storage.currentRevision()).toBe(before);
  });
});

describe('list', () => {
  beforeEach(async () => {
    for (const [name, color, tier] of [
      ['a', 'red', 'front'],
      ['b', 'green', 'back'],
      ['c', 'red', 'back'],
      ['d', 'blue', 'front'],
      ['e', 'red', 'front'],
    ] as const) {
      await create(name, { color }, { labels: { tier } });
    }
  });

  const names = (items: JsonObject[]) => items.map((item) => meta(item).name);

  it('selects by label and by field', async () => {
    expect(names((await store.list('default', v1, { labelSelector: parseLabelSelector('tier=front') })).items)).toEqual(['a', 'd', 'e']);
    expect(names((await store.list('default', v1, { fieldSelector: parseFieldSelector('metadata.name!=a') })).items)).toEqual(['b', 'c', 'd', 'e']);
    expect((await store.list('other', v1, {})).items).toEqual([]);
  });

  it('pages with limit and continue, at one resourceVersion, skipping what the selector leaves out', async () => {
    const labelSelector = parseLabelSelector('tier=front');
    const first = await store.list('default', v1, { labelSelector, limit: 2 });
    expect(names(first.items)).toEqual(['a', 'd']);
    expect(first.continueToken).toBeDefined();
    await create('f', { color: 'red' }, { labels: { tier: 'front' } });
    const second = await store.list('default', v1, { labelSelector, limit: 2, continueToken: first.continueToken });
    // The second page is read at the first page's revision: f, created in between, is not in it.
    expect(names(second.items)).toEqual(['e']);
    expect(second.continueToken).toBeUndefined();
    expect(second.resourceVersion).toBe(first.resourceVersion);
  });

  it('refuses a continue token that was not made by the store', async () => {
    expect(await refusal(store.list('default', v1, { limit: 1, continueToken: 'not-a-token' }))).toMatchObject({ code: 400 });
  });
});

describe('writes that start from a watch cache copy', () => {
  /** The store seen through a cache whose copy of each key is what `copies` says (a test sets it behind the store). */
  function cachedStore(copies: Map<string, Entry>): { store: ResourceStore; reads: () => number } {
    let reads = 0;
    const cached = new Proxy(storage, {
      get(target, property) {
        if (property === 'peek') return (key: string) => copies.get(key);
        if (property === 'get') {
          return (key: string) => {
            reads++;
            return target.get(key);
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Storage;
    return { store: new ResourceStore(widgetKind, cached), reads: () => reads };
  }
  const key = (name: string) => store.key('default', name);
  const copyOf = async (name: string) => deepFreeze((await storage.get(key(name)))!);

  it('writes from a current copy without reading the store', async () => {
    await create('current');
    const copies = new Map([[key('current'), await copyOf('current')]]);
    const cached = cachedStore(copies);
    const patched = await cached.store.patch('default', 'current', (live) => ({ ...live!, spec: { color: 'blue', replicas: 1 } }), v1, undefined, write);
    expect(patched.object.spec).toEqual({ color: 'blue', replicas: 1 });
    expect(cached.reads()).toBe(0);
  });

  it('loses no newer write when the copy is behind: the compare-and-swap fails and the patch runs again on a fresh read', async () => {
    await create('behind');
    const copies = new Map([[key('behind'), await copyOf('behind')]]);
    await store.patch(
      'default',
      'behind',
      (live) => ({ ...live!, spec: { color: 'green', replicas: 1 }, metadata: { ...meta(live!), labels: { newer: 'yes' } } }),
      v1,
      undefined,
      write,
    );
    const cached = cachedStore(copies);
    const patched = await cached.store.patch(
      'default',
      'behind',
      (live) => ({ ...live!, spec: { ...(live!.spec as JsonObject), replicas: 3 } }),
      v1,
      undefined,
      write,
    );
    expect(patched.object.spec).toEqual({ color: 'green', replicas: 3 });
    expect(meta(patched.object).labels).toEqual({ newer: 'yes' });
  });

  it('accepts the resourceVersion a client read from the store, newer than the copy', async () => {
    const created = await create('pinned');
    const copies = new Map([[key('pinned'), await copyOf('pinned')]]);
    const latest = (await store.replace('default', 'pinned', { ...created, spec: { color: 'green', replicas: 1 } }, v1, undefined, write)).object;
    const cached = cachedStore(copies);
    const replaced = await cached.store.replace('default', 'pinned', { ...latest, spec: { color: 'blue', replicas: 1 } }, v1, undefined, write);
    expect(replaced.object.spec).toEqual({ color: 'blue', replicas: 1 });
    // A resourceVersion that is really stale is still refused.
    expect(await refusal(cached.store.replace('default', 'pinned', { ...latest, spec: { color: 'red', replicas: 1 } }, v1, undefined, write))).toMatchObject({
      code: 409,
    });
  });

  it("changes neither the cache's frozen values nor the caller's object, whatever the write", async () => {
    await create('shared', { color: 'red' }, { labels: { team: 'a' } });
    const copies = new Map<string, Entry>();
    // Every read frozen, as the cache hands them out: a write that changed one would throw, and retry in vain.
    const frozen = new Proxy(storage, {
      get(target, property) {
        if (property === 'peek') return (key: string) => copies.get(key);
        if (property === 'get') return async (key: string) => deepFreeze(await target.get(key));
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Storage;
    const cached = new ResourceStore(widgetKind, frozen);
    // The patches share what they keep of the current object with it, as a merge patch's result need not.
    const writes: [string, (latest: JsonObject) => JsonObject, (body: JsonObject) => Promise<unknown>][] = [
      ['status patch', () => ({}), () => cached.patch('default', 'shared', (live) => ({ ...live, status: { ready: true } }), v1, 'status', write)],
      [
        'main patch',
        () => ({}),
        () => cached.patch('default', 'shared', (live) => ({ ...live, metadata: { ...meta(live), labels: { team: 'b' } } }), v1, undefined, write),
      ],
      ['put', (latest) => ({ ...latest, spec: { color: 'blue' } }), (body) => cached.replace('default', 'shared', body, v1, undefined, write)],
      ['status put', (latest) => ({ ...latest, status: { ready: false } }), (body) => cached.replace('default', 'shared', body, v1, 'status', write)],
      ['apply', () => widget('shared', { color: 'green' }), (body) => cached.apply('default', 'shared', body, v1, undefined, { ...write, force: true })],
      ['delete with a finalizer', () => ({}), () => cached.delete('default', 'shared', v1, remove)],
    ];
    await store.patch('default', 'shared', (live) => ({ ...live, metadata: { ...meta(live), finalizers: ['test/keep'] } }), v1, undefined, write);
    for (const [what, bodyOf, run] of writes) {
      // Each write starts from a current frozen copy, as from the watch cache's.
      const copy = await copyOf('shared');
      const asCopied = structuredClone(copy);
      copies.set(key('shared'), copy);
      const body = bodyOf(await store.get('default', 'shared', v1));
      const sent = structuredClone(body);
      await run(body);
      expect(body, what).toEqual(sent);
      expect(copy, what).toEqual(asCopied);
    }
    const written = await store.get('default', 'shared', v1);
    expect([written.spec, written.status, meta(written).labels]).toEqual([{ color: 'green', replicas: 1 }, { ready: false }, { team: 'b' }]);
    expect(meta(written).deletionTimestamp).toBeDefined();
  });

  it('decides a write that changes nothing against the copy on the stored object instead', async () => {
    await create('noop');
    const copies = new Map([[key('noop'), await copyOf('noop')]]);
    const latest = (await store.patch('default', 'noop', (live) => ({ ...live!, spec: { color: 'blue', replicas: 1 } }), v1, undefined, write)).object;
    const cached = cachedStore(copies);
    // Red is what the copy holds, so against it this is a no-op; against the store it turns blue back to red.
    const answered = await cached.store.patch(
      'default',
      'noop',
      (live) => ({ ...live!, spec: { ...(live!.spec as JsonObject), color: 'red' } }),
      v1,
      undefined,
      write,
    );
    expect(answered.object.spec).toEqual({ color: 'red', replicas: 1 });
    expect(Number(meta(answered.object).resourceVersion)).toBeGreaterThan(Number(meta(latest).resourceVersion));
    expect((await store.get('default', 'noop', v1)).spec).toEqual({ color: 'red', replicas: 1 });
  });
});
