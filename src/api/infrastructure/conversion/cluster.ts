/**
 * OpenStackCluster and OpenStackClusterTemplate, v1beta1 ↔ v1beta2.
 */
import type { JsonObject } from '../../../storage/interface.js';
import { invert, move, type Path } from './json.js';
import { capoVersionPair, type Unit } from './lossless.js';
import { editTemplateSpec, machineSpecToHub, machineSpecToSpoke, machineSpecUnits } from './machine.js';
import {
  contractStatusToHub,
  contractStatusToSpoke,
  contractStatusUnits,
  failureDomainsToHub,
  failureDomainsToSpoke,
  generationOf,
  resolvedPortsToHub,
  resolvedPortsToSpoke,
} from './status.js';
import { isJsonObject } from '../../../storage/json.js';

/**
 * v1beta2 groups v1beta1's flat API server fields under `apiServer`, the
 * network options under `managedNetwork` and the router's external IPs under
 * `managedRouter`; each group exists when one of its fields is set (as in
 * CAPO). The `disable*` booleans became `enable*`. An empty
 * `externalRouterIPs` has no v1beta2 form (`externalIPs` needs an item), so
 * CAPO drops it.
 */
export function clusterSpecToHub(spec: JsonObject): void {
  const apiServer: JsonObject = {};
  move(spec, 'apiServerLoadBalancer', apiServer, 'managedLoadBalancer');
  move(spec, 'disableAPIServerFloatingIP', apiServer, 'enableFloatingIP', invert);
  move(spec, 'apiServerFloatingIP', apiServer, 'floatingIP');
  move(spec, 'apiServerFixedIP', apiServer, 'fixedIP');
  move(spec, 'apiServerPort', apiServer, 'port');
  if (Object.keys(apiServer).length > 0) spec.apiServer = apiServer;

  move(spec, 'disableExternalNetwork', spec, 'enableExternalNetwork', invert);

  const routerIPs = spec.externalRouterIPs;
  delete spec.externalRouterIPs;
  if (Array.isArray(routerIPs) && routerIPs.length > 0) spec.managedRouter = { externalIPs: routerIPs };

  const network: JsonObject = {};
  move(spec, 'networkMTU', network, 'mtu');
  move(spec, 'disablePortSecurity', network, 'enablePortSecurity', invert);
  if (Object.keys(network).length > 0) spec.managedNetwork = network;

  if (isJsonObject(spec.managedSecurityGroups)) {
    move(spec.managedSecurityGroups, 'allNodesSecurityGroupRules', spec.managedSecurityGroups, 'clusterNodesSecurityGroupRules');
  }
  if (isJsonObject(spec.bastion) && isJsonObject(spec.bastion.spec)) machineSpecToHub(spec.bastion.spec);
}

export function clusterSpecToSpoke(spec: JsonObject): void {
  const apiServer = spec.apiServer;
  delete spec.apiServer;
  if (isJsonObject(apiServer)) {
    move(apiServer, 'managedLoadBalancer', spec, 'apiServerLoadBalancer');
    move(apiServer, 'enableFloatingIP', spec, 'disableAPIServerFloatingIP', invert);
    move(apiServer, 'floatingIP', spec, 'apiServerFloatingIP');
    move(apiServer, 'fixedIP', spec, 'apiServerFixedIP');
    move(apiServer, 'port', spec, 'apiServerPort');
  }

  move(spec, 'enableExternalNetwork', spec, 'disableExternalNetwork', invert);

  const router = spec.managedRouter;
  delete spec.managedRouter;
  if (isJsonObject(router)) move(router, 'externalIPs', spec, 'externalRouterIPs');

  const network = spec.managedNetwork;
  delete spec.managedNetwork;
  if (isJsonObject(network)) {
    move(network, 'mtu', spec, 'networkMTU');
    move(network, 'enablePortSecurity', spec, 'disablePortSecurity', invert);
  }

  if (isJsonObject(spec.managedSecurityGroups)) {
    move(spec.managedSecurityGroups, 'clusterNodesSecurityGroupRules', spec.managedSecurityGroups, 'allNodesSecurityGroupRules');
  }
  if (isJsonObject(spec.bastion) && isJsonObject(spec.bastion.spec)) machineSpecToSpoke(spec.bastion.spec);
}

/**
 * Lossy only for values no valid object holds: an empty `apiServer`,
 * `managedNetwork` or `managedRouter` in v1beta2, an empty
 * `externalRouterIPs` in v1beta1; plus the bastion's flavor.
 */
function clusterSpecUnits(at: Path): Unit[] {
  const field = (name: string): Path => [...at, name];
  return [
    {
      spoke: ['apiServerLoadBalancer', 'disableAPIServerFloatingIP', 'apiServerFloatingIP', 'apiServerFixedIP', 'apiServerPort'].map(field),
      hub: [field('apiServer')],
    },
    { spoke: [field('externalRouterIPs')], hub: [field('managedRouter')] },
    { spoke: [field('networkMTU'), field('disablePortSecurity')], hub: [field('managedNetwork')] },
    ...machineSpecUnits([...at, 'bastion', 'spec']),
  ];
}

/** `apiServerLoadBalancer` became `apiServerManagedLoadBalancer`; the bastion's resolved ports changed as a machine's. */
function clusterStatusToHub(status: JsonObject, generation: unknown): void {
  contractStatusToHub(status, generation);
  failureDomainsToHub(status);
  move(status, 'apiServerLoadBalancer', status, 'apiServerManagedLoadBalancer');
  if (isJsonObject(status.bastion)) resolvedPortsToHub(status.bastion.resolved);
}

function clusterStatusToSpoke(status: JsonObject): void {
  contractStatusToSpoke(status);
  failureDomainsToSpoke(status);
  move(status, 'apiServerManagedLoadBalancer', status, 'apiServerLoadBalancer');
  if (isJsonObject(status.bastion)) resolvedPortsToSpoke(status.bastion.resolved);
}

const bastionResolvedPorts: Path = ['status', 'bastion', 'resolved', 'ports'];

export const openStackClusterVersions = capoVersionPair('OpenStackCluster', {
  toHub(out) {
    if (isJsonObject(out.spec)) clusterSpecToHub(out.spec);
    if (isJsonObject(out.status)) clusterStatusToHub(out.status, generationOf(out));
  },
  toSpoke(out) {
    if (isJsonObject(out.spec)) clusterSpecToSpoke(out.spec);
    if (isJsonObject(out.status)) clusterStatusToSpoke(out.status);
  },
  units: [
    ...clusterSpecUnits(['spec']),
    ...contractStatusUnits,
    // Order and a missing controlPlane in v1beta2; an explicit `controlPlane: false` in v1beta1.
    { spoke: [['status', 'failureDomains']], hub: [['status', 'failureDomains']] },
    { spoke: [bastionResolvedPorts], hub: [bastionResolvedPorts] },
  ],
});

/** spec.template.spec is a cluster spec. v1beta2 added spec.template.metadata (labels and annotations). */
export const openStackClusterTemplateVersions = capoVersionPair('OpenStackClusterTemplate', {
  toHub(out) {
    editTemplateSpec(out, clusterSpecToHub);
  },
  toSpoke(out) {
    if (isJsonObject(out.spec) && isJsonObject(out.spec.template)) delete out.spec.template.metadata;
    editTemplateSpec(out, clusterSpecToSpoke);
  },
  units: [...clusterSpecUnits(['spec', 'template', 'spec']), { spoke: [], hub: [['spec', 'template', 'metadata']] }],
});
