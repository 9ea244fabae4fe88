import { describe, expect, it } from 'vitest';
import { openStackNodeOf, openStackNodesOf, type InventorySnapshot } from '../../src/inventory/index.js';
import { cluster, controlPlaneHostVars, machine, namespace, reconciled, server } from '../../harness/inventory-objects.js';

function withChanges(change: (snapshot: InventorySnapshot) => void): InventorySnapshot {
  const snapshot = reconciled();
  change(snapshot);
  return snapshot;
}

describe('openStackNodesOf', () => {
  it('gives one node per machine of the cluster, control plane first', () => {
    const nodes = openStackNodesOf(reconciled(), namespace, 'c1') as any[];
    expect(nodes.map((n) => [n.metadata.name, n.spec.role, n.spec.groups])).toEqual([
      ['c1-cp-0', 'control-plane', ['kube_control_plane', 'etcd']],
      ['c1-md-a', 'worker', ['kube_node']],
      ['c1-md-b', 'worker', ['kube_node']],
    ]);
    expect(openStackNodesOf(reconciled(), namespace, 'c2')).toEqual([]);
  });

  it('describes the desired configuration and the server of a running node', () => {
    const node = openStackNodeOf(reconciled(), namespace, 'c1-cp-0') as any;
    expect(node.kind).toBe('OpenStackNode');
    expect(node.metadata).toMatchObject({
      name: 'c1-cp-0',
      namespace,
      resourceVersion: '31',
      labels: { 'cluster.x-k8s.io/cluster-name': 'c1', 'cluster.x-k8s.io/control-plane': '' },
      ownerReferences: [{ kind: 'OpenStackMachine', name: 'c1-cp-0', uid: 'uid-c1-cp-0', controller: true }],
    });
    expect(node.spec).toEqual({
      clusterName: 'c1',
      openStackCluster: 'c1',
      role: 'control-plane',
      groups: ['kube_control_plane', 'etcd'],
      profile: 'm1.large',
      image: 'ubuntu-2204-kube-v1.33.1',
      vars: controlPlaneHostVars,
      nodeResources: { reserved: { cpu: '200m', memory: '1380Mi', ephemeralStorage: '500Mi' }, policy: 'gke-tiered' },
    });
    expect(node.status).toEqual({
      phase: 'Running',
      ready: true,
      server: {
        name: 'c1-cp-0',
        ready: true,
        instanceID: 'srv-c1-cp-0',
        instanceState: 'ACTIVE',
        flavorID: 'flv-1',
        imageID: 'img-1',
        addresses: [{ type: 'InternalIP', address: '10.6.0.99' }],
      },
      ports: [{ id: 'port-c1-cp-0', name: 'c1-cp-0-0', networkID: 'net-1', fixedIPs: ['10.6.0.20'] }],
      volumes: [
        { name: 'c1-cp-0-root', sizeGiB: 50, type: 'ssd', id: 'vol-c1-cp-0-root' },
        { name: 'c1-cp-0-etcd', sizeGiB: 10, type: 'fast' },
      ],
      missing: [],
      conditions: [{ type: 'Ready', status: 'True', reason: 'Running', message: 'the server is running and every host variable has a value' }],
    });
  });

  it('follows the server lifecycle in its phase', () => {
    const phase = (change: (s: InventorySnapshot) => void) => (openStackNodeOf(withChanges(change), namespace, 'c1-md-a') as any).status.phase;
    const serverState = (state: string) => (s: InventorySnapshot) => {
      s.servers = [server('c1-md-a', {}, (o) => (o.status.instanceState = state))];
    };
    expect(phase((s) => (s.servers = []))).toBe('Running');
    expect(
      phase((s) => {
        s.servers = [];
        s.machines = [machine('c1-md-a', {}, (m) => (m.status = {}))];
      }),
    ).toBe('Pending');
    expect(phase(serverState('BUILD'))).toBe('Provisioning');
    expect(phase(serverState('ERROR'))).toBe('Failed');
    expect(phase(serverState('SHUTOFF'))).toBe('Stopped');
    expect(phase(serverState('WEIRD'))).toBe('Unknown');
    expect(phase((s) => (s.machines = [machine('c1-md-a', {}, (m) => (m.metadata.deletionTimestamp = '2026-01-03T00:00:00Z'))]))).toBe('Deleting');
    const provisioning = openStackNodeOf(
      withChanges((s) => {
        s.servers = [server('c1-md-a', {}, (o) => (o.status.ready = false))];
        s.machines = [machine('c1-md-a', {}, (m) => delete m.status.initialization)];
      }),
      namespace,
      'c1-md-a',
    ) as any;
    expect(provisioning.status.phase).toBe('Provisioning');
    expect(provisioning.status.conditions).toEqual([{ type: 'Ready', status: 'False', reason: 'Provisioning', message: 'the server is provisioning' }]);
  });

  it('reaches hosts directly on their floating IP when the cluster has no bastion', () => {
    const snapshot = withChanges((s) => (s.clusters = [cluster((c) => (c.spec.bastion.enabled = false))]));
    const vars = (openStackNodeOf(snapshot, namespace, 'c1-md-a') as any).spec.vars;
    expect(vars.ansible_host).toBe('203.0.113.50');
    expect(vars.ip).toBe('10.6.0.21');
    expect(vars.ansible_ssh_common_args).toBeUndefined();
  });

  it('says why a host cannot be reached or configured yet', () => {
    const snapshot = withChanges((s) => {
      s.clusters = [
        cluster((c) => {
          delete c.status.bastion;
          delete c.spec.extensions.ssh;
        }),
      ];
      s.machines = [machine('c1-md-a', {}, (m) => (m.status = {}))];
      s.servers = [];
    });
    const node = openStackNodeOf(snapshot, namespace, 'c1-md-a') as any;
    expect(node.spec.vars).toEqual({ keepalived_interface: 'eth0' });
    expect(node.status.missing.map((m: any) => [m.variable, m.reason, m.path])).toEqual([
      ['ansible_host', 'NotReported', 'status.addresses'],
      ['ansible_ssh_common_args', 'NotReported', 'status.bastion.floatingIP'],
      ['ansible_user', 'NotSet', 'spec.extensions.ssh.user'],
      ['node_resources', 'NotReported', 'spec.nodeResources.reserved'],
    ]);
    expect(node.status.missing[1].message).toBe('the bastion of OpenStackCluster team-a/c1 has no floating IP yet (status.bastion.floatingIP)');
    expect(node.status.ports).toEqual([]);
    expect(node.status.volumes).toEqual([]);
  });

  it('gives a node to a machine outside any known cluster, saying so', () => {
    const unlabelled = withChanges((s) => s.machines.push(machine('stray', {}, (m) => (m.metadata.labels = {}))));
    const stray = openStackNodeOf(unlabelled, namespace, 'stray') as any;
    expect(stray.spec.clusterName).toBeUndefined();
    expect(stray.status.missing[0]).toEqual({
      variable: 'cluster',
      path: 'spec.clusterName',
      reason: 'NotSet',
      message: 'OpenStackMachine team-a/stray has no cluster.x-k8s.io/cluster-name label',
    });
    // Without a cluster there is no bastion to jump through: the floating IP is the way in.
    expect(stray.spec.vars.ansible_host).toBe('203.0.113.50');

    const orphan = openStackNodeOf(
      withChanges((s) => (s.clusters = [])),
      namespace,
      'c1-md-a',
    ) as any;
    expect(orphan.spec.clusterName).toBe('c1');
    expect(orphan.status.missing[0]).toMatchObject({ variable: 'cluster', reason: 'NotFound', path: 'spec.openStackCluster' });
    expect(openStackNodeOf(reconciled(), namespace, 'nope')).toBeUndefined();
  });
});
