/**
 * The rules of the managed security groups, as CAPO defines them (control
 * plane, workers, bastion), plus the user's extra rules. Pure: group IDs come
 * in, Neutron rule bodies go out, so the rule set is unit-testable without a
 * cloud.
 */
import type { z } from 'zod';
import type { managedSecurityGroups, securityGroupRuleSpec } from '../api/infrastructure/v1beta2/common.js';
import type { CreateSecurityGroupRule } from '../openstack/index.js';
import type { SecurityGroupRole } from './names.js';

/** Neutron's own field names; the description is not compared, since Neutron cannot change a rule and tells rules apart without it. */
export interface SecurityGroupRuleDesired extends Omit<CreateSecurityGroupRule, 'security_group_id' | 'ethertype' | 'remote_group_id'> {
  /** Required here: rules compare by it, whatever Neutron's default. */
  ethertype: 'IPv4' | 'IPv6';
  /** Another group's ID, or the security group actuator's `sameGroup` for the group itself. */
  remote_group_id?: string;
}

type ManagedSecurityGroups = z.output<typeof managedSecurityGroups>;
type UserRule = z.output<typeof securityGroupRuleSpec>;

export interface ManagedGroupIds {
  controlplane: string;
  worker: string;
  bastion?: string;
}

export interface RuleContext {
  groups: ManagedGroupIds;
  /** The API server port and the load balancer's additional ports, open to anyone on the control plane. */
  apiServerPorts: number[];
  /** IPv4 CIDRs of the cluster subnets, allowed to reach NodePorts. */
  subnetCidrs: string[];
}

const egressDefaults: SecurityGroupRuleDesired[] = [
  { direction: 'egress', ethertype: 'IPv4' },
  { direction: 'egress', ethertype: 'IPv6' },
];

/** What Neutron gives every new group, which every role's rules keep. */
function defaultRules(): SecurityGroupRuleDesired[] {
  return egressDefaults.map((rule) => ({ ...rule }));
}

const tcp = (from: number, to: number, description: string) => ({
  direction: 'ingress' as const,
  ethertype: 'IPv4' as const,
  protocol: 'tcp',
  port_range_min: from,
  port_range_max: to,
  description,
});

function fromGroups(rule: Omit<SecurityGroupRuleDesired, 'remote_group_id'>, groupIds: string[]): SecurityGroupRuleDesired[] {
  return groupIds.map((id) => ({ ...rule, remote_group_id: id }));
}

export function desiredRules(role: SecurityGroupRole, spec: ManagedSecurityGroups, context: RuleContext): SecurityGroupRuleDesired[] {
  const { groups } = context;
  const rules = defaultRules();
  if (role === 'bastion') {
    rules.push({ ...tcp(22, 22, 'SSH'), remote_ip_prefix: '0.0.0.0/0' });
    return rules;
  }
  const self = role === 'controlplane' ? groups.controlplane : groups.worker;
  const peer = role === 'controlplane' ? groups.worker : groups.controlplane;
  if (role === 'controlplane') {
    for (const port of context.apiServerPorts) rules.push({ ...tcp(port, port, 'Kubernetes API'), remote_ip_prefix: '0.0.0.0/0' });
    if (!spec.allowAllInClusterTraffic) rules.push(...fromGroups(tcp(2379, 2380, 'Etcd'), [self]));
  } else {
    for (const protocol of ['tcp', 'udp']) {
      const nodePort = {
        direction: 'ingress' as const,
        ethertype: 'IPv4' as const,
        protocol,
        port_range_min: 30000,
        port_range_max: 32767,
        description: 'Node Port Services',
      };
      for (const cidr of context.subnetCidrs) rules.push({ ...nodePort, remote_ip_prefix: cidr });
      rules.push(...fromGroups(nodePort, [groups.worker, groups.controlplane]));
    }
  }
  if (spec.allowAllInClusterTraffic) {
    rules.push(...fromGroups({ direction: 'ingress', ethertype: 'IPv4', description: 'In-cluster ingress' }, [self, peer]));
  } else {
    rules.push(...fromGroups(tcp(10250, 10250, 'Kubelet API'), [self, peer]));
  }
  if (groups.bastion) rules.push(...fromGroups(tcp(22, 22, 'SSH'), [groups.bastion]));
  const extra = [
    ...(spec.clusterNodesSecurityGroupRules ?? []),
    ...((role === 'controlplane' ? spec.controlPlaneNodesSecurityGroupRules : spec.workerNodesSecurityGroupRules) ?? []),
  ];
  for (const rule of extra) rules.push(...userRule(rule, context.groups));
  return rules;
}

/** One user rule, with remoteManagedGroups expanded to one rule per group. */
function userRule(rule: UserRule, groups: ManagedGroupIds): SecurityGroupRuleDesired[] {
  const base: SecurityGroupRuleDesired = {
    direction: rule.direction,
    ethertype: rule.etherType ?? 'IPv4',
    ...(rule.protocol === undefined ? {} : { protocol: rule.protocol }),
    ...(rule.portRangeMin === undefined ? {} : { port_range_min: rule.portRangeMin }),
    ...(rule.portRangeMax === undefined ? {} : { port_range_max: rule.portRangeMax }),
    ...(rule.description === undefined ? {} : { description: rule.description }),
  };
  if (rule.remoteManagedGroups && rule.remoteManagedGroups.length > 0) {
    return rule.remoteManagedGroups.flatMap((role) => {
      const id = groups[role];
      return id === undefined ? [] : [{ ...base, remote_group_id: id }];
    });
  }
  if (rule.remoteGroupID !== undefined) return [{ ...base, remote_group_id: rule.remoteGroupID }];
  if (rule.remoteIPPrefix !== undefined) return [{ ...base, remote_ip_prefix: rule.remoteIPPrefix }];
  return [base];
}
