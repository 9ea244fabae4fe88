import { describe, expect, it } from 'vitest';
import { ansibleInventory, InventoryNameConflictError, toAnsibleListJson, UnknownClusterError, type InventorySnapshot } from '../../src/inventory/index.js';
import { cluster, machine, namespace, reconciled, server } from '../../harness/inventory-objects.js';

const c1 = [{ namespace, name: 'c1' }];

describe('ansibleInventory', () => {
  it('puts hosts in the Kubespray groups, the cluster variables on a cluster group, and how to reach each host in its vars', () => {
    const inventory = ansibleInventory(reconciled(), c1);
    expect(inventory.revision).toBe('100');
    const groups = Object.fromEntries(inventory.groups.map((g) => [g.name, g]));
    expect(Object.keys(groups)).toEqual(['k8s_cluster', 'kube_control_plane', 'kube_node', 'etcd', 'bastion', 'c1']);
    expect(groups.k8s_cluster).toEqual({ name: 'k8s_cluster', hosts: [], children: ['kube_control_plane', 'kube_node'], vars: {} });
    expect(groups.kube_control_plane.hosts).toEqual(['c1-cp-0']);
    expect(groups.etcd.hosts).toEqual(['c1-cp-0']);
    expect(groups.kube_node.hosts).toEqual(['c1-md-a', 'c1-md-b']);
    expect(groups.bastion.hosts).toEqual(['c1-bastion']);
    expect(groups.c1.hosts).toEqual(['c1-cp-0', 'c1-md-a', 'c1-md-b']);
    expect(groups.c1.vars).toMatchObject({ kube_network_plugin: 'cilium', master_virtual_vip: '10.6.0.10', harbor_addr: '10.6.0.11' });
    expect(Object.keys(groups.c1.vars.node_resources as object)).toEqual(['c1-cp-0', 'c1-md-a', 'c1-md-b']);

    const hosts = Object.fromEntries(inventory.hosts.map((h) => [h.name, h.vars]));
    expect(hosts['c1-md-b']).toEqual({
      ansible_host: '10.6.0.22',
      ip: '10.6.0.22',
      access_ip: '10.6.0.22',
      ansible_user: 'ubuntu',
      ansible_ssh_common_args: '-o ProxyJump=ubuntu@203.0.113.10',
      keepalived_interface: 'eth0',
    });
    expect(hosts['c1-bastion']).toEqual({ ansible_host: '203.0.113.10', ip: '10.6.0.5', ansible_user: 'ubuntu' });
  });

  it('names the SSH key Secret only when asked to include secrets', () => {
    const hostVars = (inventory: ReturnType<typeof ansibleInventory>) => inventory.hosts.map((h) => h.vars.ansible_ssh_private_key_secret);
    expect(hostVars(ansibleInventory(reconciled(), c1))).toEqual([undefined, undefined, undefined, undefined]);
    const secret = { namespace, name: 'c1-ssh', key: 'ssh-privatekey' };
    expect(hostVars(ansibleInventory(reconciled(), c1, { includeSecrets: true }))).toEqual([secret, secret, secret, secret]);
  });

  it('leaves the bastion out until it has a floating IP', () => {
    const snapshot: InventorySnapshot = { ...reconciled(), clusters: [cluster((c) => delete c.status.bastion.floatingIP)] };
    const inventory = ansibleInventory(snapshot, c1);
    expect(inventory.groups.find((g) => g.name === 'bastion')!.hosts).toEqual([]);
    expect(inventory.hosts.map((h) => h.name)).toEqual(['c1-cp-0', 'c1-md-a', 'c1-md-b']);
  });

  it('combines clusters, and refuses names that would collide', () => {
    const snapshot = reconciled();
    snapshot.clusters.push(
      cluster((c) => {
        c.metadata.name = c.metadata.labels['cluster.x-k8s.io/cluster-name'] = '2-prod.x';
        delete c.status.bastion.name;
      }),
    );
    snapshot.machines.push(machine('prod-0', {}, (m) => (m.metadata.labels['cluster.x-k8s.io/cluster-name'] = '2-prod.x')));
    const inventory = ansibleInventory(snapshot, [...c1, { namespace, name: '2-prod.x' }]);
    const prod = inventory.groups.find((g) => g.name === '_2_prod_x')!;
    expect(prod.hosts).toEqual(['prod-0']);
    expect(inventory.groups.find((g) => g.name === 'kube_node')!.hosts).toEqual(['c1-md-a', 'c1-md-b', 'prod-0']);
    expect(inventory.groups.find((g) => g.name === 'bastion')!.hosts).toEqual(['c1-bastion', '2-prod.x-bastion']);

    const twins = reconciled();
    twins.clusters.push(cluster((c) => (c.metadata.namespace = 'team-b')));
    twins.machines.push(machine('c1-cp-0', { controlPlane: true }, (m) => (m.metadata.namespace = 'team-b')));
    expect(() => ansibleInventory(twins, [...c1, { namespace: 'team-b', name: 'c1' }])).toThrow(InventoryNameConflictError);
    expect(() => ansibleInventory(twins, [...c1, { namespace: 'team-b', name: 'c1' }])).toThrow(
      'OpenStackCluster team-b/c1 would get the group name c1, which is already taken',
    );
  });

  it('refuses unknown clusters and malformed selections', () => {
    expect(() => ansibleInventory(reconciled(), [{ namespace, name: 'c9' }])).toThrow(new UnknownClusterError(namespace, 'c9'));
    expect(() => ansibleInventory(reconciled(), [{ namespace: '', name: 'c1' }])).toThrow(/namespace/);
  });
});

describe('toAnsibleListJson', () => {
  it('prints the ansible-inventory --list --export shape', () => {
    const snapshot: InventorySnapshot = {
      revision: 7,
      clusters: [cluster((c) => (c.spec.extensions = { networking: { kubeNetworkPlugin: 'calico' } }))],
      machines: [machine('c1-cp-0', { controlPlane: true })],
      servers: [server('c1-cp-0')],
    };
    const json = toAnsibleListJson(ansibleInventory(snapshot, c1)) as any;
    expect(Object.keys(json)).toEqual(['_meta', 'all', 'k8s_cluster', 'kube_control_plane', 'kube_node', 'etcd', 'bastion', 'c1']);
    expect(json.all).toEqual({ children: ['k8s_cluster', 'etcd', 'bastion', 'c1'] });
    expect(json.k8s_cluster).toEqual({ children: ['kube_control_plane', 'kube_node'] });
    expect(json.kube_control_plane).toEqual({ hosts: ['c1-cp-0'] });
    expect(json.kube_node).toEqual({});
    expect(json.bastion).toEqual({ hosts: ['c1-bastion'] });
    expect(json.c1.hosts).toEqual(['c1-cp-0']);
    expect(json.c1.vars.kube_network_plugin).toBe('calico');
    expect(Object.keys(json._meta.hostvars)).toEqual(['c1-cp-0', 'c1-bastion']);
    expect(json._meta.hostvars['c1-cp-0'].ansible_host).toBe('10.6.0.20');
  });
});
