import { describe, expect, it } from 'vitest';
import { openStackClusterAdmission as rules } from '../../../../src/api/infrastructure/admission/index.js';
import type { JsonObject } from '../../../../src/storage/interface.js';
import { changed, create, machineSpec, openStackCluster, rendered, update } from './objects.js';

const immutable = { type: 'FieldValueForbidden', field: 'spec', message: 'Forbidden: cannot be modified' };
const exclusiveRemotes = 'Forbidden: only one of remoteManagedGroups, remoteGroupID, or remoteIPPrefix can be set';

/** A cluster the controller has provisioned: endpoint, load balancer and network in status. */
function provisioned(): JsonObject {
  return changed(openStackCluster(), (c) => {
    c.spec.controlPlaneEndpoint = { host: '203.0.113.10', port: 6443 };
    c.spec.network = { filter: { name: 'k8s-clusterapi-cluster-default-capi-quickstart' } };
    c.spec.subnets = [{ filter: { name: 'k8s-clusterapi-cluster-default-capi-quickstart' } }];
    c.status = {
      apiServerManagedLoadBalancer: {
        id: 'lb-1',
        name: 'k8s-clusterapi-cluster-default-capi-quickstart-kubeapi',
        ip: '203.0.113.10',
        internalIP: '10.6.0.5',
      },
      network: {
        id: 'net-1',
        name: 'k8s-clusterapi-cluster-default-capi-quickstart',
        subnets: [{ id: 'subnet-1', name: 'k8s-clusterapi-cluster-default-capi-quickstart', cidr: '10.6.0.0/24' }],
      },
    };
  });
}

describe('OpenStackCluster create', () => {
  it('accepts the cluster template', () => {
    expect(create(rules, openStackCluster())).toEqual([]);
  });

  it.each(['clusterNodesSecurityGroupRules', 'controlPlaneNodesSecurityGroupRules', 'workerNodesSecurityGroupRules'])(
    'forbids two remotes on one rule of %s',
    (list) => {
      const cluster = changed(openStackCluster(), (c) => {
        c.spec.managedSecurityGroups[list] = [
          { name: 'ssh', direction: 'ingress', protocol: 'tcp', portRangeMin: 22, portRangeMax: 22, remoteIPPrefix: '0.0.0.0/0' },
          { name: 'api', direction: 'ingress', remoteIPPrefix: '10.0.0.0/8', remoteManagedGroups: ['worker'] },
        ];
      });
      expect(rendered(create(rules, cluster))).toEqual([
        { type: 'FieldValueForbidden', field: `spec.managedSecurityGroups.${list}[1]`, message: exclusiveRemotes },
      ]);
    },
  );

  it('counts an empty remoteManagedGroups list as set, as a non-nil Go slice', () => {
    const cluster = changed(openStackCluster(), (c) => {
      c.spec.managedSecurityGroups.workerNodesSecurityGroupRules = [{ name: 'x', direction: 'ingress', remoteGroupID: 'sg-1', remoteManagedGroups: [] }];
    });
    expect(rendered(create(rules, cluster))).toEqual([
      { type: 'FieldValueForbidden', field: 'spec.managedSecurityGroups.workerNodesSecurityGroupRules[0]', message: exclusiveRemotes },
    ]);
  });
});

describe('OpenStackCluster update', () => {
  it('accepts an unchanged spec, and null for an unset field', () => {
    const old = provisioned();
    expect(update(rules, old, old)).toEqual([]);
    expect(
      update(
        rules,
        changed(old, (c) => (c.spec.tags = null)),
        old,
      ),
    ).toEqual([]);
  });

  it('forbids changing an immutable field', () => {
    const old = provisioned();
    expect(
      rendered(
        update(
          rules,
          changed(old, (c) => (c.spec.tags = ['team-a'])),
          old,
        ),
      ),
    ).toEqual([immutable]);
    expect(
      rendered(
        update(
          rules,
          changed(old, (c) => (c.spec.externalNetwork = { id: 'other' })),
          old,
        ),
      ),
    ).toEqual([immutable]);
  });

  it('accepts changes to the extensions CAPO does not know', () => {
    const old = provisioned();
    expect(
      update(
        rules,
        changed(old, (c) => (c.spec.extensions = { networking: { kubeNetworkPlugin: 'cilium' } })),
        old,
      ),
    ).toEqual([]);
  });

  describe('identityRef', () => {
    it('lets name and cloudName change', () => {
      const old = provisioned();
      const cluster = changed(old, (c) => {
        c.spec.identityRef.name = 'rotated-cloud-config';
        c.spec.identityRef.cloudName = 'openstack-admin';
      });
      expect(update(rules, cluster, old)).toEqual([]);
    });

    it('keeps the region (CRD rule), reporting it alone', () => {
      const old = changed(provisioned(), (c) => (c.spec.identityRef.region = 'RegionOne'));
      const cluster = changed(old, (c) => {
        c.spec.identityRef.region = 'RegionTwo';
        c.spec.tags = ['also-changed'];
      });
      const errors = update(rules, cluster, old);
      expect(rendered(errors)).toEqual([{ type: 'FieldValueInvalid', field: 'spec.identityRef', message: 'Invalid value: region is immutable' }]);
      expect(errors[0]?.toString()).toBe('spec.identityRef: Invalid value: region is immutable');
    });

    it('fails the CRD rule when a region is added or removed', () => {
      const withRegion = changed(provisioned(), (c) => (c.spec.identityRef.region = 'RegionOne'));
      const noSuchKey = {
        type: 'FieldValueInvalid',
        field: 'spec.identityRef',
        message: 'Invalid value: no such key: region evaluating rule: region is immutable',
      };
      expect(rendered(update(rules, withRegion, provisioned()))).toEqual([noSuchKey]);
      expect(rendered(update(rules, provisioned(), withRegion))).toEqual([noSuchKey]);
    });

    it('keeps the bastion region (CRD rule), but only where the old object has a bastion identityRef', () => {
      const bastion = { enabled: true, spec: { ...machineSpec(), identityRef: { name: 'bastion-creds', cloudName: 'openstack', region: 'RegionOne' } } };
      const old = changed(provisioned(), (c) => (c.spec.bastion = structuredClone(bastion)));
      const cluster = changed(old, (c) => (c.spec.bastion.spec.identityRef.region = 'RegionTwo'));
      expect(rendered(update(rules, cluster, old))).toEqual([
        { type: 'FieldValueInvalid', field: 'spec.bastion.spec.identityRef', message: 'Invalid value: region is immutable' },
      ]);
      expect(update(rules, cluster, provisioned())).toEqual([]);
    });
  });

  describe('controlPlaneEndpoint', () => {
    it('may be set while unset', () => {
      const old = changed(provisioned(), (c) => delete c.spec.controlPlaneEndpoint);
      expect(update(rules, provisioned(), old)).toEqual([]);
    });

    it('may change while it has no host', () => {
      const old = changed(provisioned(), (c) => (c.spec.controlPlaneEndpoint = { host: '', port: 6443 }));
      expect(update(rules, provisioned(), old)).toEqual([]);
    });

    it('is fixed once it has a host', () => {
      const old = provisioned();
      const cluster = changed(old, (c) => (c.spec.controlPlaneEndpoint.host = '203.0.113.99'));
      expect(rendered(update(rules, cluster, old))).toEqual([immutable]);
      expect(
        rendered(
          update(
            rules,
            changed(old, (c) => delete c.spec.controlPlaneEndpoint),
            old,
          ),
        ),
      ).toEqual([immutable]);
    });
  });

  describe('apiServer fixedIP and port', () => {
    const noFloatingIP = changed(provisioned(), (c) => (c.spec.apiServer.enableFloatingIP = false));

    it('may be set once when the floating IP is disabled', () => {
      const cluster = changed(noFloatingIP, (c) => {
        c.spec.apiServer.fixedIP = '10.6.0.100';
        c.spec.apiServer.port = 8443;
      });
      expect(update(rules, cluster, noFloatingIP)).toEqual([]);
    });

    it('are fixed once set', () => {
      const old = changed(noFloatingIP, (c) => {
        c.spec.apiServer.fixedIP = '10.6.0.100';
        c.spec.apiServer.port = 8443;
      });
      expect(
        rendered(
          update(
            rules,
            changed(old, (c) => (c.spec.apiServer.fixedIP = '10.6.0.101')),
            old,
          ),
        ),
      ).toEqual([immutable]);
      expect(
        rendered(
          update(
            rules,
            changed(old, (c) => (c.spec.apiServer.port = 9443)),
            old,
          ),
        ),
      ).toEqual([immutable]);
    });

    it('are fixed when the floating IP is enabled', () => {
      const old = provisioned();
      expect(
        rendered(
          update(
            rules,
            changed(old, (c) => (c.spec.apiServer.fixedIP = '10.6.0.100')),
            old,
          ),
        ),
      ).toEqual([immutable]);
      expect(
        rendered(
          update(
            rules,
            changed(old, (c) => (c.spec.apiServer.port = 8443)),
            old,
          ),
        ),
      ).toEqual([immutable]);
    });
  });

  describe('apiServer floatingIP', () => {
    it('may be pinned to the load balancer IP in status', () => {
      const old = provisioned();
      expect(
        update(
          rules,
          changed(old, (c) => (c.spec.apiServer.floatingIP = '203.0.113.10')),
          old,
        ),
      ).toEqual([]);
    });

    it('may be pinned when that is all of apiServer', () => {
      const old = changed(provisioned(), (c) => delete c.spec.apiServer);
      expect(
        update(
          rules,
          changed(old, (c) => (c.spec.apiServer = { floatingIP: '203.0.113.10' })),
          old,
        ),
      ).toEqual([]);
    });

    it('may not be set to another IP', () => {
      const old = provisioned();
      expect(
        rendered(
          update(
            rules,
            changed(old, (c) => (c.spec.apiServer.floatingIP = '203.0.113.20')),
            old,
          ),
        ),
      ).toEqual([immutable]);
    });
  });

  describe('bastion', () => {
    const bastion = () => ({ enabled: true, spec: machineSpec() });

    it('may change', () => {
      const old = changed(provisioned(), (c) => (c.spec.bastion = bastion()));
      const cluster = changed(old, (c) => {
        c.spec.bastion.spec.flavor = { filter: { name: 'm1.large' } };
        c.spec.bastion.floatingIP = '203.0.113.30';
      });
      expect(update(rules, cluster, old)).toEqual([]);
      expect(update(rules, old, provisioned())).toEqual([]);
    });

    it('may be removed once disabled', () => {
      const old = changed(provisioned(), (c) => (c.spec.bastion = { ...bastion(), enabled: false }));
      expect(update(rules, provisioned(), old)).toEqual([]);
    });

    it('may not be removed while enabled, explicitly or by default', () => {
      const removed = { type: 'FieldValueForbidden', field: 'spec.bastion', message: 'Forbidden: cannot be removed before disabling it' };
      const old = changed(provisioned(), (c) => (c.spec.bastion = bastion()));
      expect(rendered(update(rules, provisioned(), old))).toEqual([removed]);
      const implicit = changed(old, (c) => delete c.spec.bastion.enabled);
      expect(rendered(update(rules, provisioned(), implicit))).toEqual([removed]);
    });
  });

  describe('managedSecurityGroups', () => {
    it('lets the rules and allowAllInClusterTraffic change', () => {
      const old = provisioned();
      const cluster = changed(old, (c) => {
        c.spec.managedSecurityGroups.allowAllInClusterTraffic = true;
        c.spec.managedSecurityGroups.clusterNodesSecurityGroupRules.pop();
        c.spec.managedSecurityGroups.controlPlaneNodesSecurityGroupRules = [
          { name: 'etcd', direction: 'ingress', protocol: 'tcp', portRangeMin: 2379, portRangeMax: 2380, remoteManagedGroups: ['controlplane'] },
        ];
        c.spec.managedSecurityGroups.workerNodesSecurityGroupRules = [
          { name: 'nodeport', direction: 'ingress', protocol: 'tcp', portRangeMin: 30000, portRangeMax: 32767, remoteIPPrefix: '0.0.0.0/0' },
        ];
      });
      expect(update(rules, cluster, old)).toEqual([]);
    });

    it('may be added but not removed', () => {
      const unmanaged = changed(provisioned(), (c) => delete c.spec.managedSecurityGroups);
      expect(update(rules, provisioned(), unmanaged)).toEqual([]);
      expect(rendered(update(rules, unmanaged, provisioned()))).toEqual([immutable]);
    });

    it('checks the new rules', () => {
      const old = provisioned();
      const cluster = changed(old, (c) => (c.spec.managedSecurityGroups.clusterNodesSecurityGroupRules[0].remoteGroupID = 'sg-1'));
      expect(rendered(update(rules, cluster, old))).toEqual([
        { type: 'FieldValueForbidden', field: 'spec.managedSecurityGroups.clusterNodesSecurityGroupRules[0]', message: exclusiveRemotes },
      ]);
    });
  });

  describe('managedSubnets', () => {
    it('lets the DNS nameservers change', () => {
      const old = changed(provisioned(), (c) => c.spec.managedSubnets.push({ cidr: '10.7.0.0/24' }));
      const cluster = changed(old, (c) => {
        c.spec.managedSubnets[0].dnsNameservers = ['1.1.1.1', '9.9.9.9'];
        c.spec.managedSubnets[1].dnsNameservers = ['8.8.4.4'];
      });
      expect(update(rules, cluster, old)).toEqual([]);
      expect(
        update(
          rules,
          changed(old, (c) => delete c.spec.managedSubnets[0].dnsNameservers),
          old,
        ),
      ).toEqual([]);
    });

    it('forbids a changed CIDR', () => {
      const old = provisioned();
      const cluster = changed(old, (c) => (c.spec.managedSubnets[0].cidr = '10.8.0.0/24'));
      expect(rendered(update(rules, cluster, old))).toEqual([
        { type: 'FieldValueForbidden', field: 'spec.managedSubnets', message: 'Forbidden: cannot change subnet CIDR from existing value to 10.8.0.0/24' },
        immutable,
      ]);
    });

    it('forbids adding or removing subnets', () => {
      const old = provisioned();
      const cluster = changed(old, (c) => c.spec.managedSubnets.push({ cidr: '10.7.0.0/24' }));
      expect(rendered(update(rules, cluster, old))).toEqual([
        { type: 'FieldValueForbidden', field: 'spec.managedSubnets', message: 'Forbidden: cannot add or remove subnets' },
        immutable,
      ]);
    });

    it('forbids changed allocation pools', () => {
      const old = provisioned();
      const cluster = changed(old, (c) => (c.spec.managedSubnets[0].allocationPools = [{ start: '10.6.0.10', end: '10.6.0.200' }]));
      expect(rendered(update(rules, cluster, old))).toEqual([immutable]);
    });
  });

  describe('apiServer managedLoadBalancer', () => {
    it('lets allowedCIDRs and the monitor change', () => {
      const old = provisioned();
      const cluster = changed(old, (c) => {
        c.spec.apiServer.managedLoadBalancer.allowedCIDRs = ['192.0.2.0/24'];
        c.spec.apiServer.managedLoadBalancer.monitor = { delay: 15, timeout: 10, maxRetries: 3, maxRetriesDown: 2 };
      });
      expect(update(rules, cluster, old)).toEqual([]);
    });

    it('keeps everything else', () => {
      const old = provisioned();
      const cluster = changed(old, (c) => (c.spec.apiServer.managedLoadBalancer.provider = 'ovn'));
      expect(rendered(update(rules, cluster, old))).toEqual([immutable]);
    });
  });

  it('lets the control plane availability zones and primarySubnet change', () => {
    const old = provisioned();
    const cluster = changed(old, (c) => {
      c.spec.controlPlaneAvailabilityZones = ['az1', 'az2'];
      c.spec.controlPlaneOmitAvailabilityZone = true;
      c.spec.primarySubnet = { id: 'subnet-2' };
    });
    expect(update(rules, cluster, old)).toEqual([]);
  });

  describe('network and subnets', () => {
    it('may switch from filters to the IDs in status', () => {
      const old = provisioned();
      const cluster = changed(old, (c) => {
        c.spec.network = { id: 'net-1' };
        c.spec.subnets = [{ id: 'subnet-1' }];
      });
      expect(update(rules, cluster, old)).toEqual([]);
    });

    it('may not switch to other IDs', () => {
      const old = provisioned();
      expect(
        rendered(
          update(
            rules,
            changed(old, (c) => (c.spec.network = { id: 'net-2' })),
            old,
          ),
        ),
      ).toEqual([immutable]);
      expect(
        rendered(
          update(
            rules,
            changed(old, (c) => (c.spec.subnets = [{ id: 'subnet-2' }])),
            old,
          ),
        ),
      ).toEqual([immutable]);
    });

    it('may not switch from an ID back to a filter', () => {
      const old = changed(provisioned(), (c) => (c.spec.subnets = [{ id: 'subnet-1' }]));
      const cluster = changed(old, (c) => (c.spec.subnets = [{ filter: { name: 'k8s-clusterapi-cluster-default-capi-quickstart' } }]));
      expect(rendered(update(rules, cluster, old))).toEqual([immutable]);
    });
  });
});
