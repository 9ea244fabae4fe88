/** Image checks: each image the servers name must resolve, as CAPO resolves it, to one active Glance image. */
import { isNotFound, type Image } from '../openstack/index.js';
import type { CheckContext } from './context.js';
import { failedCall, outcome } from './outcome.js';
import type { PreflightCheck } from './report.js';
import type { ImageRequirement } from './requirements.js';

export async function checkImage(context: CheckContext, image: ImageRequirement): Promise<PreflightCheck> {
  const name = `image ${labelOf(image)}`;
  if ('id' in image) {
    const found = await outcome(context.clients.glance.getImage(image.id));
    if (found.ok) return activeImage(name, found.value);
    if (isNotFound(found.error)) {
      return {
        name,
        status: 'fail',
        message: `image ${image.id} not found in project ${context.project}: fix spec.image.id, or share the image with the project`,
      };
    }
    return failedCall(name, `looking up image ${image.id}`, found.error);
  }
  const { filter } = image;
  const matches = await outcome(context.clients.glance.findImages(filter));
  if (!matches.ok) return failedCall(name, `looking up images with ${criteriaOf(filter)}`, matches.error);
  const [first, ...others] = matches.value;
  if (first === undefined) {
    const message =
      filter.tags === undefined && filter.name !== undefined
        ? `image '${filter.name}' not found in project ${context.project}: upload it or fix spec.image.filter.name`
        : `no image with ${criteriaOf(filter)} in project ${context.project}: upload or tag one, or fix spec.image.filter`;
    return { name, status: 'fail', message };
  }
  if (others.length > 0) {
    const ids = matches.value.map((match) => match.id).join(', ');
    return {
      name,
      status: 'fail',
      message: `${matches.value.length} images match ${criteriaOf(filter)} (${ids}): add tags to spec.image.filter so that only one matches, or use spec.image.id`,
    };
  }
  return activeImage(name, first);
}

function activeImage(name: string, image: Image): PreflightCheck {
  const shown = image.name === null ? image.id : `'${image.name}' (${image.id})`;
  if (image.status === 'active') return { name, status: 'pass', message: `image ${shown} is active` };
  return { name, status: 'fail', message: `image ${shown} is ${image.status}, not active: wait until its upload finishes, or choose another image` };
}

function labelOf(image: ImageRequirement): string {
  if ('id' in image) return image.id;
  const tags = image.filter.tags === undefined ? '' : `[${image.filter.tags.join(',')}]`;
  return `${image.filter.name ?? ''}${tags}`;
}

function criteriaOf(filter: { name?: string; tags?: string[] }): string {
  const criteria = [filter.name === undefined ? '' : `name '${filter.name}'`, filter.tags === undefined ? '' : `tags ${filter.tags.join(', ')}`];
  return criteria.filter((criterion) => criterion !== '').join(' and ');
}
