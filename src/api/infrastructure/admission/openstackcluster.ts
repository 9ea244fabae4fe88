/**
 * OpenStackCluster admission: CAPO's openStackClusterWebhook on v1beta2.
 *
 * On update CAPO zeroes, in both copies of the spec, every field it lets
 * change (some only in given states), then forbids any remaining difference.
 * The order matters: the API server floating IP step looks at what the
 * earlier steps left of spec.apiServer.
 */
import { FieldError } from '../../../apiserver/errors.js';
import type { AdmissionRules } from '../../../apiserver/registry/kind.js';
import type { JsonObject } from '../../../storage/interface.js';
import { dropExtensions, regionRuleErrors } from './common.js';
import { copyAt, decodedEqual, deleteFields, isSet, listAt, objectAt, stringAt } from './json.js';
import { isJsonObject } from '../../../storage/json.js';

const identityRefPaths = ['spec.identityRef', 'spec.bastion.spec.identityRef'];

const securityGroupRuleLists = ['clusterNodesSecurityGroupRules', 'controlPlaneNodesSecurityGroupRules', 'workerNodesSecurityGroupRules'] as const;

const remoteFields = ['remoteManagedGroups', 'remoteGroupID', 'remoteIPPrefix'];

function securityGroupRuleErrors(spec: unknown): FieldError[] {
  const groups = objectAt(spec, 'managedSecurityGroups');
  if (!groups) return [];
  return securityGroupRuleLists.flatMap((list) =>
    (listAt(groups, list) ?? []).flatMap((rule, i) =>
      remoteFields.filter((field) => isSet(rule, field)).length > 1
        ? [FieldError.forbidden(`spec.managedSecurityGroups.${list}[${i}]`, 'only one of remoteManagedGroups, remoteGroupID, or remoteIPPrefix can be set')]
        : [],
    ),
  );
}

function validateUpdate(object: JsonObject, old: JsonObject): FieldError[] {
  const ruleErrors = regionRuleErrors(object, old, identityRefPaths);
  if (ruleErrors.length > 0) return ruleErrors;

  const errors: FieldError[] = [];
  const spec = copyAt(object, 'spec');
  const oldSpec = copyAt(old, 'spec');
  const oldStatus = objectAt(old, 'status');
  dropExtensions(spec);
  dropExtensions(oldSpec);

  deleteFields([spec, oldSpec], 'identityRef');

  // The endpoint may be filled in while it is unset or has no host.
  const oldEndpoint = objectAt(oldSpec, 'controlPlaneEndpoint');
  if (!oldEndpoint) deleteFields([spec], 'controlPlaneEndpoint');
  else if (stringAt(oldEndpoint, 'host') === '') deleteFields([spec, oldSpec], 'controlPlaneEndpoint');

  // Without a floating IP the fixed IP and the port may be set once.
  const apiServer = objectAt(spec, 'apiServer');
  const oldApiServer = objectAt(oldSpec, 'apiServer');
  if (apiServer && oldApiServer && oldApiServer.enableFloatingIP === false) {
    if (stringAt(oldApiServer, 'fixedIP') === '') deleteFields([apiServer, oldApiServer], 'fixedIP');
    if (!isSet(oldApiServer, 'port')) deleteFields([apiServer], 'port');
  }

  if (!isSet(spec, 'bastion') && bastionEnabled(oldSpec.bastion)) {
    errors.push(FieldError.forbidden('spec.bastion', 'cannot be removed before disabling it'));
  }
  deleteFields([spec, oldSpec], 'bastion');

  errors.push(...securityGroupRuleErrors(spec));
  // The groups' rules may change; adding the block is allowed, removing it is not.
  const groups = objectAt(spec, 'managedSecurityGroups');
  if (groups) {
    let oldGroups = objectAt(oldSpec, 'managedSecurityGroups');
    if (!oldGroups) {
      oldGroups = {};
      oldSpec.managedSecurityGroups = oldGroups;
    }
    deleteFields([groups, oldGroups], ...securityGroupRuleLists, 'allowAllInClusterTraffic');
  }

  errors.push(...managedSubnetErrors(spec, oldSpec));

  const loadBalancer = objectAt(apiServer, 'managedLoadBalancer');
  const oldLoadBalancer = objectAt(oldApiServer, 'managedLoadBalancer');
  if (loadBalancer && oldLoadBalancer) deleteFields([loadBalancer, oldLoadBalancer], 'allowedCIDRs', 'monitor');

  deleteFields([spec, oldSpec], 'controlPlaneAvailabilityZones', 'controlPlaneOmitAvailabilityZone');

  // The floating IP may be pinned to the one the load balancer got.
  const statusLoadBalancer = objectAt(oldStatus, 'apiServerManagedLoadBalancer');
  if (statusLoadBalancer && stringAt(apiServer, 'floatingIP') === stringAt(statusLoadBalancer, 'ip')) {
    for (const s of [spec, oldSpec]) {
      const server = objectAt(s, 'apiServer');
      if (!server) continue;
      delete server.floatingIP;
      if (Object.values(server).every((value) => value === undefined || value === null)) delete s.apiServer;
    }
  }

  deleteFields([spec, oldSpec], 'primarySubnet');

  // Filters may be pinned to the IDs they resolved to.
  const network = objectAt(spec, 'network');
  const statusNetwork = objectAt(oldStatus, 'network');
  if (network && objectAt(oldSpec, 'network') && statusNetwork) {
    if (subnetsPinnedToStatus(listAt(spec, 'subnets') ?? [], listAt(oldSpec, 'subnets') ?? [], listAt(statusNetwork, 'subnets') ?? [])) {
      deleteFields([spec, oldSpec], 'subnets');
    }
    if (stringAt(network, 'id') === stringAt(statusNetwork, 'id')) deleteFields([spec, oldSpec], 'network');
  }

  if (!decodedEqual(spec, oldSpec)) errors.push(FieldError.forbidden('spec', 'cannot be modified'));
  return errors;
}

function bastionEnabled(bastion: unknown): boolean {
  return isJsonObject(bastion) && bastion.enabled !== false;
}

/**
 * Managed subnets are matched by CIDR; only their DNS nameservers may change.
 * CAPO indexes the old subnets by CIDR with later ones winning, so with
 * repeated CIDRs only the last old subnet has its nameservers cleared.
 */
function managedSubnetErrors(spec: JsonObject, oldSpec: JsonObject): FieldError[] {
  const subnets = listAt(spec, 'managedSubnets');
  const oldSubnets = listAt(oldSpec, 'managedSubnets');
  if (!subnets || !oldSubnets) return [];
  if (subnets.length !== oldSubnets.length) {
    return [FieldError.forbidden('spec.managedSubnets', 'cannot add or remove subnets')];
  }
  const errors: FieldError[] = [];
  const oldByCidr = new Map(oldSubnets.filter(isJsonObject).map((subnet) => [stringAt(subnet, 'cidr'), subnet]));
  for (const subnet of subnets.filter(isJsonObject)) {
    const cidr = stringAt(subnet, 'cidr');
    const oldSubnet = oldByCidr.get(cidr);
    if (!oldSubnet) {
      errors.push(FieldError.forbidden('spec.managedSubnets', `cannot change subnet CIDR from existing value to ${cidr}`));
      continue;
    }
    deleteFields([subnet, oldSubnet], 'dnsNameservers');
  }
  return errors;
}

/**
 * CAPO's allowSubnetFilterToIDTransition: position by position, a filter may
 * become the ID of the status subnet whose name the filter named, and neither
 * a filter's name nor an ID may otherwise change.
 */
function subnetsPinnedToStatus(subnets: unknown[], oldSubnets: unknown[], statusSubnets: unknown[]): boolean {
  if (subnets.length !== oldSubnets.length || statusSubnets.length === 0) return false;
  return subnets.every((subnet, i) => {
    const oldSubnet = oldSubnets[i];
    const filter = objectAt(subnet, 'filter');
    const oldFilter = objectAt(oldSubnet, 'filter');
    const hasID = isSet(subnet, 'id');
    const hadID = isSet(oldSubnet, 'id');
    if (oldFilter && hasID && !filter) {
      const id = stringAt(subnet, 'id');
      const name = stringAt(oldFilter, 'name');
      if (!statusSubnets.some((status) => stringAt(status, 'name') === name && stringAt(status, 'id') === id)) return false;
    }
    if (hadID && filter) return false;
    if (oldFilter && filter && stringAt(oldFilter, 'name') !== stringAt(filter, 'name')) return false;
    if (hadID && hasID && stringAt(oldSubnet, 'id') !== stringAt(subnet, 'id')) return false;
    return true;
  });
}

export const openStackClusterAdmission: AdmissionRules = {
  validateCreate: (object) => securityGroupRuleErrors(object.spec),
  validateUpdate,
};
