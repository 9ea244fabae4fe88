import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorContext } from '../../src/simulator/framework.js';
import { startSimulator, type Simulator } from '../../src/simulator/host.js';
import { createCinderSimulator } from '../../src/simulator/cinder/index.js';
import { createGlanceSimulator } from '../../src/simulator/glance/index.js';
import { call, endpoint, login, start, waitFor, type Session } from './helpers.js';

let sim: Simulator;
let demo: Session;
let volumes: string;
beforeAll(async () => {
  sim = await start();
  demo = await login(sim);
  volumes = `${endpoint(demo, 'block-storage')}/volumes`;
});
afterAll(async () => {
  await sim.close();
});

const statusOf = async (id: string) => (await call(demo, 'GET', `${volumes}/${id}`)).body?.volume?.status as string | undefined;

describe('cinder', () => {
  it('creates a volume that goes from creating to available', async () => {
    const res = await call(demo, 'POST', volumes, { volume: { size: 1, name: 'v1', metadata: { role: 'etcd' } } });
    expect(res.status).toBe(202);
    expect(res.body.volume).toMatchObject({
      name: 'v1',
      size: 1,
      status: 'creating',
      bootable: 'false',
      availability_zone: 'nova',
      volume_type: '__DEFAULT__',
      metadata: { role: 'etcd' },
      attachments: [],
    });
    // As in real Zed, the tenant attribute appears on GET, not in the create response.
    expect(res.body.volume).not.toHaveProperty('os-vol-tenant-attr:tenant_id');
    expect(res.body.volume.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
    await waitFor(async () => ((await statusOf(res.body.volume.id)) === 'available' ? true : undefined));

    const detail = await call(demo, 'GET', `${volumes}/detail?metadata=${encodeURIComponent(JSON.stringify({ role: 'etcd' }))}`);
    expect(detail.body.volumes.map((v: { id: string }) => v.id)).toEqual([res.body.volume.id]);
    expect((await call(demo, 'GET', `${volumes}/detail?name=v1&status=available`)).body.volumes).toHaveLength(1);
    expect((await call(demo, 'GET', `${volumes}/detail?status=creating`)).body.volumes).toHaveLength(0);
    const summary = await call(demo, 'GET', volumes);
    expect(Object.keys(summary.body.volumes[0]).sort()).toEqual(['id', 'links', 'name']);

    expect((await call(demo, 'DELETE', `${volumes}/${res.body.volume.id}`)).status).toBe(202);
    expect(await statusOf(res.body.volume.id)).toBe('deleting');
    await waitFor(async () => ((await call(demo, 'GET', `${volumes}/${res.body.volume.id}`)).status === 404 ? true : undefined));
    const gone = await call(demo, 'GET', `${volumes}/${res.body.volume.id}`);
    expect(gone.body).toEqual({ itemNotFound: { code: 404, message: `Volume ${res.body.volume.id} could not be found.` } });
    expect(sim.inventory()['block-storage']?.volumes).toBe(0);
  });

  it('makes volumes from images bootable and refuses unknown images', async () => {
    const image = (await call(demo, 'GET', `${endpoint(demo, 'image')}/v2/images?name=ubuntu-22.04`)).body.images[0];
    const res = await call(demo, 'POST', volumes, { volume: { size: 1, imageRef: image.id } });
    expect(res.body.volume.bootable).toBe('true');
    expect(res.body.volume.volume_image_metadata).toMatchObject({ image_id: image.id, image_name: 'ubuntu-22.04' });
    const bad = await call(demo, 'POST', volumes, { volume: { size: 1, imageRef: '00000000-0000-0000-0000-000000000000' } });
    expect(bad.status).toBe(400);
    expect(bad.body.badRequest.message).toMatch(/Invalid image identifier/);
    await waitFor(async () => ((await statusOf(res.body.volume.id)) === 'available' ? true : undefined));
    await call(demo, 'DELETE', `${volumes}/${res.body.volume.id}`);
  });

  it('refuses to delete an in-use volume and detaches through the peer', async () => {
    // Nova's side of attach, without Nova: the peer Cinder installs for it.
    let context: SimulatorContext | undefined;
    const local = await startSimulator({
      transitionDelayMs: 30,
      services: [
        createGlanceSimulator,
        (ctx) => {
          context = ctx;
          return createCinderSimulator(ctx);
        },
      ],
    });
    const peers = context!.peers;
    try {
      const session = await login(local);
      const url = `${endpoint(session, 'block-storage')}/volumes`;
      const created = await call(session, 'POST', url, { volume: { size: 2, name: 'data' } });
      const id = created.body.volume.id as string;
      expect(() => peers.blockStorage!.attachVolume(id, { serverId: 'srv' })).toThrow(/status must be available/);
      await waitFor(async () => ((await call(session, 'GET', `${url}/${id}`)).body.volume.status === 'available' ? true : undefined));
      peers.blockStorage!.attachVolume(id, { serverId: 'srv', device: '/dev/vdb' });
      expect(peers.blockStorage!.getVolume(id)?.status).toBe('reserved');
      const inUse = await waitFor(async () => {
        const v = (await call(session, 'GET', `${url}/${id}`)).body.volume;
        return v.status === 'in-use' ? v : undefined;
      });
      expect(inUse.attachments).toEqual([expect.objectContaining({ server_id: 'srv', volume_id: id, device: '/dev/vdb', attachment_id: expect.any(String) })]);
      const refused = await call(session, 'DELETE', `${url}/${id}`);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        badRequest: {
          code: 400,
          message:
            'Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.',
        },
      });
      peers.blockStorage!.detachVolume(id, 'srv');
      expect(peers.blockStorage!.getVolume(id)?.status).toBe('detaching');
      await waitFor(async () => ((await call(session, 'GET', `${url}/${id}`)).body.volume.status === 'available' ? true : undefined));
      expect((await call(session, 'DELETE', `${url}/${id}`)).status).toBe(202);
    } finally {
      await local.close();
    }
  });

  it('enforces volume and gigabyte quotas with 413 overLimit', async () => {
    const admin = await login(sim, 'admin');
    const adminVolumes = `${endpoint(admin, 'block-storage')}/volumes`;
    sim.setQuota('admin', 'volumes', 1);
    sim.setQuota(admin.projectId, 'gigabytes', 5);
    const big = await call(admin, 'POST', adminVolumes, { volume: { size: 6 } });
    expect(big.status).toBe(413);
    expect(big.body.overLimit.message).toBe(
      'Requested volume or snapshot exceeds allowed gigabytes quota. Requested 6G, quota is 5G and 0G has been consumed.',
    );
    const first = await call(admin, 'POST', adminVolumes, { volume: { size: 1 } });
    expect(first.status).toBe(202);
    const second = await call(admin, 'POST', adminVolumes, { volume: { size: 1 } });
    expect(second.status).toBe(413);
    expect(second.body).toEqual({ overLimit: { code: 413, message: "Maximum number of volumes allowed (1) exceeded for quota 'volumes'." } });
    const quota = await call(admin, 'GET', `${endpoint(admin, 'block-storage')}/os-quota-sets/${admin.projectId}?usage=True`);
    expect(quota.body.quota_set.volumes).toEqual({ limit: 1, in_use: 1, reserved: 0, allocated: 0 });
    const demoQuota = await call(demo, 'GET', `${endpoint(demo, 'block-storage')}/os-quota-sets/${demo.projectId}`);
    expect(demoQuota.body.quota_set).toMatchObject({ volumes: 100, gigabytes: 10000, per_volume_gigabytes: -1 });
    expect((await call(demo, 'GET', `${endpoint(demo, 'block-storage')}/os-quota-sets/${admin.projectId}`)).status).toBe(403);
    await waitFor(async () => ((await call(admin, 'GET', `${adminVolumes}/${first.body.volume.id}`)).body.volume.status === 'available' ? true : undefined));
    await call(admin, 'DELETE', `${adminVolumes}/${first.body.volume.id}`);
  });

  it('negotiates microversions', async () => {
    const none = await call(demo, 'GET', `${volumes}/detail`);
    expect(none.headers.get('openstack-api-version')).toBe('volume 3.0');
    const v = await call(demo, 'GET', `${volumes}/detail`, undefined, { 'OpenStack-API-Version': 'volume 3.59' });
    expect(v.status).toBe(200);
    expect(v.headers.get('openstack-api-version')).toBe('volume 3.59');
    expect(v.headers.get('vary')).toContain('OpenStack-API-Version');
    const latest = await call(demo, 'GET', `${volumes}/detail`, undefined, { 'OpenStack-API-Version': 'volume latest' });
    expect(latest.headers.get('openstack-api-version')).toBe('volume 3.70');
    const tooHigh = await call(demo, 'GET', `${volumes}/detail`, undefined, { 'OpenStack-API-Version': 'volume 3.71' });
    expect(tooHigh.status).toBe(406);
    expect(tooHigh.body).toEqual({ computeFault: { code: 406, message: 'Version 3.71 is not supported by the API. Minimum is 3.0 and maximum is 3.70.' } });
    const bad = await call(demo, 'GET', `${volumes}/detail`, undefined, { 'OpenStack-API-Version': 'volume x' });
    expect(bad.status).toBe(400);
    const created = await call(demo, 'POST', volumes, { volume: { size: 1 } }, { 'OpenStack-API-Version': 'volume 3.65' });
    expect(created.body.volume).toMatchObject({ consumes_quota: true, volume_type_id: expect.any(String), group_id: null });
    const old = await call(demo, 'GET', `${volumes}/${created.body.volume.id}`);
    expect(old.body.volume.consumes_quota).toBeUndefined();
    const count = await call(demo, 'GET', `${volumes}/detail?with_count=true`, undefined, { 'OpenStack-API-Version': 'volume 3.45' });
    expect(count.body.count).toBe(1);
    await waitFor(async () => ((await statusOf(created.body.volume.id)) === 'available' ? true : undefined));
    await call(demo, 'DELETE', `${volumes}/${created.body.volume.id}`);
  });

  it('serves types, availability zones, limits and version documents', async () => {
    const base = endpoint(demo, 'block-storage');
    expect((await call(demo, 'GET', `${base}/types`)).body.volume_types.map((t: { name: string }) => t.name)).toEqual(['__DEFAULT__']);
    expect((await call(demo, 'GET', `${base}/types/default`)).body.volume_type.name).toBe('__DEFAULT__');
    expect((await call(demo, 'GET', `${base}/os-availability-zone`)).body).toEqual({
      availabilityZoneInfo: [{ zoneName: 'nova', zoneState: { available: true } }],
    });
    expect((await call(demo, 'GET', `${base}/limits`)).body.limits.absolute.maxTotalVolumes).toBe(100);
    const other = await call(demo, 'GET', `${sim.url}/volume/v3/someone-else/volumes`);
    expect(other.status).toBe(400);
    const root = await fetch(`${sim.url}/volume/`);
    expect(root.status).toBe(300);
    const body = (await root.json()) as { versions: { id: string; version: string; min_version: string }[] };
    expect(body.versions[0]).toMatchObject({ id: 'v3.0', version: '3.70', min_version: '3.0' });
  });
});
