/**
 * status.extensions of the cluster: the infrastructure values the Ansible
 * bootstrap reads (see README "Extension fields"), computed from what the
 * reconcile just established and from the identity's Keystone catalog.
 * Credentials are never copied; only endpoints, names and IDs.
 */
import type { JsonObject } from '../../storage/interface.js';
import type { ClusterContext } from './context.js';

export async function endpointOrUndefined(context: ClusterContext, service: 'compute' | 'network' | 'block-storage'): Promise<string | undefined> {
  try {
    return await context.cloud.session.endpoint(service);
  } catch {
    // A cloud without the service (no Cinder, say) simply has no endpoint to publish.
    return undefined;
  }
}

export async function computeExtensions(context: ClusterContext): Promise<void> {
  const { pass, spec, cloud } = context;
  const scope = await cloud.session.authenticate();
  const [nova, neutron, cinder] = await Promise.all([
    endpointOrUndefined(context, 'compute'),
    endpointOrUndefined(context, 'network'),
    endpointOrUndefined(context, 'block-storage'),
  ]);
  const project = cloud.cloud.auth.method === 'password' ? cloud.cloud.auth.project : undefined;
  const projectDomain = project && 'domain' in project && 'name' in project.domain ? project.domain.name : undefined;
  const status = pass.status;
  const subnets = (status.network as { subnets?: { id: string }[] } | undefined)?.subnets ?? [];
  const groupIds = ['workerSecurityGroup', 'controlPlaneSecurityGroup']
    .map((field) => (status[field] as { id?: string } | undefined)?.id)
    .filter((id): id is string => id !== undefined);
  const lb = status.apiServerManagedLoadBalancer as { id?: string; ip?: string; internalIP?: string } | undefined;
  const bastion = status.bastion as { ip?: string; floatingIP?: string } | undefined;
  const managementAddress = bastion?.floatingIP ?? bastion?.ip;
  const ntpServers = spec.extensions?.platform?.ntp?.servers ?? [];
  const previous = (status.extensions as JsonObject | undefined) ?? {};

  const extensions = prune({
    ownedResources: previous.ownedResources,
    availabilityZones: previous.availabilityZones,
    openStack: {
      mgmt: new URL(cloud.cloud.authUrl).hostname,
      keystone: cloud.cloud.authUrl,
      nova,
      neutron,
      cinder,
      project: scope.projectName ?? (project && 'name' in project ? project.name : undefined),
      projectDomain,
      region: cloud.cloud.region,
    },
    networking: {
      cilium: {
        projectID: scope.projectId,
        defaultSubnetID: subnets[0]?.id,
        securityGroupIDs: groupIds.length > 0 ? groupIds : undefined,
        webhookEnable: spec.extensions?.networking?.kubeNetworkPlugin === 'cilium',
      },
    },
    loadBalancers: {
      controlPlane: lb?.id ? { id: lb.id, vip: lb.internalIP || undefined, floatingIP: lb.ip && lb.ip !== lb.internalIP ? lb.ip : undefined } : undefined,
      ingress: previous.loadBalancers ? (previous.loadBalancers as JsonObject).ingress : undefined,
    },
    platform: {
      ntp: { server: ntpServers[0] ?? managementAddress },
      management: { vip: managementAddress },
    },
  });
  pass.observe((current) => {
    current.extensions = extensions;
  });
}

/** Drops undefined values and the objects left empty by them, so absent inputs stay absent rather than empty. */
function prune(value: unknown): JsonObject {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node) || node === null || typeof node !== 'object') return node;
    const entries = Object.entries(node as Record<string, unknown>)
      .map(([key, child]) => [key, walk(child)] as const)
      .filter(([, child]) => child !== undefined && !(typeof child === 'object' && child !== null && !Array.isArray(child) && Object.keys(child).length === 0));
    return Object.fromEntries(entries);
  };
  return walk(value) as JsonObject;
}
