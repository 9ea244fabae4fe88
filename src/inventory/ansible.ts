/**
 * The Ansible inventory of one or more clusters, in Kubespray's shape:
 * groups kube_control_plane and etcd (stacked etcd on the control plane),
 * kube_node (workers), k8s_cluster (their parent) and bastion, plus one
 * group per cluster that holds the cluster's bootstrap variables as group
 * variables. Hosts are named after their machines, as Kubespray names nodes
 * after inventory hosts.
 */
import { z } from 'zod';
import { indexOf, clusterNameOf, type ClusterView, type InventorySnapshot } from './model.js';
import { kubesprayGroupsOf } from './nodes.js';
import { bastionJump, clusterVars, hostVars, machineRole } from './variables.js';

export interface AnsibleGroup {
  name: string;
  hosts: string[];
  children: string[];
  vars: Record<string, unknown>;
}

export interface AnsibleHost {
  name: string;
  vars: Record<string, unknown>;
}

export interface AnsibleInventory {
  /** The storage revision the inventory was computed at. */
  revision: string;
  groups: AnsibleGroup[];
  hosts: AnsibleHost[];
}

/** A requested cluster that does not exist (the GraphQL layer answers NOT_FOUND). */
export class UnknownClusterError extends Error {
  constructor(
    readonly namespace: string,
    readonly name: string,
  ) {
    super(`OpenStackCluster ${namespace}/${name} not found`);
  }
}

/** Two hosts or clusters would get the same inventory name (the GraphQL layer answers BAD_USER_INPUT). */
export class InventoryNameConflictError extends Error {}

const clusterSelection = z.array(z.object({ namespace: z.string().min(1), name: z.string().min(1) }));

const standardGroups = ['k8s_cluster', 'kube_control_plane', 'kube_node', 'etcd', 'bastion'] as const;

/** The variable naming the Secret with the SSH private key, given only with includeSecrets. */
export const sshPrivateKeySecretVar = 'ansible_ssh_private_key_secret';

export function ansibleInventory(
  snapshot: InventorySnapshot,
  clusters: { namespace: string; name: string }[],
  options: { includeSecrets?: boolean } = {},
): AnsibleInventory {
  const selected = clusterSelection.parse(clusters);
  const index = indexOf(snapshot);
  const groups = new Map<string, AnsibleGroup>(standardGroups.map((name) => [name, { name, hosts: [], children: [], vars: {} }]));
  groups.get('k8s_cluster')!.children.push('kube_control_plane', 'kube_node');
  const hosts = new Map<string, AnsibleHost & { owner: string }>();

  const addHost = (name: string, vars: Record<string, unknown>, owner: string, memberOf: string[]) => {
    const existing = hosts.get(name);
    if (existing) throw new InventoryNameConflictError(`host ${name} is in both ${existing.owner} and ${owner}`);
    hosts.set(name, { name, vars, owner });
    for (const group of memberOf) groups.get(group)!.hosts.push(name);
  };

  for (const { namespace, name } of selected) {
    const cluster = index.cluster(namespace, name);
    if (!cluster) throw new UnknownClusterError(namespace, name);
    const owner = `OpenStackCluster ${namespace}/${name}`;
    const groupName = clusterGroupName(cluster);
    if (groups.has(groupName)) throw new InventoryNameConflictError(`${owner} would get the group name ${groupName}, which is already taken`);
    const machines = index.machinesOf(namespace, clusterNameOf(cluster));
    const clusterGroup: AnsibleGroup = { name: groupName, hosts: [], children: [], vars: clusterVars(cluster, machines).vars };
    groups.set(groupName, clusterGroup);

    const secret = options.includeSecrets ? secretReference(cluster) : undefined;
    for (const machine of machines) {
      const { vars } = hostVars(machine, { cluster, server: index.serverOf(machine) });
      if (secret) vars[sshPrivateKeySecretVar] = secret;
      addHost(machine.metadata.name, vars, owner, [...kubesprayGroupsOf(machineRole(machine)), groupName]);
    }
    const bastion = bastionHost(cluster);
    if (bastion) {
      if (secret) bastion.vars[sshPrivateKeySecretVar] = secret;
      addHost(bastion.name, bastion.vars, owner, ['bastion']);
    }
  }

  return { revision: String(snapshot.revision), groups: [...groups.values()], hosts: [...hosts.values()].map(({ name, vars }) => ({ name, vars })) };
}

/** `ansible-inventory --list --export` JSON: one entry per group, `all` with the top-level groups, and `_meta.hostvars`. */
export function toAnsibleListJson(inventory: AnsibleInventory): Record<string, unknown> {
  const output: Record<string, unknown> = {};
  const nested = new Set(inventory.groups.flatMap((g) => g.children));
  output._meta = { hostvars: Object.fromEntries(inventory.hosts.map((h) => [h.name, h.vars])) };
  output.all = { children: inventory.groups.filter((g) => !nested.has(g.name)).map((g) => g.name) };
  for (const group of inventory.groups) {
    const entry: Record<string, unknown> = {};
    if (group.hosts.length > 0) entry.hosts = group.hosts;
    if (group.children.length > 0) entry.children = group.children;
    if (Object.keys(group.vars).length > 0) entry.vars = group.vars;
    output[group.name] = entry;
  }
  return output;
}

/** Ansible group names are identifiers; other characters become underscores. */
function clusterGroupName(cluster: ClusterView): string {
  const name = cluster.metadata.name.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

function bastionHost(cluster: ClusterView): AnsibleHost | undefined {
  const jump = bastionJump(cluster);
  if (jump.kind !== 'proxy') return undefined;
  const bastion = cluster.status?.bastion;
  const vars: Record<string, unknown> = { ansible_host: jump.address };
  if (bastion?.ip) vars.ip = bastion.ip;
  const user = cluster.spec?.extensions?.ssh?.user;
  if (user) vars.ansible_user = user;
  return { name: bastion?.name ?? `${cluster.metadata.name}-bastion`, vars };
}

function secretReference(cluster: ClusterView): Record<string, string> | undefined {
  const reference = cluster.spec?.extensions?.ssh?.privateKeySecretRef;
  if (!reference) return undefined;
  return { namespace: cluster.metadata.namespace, name: reference.name, key: reference.key };
}
