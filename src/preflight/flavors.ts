/** Flavor checks: every flavor the servers name must be one the project may boot with. */
import type { Flavor } from '../openstack/index.js';
import type { CheckContext } from './context.js';
import { failedCall, type Outcome } from './outcome.js';
import type { PreflightCheck } from './report.js';
import type { FlavorReference, FlavorRequirement } from './requirements.js';

/** Like CAPO: an ID is used as given, a name must match exactly (Nova keeps names unique). */
export function findFlavor(flavors: readonly Flavor[], reference: FlavorReference): Flavor | undefined {
  return 'id' in reference ? flavors.find((flavor) => flavor.id === reference.id) : flavors.find((flavor) => flavor.name === reference.name);
}

/** Checked against the one flavor list the quota check also uses: Nova cannot look flavors up by name. */
export async function checkFlavors(context: CheckContext, flavors: FlavorRequirement[], flavorList: Promise<Outcome<Flavor[]>>): Promise<PreflightCheck[]> {
  if (flavors.length === 0) return [];
  const listed = await flavorList;
  return flavors.map((requirement) => {
    const name = `flavor ${'id' in requirement ? requirement.id : requirement.name}`;
    if (!listed.ok) return failedCall(name, 'listing flavors', listed.error);
    const flavor = findFlavor(listed.value, requirement);
    if (flavor !== undefined) {
      const servers = requirement.servers === 1 ? '1 server' : `${requirement.servers} servers`;
      return {
        name,
        status: 'pass',
        message: `flavor '${flavor.name}' (id ${flavor.id}): ${flavor.vcpus} vCPU, ${flavor.ram} MiB RAM, ${flavor.disk} GB disk, for ${servers}`,
      };
    }
    const available = availableNames(listed.value);
    const wanted = 'id' in requirement ? `flavor id '${requirement.id}'` : `flavor '${requirement.name}'`;
    const field = 'id' in requirement ? 'spec.flavor.id' : 'spec.flavor.filter.name';
    return { name, status: 'fail', message: `${wanted} not found in project ${context.project}: fix ${field} (available: ${available})` };
  });
}

const shownNames = 12;

function availableNames(flavors: readonly Flavor[]): string {
  if (flavors.length === 0) return 'none';
  const names = flavors.map((flavor) => flavor.name).sort();
  return names.length > shownNames ? `${names.slice(0, shownNames).join(', ')}, … ${names.length - shownNames} more` : names.join(', ');
}
