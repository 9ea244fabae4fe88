/**
 * The Glance image actuator, for ORC Images of the managed policy. Glance
 * takes tags in the create body, so the owner tags travel with the image
 * from its first moment, and adoption lists by name and owner tag. Uploading
 * the content is the reconciler's step, not the actuator's: it can take
 * minutes and it counts attempts in the object's status. Name, visibility,
 * protection and tags follow the spec afterwards, as ORC updates them.
 */
import type { CreateImage, GlanceClient, Image } from '../../openstack/index.js';
import { absentOn404, ownerTag, ownerTags, type Owner, type ResourceActuator } from './actuator.js';

/** Glance moves between statuses on its own; an upload of a large image takes a while. */
const settleRequeueMs = 5_000;

/** The user's tags and the owner's, each once. */
function wantedTags(desired: CreateImage, owner: Owner): string[] {
  return [...new Set([...(desired.tags ?? []), ...ownerTags(owner)])];
}

export function imageActuator(glance: GlanceClient): ResourceActuator<CreateImage, Image> {
  return {
    kind: 'image',
    getById: (id) => absentOn404(glance.getImage(id)),
    async findAdoptable(name, owner) {
      const tag = ownerTag(owner);
      const images = await glance.listImages({ name, tag: [tag], visibility: 'all' });
      return images.filter((image) => image.name === name && image.tags.includes(tag));
    },
    create: (desired, owner) => glance.createImage({ ...desired, tags: wantedTags(desired, owner) }),
    // What ORC updates in place: the name, visibility, protection and tags (the content and properties are immutable).
    async postCreate(image, desired, owner) {
      const changes: { op: 'replace'; path: string; value: unknown }[] = [];
      if (image.name !== desired.name) changes.push({ op: 'replace', path: '/name', value: desired.name });
      if (desired.visibility !== undefined && image.visibility !== desired.visibility)
        changes.push({ op: 'replace', path: '/visibility', value: desired.visibility });
      if (desired.protected !== undefined && image.protected !== desired.protected)
        changes.push({ op: 'replace', path: '/protected', value: desired.protected });
      const tags = wantedTags(desired, owner);
      if (tags.length !== image.tags.length || tags.some((tag) => !image.tags.includes(tag))) changes.push({ op: 'replace', path: '/tags', value: tags });
      // Refreshed in place, so readiness and the status see the change without another read.
      if (changes.length > 0) Object.assign(image, await glance.updateImage(image.id, changes));
      return { done: true };
    },
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
