import { describe, expect, it } from 'vitest';
import { NovaClient } from '../../../src/openstack/services/nova.js';
import { RecordingTransport } from './recording-transport.js';

const project = '6f70656e737461636b20342065766572';

/** A server as Nova 2.60 shows it, with the admin-only and extension fields a real answer has. */
const server = {
  id: '9168b536-cd40-4630-b43f-b259807c6e87',
  name: 'demo-md-0-abcde',
  status: 'ACTIVE',
  tenant_id: project,
  user_id: 'fake',
  metadata: { 'cluster-name': 'demo' },
  hostId: 'c0d7a4c2e9',
  image: { id: '70a599e0-31e7-49b7-b260-868f441e862b', links: [{ rel: 'bookmark', href: 'http://nova/images/70a5' }] },
  flavor: { vcpus: 2, ram: 4096, disk: 40, ephemeral: 0, swap: 0, original_name: 'm1.medium', extra_specs: { 'hw:cpu_policy': 'shared' } },
  created: '2026-08-01T10:00:00Z',
  updated: '2026-08-01T10:00:30Z',
  addresses: {
    'k8s-clusterapi-cluster-default-demo': [
      { version: 4, addr: '10.6.0.12', 'OS-EXT-IPS:type': 'fixed', 'OS-EXT-IPS-MAC:mac_addr': 'fa:16:3e:58:42:ed' },
      { version: 4, addr: '172.24.4.228', 'OS-EXT-IPS:type': 'floating', 'OS-EXT-IPS-MAC:mac_addr': 'fa:16:3e:58:42:ed' },
    ],
  },
  accessIPv4: '',
  accessIPv6: '',
  links: [{ rel: 'self', href: 'http://nova/v2.1/servers/9168b536' }],
  'OS-DCF:diskConfig': 'MANUAL',
  progress: 0,
  'OS-EXT-AZ:availability_zone': 'nova',
  config_drive: '',
  key_name: 'demo-key',
  'OS-SRV-USG:launched_at': '2026-08-01T10:00:29.000000',
  'OS-SRV-USG:terminated_at': null,
  security_groups: [{ name: 'k8s-cluster-default-demo-secgroup-worker' }],
  'OS-EXT-STS:task_state': null,
  'OS-EXT-STS:vm_state': 'active',
  'OS-EXT-STS:power_state': 1,
  'os-extended-volumes:volumes_attached': [],
  locked: false,
  description: null,
  tags: ['cluster-a'],
  trusted_image_certificates: null,
  host_status: 'UP',
};

const flavor = {
  id: '3',
  name: 'm1.medium',
  ram: 4096,
  disk: 40,
  swap: '',
  'OS-FLV-EXT-DATA:ephemeral': 0,
  'OS-FLV-DISABLED:disabled': false,
  vcpus: 2,
  'os-flavor-access:is_public': true,
  rxtx_factor: 1.0,
  description: null,
  links: [{ rel: 'self', href: 'http://nova/v2.1/flavors/3' }],
};

function client(): { nova: NovaClient; transport: RecordingTransport } {
  const transport = new RecordingTransport();
  return { nova: new NovaClient(transport), transport };
}

describe('NovaClient servers', () => {
  it('creates with ports, key, user data, metadata, AZ, BDMs, tags and a server-group hint', async () => {
    const { nova, transport } = client();
    transport.reply({ server: { id: server.id, links: [], 'OS-DCF:diskConfig': 'MANUAL', security_groups: [{ name: 'default' }], adminPass: 'x' } }, 202);
    const created = await nova.createServer(
      {
        name: server.name,
        flavorRef: '3',
        imageRef: '',
        networks: [{ port: 'port-1' }, { port: 'port-2', tag: 'storage' }],
        key_name: 'demo-key',
        security_groups: [{ name: 'default' }],
        user_data: Buffer.from('#cloud-config\n').toString('base64'),
        config_drive: true,
        metadata: { 'cluster-name': 'demo' },
        availability_zone: 'nova',
        block_device_mapping_v2: [
          { boot_index: 0, source_type: 'volume', destination_type: 'volume', uuid: 'vol-root', delete_on_termination: true },
          { boot_index: -1, source_type: 'blank', destination_type: 'local', volume_size: 10, tag: 'etcd' },
        ],
        tags: ['cluster-a'],
      },
      { group: 'sg-1', 'custom-hint': true },
    );
    expect(created.id).toBe(server.id);
    expect(transport.last).toEqual({
      service: 'compute',
      method: 'POST',
      path: '/servers',
      idempotent: false,
      microversion: '2.60',
      body: {
        server: {
          name: server.name,
          flavorRef: '3',
          imageRef: '',
          networks: [{ port: 'port-1' }, { port: 'port-2', tag: 'storage' }],
          key_name: 'demo-key',
          security_groups: [{ name: 'default' }],
          user_data: 'I2Nsb3VkLWNvbmZpZwo=',
          config_drive: true,
          metadata: { 'cluster-name': 'demo' },
          availability_zone: 'nova',
          block_device_mapping_v2: [
            { boot_index: 0, source_type: 'volume', destination_type: 'volume', uuid: 'vol-root', delete_on_termination: true },
            { boot_index: -1, source_type: 'blank', destination_type: 'local', volume_size: 10, tag: 'etcd' },
          ],
          tags: ['cluster-a'],
        },
        'os:scheduler_hints': { group: 'sg-1', 'custom-hint': true },
      },
    });
  });

  it('sends no scheduler hints when none are given', async () => {
    const { nova, transport } = client();
    transport.reply({ server: { id: 's' } }, 202);
    await nova.createServer({ name: 'n', flavorRef: '1', imageRef: 'img', networks: 'none' });
    expect(transport.last.body).toEqual({ server: { name: 'n', flavorRef: '1', imageRef: 'img', networks: 'none' } });
  });

  it('gets a server and parses addresses, embedded flavor and extension fields', async () => {
    const { nova, transport } = client();
    transport.reply({ server });
    const got = await nova.getServer(server.id);
    expect(transport.last).toEqual({ service: 'compute', method: 'GET', path: `/servers/${server.id}`, idempotent: true, microversion: '2.60' });
    expect(got.addresses['k8s-clusterapi-cluster-default-demo']!.map((a) => a['OS-EXT-IPS:type'])).toEqual(['fixed', 'floating']);
    expect(got.flavor.original_name).toBe('m1.medium');
    expect(got['OS-EXT-STS:task_state']).toBeNull();
    expect(got.host_status).toBe('UP');
  });

  it('parses a server booted from a volume (image "") and one in ERROR with a fault', async () => {
    const { nova, transport } = client();
    transport.reply({
      server: { ...server, image: '', status: 'ERROR', fault: { code: 500, created: '2026-08-01T10:00:10Z', message: 'No valid host was found.' } },
    });
    const got = await nova.getServer(server.id);
    expect(got.image).toBe('');
    expect(got.fault?.message).toBe('No valid host was found.');
  });

  it('lists details with name and tag filters and follows servers_links', async () => {
    const { nova, transport } = client();
    transport
      .reply({ servers: [server], servers_links: [{ rel: 'next', href: `http://nova:8774/v2.1/servers/detail?limit=1&marker=${server.id}&name=demo` }] })
      .reply({ servers: [{ ...server, id: 's2' }] });
    const servers = await nova.listServers({ name: 'demo', tags: ['cluster-a', 'b'], 'not-tags': ['c'] });
    expect(servers.map((s) => s.id)).toEqual([server.id, 's2']);
    expect(transport.calls.map((call) => [call.path, call.query])).toEqual([
      ['/servers/detail', { tags: 'cluster-a,b', 'not-tags': 'c', name: 'demo' }],
      ['/servers/detail', { tags: 'cluster-a,b', 'not-tags': 'c', name: 'demo', limit: '1', marker: server.id }],
    ]);
  });

  it('finds servers by exact name with an escaped, anchored regex and checks the names again', async () => {
    const { nova, transport } = client();
    transport.reply({ servers: [server, { ...server, id: 'other', name: `${server.name}x` }] });
    const found = await nova.findServersByName('demo-md-0.abcde');
    expect(transport.last.query).toEqual({ name: '^demo-md-0\\.abcde$' });
    expect(found).toEqual([]);
    transport.reply({ servers: [server] });
    expect((await nova.findServersByName(server.name)).map((s) => s.id)).toEqual([server.id]);
  });

  it('deletes', async () => {
    const { nova, transport } = client();
    transport.reply(undefined, 204);
    await nova.deleteServer(server.id);
    expect(transport.last).toEqual({ service: 'compute', method: 'DELETE', path: `/servers/${server.id}`, idempotent: true, microversion: '2.60' });
  });
});

describe('NovaClient server tags and metadata', () => {
  it('lists, replaces, adds and removes tags', async () => {
    const { nova, transport } = client();
    transport
      .reply({ tags: ['a'] })
      .reply({ tags: ['a', 'b'] })
      .reply(undefined, 201)
      .reply(undefined, 204);
    expect(await nova.listServerTags('s1')).toEqual(['a']);
    expect(await nova.replaceServerTags('s1', ['a', 'b'])).toEqual(['a', 'b']);
    expect(transport.last).toMatchObject({ method: 'PUT', path: '/servers/s1/tags', body: { tags: ['a', 'b'] }, idempotent: true });
    await nova.addServerTag('s1', 'c');
    expect(transport.last).toEqual({ service: 'compute', method: 'PUT', path: '/servers/s1/tags/c', idempotent: true, microversion: '2.60' });
    await nova.removeServerTag('s1', 'c');
    expect(transport.last).toMatchObject({ method: 'DELETE', path: '/servers/s1/tags/c' });
  });

  it('gets, replaces, merges and deletes metadata', async () => {
    const { nova, transport } = client();
    transport
      .reply({ metadata: { a: '1' } })
      .reply({ metadata: { b: '2' } })
      .reply({ metadata: { b: '2', c: '3' } })
      .reply(undefined, 204);
    expect(await nova.getServerMetadata('s1')).toEqual({ a: '1' });
    await nova.replaceServerMetadata('s1', { b: '2' });
    expect(transport.last).toMatchObject({ method: 'PUT', path: '/servers/s1/metadata', body: { metadata: { b: '2' } }, idempotent: true });
    expect(await nova.updateServerMetadata('s1', { c: '3' })).toEqual({ b: '2', c: '3' });
    expect(transport.last).toMatchObject({ method: 'POST', path: '/servers/s1/metadata', body: { metadata: { c: '3' } }, idempotent: false });
    await nova.deleteServerMetadataItem('s1', 'b');
    expect(transport.last).toMatchObject({ method: 'DELETE', path: '/servers/s1/metadata/b' });
  });
});

describe('NovaClient interfaces and volume attachments', () => {
  const attachment = {
    port_id: 'p1',
    net_id: 'n1',
    mac_addr: 'fa:16:3e:00:00:01',
    port_state: 'ACTIVE',
    fixed_ips: [{ subnet_id: 'sub', ip_address: '10.6.0.5' }],
    tag: null,
  };

  it('lists, attaches and detaches interfaces', async () => {
    const { nova, transport } = client();
    transport
      .reply({ interfaceAttachments: [attachment] })
      .reply({ interfaceAttachment: attachment })
      .reply(undefined, 202);
    expect((await nova.listInterfaces('s1'))[0]!.fixed_ips[0]!.ip_address).toBe('10.6.0.5');
    expect(transport.last.path).toBe('/servers/s1/os-interface');
    await nova.attachInterface('s1', { port_id: 'p1' });
    expect(transport.last).toMatchObject({
      method: 'POST',
      path: '/servers/s1/os-interface',
      body: { interfaceAttachment: { port_id: 'p1' } },
      idempotent: false,
    });
    await nova.detachInterface('s1', 'p1');
    expect(transport.last).toMatchObject({ method: 'DELETE', path: '/servers/s1/os-interface/p1', idempotent: true });
  });

  it('lists, attaches and detaches volumes', async () => {
    const { nova, transport } = client();
    const volumeAttachment = { id: 'v1', serverId: 's1', volumeId: 'v1', device: '/dev/vdb', tag: null };
    transport
      .reply({ volumeAttachments: [volumeAttachment] })
      .reply({ volumeAttachment })
      .reply(undefined, 202);
    expect((await nova.listVolumeAttachments('s1'))[0]!.device).toBe('/dev/vdb');
    expect(transport.last.path).toBe('/servers/s1/os-volume_attachments');
    await nova.attachVolume('s1', { volumeId: 'v1', tag: 'etcd' });
    expect(transport.last).toMatchObject({
      method: 'POST',
      path: '/servers/s1/os-volume_attachments',
      body: { volumeAttachment: { volumeId: 'v1', tag: 'etcd' } },
      idempotent: false,
    });
    await nova.detachVolume('s1', 'v1');
    expect(transport.last).toMatchObject({ method: 'DELETE', path: '/servers/s1/os-volume_attachments/v1', idempotent: true });
  });
});

describe('NovaClient flavors and keypairs', () => {
  it('lists flavor details across pages, gets one, and finds one by exact name', async () => {
    const { nova, transport } = client();
    transport
      .reply({
        flavors: [{ ...flavor, id: '1', name: 'm1.tiny', swap: 512 }],
        flavors_links: [{ rel: 'next', href: 'http://nova/v2.1/flavors/detail?marker=1' }],
      })
      .reply({ flavors: [flavor] })
      .reply({ flavor })
      .reply({ flavors: [flavor] })
      .reply({ flavors: [flavor] });
    const flavors = await nova.listFlavors();
    expect(flavors.map((f) => [f.name, f.swap])).toEqual([
      ['m1.tiny', 512],
      ['m1.medium', ''],
    ]);
    expect(transport.calls.map((call) => [call.path, call.query])).toEqual([
      ['/flavors/detail', {}],
      ['/flavors/detail', { marker: '1' }],
    ]);
    expect((await nova.getFlavor('3')).vcpus).toBe(2);
    expect(transport.last.path).toBe('/flavors/3');
    expect((await nova.findFlavorByName('m1.medium'))?.id).toBe('3');
    expect(await nova.findFlavorByName('m1.huge')).toBeUndefined();
  });

  it('lists keypairs (each wrapped) and gets one', async () => {
    const { nova, transport } = client();
    const keypair = { name: 'demo-key', public_key: 'ssh-ed25519 AAAA demo', fingerprint: 'aa:bb', type: 'ssh' };
    transport
      .reply({ keypairs: [{ keypair }] })
      .reply({ keypair: { ...keypair, user_id: 'u', id: 1, created_at: '2026-01-01T00:00:00Z', deleted: false, deleted_at: null, updated_at: null } });
    expect(await nova.listKeypairs()).toEqual([keypair]);
    expect(transport.last.path).toBe('/os-keypairs');
    expect((await nova.getKeypair('demo key')).name).toBe('demo-key');
    expect(transport.last.path).toBe('/os-keypairs/demo%20key');
  });
});

describe('NovaClient server groups', () => {
  const group = { id: 'g1', name: 'cp', policy: 'anti-affinity', rules: { max_server_per_host: 1 }, members: [], project_id: project, user_id: 'u' };

  it('uses microversion 2.64 for create, get, list (paged by offset until empty) and delete', async () => {
    const { nova, transport } = client();
    transport
      .reply({ server_group: group })
      .reply({ server_group: group })
      .reply({ server_groups: [group] })
      .reply({ server_groups: [] })
      .reply(undefined, 204);
    const created = await nova.createServerGroup({ name: 'cp', policy: 'anti-affinity', rules: { max_server_per_host: 1 } });
    expect(created.policy).toBe('anti-affinity');
    expect(transport.last).toEqual({
      service: 'compute',
      method: 'POST',
      path: '/os-server-groups',
      idempotent: false,
      microversion: '2.64',
      body: { server_group: { name: 'cp', policy: 'anti-affinity', rules: { max_server_per_host: 1 } } },
    });
    await nova.getServerGroup('g1');
    expect(transport.last).toMatchObject({ path: '/os-server-groups/g1', microversion: '2.64' });
    expect(await nova.listServerGroups()).toHaveLength(1);
    expect(transport.calls.slice(2, 4).map((call) => [call.query, call.microversion])).toEqual([
      [{ limit: 1000, offset: 0 }, '2.64'],
      [{ limit: 1000, offset: 1 }, '2.64'],
    ]);
    await nova.deleteServerGroup('g1');
    expect(transport.last).toMatchObject({ method: 'DELETE', path: '/os-server-groups/g1', microversion: '2.64', idempotent: true });
  });
});

describe('NovaClient availability zones, limits and version', () => {
  it('lists availability zones', async () => {
    const { nova, transport } = client();
    transport.reply({
      availabilityZoneInfo: [
        { zoneName: 'nova', zoneState: { available: true }, hosts: null },
        { zoneName: 'az2', zoneState: { available: false }, hosts: null },
      ],
    });
    const zones = await nova.listAvailabilityZones();
    expect(transport.last.path).toBe('/os-availability-zone');
    expect(zones.filter((zone) => zone.zoneState.available).map((zone) => zone.zoneName)).toEqual(['nova']);
  });

  it('reads absolute limits', async () => {
    const { nova, transport } = client();
    transport.reply({
      limits: {
        rate: [],
        absolute: {
          maxServerMeta: 128,
          maxTotalInstances: 10,
          maxTotalCores: 20,
          maxTotalRAMSize: 51200,
          maxTotalKeypairs: 100,
          maxServerGroups: 10,
          maxServerGroupMembers: 10,
          maxImageMeta: 128,
          totalCoresUsed: 4,
          totalInstancesUsed: 2,
          totalRAMUsed: 8192,
          totalServerGroupsUsed: 1,
        },
      },
    });
    const limits = await nova.getLimits();
    expect(transport.last.path).toBe('/limits');
    expect((limits.maxTotalCores ?? 0) - (limits.totalCoresUsed ?? 0)).toBe(16);
  });

  it('reads the version document at the endpoint root', async () => {
    const { nova, transport } = client();
    transport.reply({
      version: { id: 'v2.1', status: 'CURRENT', version: '2.93', min_version: '2.1', updated: '2013-07-23T11:33:21Z', links: [], 'media-types': [] },
    });
    expect((await nova.getVersion()).version).toBe('2.93');
    expect(transport.last.path).toBe('/');
  });
});
