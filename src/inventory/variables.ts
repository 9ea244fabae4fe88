/**
 * The Ansible variables of a cluster and of its hosts, with the reason for
 * every one that cannot be given a value. Each variable is read from one
 * path of an OpenStackCluster or OpenStackMachine; the table below is the
 * only place that mapping is written down.
 */
import type { ClusterView, Condition, MachineView, ServerView } from './model.js';
import { isControlPlane } from './model.js';

/**
 * Why a variable has no value:
 * - NotSet: a user input is empty (spec of the cluster or machine);
 * - NotReported: the reconciler has not written the value yet (status);
 * - NotFound: an object the value comes from does not exist;
 * - NotApplicable: the cluster's configuration does not use the variable.
 */
export type MissingReason = 'NotSet' | 'NotReported' | 'NotFound' | 'NotApplicable';

export interface MissingVariable {
  /** The Ansible variable name. */
  variable: string;
  /** Where the value would appear in the computed object. */
  path: string;
  reason: MissingReason;
  message: string;
  /** The machine (host) a per-host variable belongs to. */
  machine?: string;
}

export interface ComputedVariables {
  vars: Record<string, unknown>;
  missing: MissingVariable[];
}

/** Missing variables that keep the bootstrap from running (everything but NotApplicable). */
export function blocking(missing: MissingVariable[]): MissingVariable[] {
  return missing.filter((m) => m.reason !== 'NotApplicable');
}

interface ClusterVariable {
  variable: string;
  /** Path in the ClusterExtension, which is also the path in the OpenStackCluster. */
  path: string;
  read(cluster: ClusterView): unknown;
  /** When the variable is not used by this cluster: why. */
  notApplicable?(cluster: ClusterView): string | undefined;
}

const plugin = (c: ClusterView) => c.spec?.extensions?.networking?.kubeNetworkPlugin;
const statusExtensions = (c: ClusterView) => c.status?.extensions;

const onlyWithPlugin = (wanted: string) => (c: ClusterView) =>
  plugin(c) === wanted ? undefined : `used only with kube_network_plugin ${wanted}; the cluster's is ${plugin(c) ?? 'not set'}`;

const onlyWithApiServerLoadBalancer = (c: ClusterView) => {
  const managed = c.spec?.apiServer?.managedLoadBalancer;
  if (!managed) return 'the cluster has no API server load balancer (spec.apiServer.managedLoadBalancer is not set)';
  return managed.enabled === false ? 'the API server load balancer is disabled (spec.apiServer.managedLoadBalancer.enabled is false)' : undefined;
};

const onlyWithIngress = (c: ClusterView) =>
  c.spec?.extensions?.loadBalancers?.ingress?.enabled === true
    ? undefined
    : 'the cluster has no ingress load balancer (spec.extensions.loadBalancers.ingress.enabled is not true)';

const ingressVip = (c: ClusterView) => statusExtensions(c)?.loadBalancers?.ingress?.vip;

/** Every cluster-level variable of the bootstrap, in the order they are listed. */
export const clusterVariables: readonly ClusterVariable[] = [
  { variable: 'kube_network_plugin', path: 'spec.extensions.networking.kubeNetworkPlugin', read: plugin },
  {
    variable: 'cilium_openstack_project_id',
    path: 'status.extensions.networking.cilium.projectID',
    read: (c) => statusExtensions(c)?.networking?.cilium?.projectID,
    notApplicable: onlyWithPlugin('cilium'),
  },
  {
    variable: 'cilium_openstack_default_subnet_id',
    path: 'status.extensions.networking.cilium.defaultSubnetID',
    read: (c) => statusExtensions(c)?.networking?.cilium?.defaultSubnetID,
    notApplicable: onlyWithPlugin('cilium'),
  },
  {
    variable: 'cilium_openstack_security_group_ids',
    path: 'status.extensions.networking.cilium.securityGroupIDs',
    read: (c) => statusExtensions(c)?.networking?.cilium?.securityGroupIDs,
    notApplicable: onlyWithPlugin('cilium'),
  },
  {
    variable: 'vpc_cni_webhook_enable',
    path: 'status.extensions.networking.cilium.webhookEnable',
    read: (c) => statusExtensions(c)?.networking?.cilium?.webhookEnable,
    notApplicable: onlyWithPlugin('cilium'),
  },
  {
    variable: 'master_virtual_vip',
    path: 'status.extensions.loadBalancers.controlPlane.vip',
    read: (c) => statusExtensions(c)?.loadBalancers?.controlPlane?.vip,
    notApplicable: onlyWithApiServerLoadBalancer,
  },
  { variable: 'ingress_virtual_vip', path: 'status.extensions.loadBalancers.ingress.vip', read: ingressVip, notApplicable: onlyWithIngress },
  { variable: 'harbor_addr', path: 'status.extensions.loadBalancers.ingress.vip', read: ingressVip, notApplicable: onlyWithIngress },
  { variable: 'cloud_master_vip', path: 'status.extensions.openStack.mgmt', read: (c) => statusExtensions(c)?.openStack?.mgmt },
  { variable: 'openstack_auth_domain', path: 'status.extensions.openStack.keystone', read: (c) => statusExtensions(c)?.openStack?.keystone },
  { variable: 'openstack_cinder_domain', path: 'status.extensions.openStack.cinder', read: (c) => statusExtensions(c)?.openStack?.cinder },
  { variable: 'openstack_nova_domain', path: 'status.extensions.openStack.nova', read: (c) => statusExtensions(c)?.openStack?.nova },
  { variable: 'openstack_neutron_domain', path: 'status.extensions.openStack.neutron', read: (c) => statusExtensions(c)?.openStack?.neutron },
  { variable: 'openstack_project_name', path: 'status.extensions.openStack.project', read: (c) => statusExtensions(c)?.openStack?.project },
  {
    variable: 'openstack_project_domain_name',
    path: 'status.extensions.openStack.projectDomain',
    read: (c) => statusExtensions(c)?.openStack?.projectDomain,
  },
  { variable: 'openstack_region_name', path: 'status.extensions.openStack.region', read: (c) => statusExtensions(c)?.openStack?.region },
  { variable: 'ntp_server', path: 'status.extensions.platform.ntp.server', read: (c) => statusExtensions(c)?.platform?.ntp?.server },
  { variable: 'vip_mgmt', path: 'status.extensions.platform.management.vip', read: (c) => statusExtensions(c)?.platform?.management?.vip },
  {
    variable: 'flannel_interface',
    path: 'spec.extensions.networkInterfaces.flannel',
    read: (c) => c.spec?.extensions?.networkInterfaces?.flannel,
    notApplicable: onlyWithPlugin('flannel'),
  },
];

/** The per-machine sources, named as in the ClusterExtension. */
const machineVariablePaths = {
  keepalived_interface: (machine: string) => `spec.extensions.networkInterfaces.keepalived[${machine}]`,
  node_resources: (machine: string) => `status.extensions.nodeResources[${machine}].reserved`,
};

/** The cluster's group variables: every cluster variable, plus node_resources of its machines. */
export function clusterVars(cluster: ClusterView, machines: MachineView[]): ComputedVariables {
  const vars: Record<string, unknown> = {};
  const missing: MissingVariable[] = [];
  const subject = describeObject('OpenStackCluster', cluster);
  for (const definition of clusterVariables) {
    const value = definition.read(cluster);
    const notApplicable = definition.notApplicable?.(cluster);
    if (notApplicable !== undefined) {
      missing.push({ variable: definition.variable, path: definition.path, reason: 'NotApplicable', message: notApplicable });
    } else if (isEmpty(value)) {
      missing.push({ variable: definition.variable, path: definition.path, ...absent(definition.path, subject, cluster) });
    } else {
      vars[definition.variable] = value;
    }
  }
  const nodeResources: Record<string, unknown> = {};
  for (const machine of machines) {
    const reserved = machine.status?.extensions?.nodeResources?.reserved;
    const { name } = machine.metadata;
    if (reserved) nodeResources[name] = reserved;
    else {
      missing.push({
        variable: `node_resources.${name}`,
        path: machineVariablePaths.node_resources(name),
        reason: 'NotReported',
        message: `${describeObject('OpenStackMachine', machine)} has no status.extensions.nodeResources.reserved yet: the reconciler computes it once the flavor is resolved${pendingHint(machine.status?.conditions)}`,
        machine: name,
      });
    }
  }
  vars.node_resources = nodeResources;
  return { vars, missing };
}

export interface HostContext {
  cluster: ClusterView | undefined;
  server: ServerView | undefined;
}

/**
 * The variables of one host: how Ansible reaches it (through the bastion of
 * its cluster when there is one) and its own settings.
 */
export function hostVars(machine: MachineView, { cluster, server }: HostContext): ComputedVariables {
  const vars: Record<string, unknown> = {};
  const missing: MissingVariable[] = [];
  const name = machine.metadata.name;
  const addresses = machine.status?.addresses?.length ? machine.status.addresses : (server?.status?.addresses ?? []);
  const internal = addresses.find((a) => a.type === 'InternalIP')?.address;
  const external = addresses.find((a) => a.type === 'ExternalIP')?.address;
  const jump = cluster ? bastionJump(cluster) : { kind: 'none' as const };

  const reachable = jump.kind === 'none' ? (external ?? internal) : internal;
  if (reachable) vars.ansible_host = reachable;
  else {
    missing.push({
      variable: 'ansible_host',
      path: 'status.addresses',
      reason: 'NotReported',
      message: `${describeObject('OpenStackMachine', machine)} has no ${jump.kind === 'none' ? '' : 'InternalIP '}address yet${pendingHint(machine.status?.conditions)}`,
      machine: name,
    });
  }
  if (internal) {
    vars.ip = internal;
    vars.access_ip = internal;
  }

  const user = cluster?.spec?.extensions?.ssh?.user;
  if (user) vars.ansible_user = user;
  if (jump.kind === 'proxy') vars.ansible_ssh_common_args = `-o ProxyJump=${user ? `${user}@` : ''}${jump.address}`;
  else if (jump.kind === 'pending') {
    missing.push({ variable: 'ansible_ssh_common_args', path: 'status.bastion.floatingIP', reason: 'NotReported', message: jump.message, machine: name });
  }

  const keepalived = machine.spec?.extensions?.networkInterfaces?.keepalived;
  if (keepalived) vars.keepalived_interface = keepalived;
  else missing.push(keepalivedMissing(machine));
  return { vars, missing };
}

export function keepalivedMissing(machine: MachineView): MissingVariable {
  const name = machine.metadata.name;
  return {
    variable: 'keepalived_interface',
    path: machineVariablePaths.keepalived_interface(name),
    reason: 'NotSet',
    message: `set spec.extensions.networkInterfaces.keepalived on ${describeObject('OpenStackMachine', machine)} (or on its OpenStackMachineTemplate)`,
    machine: name,
  };
}

/** The SSH user input, reported once per cluster rather than per host. */
export function sshUserMissing(cluster: ClusterView): MissingVariable | undefined {
  if (cluster.spec?.extensions?.ssh?.user) return undefined;
  return {
    variable: 'ansible_user',
    path: 'spec.extensions.ssh.user',
    reason: 'NotSet',
    message: `set spec.extensions.ssh.user on ${describeObject('OpenStackCluster', cluster)}; without it Ansible logs in as the user running it`,
  };
}

export function machineRole(machine: MachineView): 'control-plane' | 'worker' {
  return isControlPlane(machine) ? 'control-plane' : 'worker';
}

type Jump = { kind: 'none' } | { kind: 'proxy'; address: string } | { kind: 'pending'; message: string };

/** How hosts of the cluster are reached: directly, or through the bastion's floating IP. */
export function bastionJump(cluster: ClusterView): Jump {
  const bastion = cluster.spec?.bastion;
  if (!bastion || bastion.enabled === false) return { kind: 'none' };
  const address = cluster.status?.bastion?.floatingIP;
  if (address) return { kind: 'proxy', address };
  return {
    kind: 'pending',
    message: `the bastion of ${describeObject('OpenStackCluster', cluster)} has no floating IP yet (status.bastion.floatingIP)${pendingHint(cluster.status?.conditions)}`,
  };
}

export function describeObject(kind: string, object: { metadata: { namespace: string; name: string } }): string {
  return `${kind} ${object.metadata.namespace}/${object.metadata.name}`;
}

function absent(path: string, subject: string, cluster: ClusterView): Pick<MissingVariable, 'reason' | 'message'> {
  if (path.startsWith('spec.')) {
    return { reason: 'NotSet', message: `set ${path} on ${subject} (or in its ClusterClass)` };
  }
  return { reason: 'NotReported', message: `the reconciler has not written ${path} on ${subject} yet${pendingHint(cluster.status?.conditions)}` };
}

/** What the object's Ready condition says while it is not ready, to explain a pending value. */
function pendingHint(conditions: Condition[] | undefined): string {
  const ready = conditions?.find((c) => c.type === 'Ready');
  if (!ready || ready.status === 'True') return '';
  const detail = [ready.reason, ready.message].filter(Boolean).join(': ');
  return ` (Ready=${ready.status}${detail ? `, ${detail}` : ''})`;
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}
