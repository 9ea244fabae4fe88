/** v1beta2 specs as the storage holds them, for building preflight requirements in tests. */

export function machineSpec(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { flavor: { filter: { name: 'm1.small' } }, image: { filter: { name: 'ubuntu-22.04' } }, ...overrides };
}

/** What `clusterctl generate cluster` gives: managed network and security groups, the API load balancer, a bastion. */
export function clusterSpec(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    identityRef: { type: 'Secret', name: 'sim-cloud-config', cloudName: 'sim' },
    managedSubnets: [{ cidr: '10.6.0.0/24' }],
    managedSecurityGroups: { allowAllInClusterTraffic: false },
    apiServer: { managedLoadBalancer: { enabled: true } },
    bastion: { enabled: true, spec: machineSpec() },
    ...overrides,
  };
}

/** Three control plane machines and three workers. */
export function machineSpecs(count = 6, spec = machineSpec()): Record<string, unknown>[] {
  return Array.from({ length: count }, () => spec);
}
