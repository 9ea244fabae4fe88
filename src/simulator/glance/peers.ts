/** What Nova and Cinder ask of the simulated Glance (ctx.peers.image): an image as a project sees it. */
import type { PeerImage } from '../framework.js';
import type { GlanceStore } from './model.js';

export function servePeers(store: GlanceStore): void {
  store.ctx.peers.image = {
    getImage(id, projectId): PeerImage | undefined {
      const image = store.images.get(id);
      const visible =
        image &&
        (image.owner === projectId ||
          image.visibility === 'public' ||
          image.visibility === 'community' ||
          (image.visibility === 'shared' && image.members.has(projectId)));
      if (!image || !visible) return undefined;
      return {
        id: image.id,
        name: image.name,
        status: image.status,
        visibility: image.visibility,
        owner: image.owner,
        min_disk: image.min_disk,
        min_ram: image.min_ram,
        size: image.size,
        disk_format: image.disk_format,
        container_format: image.container_format,
      };
    },
  };
}
