/** The shape of one cluster of ../../harness/cluster-manifests.ts, for the critical-path model. */
import { z } from 'zod';
import type { ClusterObjects } from '../../harness/cluster-manifests.js';
import type { ClusterShape } from './critical-path.js';

const clusterSpecSchema = z.looseObject({
  apiServer: z
    .looseObject({ managedLoadBalancer: z.looseObject({ enabled: z.boolean().optional(), additionalPorts: z.array(z.number()).optional() }).optional() })
    .optional(),
  bastion: z.looseObject({ enabled: z.boolean().optional() }).optional(),
  extensions: z
    .looseObject({
      loadBalancers: z
        .looseObject({ ingress: z.looseObject({ enabled: z.boolean().optional(), ports: z.array(z.number()).optional() }).optional() })
        .optional(),
    })
    .optional(),
});

/** Machines and load balancer ports of one cluster, as its OpenStackCluster asks for them. */
export function clusterShape(objects: ClusterObjects): ClusterShape {
  const cluster = objects.cluster.find((object) => object.kind === 'OpenStackCluster');
  const spec = clusterSpecSchema.parse(cluster?.spec ?? {});
  const managed = spec.apiServer?.managedLoadBalancer;
  if (managed === undefined || managed.enabled === false) throw new Error('the benchmark models clusters with a managed API load balancer; examples/ has none');
  const ingress = spec.extensions?.loadBalancers?.ingress;
  return {
    controlPlane: objects.controlPlane.length,
    workers: objects.workers.length,
    apiPorts: 1 + (managed.additionalPorts?.length ?? 0),
    // The reconciler's default ingress ports are 80 and 443.
    ingressPorts: ingress?.enabled ? ingress.ports?.length || 2 : 0,
    bastion: spec.bastion !== undefined && spec.bastion.enabled !== false,
  };
}
