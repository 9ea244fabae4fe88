import { describe, expect, it } from 'vitest';
import { clusterExtensionsOf, type InventorySnapshot } from '../../src/inventory/index.js';
import { cluster, machine, namespace, reconciled, server } from '../../harness/inventory-objects.js';

function withChanges(change: (snapshot: InventorySnapshot) => void): InventorySnapshot {
  const snapshot = reconciled();
  change(snapshot);
  return snapshot;
}

describe('clusterExtensionsOf, on a reconciled cluster', () => {
  const extension = clusterExtensionsOf(reconciled(), namespace, 'c1') as Record<string, any>;

  it('carries every variable of the bootstrap under its Ansible name', () => {
    expect(extension.status.vars).toEqual({
      kube_network_plugin: 'cilium',
      cilium_openstack_project_id: 'proj-1',
      cilium_openstack_default_subnet_id: 'subnet-1',
      cilium_openstack_security_group_ids: ['sg-1', 'sg-2'],
      vpc_cni_webhook_enable: false,
      master_virtual_vip: '10.6.0.10',
      ingress_virtual_vip: '10.6.0.11',
      harbor_addr: '10.6.0.11',
      cloud_master_vip: '192.0.2.1',
      openstack_auth_domain: 'https://keystone.example:5000/v3',
      openstack_cinder_domain: 'https://cinder.example:8776/v3',
      openstack_nova_domain: 'https://nova.example:8774/v2.1',
      openstack_neutron_domain: 'https://neutron.example:9696',
      openstack_project_name: 'team-a-project',
      openstack_project_domain_name: 'Default',
      openstack_region_name: 'RegionOne',
      ntp_server: 'ntp1.example',
      vip_mgmt: '192.0.2.2',
      node_resources: {
        'c1-cp-0': { cpu: '200m', memory: '1380Mi', ephemeralStorage: '500Mi' },
        'c1-md-a': { cpu: '100m', memory: '1380Mi', ephemeralStorage: '500Mi' },
        'c1-md-b': { cpu: '100m', memory: '1380Mi', ephemeralStorage: '500Mi' },
      },
    });
  });

  it('keeps each input at its path, per-machine inputs keyed by machine', () => {
    expect(extension.spec.clusterName).toBe('c1');
    expect(extension.spec.extensions.networking.kubeNetworkPlugin).toBe('cilium');
    expect(extension.spec.extensions.networkInterfaces).toEqual({ flannel: 'eth1', keepalived: { 'c1-cp-0': 'eth0', 'c1-md-a': 'eth0', 'c1-md-b': 'eth0' } });
    const status = extension.status.extensions;
    expect(status.networking.cilium).toEqual({ projectID: 'proj-1', defaultSubnetID: 'subnet-1', securityGroupIDs: ['sg-1', 'sg-2'], webhookEnable: false });
    expect(status.loadBalancers.controlPlane.vip).toBe('10.6.0.10');
    expect(status.loadBalancers.ingress.vip).toBe('10.6.0.11');
    expect(status.openStack.mgmt).toBe('192.0.2.1');
    expect(status.openStack.keystone).toBe('https://keystone.example:5000/v3');
    expect(status.platform).toEqual({ ntp: { server: 'ntp1.example' }, management: { vip: '192.0.2.2' } });
    expect(status.nodeResources['c1-cp-0'].reserved).toEqual({ cpu: '200m', memory: '1380Mi', ephemeralStorage: '500Mi' });
    // The reconciler's bookkeeping of created resources is not a bootstrap input.
    expect(status.ownedResources).toBeUndefined();
  });

  it('is Ready, lists only variables the configuration does not use, and counts machines', () => {
    expect(extension.status.missing).toEqual([
      {
        variable: 'flannel_interface',
        path: 'spec.extensions.networkInterfaces.flannel',
        reason: 'NotApplicable',
        message: "used only with kube_network_plugin flannel; the cluster's is cilium",
      },
    ]);
    expect(extension.status.summary).toEqual({ controlPlaneMachines: 1, workerMachines: 2, missingVariables: 0 });
    expect(extension.status.conditions).toEqual([
      { type: 'Ready', status: 'True', reason: 'AllVariablesSet', message: 'every variable of the bootstrap has a value' },
    ]);
  });

  it('takes identity from the cluster and the newest input revision as resourceVersion', () => {
    expect(extension.apiVersion).toBe('extensions.capo-apiserver.io/v1alpha1');
    expect(extension.kind).toBe('ClusterExtension');
    expect(extension.metadata).toMatchObject({
      name: 'c1',
      namespace,
      resourceVersion: '33',
      creationTimestamp: '2026-01-02T03:04:05Z',
      labels: { 'cluster.x-k8s.io/cluster-name': 'c1', team: 'a' },
      ownerReferences: [{ apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2', kind: 'OpenStackCluster', name: 'c1', uid: 'uid-c1', controller: true }],
    });
    expect(extension.metadata.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(extension.metadata.uid).not.toBe('uid-c1');
    expect((clusterExtensionsOf(reconciled(), namespace, 'c1') as any).metadata.uid).toBe(extension.metadata.uid);
  });
});

describe('clusterExtensionsOf, with inputs missing', () => {
  it('gives a reason for every value the reconciler has not written, with the cluster condition', () => {
    const snapshot = withChanges((s) => {
      s.clusters = [
        cluster((c) => {
          delete c.status.extensions;
          c.status.conditions = [
            { type: 'Ready', status: 'False', reason: 'NetworkNotReady', message: 'waiting for the router', lastTransitionTime: '2026-01-02T03:10:00Z' },
          ];
        }),
      ];
    });
    const extension = clusterExtensionsOf(snapshot, namespace, 'c1') as any;
    const missing = Object.fromEntries(extension.status.missing.map((m: any) => [m.variable, m]));
    for (const variable of [
      'cilium_openstack_project_id',
      'cilium_openstack_default_subnet_id',
      'cilium_openstack_security_group_ids',
      'vpc_cni_webhook_enable',
      'master_virtual_vip',
      'ingress_virtual_vip',
      'harbor_addr',
      'cloud_master_vip',
      'openstack_auth_domain',
      'openstack_cinder_domain',
      'openstack_nova_domain',
      'openstack_neutron_domain',
      'openstack_project_name',
      'openstack_project_domain_name',
      'openstack_region_name',
      'ntp_server',
      'vip_mgmt',
    ]) {
      expect(missing[variable]?.reason, variable).toBe('NotReported');
      expect(extension.status.vars[variable], variable).toBeUndefined();
    }
    expect(missing.master_virtual_vip).toEqual({
      variable: 'master_virtual_vip',
      path: 'status.extensions.loadBalancers.controlPlane.vip',
      reason: 'NotReported',
      message:
        'the reconciler has not written status.extensions.loadBalancers.controlPlane.vip on OpenStackCluster team-a/c1 yet (Ready=False, NetworkNotReady: waiting for the router)',
    });
    expect(extension.status.summary.missingVariables).toBe(17);
    expect(extension.status.conditions[0]).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'VariablesMissing',
      message:
        'no value for cilium_openstack_project_id, cilium_openstack_default_subnet_id, cilium_openstack_security_group_ids, vpc_cni_webhook_enable, master_virtual_vip and 12 more; see status.missing',
    });
  });

  it('names the user inputs to set on the cluster and on each machine', () => {
    const snapshot = withChanges((s) => {
      s.clusters = [
        cluster((c) => {
          c.spec.extensions = { networking: { kubeNetworkPlugin: 'flannel' } };
        }),
      ];
      s.machines = [machine('c1-cp-0', { controlPlane: true }, (m) => delete m.spec.extensions), machine('c1-md-a', {}, (m) => delete m.status.extensions)];
    });
    const extension = clusterExtensionsOf(snapshot, namespace, 'c1') as any;
    expect(extension.status.missing).toEqual(
      expect.arrayContaining([
        {
          variable: 'flannel_interface',
          path: 'spec.extensions.networkInterfaces.flannel',
          reason: 'NotSet',
          message: 'set spec.extensions.networkInterfaces.flannel on OpenStackCluster team-a/c1 (or in its ClusterClass)',
        },
        {
          variable: 'keepalived_interface',
          path: 'spec.extensions.networkInterfaces.keepalived[c1-cp-0]',
          reason: 'NotSet',
          message: 'set spec.extensions.networkInterfaces.keepalived on OpenStackMachine team-a/c1-cp-0 (or on its OpenStackMachineTemplate)',
          machine: 'c1-cp-0',
        },
        {
          variable: 'node_resources.c1-md-a',
          path: 'status.extensions.nodeResources[c1-md-a].reserved',
          reason: 'NotReported',
          message:
            'OpenStackMachine team-a/c1-md-a has no status.extensions.nodeResources.reserved yet: the reconciler computes it once the flavor is resolved',
          machine: 'c1-md-a',
        },
        {
          variable: 'ansible_user',
          path: 'spec.extensions.ssh.user',
          reason: 'NotSet',
          message: 'set spec.extensions.ssh.user on OpenStackCluster team-a/c1; without it Ansible logs in as the user running it',
        },
        {
          variable: 'ingress_virtual_vip',
          path: 'status.extensions.loadBalancers.ingress.vip',
          reason: 'NotApplicable',
          message: 'the cluster has no ingress load balancer (spec.extensions.loadBalancers.ingress.enabled is not true)',
        },
        {
          variable: 'cilium_openstack_project_id',
          path: 'status.extensions.networking.cilium.projectID',
          reason: 'NotApplicable',
          message: "used only with kube_network_plugin cilium; the cluster's is flannel",
        },
      ]),
    );
    expect(extension.status.vars.node_resources).toEqual({ 'c1-cp-0': { cpu: '200m', memory: '1380Mi', ephemeralStorage: '500Mi' } });
    expect(extension.spec.extensions.networkInterfaces).toEqual({ keepalived: { 'c1-md-a': 'eth0' } });
    expect(extension.status.summary.missingVariables).toBe(4);
  });

  it('reports an unset plugin and a cluster without API server load balancer or machines', () => {
    const snapshot = withChanges((s) => {
      s.clusters = [
        cluster((c) => {
          delete c.spec.extensions.networking;
          delete c.spec.apiServer;
        }),
      ];
      s.machines = [];
    });
    const missing = (clusterExtensionsOf(snapshot, namespace, 'c1') as any).status.missing;
    expect(missing).toEqual(
      expect.arrayContaining([
        {
          variable: 'kube_network_plugin',
          path: 'spec.extensions.networking.kubeNetworkPlugin',
          reason: 'NotSet',
          message: 'set spec.extensions.networking.kubeNetworkPlugin on OpenStackCluster team-a/c1 (or in its ClusterClass)',
        },
        {
          variable: 'master_virtual_vip',
          path: 'status.extensions.loadBalancers.controlPlane.vip',
          reason: 'NotApplicable',
          message: 'the cluster has no API server load balancer (spec.apiServer.managedLoadBalancer is not set)',
        },
        {
          variable: 'vpc_cni_webhook_enable',
          path: 'status.extensions.networking.cilium.webhookEnable',
          reason: 'NotApplicable',
          message: "used only with kube_network_plugin cilium; the cluster's is not set",
        },
        {
          variable: 'hosts',
          path: 'status.summary',
          reason: 'NotFound',
          message: 'no OpenStackMachine in namespace team-a carries the label cluster.x-k8s.io/cluster-name=c1',
        },
      ]),
    );
  });
});

describe('clusterExtensionsOf, selecting inputs', () => {
  it('is undefined for a cluster that does not exist, also in another namespace', () => {
    expect(clusterExtensionsOf(reconciled(), namespace, 'c2')).toBeUndefined();
    expect(clusterExtensionsOf(reconciled(), 'team-b', 'c1')).toBeUndefined();
  });

  it('gathers machines by the Cluster API cluster name label of the OpenStackCluster, in its namespace only', () => {
    const snapshot = withChanges((s) => {
      s.clusters = [cluster((c) => (c.metadata.name = 'c1-infra'))];
      s.machines.push(machine('other-ns', {}, (m) => (m.metadata.namespace = 'team-b')));
      s.machines.push(machine('other-cluster', {}, (m) => (m.metadata.labels['cluster.x-k8s.io/cluster-name'] = 'c2')));
    });
    const extension = clusterExtensionsOf(snapshot, namespace, 'c1-infra') as any;
    expect(extension.spec.clusterName).toBe('c1');
    expect(Object.keys(extension.status.vars.node_resources)).toEqual(['c1-cp-0', 'c1-md-a', 'c1-md-b']);
  });

  it('refuses a stored object that is not a CAPO object', () => {
    const snapshot = withChanges((s) => s.servers.push(server('broken', {}, (o) => (o.metadata.resourceVersion = 'x'))));
    expect(() => clusterExtensionsOf(snapshot, namespace, 'c1')).toThrow(
      /stored OpenStackServer team-a\/broken cannot be read by the inventory: metadata.resourceVersion/,
    );
  });
});
