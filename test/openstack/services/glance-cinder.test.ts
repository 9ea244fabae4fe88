import { describe, expect, it } from 'vitest';
import { CinderClient } from '../../../src/openstack/services/cinder.js';
import { GlanceClient } from '../../../src/openstack/services/glance.js';
import { RecordingTransport } from './recording-transport.js';

const project = '0bd18306d801447bb457a46252d82d13';

function image(id: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    name: 'ubuntu-22.04',
    status: 'active',
    visibility: 'public',
    protected: false,
    os_hidden: false,
    owner: project,
    size: 1048576,
    virtual_size: null,
    checksum: 'b874c39491a2377b8490f5f1e89761a4',
    os_hash_algo: 'sha512',
    os_hash_value: 'deadbeef',
    min_ram: 0,
    min_disk: 0,
    disk_format: 'qcow2',
    container_format: 'bare',
    created_at: '2026-08-01T10:00:00Z',
    updated_at: '2026-08-01T10:00:01Z',
    tags: ['capi'],
    self: `/v2/images/${id}`,
    file: `/v2/images/${id}/file`,
    schema: '/v2/schemas/image',
    os_distro: 'ubuntu',
    os_version: '22.04',
    stores: 'fs',
    ...extra,
  };
}

describe('GlanceClient', () => {
  it('lists with name, repeated tag, status and visibility filters and follows relative next links', async () => {
    const transport = new RecordingTransport()
      .reply({
        images: [image('i1')],
        first: '/v2/images?name=ubuntu-22.04',
        schema: '/v2/schemas/images',
        next: '/v2/images?name=ubuntu-22.04&tag=capi&tag=k8s&status=active&visibility=public&marker=i1',
      })
      .reply({ images: [image('i2', { name: null })], first: '/v2/images', schema: '/v2/schemas/images' });
    const images = await new GlanceClient(transport).listImages({ name: 'ubuntu-22.04', tag: ['capi', 'k8s'], status: 'active', visibility: 'public' });
    expect(images.map((i) => [i.id, i.name])).toEqual([
      ['i1', 'ubuntu-22.04'],
      ['i2', null],
    ]);
    expect(images[0]!.os_distro).toBe('ubuntu');
    expect(images[0]!.stores).toBe('fs');
    expect(transport.calls.map(({ service, method, path, query, idempotent }) => ({ service, method, path, query, idempotent }))).toEqual([
      {
        service: 'image',
        method: 'GET',
        path: '/v2/images',
        idempotent: true,
        query: { name: 'ubuntu-22.04', status: 'active', visibility: 'public', tag: ['capi', 'k8s'] },
      },
      {
        service: 'image',
        method: 'GET',
        path: '/v2/images',
        idempotent: true,
        query: { name: 'ubuntu-22.04', status: 'active', visibility: 'public', tag: ['capi', 'k8s'], marker: 'i1' },
      },
    ]);
  });

  it('gets an image, which has no envelope', async () => {
    const transport = new RecordingTransport().reply(image('i1', { os_type: 'linux', hw_disk_bus: 'scsi' }));
    const got = await new GlanceClient(transport).getImage('i1');
    expect(got.os_type).toBe('linux');
    expect(transport.last).toEqual({ service: 'image', method: 'GET', path: '/v2/images/i1', idempotent: true });
  });

  it('finds images by CAPO filter (name and tags)', async () => {
    const transport = new RecordingTransport().reply({ images: [image('i1')] }).reply({ images: [] });
    const glance = new GlanceClient(transport);
    expect(await glance.findImages({ name: 'ubuntu-22.04', tags: ['capi'] })).toHaveLength(1);
    expect(transport.last.query).toEqual({ name: 'ubuntu-22.04', tag: ['capi'] });
    await glance.findImages({ tags: [] });
    expect(transport.last.query).toEqual({});
  });
});

const volume = {
  id: '6edbc2f4-1507-44f8-ac0d-eed1d2608d38',
  name: 'demo-md-0-abcde-root',
  status: 'creating',
  size: 20,
  availability_zone: 'nova',
  volume_type: '__DEFAULT__',
  volume_type_id: 'a2c1f2d3',
  bootable: 'false',
  encrypted: false,
  multiattach: false,
  metadata: { 'capo-owner': 'uid-1' },
  attachments: [],
  description: null,
  snapshot_id: null,
  source_volid: null,
  consistencygroup_id: null,
  group_id: null,
  replication_status: null,
  migration_status: null,
  user_id: 'u',
  created_at: '2026-08-01T10:00:00.000000',
  updated_at: null,
  links: [],
  shared_targets: true,
  service_uuid: null,
  cluster_name: null,
  provider_id: null,
  consumes_quota: true,
};

describe('CinderClient', () => {
  it('creates with size, name, type, AZ, image and metadata using microversion 3.60', async () => {
    const transport = new RecordingTransport().reply({ volume }, 202);
    const created = await new CinderClient(transport).createVolume({
      size: 20,
      name: volume.name,
      volume_type: '__DEFAULT__',
      availability_zone: 'nova',
      imageRef: 'img-1',
      metadata: { 'capo-owner': 'uid-1' },
    });
    expect(created.status).toBe('creating');
    expect(transport.last).toEqual({
      service: 'block-storage',
      method: 'POST',
      path: '/volumes',
      idempotent: false,
      microversion: '3.60',
      body: {
        volume: { size: 20, name: volume.name, volume_type: '__DEFAULT__', availability_zone: 'nova', imageRef: 'img-1', metadata: { 'capo-owner': 'uid-1' } },
      },
    });
  });

  it('gets, lists detail by name and metadata across pages, and deletes', async () => {
    const attached = {
      ...volume,
      status: 'in-use',
      attachments: [
        {
          server_id: 's1',
          attachment_id: 'a1',
          volume_id: volume.id,
          device: '/dev/vdb',
          host_name: null,
          attached_at: '2026-08-01T10:01:00.000000',
          id: volume.id,
        },
      ],
    };
    const transport = new RecordingTransport()
      .reply({ volume: attached })
      .reply({ volumes: [volume], volumes_links: [{ rel: 'next', href: `http://cinder:8776/v3/${project}/volumes/detail?limit=1&marker=${volume.id}` }] })
      .reply({ volumes: [{ ...volume, id: 'v2', name: null }] })
      .reply(undefined, 202);
    const cinder = new CinderClient(transport);
    expect((await cinder.getVolume(volume.id)).attachments[0]!.server_id).toBe('s1');
    expect(transport.last).toEqual({ service: 'block-storage', method: 'GET', path: `/volumes/${volume.id}`, idempotent: true, microversion: '3.60' });
    const volumes = await cinder.listVolumes({ name: volume.name, metadata: { 'capo-owner': 'uid-1' } });
    expect(volumes.map((v) => v.id)).toEqual([volume.id, 'v2']);
    expect(transport.calls.slice(1, 3).map((call) => [call.path, call.query])).toEqual([
      ['/volumes/detail', { name: volume.name, metadata: '{"capo-owner":"uid-1"}' }],
      ['/volumes/detail', { name: volume.name, metadata: '{"capo-owner":"uid-1"}', limit: '1', marker: volume.id }],
    ]);
    await cinder.deleteVolume(volume.id);
    expect(transport.last).toEqual({ service: 'block-storage', method: 'DELETE', path: `/volumes/${volume.id}`, idempotent: true, microversion: '3.60' });
  });

  it('lists volume types and availability zones', async () => {
    const transport = new RecordingTransport()
      .reply({
        volume_types: [
          {
            id: 't1',
            name: '__DEFAULT__',
            description: 'Default Volume Type',
            is_public: true,
            extra_specs: {},
            qos_specs_id: null,
            'os-volume-type-access:is_public': true,
          },
        ],
      })
      .reply({ availabilityZoneInfo: [{ zoneName: 'nova', zoneState: { available: true } }] });
    const cinder = new CinderClient(transport);
    expect((await cinder.listVolumeTypes())[0]!.name).toBe('__DEFAULT__');
    expect(transport.last.path).toBe('/types');
    expect((await cinder.listAvailabilityZones())[0]!.zoneName).toBe('nova');
    expect(transport.last.path).toBe('/os-availability-zone');
  });

  it('reads limits and quota usage', async () => {
    const transport = new RecordingTransport()
      .reply({
        limits: {
          rate: [],
          absolute: {
            totalSnapshotsUsed: 0,
            maxTotalBackups: 10,
            maxTotalVolumeGigabytes: 1000,
            maxTotalSnapshots: 10,
            maxTotalBackupGigabytes: 1000,
            totalBackupGigabytesUsed: 0,
            maxTotalVolumes: 100,
            totalVolumesUsed: 3,
            totalBackupsUsed: 0,
            totalGigabytesUsed: 60,
          },
        },
      })
      .reply({
        quota_set: {
          id: project,
          volumes: { limit: 100, in_use: 3, reserved: 0, allocated: 0 },
          gigabytes: { limit: 1000, in_use: 60, reserved: 0, allocated: 0 },
          volumes___DEFAULT__: { limit: -1, in_use: 3, reserved: 0, allocated: 0 },
          per_volume_gigabytes: { limit: -1, in_use: 0, reserved: 0, allocated: 0 },
        },
      });
    const cinder = new CinderClient(transport);
    const limits = await cinder.getLimits();
    expect(transport.last.path).toBe('/limits');
    expect((limits.maxTotalVolumeGigabytes ?? 0) - (limits.totalGigabytesUsed ?? 0)).toBe(940);
    const quotas = await cinder.getQuotas(project);
    expect(transport.last).toMatchObject({ path: `/os-quota-sets/${project}`, query: { usage: true } });
    expect(Object.keys(quotas).sort()).toEqual(['gigabytes', 'per_volume_gigabytes', 'volumes', 'volumes___DEFAULT__']);
    expect(quotas.volumes!.in_use).toBe(3);
  });
});
