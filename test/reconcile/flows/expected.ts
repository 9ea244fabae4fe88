/**
 * How many OpenStack resources a cluster's manifests call for, worked out
 * from the manifests themselves (so editing examples/ moves the
 * expectation with it). Only the features examples/ uses are modelled; a
 * manifest using another one is refused rather than miscounted.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import type { ResourceCounts } from '../../../harness/census.js';

const machineSpec = z.looseObject({
  ports: z.array(z.unknown()).optional(),
  trunk: z.boolean().optional(),
  rootVolume: z.unknown().optional(),
  additionalBlockDevices: z.array(z.unknown()).optional(),
  floatingIPPoolRef: z.unknown().optional(),
});

const clusterSpec = z.looseObject({
  network: z.unknown().optional(),
  router: z.unknown().optional(),
  disableExternalNetwork: z.boolean().optional(),
  managedSubnets: z.array(z.unknown()).optional(),
  managedSecurityGroups: z.looseObject({}).optional(),
  apiServer: z
    .looseObject({
      enableFloatingIP: z.boolean().optional(),
      managedLoadBalancer: z.looseObject({ enabled: z.boolean().optional(), additionalPorts: z.array(z.number()).optional() }).optional(),
    })
    .optional(),
  bastion: z.looseObject({ enabled: z.boolean().optional(), spec: machineSpec.optional() }).optional(),
  extensions: z
    .looseObject({
      loadBalancers: z
        .looseObject({ ingress: z.looseObject({ enabled: z.boolean().optional(), ports: z.array(z.number()).optional() }).optional() })
        .optional(),
    })
    .optional(),
});

/** The reconciler's ingress ports when spec.extensions.loadBalancers.ingress.ports is empty. */
const defaultIngressPorts = 2;

const manifest = z.looseObject({
  kind: z.string(),
  metadata: z.looseObject({ name: z.string(), labels: z.record(z.string(), z.string()).optional() }),
  spec: z.unknown().optional(),
});
export type Manifest = z.infer<typeof manifest>;

const controlPlaneLabel = 'cluster.x-k8s.io/control-plane';

/** Every document of every .yaml file in the directory. */
export async function readManifests(dir: string): Promise<Manifest[]> {
  const documents: Manifest[] = [];
  for (const file of (await readdir(dir)).filter((name) => name.endsWith('.yaml')).sort()) {
    for (const document of parseAllDocuments(await readFile(path.join(dir, file), 'utf8'))) {
      const parsed = manifest.safeParse(document.toJS());
      if (!parsed.success) throw new Error(`${file}: not a Kubernetes object: ${parsed.error.message}`);
      documents.push(parsed.data);
    }
  }
  return documents;
}

function unsupported(where: string, feature: string): never {
  throw new Error(`${where} uses ${feature}, which the expected-resource count does not model; extend test/reconcile/flows/expected.ts`);
}

/** One port per server: the cluster network's, with no trunks, volumes or floating IP pools. */
function checkServerSpec(where: string, spec: z.infer<typeof machineSpec>): void {
  if (spec.ports !== undefined) unsupported(where, 'spec.ports');
  if (spec.trunk === true) unsupported(where, 'trunk ports');
  if (spec.rootVolume !== undefined || spec.additionalBlockDevices !== undefined) unsupported(where, 'volumes');
  if (spec.floatingIPPoolRef !== undefined) unsupported(where, 'a floating IP pool');
}

/** The resources of ours the manifests' single OpenStackCluster and its OpenStackMachines add up to once Ready. */
export function expectedResources(manifests: readonly Manifest[]): ResourceCounts {
  const clusters = manifests.filter((object) => object.kind === 'OpenStackCluster');
  if (clusters.length !== 1) throw new Error(`expected exactly one OpenStackCluster in the manifests, found ${clusters.length}`);
  const where = `OpenStackCluster ${clusters[0].metadata.name}`;
  const spec = clusterSpec.parse(clusters[0].spec ?? {});
  if (spec.network !== undefined) unsupported(where, 'an existing network');
  if (spec.router !== undefined) unsupported(where, 'an existing router');
  const subnets = spec.managedSubnets?.length ?? 0;
  if (subnets === 0) unsupported(where, 'no managedSubnets');

  const machines = manifests.filter((object) => object.kind === 'OpenStackMachine');
  machines.forEach((machine) => {
    checkServerSpec(`OpenStackMachine ${machine.metadata.name}`, machineSpec.parse(machine.spec ?? {}));
  });
  const controlPlane = machines.filter((machine) => machine.metadata.labels?.[controlPlaneLabel] !== undefined).length;
  const workers = machines.length - controlPlane;

  const bastion = spec.bastion !== undefined && spec.bastion.enabled !== false && spec.bastion.spec !== undefined ? 1 : 0;
  if (spec.bastion?.spec) checkServerSpec(`${where} bastion`, spec.bastion.spec);
  const external = spec.disableExternalNetwork === true ? 0 : 1;
  const managed = spec.apiServer?.managedLoadBalancer;
  const loadBalancer = managed !== undefined && managed.enabled !== false ? 1 : 0;
  const apiPorts = loadBalancer * (1 + (managed?.additionalPorts?.length ?? 0));
  const apiFloatingIp = loadBalancer * external * (spec.apiServer?.enableFloatingIP === false ? 0 : 1);
  // The ingress load balancer has the workers as members and no floating IP.
  const ingress = spec.extensions?.loadBalancers?.ingress;
  const ingressLoadBalancer = ingress?.enabled === true ? 1 : 0;
  const ingressPorts = ingressLoadBalancer * (ingress?.ports?.length || defaultIngressPorts);
  const servers = machines.length + bastion;

  return {
    networks: 1,
    subnets,
    routers: external,
    securityGroups: spec.managedSecurityGroups === undefined ? 0 : 2 + bastion,
    floatingIps: apiFloatingIp + bastion * external,
    ports: servers,
    trunks: 0,
    servers,
    loadBalancers: loadBalancer + ingressLoadBalancer,
    listeners: apiPorts + ingressPorts,
    pools: apiPorts + ingressPorts,
    healthMonitors: apiPorts + ingressPorts,
    members: apiPorts * controlPlane + ingressPorts * workers,
    images: manifests.filter(
      (object) => object.kind === 'Image' && (object.spec as { managementPolicy?: string } | undefined)?.managementPolicy !== 'unmanaged',
    ).length,
  };
}

/**
 * The simulator inventory change these resources make, untagged side effects
 * included: a router's gateway and interface ports, a load balancer's VIP
 * port, a floating IP's port on the external network. Security group rules are left out (their number depends on rule
 * expansion, not on anything a duplicate would change).
 */
export function expectedInventoryChange(ours: ResourceCounts): Record<string, number> {
  const change: Record<string, number> = {
    'network.networks': ours.networks,
    'network.subnets': ours.subnets,
    'network.routers': ours.routers,
    'network.securityGroups': ours.securityGroups,
    'network.floatingIps': ours.floatingIps,
    'network.ports': ours.ports + 2 * ours.routers + ours.loadBalancers + ours.floatingIps,
    'network.trunks': ours.trunks,
    'compute.servers': ours.servers,
    'load-balancer.loadbalancers': ours.loadBalancers,
    'load-balancer.listeners': ours.listeners,
    'load-balancer.pools': ours.pools,
    'load-balancer.healthmonitors': ours.healthMonitors,
    'load-balancer.members': ours.members,
    'image.images': ours.images,
  };
  return Object.fromEntries(Object.entries(change).filter(([, count]) => count !== 0));
}

/** An inventory change without security group rules, to compare with expectedInventoryChange. */
export function withoutRules(change: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(change).filter(([key]) => key !== 'network.securityGroupRules'));
}
