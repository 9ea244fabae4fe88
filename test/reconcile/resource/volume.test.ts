/**
 * The volume actuator driven by the engine against the OpenStack simulator
 * through a real session. Ownership lives in Cinder metadata, so adoption
 * and removal are checked against same-named volumes without it.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Volume } from '../../../src/openstack/index.js';
import { TerminalError } from '../../../src/reconcile/runtime/controller.js';
import { ensure, remove, ResourceTerminalError } from '../../../src/reconcile/resource/engine.js';
import { ownerMetadata, ownerMetadataKey, ownerObjectMetadataKey, volumeActuator, type VolumeDesired } from '../../../src/reconcile/resource/volume.js';
import { pollUntil } from '../../../harness/poll.js';
import { newOwner, seededImageId, SimulatedCompute } from './simulated-compute.js';

const bench = SimulatedCompute.forThisFile();
/** A cloud whose asynchronous transitions never finish within a test, to catch a volume mid-create. */
const frozen = SimulatedCompute.forThisFile({ transitionDelayMs: 600_000 });
let imageId: string;

beforeAll(async () => {
  imageId = await seededImageId(bench.clients);
  bench.forget();
});

const volumes = () => volumeActuator(bench.clients.cinder);
const desiredVolume = (extra: Partial<VolumeDesired> = {}): VolumeDesired => ({ name: `worker-${randomUUID().slice(0, 8)}-root`, size: 1, ...extra });
const volumeCount = () => bench.sim.inventory()['block-storage']?.volumes ?? 0;

describe('ensure a volume', () => {
  it('creates it with the owner in its metadata, records it at once, and waits until it is available', async () => {
    const owner = newOwner();
    const desired = desiredVolume({ imageRef: imageId, description: 'root disk', metadata: { role: 'root' } });
    const before = volumeCount();

    const first = await ensure(volumes(), { recordedId: undefined, desired, owner, record: bench.record });
    const id = first.resource.id;
    expect(first).toMatchObject({ ready: false, found: 'created', waitingFor: `volume ${id} to become available (now creating)`, requeueAfterMs: 5_000 });
    // One adoption list by name and owner metadata, the POST carrying the owner, then the record.
    const query = new URLSearchParams({ name: desired.name, metadata: JSON.stringify({ [ownerMetadataKey]: owner.uid }) }).toString();
    expect(bench.trace()).toEqual([`GET /volumes/detail?${query}`, 'POST /volumes', `record ${id}`]);

    const ready = await bench.ensureReady(volumes(), desired, owner, id);
    expect(ready).toMatchObject({ ready: true, found: 'recorded' });
    expect(ready.resource.metadata).toEqual({ role: 'root', [ownerMetadataKey]: owner.uid, [ownerObjectMetadataKey]: 'OpenStackMachine default/worker-0' });
    expect(volumes().describe(ready.resource)).toEqual({
      id,
      name: desired.name,
      status: 'available',
      size: 1,
      volume_type: '__DEFAULT__',
      availability_zone: 'nova',
      bootable: 'true',
      attached_to: [],
    });
    expect(volumeCount()).toBe(before + 1);
    await bench.removeAll(volumes(), desired.name, owner, id);
    expect(volumeCount()).toBe(before);
  });

  it('adopts only a same-named volume with the owner in its metadata; removal leaves the others', async () => {
    const owner = newOwner();
    const desired = desiredVolume();
    const users = await bench.clients.cinder.createVolume({ name: desired.name, size: 1 });
    const theirs = await volumes().create(desired, newOwner());
    const ours = await volumes().create(desired, owner);
    bench.forget();

    const adopted = await ensure(volumes(), { recordedId: undefined, desired, owner, record: bench.record });
    expect(adopted).toMatchObject({ found: 'adopted', resource: { id: ours.id } });
    expect(bench.requests('POST')).toEqual([]);
    expect(bench.events).toContain(`record ${ours.id}`);

    await bench.removeAll(volumes(), desired.name, owner);
    expect((await bench.clients.cinder.listVolumes({ name: desired.name })).map((volume) => volume.id).sort()).toEqual([users.id, theirs.id].sort());
  });

  it('replaces a recorded volume that is gone by default, and refuses to when told to fail', async () => {
    const owner = newOwner();
    const desired = desiredVolume();
    const lost = (await bench.ensureReady(volumes(), desired, owner)).resource;
    await bench.removeAll(volumes(), desired.name, owner, lost.id);

    const refused = await ensure(volumes(), { recordedId: lost.id, desired, owner, record: bench.record, ifGone: 'fail' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ResourceTerminalError);
    expect(refused).toMatchObject({ reason: 'Gone', ids: [lost.id] });

    const replaced = await ensure(volumes(), { recordedId: lost.id, desired, owner, record: bench.record });
    expect(replaced).toMatchObject({ found: 'created', goneId: lost.id });
    await bench.removeAll(volumes(), desired.name, owner, replaced.resource.id);
  });

  it('refuses an owner whose uid cannot mark ownership, before sending anything', async () => {
    const owner = { ...newOwner(), uid: '' };
    const error = await ensure(volumes(), { recordedId: undefined, desired: desiredVolume(), owner, record: bench.record }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TerminalError);
    expect((error as Error).message).toMatch(/uid "" cannot mark volume ownership/);
    expect(() => ownerMetadata(owner)).toThrow(TerminalError);
    expect(bench.trace()).toEqual([]);
  });
});

describe('remove a volume', () => {
  it('reports the server a volume is attached to, and deletes it once detached', async () => {
    const { nova, cinder } = bench.clients;
    const owner = newOwner();
    const desired = desiredVolume();
    const volume = (await bench.ensureReady(volumes(), desired, owner)).resource;
    const holder = await nova.createServer({ name: 'holder', flavorRef: '1', imageRef: imageId, networks: 'none' });
    await pollUntil('the server ACTIVE', async () => ((await nova.getServer(holder.id)).status === 'ACTIVE' ? true : undefined), {
      timeoutMs: 15_000,
      intervalMs: 10,
    });
    await nova.attachVolume(holder.id, { volumeId: volume.id });
    await pollUntil('the volume in-use', async () => ((await cinder.getVolume(volume.id)).status === 'in-use' ? true : undefined), {
      timeoutMs: 15_000,
      intervalMs: 10,
    });

    const blocked = await remove(volumes(), { recordedId: volume.id, name: desired.name, owner });
    expect(blocked).toMatchObject({ requeueAfterMs: 15_000 });
    expect('blockedBy' in blocked && blocked.blockedBy).toMatch(
      new RegExp(
        `^volume ${volume.id} cannot be deleted yet \\(badRequest: Invalid volume: .*must not be migrating, attached.*\\); held by server ${holder.id} at /dev/vdb$`,
      ),
    );

    await nova.detachVolume(holder.id, volume.id);
    bench.forget();
    const outcomes = await bench.removeAll(volumes(), desired.name, owner, volume.id);
    // Passes that find Cinder still detaching send nothing (a DELETE would be refused); then one DELETE, waited on until the volume is gone.
    expect(outcomes).toContainEqual({ waitingFor: `volume ${volume.id} to be deleted`, requeueAfterMs: 5_000 });
    expect(outcomes.at(-1)).toEqual({ deleted: true });
    expect(bench.requests(`DELETE /volumes/${volume.id}`)).toHaveLength(1);
    await nova.deleteServer(holder.id);
  });

  it('waits for a volume still being created instead of sending a DELETE Cinder would refuse', async () => {
    const creatingVolumes = volumeActuator(frozen.clients.cinder);
    const owner = newOwner();
    const desired = desiredVolume();
    const creating = await creatingVolumes.create(desired, owner);
    frozen.forget();

    const outcome = await remove(creatingVolumes, { recordedId: creating.id, name: desired.name, owner });
    expect(outcome).toEqual({ waitingFor: `volume ${creating.id} to settle before it is deleted (now creating)`, requeueAfterMs: 5_000 });
    expect(frozen.requests('DELETE')).toEqual([]);
  });
});

describe('volume readiness', () => {
  it('is ready when available or in use, failed in any error status, and waiting otherwise', () => {
    const withStatus = (status: string): Volume => ({ id: 'v1', name: 'v', status, size: 1, metadata: {}, attachments: [] });
    for (const status of ['available', 'in-use']) expect(volumes().readiness(withStatus(status))).toEqual({ ready: true });
    for (const status of ['error', 'error_deleting', 'error_extending'])
      expect(volumes().readiness(withStatus(status))).toEqual({ failed: `Cinder reports status ${status}` });
    for (const status of ['creating', 'downloading', 'reserved', 'detaching']) {
      expect(volumes().readiness(withStatus(status))).toEqual({ waitingFor: `volume v1 to become available (now ${status})`, requeueAfterMs: 5_000 });
    }
  });
});
