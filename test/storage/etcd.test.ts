/**
 * The storage contract on a real etcd (harness/etcd.ts), beside what only etcd does: several
 * stores on one etcd see each other's writes, and a watch whose history is compacted under it ends
 * with TooOldRevisionError.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdStorage } from '../../src/storage/etcd.js';
import { TooOldRevisionError } from '../../src/storage/interface.js';
import { etcdUnavailable, startEtcd, type RunningEtcd } from '../../harness/etcd.js';
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

  it('shows one replica\'s writes to another replica\'s watch and reads', async () => {
    const [a, b] = await Promise.all([0, 1].map(() => EtcdStorage.open({ servers: etcd.servers, compactionIntervalMs: 0 })));
    try {
      const after = await b.currentRevision();
      const recorder = new EventRecorder();
      b.watch({ prefix: '/replicas/', afterRevision: after, onEvent: recorder.onEvent });
      const created = await a.create('/replicas/x', object('x'));
      expect((await recorder.until(1))[0]).toMatchObject({ type: 'ADDED', revision: created.modRevision });
      expect(await b.get('/replicas/x')).toEqual(created);
    } finally {
      await Promise.all([a.close(), b.close()]);
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
      const late = new EventRecorder();
      storage.watch({ prefix: '/compaction/', afterRevision: start, onEvent: late.onEvent, onError: late.onError });
      await late.until(Number.POSITIVE_INFINITY);
      expect(late.events).toEqual([]);
      expect(late.error).toBeInstanceOf(TooOldRevisionError);
      // The relist: the current state at one revision, then a watch from it.
      const listed = await other.list('/compaction/');
      expect(listed.entries).toHaveLength(3);
      const resumed = new EventRecorder();
      other.watch({ prefix: '/compaction/', afterRevision: listed.revision, onEvent: resumed.onEvent, onError: resumed.onError });
      const next = await other.create('/compaction/3', object('o3'));
      expect((await resumed.until(1)).map((event) => event.revision)).toEqual([next.modRevision]);
    } finally {
      await Promise.all([storage.close(), other.close()]);
    }
  });
});
