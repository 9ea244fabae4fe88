/** What Nova asks of the simulated Cinder (ctx.peers.blockStorage): volumes to boot from, attach and detach, as Nova calls Cinder's attachment API. */
import { SimulatorError } from '../framework.js';
import type { Attachment, CinderStore, Volume } from './model.js';
import { peerView } from './views.js';

export function servePeers(store: CinderStore): void {
  const peerVolume = (id: string): Volume => {
    const volume = store.volumes.get(id);
    if (!volume) throw new SimulatorError(404, `Volume ${id} could not be found.`, 'VolumeNotFound');
    return volume;
  };

  store.ctx.peers.blockStorage = {
    getVolume: (id) => {
      const volume = store.volumes.get(id);
      return volume && peerView(volume);
    },
    createVolume(projectId, spec) {
      return peerView(store.createVolume({ projectId, userId: '' }, spec));
    },
    deleteVolume(id) {
      store.deleteVolume(peerVolume(id));
    },
    attachVolume(volumeId, attachment) {
      const volume = peerVolume(volumeId);
      const reattach = volume.multiattach && volume.status === 'in-use';
      if (volume.status !== 'available' && !reattach) {
        throw new SimulatorError(
          400,
          `Invalid volume: Volume ${volumeId} status must be available or downloading to reserve, but the current status is ${volume.status}.`,
          'InvalidVolume',
        );
      }
      if (volume.attachments.some((a) => a.serverId === attachment.serverId)) {
        throw new SimulatorError(400, `Invalid volume: volume ${volumeId} already attached to ${attachment.serverId}.`, 'InvalidVolume');
      }
      const record: Attachment = {
        id: store.ctx.newId(),
        serverId: attachment.serverId,
        device: attachment.device ?? null,
        hostName: attachment.hostName ?? null,
        attachedAt: store.ctx.clock.now(),
      };
      volume.attachments.push(record);
      if (!reattach) {
        volume.status = 'reserved';
        volume.updatedAt = store.ctx.clock.now();
        store.transition(volume, 'in-use', ['reserved']);
      }
      return record.id;
    },
    detachVolume(volumeId, serverId) {
      const volume = peerVolume(volumeId);
      const index = volume.attachments.findIndex((a) => a.serverId === serverId);
      if (index < 0) throw new SimulatorError(400, `Invalid volume: Volume ${volumeId} is not attached to ${serverId}.`, 'InvalidVolume');
      volume.attachments.splice(index, 1);
      if (volume.attachments.length > 0) return;
      volume.status = 'detaching';
      volume.updatedAt = store.ctx.clock.now();
      store.transition(volume, 'available', ['detaching']);
    },
  };
}
