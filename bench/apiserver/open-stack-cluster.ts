/** The OpenStackClusters the API server benchmarks write: valid (CAPO v1beta2), of a real one's size. */
import type { JsonObject } from '../../src/storage/interface.js';

export const group = 'infrastructure.cluster.x-k8s.io';

export const objectName = (index: number) => `c-${String(index).padStart(6, '0')}`;

/** A valid OpenStackCluster (CAPO v1beta2) of the size a real one has, its fields varied by index. */
export function openStackCluster(index: number): JsonObject {
  return {
    apiVersion: `${group}/v1beta2`,
    kind: 'OpenStackCluster',
    metadata: {
      name: objectName(index),
      labels: { 'cluster.x-k8s.io/cluster-name': objectName(index), shard: `s${index % 16}`, tier: index % 2 === 0 ? 'front' : 'back' },
    },
    spec: {
      identityRef: { name: `cloud-${index % 7}`, cloudName: 'openstack' },
      managedSubnets: [{ cidr: `10.${index % 250}.0.0/24`, dnsNameservers: ['192.0.2.53'] }],
      apiServer: { managedLoadBalancer: { enabled: true } },
      managedSecurityGroups: {
        allowAllInClusterTraffic: false,
        clusterNodesSecurityGroupRules: [
          {
            name: 'vxlan',
            description: 'Cilium VXLAN between nodes',
            direction: 'ingress',
            etherType: 'IPv4',
            protocol: 'udp',
            portRangeMin: 8472,
            portRangeMax: 8472,
            remoteManagedGroups: ['controlplane', 'worker'],
          },
        ],
      },
      bastion: { enabled: index % 3 === 0, spec: { flavor: { filter: { name: 'm1.tiny' } }, image: { filter: { name: 'ubuntu-22.04' } } } },
      tags: ['bench', `t${index % 7}`],
    },
  };
}
