/**
 * Which version of a Cluster API group the management cluster serves a
 * resource in: the first of `versions` (newest first) whose discovery
 * document lists it. A group-version the server does not know answers 404,
 * which means "try the next one".
 */
import { ApiException, type CustomObjectsApi } from '@kubernetes/client-node';
import { describeKubeError } from './watched-collection.js';

export interface ServedVersionQuery<V extends string> {
  custom: CustomObjectsApi;
  group: string;
  versions: readonly V[];
  plural: string;
  /** The resource as the error names it, e.g. `machines` or `IPAddressClaims`. */
  label: string;
  /** Bounds each discovery request. */
  deadline: <T>(request: Promise<T>) => Promise<T>;
}

export async function servedVersion<V extends string>({ custom, group, versions, plural, label, deadline }: ServedVersionQuery<V>): Promise<V> {
  for (const version of versions) {
    try {
      const resources = await deadline(custom.getAPIResources({ group, version }));
      if (resources.resources.some((resource) => resource.name === plural)) return version;
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) continue;
      throw new Error(`discovering ${group}: ${describeKubeError(error)}`, { cause: error });
    }
  }
  throw new Error(`${group} serves ${label} in none of ${versions.join(', ')}: is Cluster API installed?`);
}
