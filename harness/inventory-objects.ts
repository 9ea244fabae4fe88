/**
 * Stored CAPO objects (storage versions, with resourceVersions) for a
 * reconciled cluster `c1` in namespace `team-a`: a control plane machine,
 * two workers, their servers, a bastion, and every status extension the
 * reconciler writes.
 */
import type { JsonObject } from '../src/storage/interface.js';
import type { InventorySnapshot } from '../src/inventory/index.js';

export const namespace = 'team-a';
const v1beta2 = 'infrastructure.cluster.x-k8s.io/v1beta2';
const v1alpha1 = 'infrastructure.cluster.x-k8s.io/v1alpha1';

type Change = (object: Record<string, any>) => void;

function meta(name: string, resourceVersion: number, extra: JsonObject = {}): JsonObject {
  return { name, namespace, uid: `uid-${name}`, resourceVersion: String(resourceVersion), creationTimestamp: '2026-01-02T03:04:05Z', ...extra };
}

function apply(object: JsonObject, change?: Change): JsonObject {
  change?.(object);
  return object;
}

export function cluster(change?: Change): JsonObject {
  return apply(
    {
      apiVersion: v1beta2,
      kind: 'OpenStackCluster',
      metadata: meta('c1', 10, { labels: { 'cluster.x-k8s.io/cluster-name': 'c1', team: 'a' } }),
      spec: {
        identityRef: { type: 'Secret', name: 'c1-cloud-config', cloudName: 'openstack' },
        apiServer: { managedLoadBalancer: { enabled: true } },
        bastion: { enabled: true, spec: { flavor: { filter: { name: 'm1.small' } }, image: { filter: { name: 'ubuntu' } } } },
        managedSubnets: [{ cidr: '10.6.0.0/24' }],
        extensions: {
          networking: { kubeNetworkPlugin: 'cilium' },
          networkInterfaces: { flannel: 'eth1' },
          platform: { ntp: { servers: ['ntp1.example'] } },
          loadBalancers: { ingress: { enabled: true, ports: [80, 443] } },
          ssh: { user: 'ubuntu', privateKeySecretRef: { name: 'c1-ssh', key: 'ssh-privatekey' } },
        },
      },
      status: {
        bastion: { id: 'srv-bastion', name: 'c1-bastion', state: 'ACTIVE', ip: '10.6.0.5', floatingIP: '203.0.113.10' },
        conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: '2026-01-02T03:10:00Z' }],
        extensions: {
          ownedResources: { 'listener/6443': 'listener-1' },
          networking: { cilium: { projectID: 'proj-1', defaultSubnetID: 'subnet-1', securityGroupIDs: ['sg-1', 'sg-2'], webhookEnable: false } },
          loadBalancers: {
            controlPlane: { vip: '10.6.0.10', floatingIP: '203.0.113.20', id: 'lb-api' },
            ingress: { vip: '10.6.0.11', floatingIP: '203.0.113.21', id: 'lb-ingress' },
          },
          openStack: {
            mgmt: '192.0.2.1',
            keystone: 'https://keystone.example:5000/v3',
            nova: 'https://nova.example:8774/v2.1',
            neutron: 'https://neutron.example:9696',
            cinder: 'https://cinder.example:8776/v3',
            project: 'team-a-project',
            projectDomain: 'Default',
            region: 'RegionOne',
          },
          platform: { ntp: { server: 'ntp1.example' }, management: { vip: '192.0.2.2' } },
        },
      },
    },
    change,
  );
}

export function machine(name: string, options: { controlPlane?: boolean; resourceVersion?: number; address?: string } = {}, change?: Change): JsonObject {
  const labels: Record<string, string> = { 'cluster.x-k8s.io/cluster-name': 'c1' };
  if (options.controlPlane) labels['cluster.x-k8s.io/control-plane'] = '';
  return apply(
    {
      apiVersion: v1beta2,
      kind: 'OpenStackMachine',
      metadata: meta(name, options.resourceVersion ?? 20, { labels }),
      spec: {
        flavor: { filter: { name: options.controlPlane ? 'm1.large' : 'm1.medium' } },
        image: { filter: { name: 'ubuntu-2204-kube-v1.33.1' } },
        extensions: { networkInterfaces: { keepalived: 'eth0' } },
      },
      status: {
        instanceID: `srv-${name}`,
        instanceState: 'ACTIVE',
        addresses: [
          { type: 'InternalIP', address: options.address ?? '10.6.0.20' },
          { type: 'ExternalIP', address: '203.0.113.50' },
        ],
        initialization: { provisioned: true },
        extensions: {
          nodeResources: { reserved: { cpu: options.controlPlane ? '200m' : '100m', memory: '1380Mi', ephemeralStorage: '500Mi' }, policy: 'gke-tiered' },
        },
      },
    },
    change,
  );
}

export function server(name: string, options: { resourceVersion?: number } = {}, change?: Change): JsonObject {
  return apply(
    {
      apiVersion: v1alpha1,
      kind: 'OpenStackServer',
      metadata: meta(name, options.resourceVersion ?? 30, {
        ownerReferences: [{ apiVersion: v1beta2, kind: 'OpenStackMachine', name, uid: `uid-${name}`, controller: true }],
      }),
      spec: {
        flavor: 'm1.medium',
        image: { filter: { name: 'ubuntu-2204-kube-v1.33.1' } },
        sshKeyName: 'key',
        ports: [{ network: { id: '9e1b1d7c-2f5a-4c1e-8e0e-5a4f3b2c1d0e' } }],
        identityRef: { type: 'Secret', name: 'c1-cloud-config', cloudName: 'openstack' },
        rootVolume: { sizeGiB: 50, type: 'ssd' },
        additionalBlockDevices: [
          { name: 'etcd', sizeGiB: 10, storage: { type: 'Volume', volume: { type: 'fast' } } },
          { name: 'scratch', sizeGiB: 5, storage: { type: 'Local' } },
        ],
      },
      status: {
        ready: true,
        instanceID: `srv-${name}`,
        instanceState: 'ACTIVE',
        addresses: [{ type: 'InternalIP', address: '10.6.0.99' }],
        resolved: {
          imageID: 'img-1',
          flavorID: 'flv-1',
          ports: [{ name: `${name}-0`, networkID: 'net-1', fixedIPs: [{ subnet: 'subnet-1', ipAddress: '10.6.0.20' }] }],
        },
        resources: { ports: [{ id: `port-${name}` }] },
        extensions: { ownedResources: { 'volume/root': `vol-${name}-root` } },
      },
    },
    change,
  );
}

/** The host variables of c1-cp-0 in the reconciled cluster: reached on its InternalIP through the bastion. */
export const controlPlaneHostVars = {
  ansible_host: '10.6.0.20',
  ip: '10.6.0.20',
  access_ip: '10.6.0.20',
  ansible_user: 'ubuntu',
  ansible_ssh_common_args: '-o ProxyJump=ubuntu@203.0.113.10',
  keepalived_interface: 'eth0',
};

/** The reconciled cluster: c1 with c1-cp-0 (control plane), c1-md-a and c1-md-b, each with its server. */
export function reconciled(): InventorySnapshot {
  return {
    revision: 100,
    clusters: [cluster()],
    machines: [
      machine('c1-md-b', { address: '10.6.0.22', resourceVersion: 23 }),
      machine('c1-cp-0', { controlPlane: true, address: '10.6.0.20', resourceVersion: 21 }),
      machine('c1-md-a', { address: '10.6.0.21', resourceVersion: 22 }),
    ],
    servers: [server('c1-cp-0', { resourceVersion: 31 }), server('c1-md-a', { resourceVersion: 32 }), server('c1-md-b', { resourceVersion: 33 })],
  };
}
