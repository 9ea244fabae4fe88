/**
 * CAPO's Neutron filters (name, description, projectID, tag clauses, and for
 * subnets ipVersion, cidr, gatewayIP) and the Neutron list query their
 * server-side clauses become. Resolving a filter against a cloud is the
 * reconciler's (src/reconcile/neutron-filters.ts); preflight reuses the query.
 */
import type { TagFilters } from '../openstack/index.js';

export interface NeutronFilter {
  name?: string;
  description?: string;
  projectID?: string;
  tags?: string[];
  tagsAny?: string[];
  notTags?: string[];
  notTagsAny?: string[];
}

export interface SubnetFilter extends NeutronFilter {
  ipVersion?: number;
  cidr?: string;
  gatewayIP?: string;
}

export interface NeutronParam<F = NeutronFilter> {
  id?: string;
  filter?: F;
}

/** The server-side clauses of a filter as Neutron list query parameters. */
export function neutronQuery(filter: NeutronFilter): TagFilters & { name?: string; project_id?: string } {
  return {
    ...(filter.name === undefined ? {} : { name: filter.name }),
    ...(filter.projectID === undefined ? {} : { project_id: filter.projectID }),
    ...(filter.tags === undefined ? {} : { tags: filter.tags }),
    ...(filter.tagsAny === undefined ? {} : { 'tags-any': filter.tagsAny }),
    ...(filter.notTags === undefined ? {} : { 'not-tags': filter.notTags }),
    ...(filter.notTagsAny === undefined ? {} : { 'not-tags-any': filter.notTagsAny }),
  };
}
