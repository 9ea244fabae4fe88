/** The managed security group rules, as CAPO defines them, from group IDs. */
import { describe, expect, it } from 'vitest';
import { desiredRules } from '../../src/capo/security-group-rules.js';

const groups = { controlplane: 'cp', worker: 'w', bastion: 'b' };
const context = { groups, apiServerPorts: [6443, 8443], subnetCidrs: ['10.6.0.0/24'] };
const base = { allowAllInClusterTraffic: false };
const ports = (rules: ReturnType<typeof desiredRules>) =>
  rules.map(
    (rule) =>
      `${rule.direction} ${rule.protocol ?? 'any'} ${rule.port_range_min ?? ''}-${rule.port_range_max ?? ''} ${rule.remote_group_id ?? rule.remote_ip_prefix ?? 'any'}`,
  );

describe('desiredRules', () => {
  it('opens the API ports, etcd, the kubelet and SSH from the bastion on the control plane', () => {
    expect(ports(desiredRules('controlplane', base, context))).toEqual([
      'egress any - any',
      'egress any - any',
      'ingress tcp 6443-6443 0.0.0.0/0',
      'ingress tcp 8443-8443 0.0.0.0/0',
      'ingress tcp 2379-2380 cp',
      'ingress tcp 10250-10250 cp',
      'ingress tcp 10250-10250 w',
      'ingress tcp 22-22 b',
    ]);
  });

  it('opens NodePorts from the cluster subnets and both node groups on workers', () => {
    const rules = ports(desiredRules('worker', base, context));
    expect(rules).toContain('ingress tcp 30000-32767 10.6.0.0/24');
    expect(rules).toContain('ingress udp 30000-32767 cp');
    expect(rules).toContain('ingress tcp 10250-10250 w');
    expect(rules).not.toContain('ingress tcp 6443-6443 0.0.0.0/0');
  });

  it('replaces etcd and kubelet rules with any protocol between nodes under allowAllInClusterTraffic', () => {
    const rules = ports(desiredRules('controlplane', { allowAllInClusterTraffic: true }, context));
    expect(rules).toContain('ingress any - cp');
    expect(rules).toContain('ingress any - w');
    expect(rules).not.toContain('ingress tcp 2379-2380 cp');
  });

  it('expands remoteManagedGroups into one rule per group and leaves the bastion with SSH only', () => {
    const spec = {
      ...base,
      clusterNodesSecurityGroupRules: [
        {
          name: 'vxlan',
          direction: 'ingress' as const,
          protocol: 'udp',
          portRangeMin: 8472,
          portRangeMax: 8472,
          remoteManagedGroups: ['controlplane' as const, 'worker' as const],
        },
      ],
    };
    const rules = ports(desiredRules('worker', spec, context));
    expect(rules).toContain('ingress udp 8472-8472 cp');
    expect(rules).toContain('ingress udp 8472-8472 w');
    expect(ports(desiredRules('bastion', spec, context))).toEqual(['egress any - any', 'egress any - any', 'ingress tcp 22-22 0.0.0.0/0']);
  });
});
