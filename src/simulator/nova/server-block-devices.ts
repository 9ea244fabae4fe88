/**
 * A create's block devices: block_device_mapping (legacy) and
 * block_device_mapping_v2 read into one shape, and checked against the
 * image, volume and snapshot they name with nova-api's messages.
 */
import type { SimulatorContext } from '../framework.js';
import { badRequest } from './errors.js';
import type { BlockDevice, Caller } from './model.js';
import type { ServerCreateBody } from './schemas.js';

type ServerSpec = ServerCreateBody['server'];
type LegacyMapping = NonNullable<ServerSpec['block_device_mapping']>[number];
type MappingV2 = NonNullable<ServerSpec['block_device_mapping_v2']>[number];

/** block_device_mapping (legacy) and block_device_mapping_v2 in one shape, as nova.block_device.from_api does. */
export function blockDevicesOf(spec: ServerSpec, imageGiven: boolean, newId: () => string): BlockDevice[] {
  const legacy = legacyBlockDevices(spec.block_device_mapping ?? [], imageGiven, newId);
  return [...legacy, ...(spec.block_device_mapping_v2 ?? []).map((bdm) => blockDeviceV2(bdm, imageGiven, newId))];
}

/** The legacy mappings name volumes and snapshots only; without an image, the first one boots. */
function legacyBlockDevices(mappings: LegacyMapping[], imageGiven: boolean, newId: () => string): BlockDevice[] {
  const devices: BlockDevice[] = [];
  for (const legacy of mappings) {
    const uuid = legacy.volume_id ?? legacy.snapshot_id;
    if (!uuid) continue;
    devices.push({
      sourceType: legacy.volume_id ? 'volume' : 'snapshot',
      destinationType: 'volume',
      uuid,
      ...(legacy.volume_size !== undefined ? { volumeSize: legacy.volume_size } : {}),
      bootIndex: devices.length === 0 && !imageGiven ? 0 : null,
      deleteOnTermination: legacy.delete_on_termination ?? false,
      createdByNova: false,
      device: legacy.device_name ?? null,
      bdmId: newId(),
    });
  }
  return devices;
}

/** One block_device_mapping_v2 entry, its source and destination defaulted from what it names. */
function blockDeviceV2(bdm: MappingV2, imageGiven: boolean, newId: () => string): BlockDevice {
  const source = bdm.source_type ?? (bdm.volume_id ? 'volume' : bdm.snapshot_id ? 'snapshot' : bdm.image_id ? 'image' : 'blank');
  const uuid = bdm.uuid ?? bdm.volume_id ?? bdm.snapshot_id ?? bdm.image_id;
  if (source === 'blank' && uuid) throw badRequest('Block Device Mapping is Invalid: Invalid device UUID.');
  if (source !== 'blank' && !uuid) throw badRequest('Block Device Mapping is Invalid: Missing device UUID.');
  const destination = bdm.destination_type ?? (source === 'volume' || source === 'snapshot' ? 'volume' : 'local');
  const bootIndex = bdm.boot_index === undefined || bdm.boot_index === null || bdm.boot_index < 0 ? null : bdm.boot_index;
  if (source === 'image' && destination === 'local' && !(imageGiven && bootIndex === 0)) {
    throw badRequest('Block Device Mapping is Invalid: Mapping image to local is not supported.');
  }
  return {
    sourceType: source,
    destinationType: destination,
    ...(uuid ? { uuid } : {}),
    ...(bdm.volume_size !== undefined ? { volumeSize: bdm.volume_size } : {}),
    bootIndex,
    deleteOnTermination: bdm.delete_on_termination ?? false,
    ...(bdm.tag ? { tag: bdm.tag } : {}),
    ...(source === 'volume' ? { volumeId: uuid } : {}),
    createdByNova: false,
    device: bdm.device_name ?? null,
    bdmId: newId(),
  };
}

/** The boot order and each device's source, checked once the rest of the request passed (nova-api's order). */
export function validateBlockDevices(devices: BlockDevice[], imageId: string, caller: Caller, ctx: SimulatorContext): void {
  validateBootSequence(devices, imageId);
  for (const device of devices) validateDeviceSource(device, caller, ctx);
}

/** Boot indexes count up from 0 with no gap; without an image, a device must boot. */
function validateBootSequence(devices: BlockDevice[], imageId: string): void {
  const bootIndexes = devices
    .map((d) => d.bootIndex)
    .filter((i): i is number => i !== null)
    .sort((a, b) => a - b);
  if ((!imageId && bootIndexes[0] !== 0) || bootIndexes.some((index, position) => index !== position)) {
    throw badRequest('Block Device Mapping is Invalid: Boot sequence for the instance and image/block device mapping combination is not valid.');
  }
}

/** The image, volume or snapshot a device is made from exists and can be used; a volume made from nothing has a size. */
function validateDeviceSource(device: BlockDevice, caller: Caller, ctx: SimulatorContext): void {
  if (device.sourceType === 'image') {
    if (!ctx.peers.image?.getImage(device.uuid!, caller.projectId)) throw badRequest(`Block Device Mapping is Invalid: failed to get image ${device.uuid}.`);
    if (device.destinationType === 'volume' && !device.volumeSize) {
      throw badRequest("Images with destination_type 'volume' need to have a non-zero size specified");
    }
  } else if (device.sourceType === 'volume') {
    const volume = ctx.peers.blockStorage?.getVolume(device.uuid!);
    if (!volume) throw badRequest(`Block Device Mapping is Invalid: failed to get volume ${device.uuid}.`);
    if (volume.status !== 'available') throw badRequest(`Invalid volume: volume '${volume.id}' status must be 'available'. Currently in '${volume.status}'`);
  } else if (device.sourceType === 'snapshot') {
    // Cinder snapshots are not simulated, so no snapshot can be found.
    throw badRequest(`Block Device Mapping is Invalid: failed to get snapshot ${device.uuid}.`);
  } else if (device.destinationType === 'volume' && !device.volumeSize) {
    throw badRequest("Blank volumes (source: 'blank', dest: 'volume') need to have non-zero size");
  }
}
