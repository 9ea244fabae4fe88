/**
 * The cluster flow's inputs and evidence on ministack (real OpenStack Zed on
 * loopback): the manifests of a small cluster that uses only what ministack
 * seeds, and a census of every OpenStack resource a run left in any project,
 * as the cloud admin sees them.
 */
import { parse as parseYaml, stringify } from 'yaml';
import { z } from 'zod';
import type { ServiceTransport } from '../../../src/openstack/transport.js';
import { createServiceClients } from '../../../src/openstack/services/index.js';

/** What ministack's up.sh seeds: the public image, and flavors any of which the fake compute host fits. */
const ministackImage = 'ubuntu-22.04';
const ministackFlavors = { bastion: 'm1.tiny', controlPlane: 'm1.medium', worker: 'm1.small' } as const;

const cloudsFile = z.object({ clouds: z.record(z.string(), z.record(z.string(), z.unknown())) });

/** A clouds.yaml holding only `cloudName` of `cloudsYaml`, so the identity Secret never carries the admin's password. */
export function singleCloudYaml(cloudsYaml: string, cloudName: string): string {
  const { clouds } = cloudsFile.parse(parseYaml(cloudsYaml));
  const entry = clouds[cloudName];
  if (entry === undefined) throw new Error(`clouds.yaml has no cloud "${cloudName}" (it has: ${Object.keys(clouds).join(', ')})`);
  return stringify({ clouds: { [cloudName]: entry } });
}

export interface ClusterManifestOptions {
  /** Cluster name; every OpenStack name the reconciler derives contains it. */
  name: string;
  namespace: string;
  /** A clouds.yaml with exactly the cloud the cluster acts as. */
  cloudsYaml: string;
  cloudName: string;
  /** Where the machines' ORC Image downloads its content from, and the content's sha256. */
  nodeImage: { url: string; sha256: string };
}

/**
 * Secret, an ORC Image the machines boot from (uploaded to Glance from
 * `nodeImage`), Cluster, OpenStackCluster (managed network, router, security
 * groups, API load balancer with a floating IP, a bastion on ministack's own
 * image), an OpenStackFloatingIPPool `<name>-workers` on the external
 * network, and one control plane and one worker Machine (its floating IP
 * from that pool) with their OpenStackMachines and bootstrap Secrets: a
 * multi-document YAML for `kubectl apply -f -`.
 */
export function clusterManifests({ name, namespace, cloudsYaml, cloudName, nodeImage }: ClusterManifestOptions): string {
  const clusterLabel = { 'cluster.x-k8s.io/cluster-name': name };
  const identity = `${name}-cloud-config`;
  const objects: object[] = [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: identity, namespace },
      type: 'Opaque',
      stringData: { 'clouds.yaml': cloudsYaml },
    },
    {
      apiVersion: 'openstack.k-orc.cloud/v1alpha1',
      kind: 'Image',
      metadata: { name: `${name}-node`, namespace },
      spec: {
        cloudCredentialsRef: { secretName: identity, cloudName },
        resource: {
          name: `${name}-node`,
          content: { diskFormat: 'raw', download: { url: nodeImage.url, hash: { algorithm: 'sha256', value: nodeImage.sha256 } } },
        },
      },
    },
    {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name, namespace },
      spec: {
        clusterNetwork: { pods: { cidrBlocks: ['192.168.0.0/16'] } },
        infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackCluster', name },
      },
    },
    {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
      kind: 'OpenStackCluster',
      metadata: { name, namespace, labels: clusterLabel },
      spec: {
        identityRef: { name: identity, cloudName },
        managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['192.0.2.53'] }],
        apiServer: { managedLoadBalancer: { enabled: true } },
        managedSecurityGroups: {
          allowAllInClusterTraffic: false,
          clusterNodesSecurityGroupRules: [
            {
              name: 'vxlan',
              direction: 'ingress',
              etherType: 'IPv4',
              protocol: 'udp',
              portRangeMin: 8472,
              portRangeMax: 8472,
              remoteManagedGroups: ['controlplane', 'worker'],
            },
          ],
        },
        bastion: { enabled: true, spec: { flavor: { filter: { name: ministackFlavors.bastion } }, image: { filter: { name: ministackImage } } } },
      },
    },
    {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
      kind: 'OpenStackFloatingIPPool',
      metadata: { name: `${name}-workers`, namespace },
      spec: { identityRef: { name: identity, cloudName }, maxIPs: 1, reclaimPolicy: 'Delete' },
    },
    ...machine({
      name: `${name}-control-plane-0`,
      namespace,
      clusterName: name,
      role: 'control-plane',
      flavor: ministackFlavors.controlPlane,
      image: `${name}-node`,
    }),
    ...machine({
      name: `${name}-md-0-0`,
      namespace,
      clusterName: name,
      role: 'worker',
      flavor: ministackFlavors.worker,
      image: `${name}-node`,
      floatingIPPool: `${name}-workers`,
    }),
  ];
  return objects.map((object) => stringify(object)).join('---\n');
}

interface MachineOptions {
  name: string;
  namespace: string;
  clusterName: string;
  role: 'control-plane' | 'worker';
  flavor: string;
  /** The ORC Image it boots from. */
  image: string;
  /** An OpenStackFloatingIPPool to take the machine's floating IP from. */
  floatingIPPool?: string;
}

/** The Machine Cluster API would create, the OpenStackMachine it points at, and the bootstrap Secret its server boots with. */
function machine({ name, namespace, clusterName, role, flavor, image, floatingIPPool }: MachineOptions): object[] {
  const labels = { 'cluster.x-k8s.io/cluster-name': clusterName, ...(role === 'control-plane' ? { 'cluster.x-k8s.io/control-plane': '' } : {}) };
  const bootstrap = `${name}-bootstrap`;
  return [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: bootstrap, namespace, labels: { 'cluster.x-k8s.io/cluster-name': clusterName } },
      type: 'cluster.x-k8s.io/secret',
      stringData: { format: 'cloud-config', value: `#cloud-config\nruncmd:\n  - echo "${name} booted" > /var/tmp/capo-ministack\n` },
    },
    {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: { name, namespace, labels },
      spec: {
        clusterName,
        version: 'v1.33.1',
        bootstrap: { dataSecretName: bootstrap },
        infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackMachine', name },
      },
    },
    {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
      kind: 'OpenStackMachine',
      metadata: { name, namespace, labels },
      spec: {
        flavor: { filter: { name: flavor } },
        image: { imageRef: { name: image } },
        ...(floatingIPPool === undefined
          ? {}
          : { floatingIPPoolRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackFloatingIPPool', name: floatingIPPool } }),
      },
    },
  ];
}

/** One OpenStack resource a run left behind, as `<kind> <name> (<id>)` in failures. */
export interface Remnant {
  kind: string;
  id: string;
  name: string;
}

/**
 * Admin's view of every project. Neutron and Octavia show an admin all
 * projects' resources; Nova and Cinder list only the caller's project unless
 * asked for all.
 */
function acrossProjects(admin: ServiceTransport): ServiceTransport {
  return {
    request(service, request, schema) {
      const widened = request.method === 'GET' && (service === 'compute' || service === 'block-storage');
      return admin.request(service, widened ? { ...request, query: { ...request.query, all_tenants: 1 } } : request, schema);
    },
  };
}

interface Inspectable {
  id: string;
  name?: string | null;
  description?: string | null;
  tags?: readonly string[];
  metadata?: Readonly<Record<string, string>>;
}

/**
 * Every network, subnet, port, router, security group, floating IP, load
 * balancer, listener, pool, health monitor, member, server, volume and image in any
 * project whose name, description, tags or metadata mention one of
 * `traces`: the run's cluster name (in every name the reconciler derives and
 * in its human-readable tag), the uids of its objects (the owner tag
 * `capo-apiserver:owner=<uid>`, and a volume's owner metadata), and its load
 * balancer ids (Octavia's own VIP port `octavia-lb-<id>` and security group
 * `lb-<id>`).
 */
export async function remnants(admin: ServiceTransport, traces: readonly string[]): Promise<Remnant[]> {
  if (traces.some((trace) => trace.length < 6)) throw new Error(`traces this short would match strangers' resources: ${JSON.stringify(traces)}`);
  const { neutron, octavia, nova, cinder, glance } = createServiceClients(acrossProjects(admin));
  const [networks, subnets, ports, routers, groups, floatingIps, loadBalancers, listeners, pools, healthMonitors, servers, volumes, images] = await Promise.all(
    [
      neutron.listNetworks(),
      neutron.listSubnets(),
      neutron.listPorts(),
      neutron.listRouters(),
      neutron.listSecurityGroups(),
      neutron.listFloatingIps(),
      octavia.listLoadBalancers(),
      octavia.listListeners(),
      octavia.listPools(),
      octavia.listHealthMonitors(),
      nova.listServers(),
      cinder.listVolumes(),
      glance.listImages({ visibility: 'all' }),
    ],
  );
  const mentions = (item: Inspectable) =>
    [item.name ?? '', item.description ?? '', ...(item.tags ?? []), ...Object.values(item.metadata ?? {})].some((text) =>
      traces.some((trace) => text.includes(trace)),
    );
  const found = (kind: string, items: readonly Inspectable[]): Remnant[] =>
    items.filter(mentions).map((item) => ({ kind, id: item.id, name: item.name || item.description || '' }));
  // Members live inside pools, so only our pools' members can be ours.
  const members = (await Promise.all(pools.filter(mentions).map((pool) => octavia.listMembers(pool.id)))).flat();
  return [
    ...found('network', networks),
    ...found('subnet', subnets),
    ...found('port', ports),
    ...found('router', routers),
    ...found('security group', groups),
    ...found('floating IP', floatingIps),
    ...found('load balancer', loadBalancers),
    ...found('listener', listeners),
    ...found('pool', pools),
    ...found('health monitor', healthMonitors),
    ...found('member', members),
    ...found('server', servers),
    ...found('volume', volumes),
    ...found('image', images),
  ];
}

/** How many of each kind, for comparing a census with what a cluster should own. */
export function countByKind(found: readonly Remnant[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { kind } of found) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}
