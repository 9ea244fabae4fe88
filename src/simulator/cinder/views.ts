/** How the simulated Cinder shows volumes, attachments and volume types, per microversion and caller. */
import type { PeerVolume, SimulatorContext, TokenScope } from '../framework.js';
import { atLeast, isAdmin, timestamp, type Attachment, type CinderStore, type Microversion, type Volume, type VolumeType } from './model.js';

const links = (ctx: SimulatorContext, volume: Volume) => [
  { href: `${ctx.baseUrl()}/volume/v3/${volume.projectId}/volumes/${volume.id}`, rel: 'self' },
  { href: `${ctx.baseUrl()}/volume/${volume.projectId}/volumes/${volume.id}`, rel: 'bookmark' },
];
export const attachmentView = (volume: Volume, a: Attachment) => ({
  id: volume.id,
  attachment_id: a.id,
  volume_id: volume.id,
  server_id: a.serverId,
  host_name: a.hostName,
  device: a.device,
  attached_at: timestamp(a.attachedAt),
});
export const detailView = (store: CinderStore, volume: Volume, v: Microversion, scope: TokenScope) => {
  const type = store.types.get(volume.volumeTypeId);
  const body: Record<string, unknown> = {
    id: volume.id,
    name: volume.name,
    description: volume.description,
    status: volume.status,
    size: volume.size,
    availability_zone: volume.availabilityZone,
    created_at: timestamp(volume.createdAt),
    updated_at: timestamp(volume.updatedAt),
    attachments: volume.attachments.map((a) => attachmentView(volume, a)),
    bootable: volume.imageMetadata ? 'true' : 'false',
    encrypted: false,
    multiattach: volume.multiattach,
    replication_status: null,
    consistencygroup_id: null,
    snapshot_id: null,
    source_volid: null,
    volume_type: type?.name ?? null,
    metadata: volume.metadata,
    user_id: volume.userId,
    links: links(store.ctx, volume),
    'os-vol-tenant-attr:tenant_id': volume.projectId,
  };
  if (volume.imageMetadata) body.volume_image_metadata = volume.imageMetadata;
  if (isAdmin(scope)) {
    body['os-vol-host-attr:host'] = volume.status === 'creating' ? null : 'ministack@fake#fake';
    body['os-vol-mig-status-attr:migstat'] = null;
    body['os-vol-mig-status-attr:name_id'] = null;
    if (atLeast(v, 21)) body.provider_id = null;
    if (atLeast(v, 61)) body.cluster_name = null;
  }
  if (atLeast(v, 13)) body.group_id = null;
  if (atLeast(v, 48)) {
    body.service_uuid = volume.status === 'creating' ? null : 'b1c6f6d2-3f8e-4a8f-9c1b-5f0e1d2c3b4a';
    body.shared_targets = false;
  }
  if (atLeast(v, 63)) body.volume_type_id = volume.volumeTypeId;
  if (atLeast(v, 64)) body.encryption_key_id = null;
  if (atLeast(v, 65)) body.consumes_quota = true;
  return body;
};
export const summaryView = (ctx: SimulatorContext, volume: Volume) => ({ id: volume.id, name: volume.name, links: links(ctx, volume) });

export const typeView = (t: VolumeType, scope: TokenScope) => ({
  id: t.id,
  name: t.name,
  description: t.description,
  is_public: true,
  'os-volume-type-access:is_public': true,
  qos_specs_id: null,
  ...(isAdmin(scope) ? { extra_specs: t.extraSpecs } : {}),
});

export const peerView = (volume: Volume): PeerVolume => ({
  id: volume.id,
  name: volume.name,
  project_id: volume.projectId,
  status: volume.status,
  size: volume.size,
  bootable: volume.imageMetadata ? 'true' : 'false',
  availability_zone: volume.availabilityZone,
  multiattach: volume.multiattach,
  attachments: volume.attachments.map((a) => ({ ...attachmentView(volume, a) })),
});
