/**
 * The Glance image actuator, for ORC Images of the managed policy. Glance
 * takes tags in the create body, so the owner tags travel with the image
 * from its first moment, and adoption lists by name and owner tag. Uploading
 * the content is the reconciler's step, not the actuator's: it can take
 * minutes and it counts attempts in the object's status.
 */
import type { CreateImage, GlanceClient, Image } from '../../openstack/index.js';
import { absentOn404, ownerTag, ownerTags, type ResourceActuator } from './actuator.js';

/** Glance moves between statuses on its own; an upload of a large image takes a while. */
const settleRequeueMs = 5_000;

export function imageActuator(glance: GlanceClient): ResourceActuator<CreateImage, Image> {
  return {
    kind: 'image',
    getById: (id) => absentOn404(glance.getImage(id)),
    async findAdoptable(name, owner) {
      const tag = ownerTag(owner);
      const images = await glance.listImages({ name, tag: [tag], visibility: 'all' });
      return images.filter((image) => image.name === name && image.tags.includes(tag));
    },
    create: (desired, owner) => glance.createImage({ ...desired, tags: [...(desired.tags ?? []), ...ownerTags(owner)] }),
    readiness(image) {
      if (image.status === 'active') return { ready: true };
      if (image.status === 'killed') return { failed: 'a Glance error occurred while saving the image content' };
      if (image.status === 'deleted' || image.status === 'pending_delete') return { failed: `the image is being deleted (${image.status})` };
      return { waitingFor: `image ${image.id} to become active (now ${image.status})`, requeueAfterMs: settleRequeueMs };
    },
    async delete(image) {
      await glance.deleteImage(image.id);
      return { done: true };
    },
    describe: (image) => ({ id: image.id, name: image.name ?? '', status: image.status, visibility: image.visibility, size: image.size ?? null }),
  };
}
