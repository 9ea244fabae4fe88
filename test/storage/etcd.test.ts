/**
 * The storage contract on a real etcd (harness/etcd.ts), beside what only etcd does: several
 * stores on one etcd see each other's writes, and a watch whose history is compacted under it ends
 * with TooOldRevisionError.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdStorage } from '../../src/storage/etcd.js';
import { StorageError, TooOldRevisionError } from '../../src/storage/interface.js';
import { etcdUnavailable, startEtcd, type RunningEtcd } from '../../harness/etcd.js';
import { pollUntil } from '../../harness/poll.js';
import { EventRecorder, describeStorageConformance, object } from './conformance.js';

const unavailable = etcdUnavailable();
let etcd: RunningEtcd;

async function compactAll(storage: EtcdStorage): Promise<void> {
  // The first round records the current revision, the second compacts to it (as every replica would, an interval apart).
  await storage.compact();
  await storage.compact();
}

describe.skipIf(unavailable !== undefined)(unavailable === undefined ? 'etcd storage' : `etcd storage (skipped: ${unavailable})`, () => {
  beforeAll(async () => {
    etcd = await startEtcd();
  }, 60_000);

  afterAll(async () => {
    await etcd?.stop();
  });

  describeStorageConformance('etcd', {
    open: ({ onError }) => EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 0, onError }),
    compactAll: (storage) => compactAll(storage as EtcdStorage),
  });

  it("shows one replica's writes to another replica's watch and reads", async () => {
    const [a, b] = await Promise.all([0, 1].map(() => EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 0 })));
    try {
      const after = await b.currentRevision();
      const recorder = new EventRecorder(b, '/replicas/', after);
      const created = await a.create('/replicas/x', object('x'));
      expect((await recorder.until(1))[0]).toMatchObject({ type: 'ADDED', revision: created.modRevision });
      expect(await b.get('/replicas/x')).toEqual(created);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('keeps to its own writes on an etcd shared with another tenant: revisions, lists, watches and compaction', async () => {
    const ours = await EtcdStorage.open({ servers: etcd.servers, prefix: '/tenant-ours', compactionIntervalMs: 0 });
    const theirs = await EtcdStorage.open({ servers: etcd.servers, prefix: '/tenant-theirs', compactionIntervalMs: 0 });
    try {
      const written = await ours.create('/registry/x', object('x'));
      for (let i = 0; i < 3; i++) await theirs.create(`/registry/${i}`, object(`t${i}`));
      // Their writes move etcd's revision, not ours: a list is as of our write, and nothing waits for theirs.
      expect(await ours.currentRevision()).toBe(written.modRevision);
      const listed = await ours.list('');
      expect(listed.revision).toBe(written.modRevision);
      expect(listed.entries.map((entry) => entry.key)).toEqual(['/registry/x']);
      const recorder = new EventRecorder(ours, '', listed.revision);
      const next = await ours.create('/registry/y', object('y'));
      expect((await recorder.until(1)).map((event) => [event.key, event.revision])).toEqual([['/registry/y', next.modRevision]]);
      recorder.watch.stop();
      // Compaction never passes our own revision, so the list a client holds can still be resumed.
      await compactAll(ours);
      expect(await ours.compactedRevision()).toBeLessThanOrEqual(await ours.currentRevision());
      const resumed = new EventRecorder(ours, '', await ours.currentRevision());
      const last = await ours.create('/registry/z', object('z'));
      expect((await resumed.until(1)).map((event) => event.revision)).toEqual([last.modRevision]);
    } finally {
      await Promise.all([ours.close(), theirs.close()]);
    }
  });

  it('ends a watch from history another replica compacted with TooOldRevisionError, which a relist recovers from', async () => {
    const storage = await EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 0 });
    const other = await EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 0 });
    try {
      const start = await storage.currentRevision();
      for (let i = 0; i < 3; i++) await other.create(`/compaction/${i}`, object(`o${i}`));
      await compactAll(other);
      // `storage` has not heard of the compaction: etcd cancels the watch, and it ends with the contract's error.
      const late = new EventRecorder(storage, '/compaction/', start);
      await late.until(Number.POSITIVE_INFINITY);
      expect(late.events).toEqual([]);
      expect(late.error).toBeInstanceOf(TooOldRevisionError);
      // The relist: the current state at one revision, then a watch from it.
      const listed = await other.list('/compaction/');
      expect(listed.entries).toHaveLength(3);
      const resumed = new EventRecorder(other, '/compaction/', listed.revision);
      const next = await other.create('/compaction/3', object('o3'));
      expect((await resumed.until(1)).map((event) => event.revision)).toEqual([next.modRevision]);
    } finally {
      await Promise.all([storage.close(), other.close()]);
    }
  });

  it('catches a watch up over history etcd answers in messages larger than 4 MB', async () => {
    const storage = await EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 0 });
    try {
      const start = await storage.currentRevision();
      const filler = 'x'.repeat(16_000);
      const written: number[] = [];
      for (let i = 0; i < 400; i++) written.push((await storage.create(`/catching-up/${String(i).padStart(3, '0')}`, object(`c${i}`, { filler }))).modRevision);
      // etcd sends a watch from the past up to 1,000 revisions a message: here 6.4 MB, past grpc-js's default limit.
      const recorder = new EventRecorder(storage, '/catching-up/', start);
      expect((await recorder.until(400)).map((event) => event.revision)).toEqual(written);
      expect(recorder.error).toBeUndefined();
    } finally {
      await storage.close();
    }
  }, 60_000);

  it('carries on when etcd restarts under it: writes resume, and a watch continues without losing or repeating an event', async () => {
    const storage = await EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 0 });
    try {
      const before = await storage.create('/restart/before', object('before'));
      const recorder = new EventRecorder(storage, '/restart/', before.modRevision - 1);
      await recorder.until(1);
      await etcd.killMember(0);
      await expect(storage.get('/restart/before')).rejects.toBeInstanceOf(StorageError);
      await etcd.restartMember(0);
      const after = await pollUntil('a write once etcd is back', () => storage.create('/restart/after', object('after')).catch(() => undefined), {
        timeoutMs: 30_000,
        intervalMs: 200,
      });
      const events = await recorder.until(2);
      expect(events.map((event) => [event.key, event.revision])).toEqual([
        ['/restart/before', before.modRevision],
        ['/restart/after', after.modRevision],
      ]);
      expect(recorder.error).toBeUndefined();
    } finally {
      await storage.close();
    }
  }, 60_000);

  it('resumes a watch cut off in the middle of its catch-up after the last event it delivered, skipping none', async () => {
    const storage = await EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 0 });
    try {
      const start = await storage.currentRevision();
      // Far more history than one watch response carries, or gRPC lets etcd send before the client reads.
      const written: number[] = [];
      for (let batch = 0; batch < 30; batch++) {
        const created = await Promise.all(Array.from({ length: 100 }, (_, i) => storage.create(`/catchup/${batch}/${i}`, object(`c${batch}-${i}`))));
        written.push(...created.map((entry) => entry.modRevision));
      }
      let killed: Promise<void> | undefined;
      const recorder = new EventRecorder(storage, '/catchup/', start);
      const firstSeen = recorder.until(1).then(() => {
        // etcd dies as the first response is read: the rest of the catch-up never left it.
        killed = etcd.killMember(0);
      });
      await firstSeen;
      await killed;
      await etcd.restartMember(0);
      const last = await pollUntil('a write once etcd is back', () => storage.create('/catchup/last', object('last')).catch(() => undefined), {
        timeoutMs: 30_000,
        intervalMs: 200,
      });
      // Events arrive in revision order: once the write after the restart is seen, every earlier one was delivered or skipped.
      await pollUntil(
        'the write after the restart to be watched',
        async () => (recorder.events.some((event) => event.revision === last.modRevision) ? true : undefined),
        {
          timeoutMs: 30_000,
          intervalMs: 50,
        },
      );
      expect(recorder.events.map((event) => event.revision)).toEqual([...written.sort((a, b) => a - b), last.modRevision]);
    } finally {
      await storage.close();
    }
  }, 90_000);
});

describe.skipIf(unavailable !== undefined)(
  unavailable === undefined ? 'etcd storage on a three-member cluster' : `etcd storage on a three-member cluster (skipped: ${unavailable})`,
  () => {
    let cluster: RunningEtcd;

    beforeAll(async () => {
      cluster = await startEtcd(3);
    }, 60_000);

    afterAll(async () => {
      await cluster?.stop();
    });

    it('goes on writing when a member dies under write load, losing no acknowledged write', async () => {
      const storage = await EtcdStorage.open({ servers: cluster.servers, compactionIntervalMs: 0 });
      const acknowledged = new Map<string, number>();
      const failures: unknown[] = [];
      let written = 0;
      const writer = async (id: number) => {
        for (let i = 0; i < 150; i++) {
          const key = `/load/${id}/${i}`;
          try {
            acknowledged.set(key, (await storage.create(key, object(key))).modRevision);
          } catch (error) {
            failures.push(error);
          }
          written++;
        }
      };
      try {
        const writers = Promise.all([0, 1, 2, 3].map(writer));
        await pollUntil('writes under way', async () => (written >= 100 ? true : undefined), { timeoutMs: 30_000 });
        await cluster.killMember(0);
        await writers;
        // The client moves to the members that are left: nearly every write lands, and every acknowledged one is there.
        expect(acknowledged.size, `failed writes: ${failures.map(String).join('; ')}`).toBeGreaterThanOrEqual(600 - 8);
        const listed = await storage.list('/load/');
        for (const [key, revision] of acknowledged) expect(listed.entries.find((entry) => entry.key === key)?.modRevision, key).toBe(revision);
        // And a store opened afterwards works on the two members left.
        const later = await EtcdStorage.open({ servers: cluster.servers.slice(1), compactionIntervalMs: 0 });
        expect((await later.list('/load/')).entries).toHaveLength(listed.entries.length);
        await later.close();
      } finally {
        await storage.close();
      }
    }, 120_000);
  },
);
