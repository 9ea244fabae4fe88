/** What a cluster's specs ask of the cloud, before any call is made. */
import { describe, expect, it } from 'vitest';
import { requirementsOf } from '../../src/preflight/index.js';
import { clusterSpec, machineSpec, machineSpecs } from './specs.js';

describe('requirementsOf', () => {
  it('counts what the default cluster creates: 7 servers, a network with router, 3 managed groups, the load balancer and 2 floating IPs', () => {
    expect(requirementsOf(clusterSpec(), machineSpecs())).toEqual({
      images: [{ filter: { name: 'ubuntu-22.04' } }],
      flavors: [{ name: 'm1.small', servers: 7 }],
      externalNetwork: undefined,
      loadBalancer: true,
      demand: {
        instances: 7,
        volumes: 0,
        volumeGiB: 0,
        networks: 1,
        subnets: 1,
        routers: 1,
        // 7 server ports, the VIP, the router interface and the DHCP port.
        ports: 10,
        securityGroups: 3,
        // Control plane 2 egress + API + etcd + 2 kubelet + SSH; workers 2 egress + 2×3 NodePort + 2 kubelet + SSH; bastion 2 egress + SSH.
        securityGroupRules: 7 + 11 + 3,
        floatingIps: 2,
        loadBalancers: 1,
      },
    });
  });

  it('keeps each image once and counts servers per flavor, by id or name', () => {
    const large = machineSpec({ flavor: { id: '4' }, image: { id: '0b3ba7d2-4f43-4cf4-9e18-8f4fbc1a4e1b' } });
    const tagged = machineSpec({ image: { filter: { name: 'ubuntu-22.04', tags: ['golden'] } } });
    const orc = machineSpec({ image: { imageRef: { name: 'orc-image' } } });
    const requirements = requirementsOf(clusterSpec(), [...machineSpecs(3, large), tagged, tagged, orc]);
    expect(requirements.images).toEqual([
      { id: '0b3ba7d2-4f43-4cf4-9e18-8f4fbc1a4e1b' },
      { filter: { name: 'ubuntu-22.04', tags: ['golden'] } },
      // ORC resolves its own images; the bastion's filter is still checked.
      { filter: { name: 'ubuntu-22.04' } },
    ]);
    expect(requirements.flavors).toEqual([
      { id: '4', servers: 3 },
      { name: 'm1.small', servers: 4 },
    ]);
  });

  it('asks for no external network, router or floating IP when the external network is disabled', () => {
    const cluster = clusterSpec({
      enableExternalNetwork: false,
      apiServer: { enableFloatingIP: false },
      bastion: { enabled: false },
      managedSecurityGroups: undefined,
    });
    const requirements = requirementsOf(cluster, machineSpecs(2));
    expect(requirements.externalNetwork).toBeNull();
    expect(requirements.loadBalancer).toBe(false);
    expect(requirements.demand).toMatchObject({
      instances: 2,
      routers: 0,
      floatingIps: 0,
      loadBalancers: 0,
      securityGroups: 0,
      securityGroupRules: 0,
      ports: 3,
    });
  });

  it('passes a chosen external network on, by id or filter', () => {
    const id = 'c5a5c5e8-8a8e-4f57-9d6c-7f6e0c3b9b11';
    expect(requirementsOf(clusterSpec({ externalNetwork: { id } }), []).externalNetwork).toEqual({ id });
    expect(requirementsOf(clusterSpec({ externalNetwork: { filter: { name: 'public', tags: ['ext'] } } }), []).externalNetwork).toEqual({
      filter: { name: 'public', tags: ['ext'] },
    });
  });

  it('counts Cinder volumes (root and Volume-backed devices, not Local ones), ports per server, and pool floating IPs', () => {
    const machine = machineSpec({
      rootVolume: { sizeGiB: 30 },
      additionalBlockDevices: [
        { name: 'etcd', sizeGiB: 10, storage: { type: 'Volume' } },
        { name: 'scratch', sizeGiB: 50, storage: { type: 'Local' } },
      ],
      ports: [{}, { nameSuffix: 'storage' }],
      floatingIPPoolRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'OpenStackFloatingIPPool', name: 'pool' },
    });
    const { demand } = requirementsOf(clusterSpec({ bastion: { enabled: false } }), machineSpecs(3, machine));
    expect(demand).toMatchObject({ instances: 3, volumes: 6, volumeGiB: 120, ports: 3 * 2 + 1 + 1 + 1, floatingIps: 1 + 3, securityGroups: 2 });
  });

  it('counts rules of the managed groups as the reconciler builds them, extra ports and user rules included', () => {
    const plain = requirementsOf(clusterSpec({ bastion: { enabled: false } }), []).demand.securityGroupRules;
    const richer = requirementsOf(
      clusterSpec({
        bastion: { enabled: false },
        apiServer: { managedLoadBalancer: { enabled: true, additionalPorts: [8443] } },
        managedSecurityGroups: {
          allowAllInClusterTraffic: false,
          clusterNodesSecurityGroupRules: [
            { name: 'bgp', direction: 'ingress', protocol: 'tcp', portRangeMin: 179, portRangeMax: 179, remoteManagedGroups: ['controlplane', 'worker'] },
          ],
        },
      }),
      [],
    ).demand.securityGroupRules;
    // One more API port; the BGP rule in both groups, for both remote groups.
    expect(richer - plain).toBe(1 + 2 * 2);
  });

  it('refuses an invalid spec, naming the field', () => {
    expect(() => requirementsOf(clusterSpec(), [machineSpec({ flavor: 'm1.small' })])).toThrow(/^machine spec 1 is not valid: flavor/);
    expect(() => requirementsOf({ managedSubnets: [] }, [])).toThrow(/^OpenStackCluster spec is not valid: identityRef/);
  });
});
