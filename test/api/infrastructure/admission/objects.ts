/**
 * Stored objects as CAPO's own templates write them (cluster-template.yaml
 * and the dev-test ClusterClass, with their variables filled in), plus the
 * helpers the admission tests share.
 */
import type { FieldError } from '../../../../src/apiserver/errors.js';
import type { AdmissionContext, AdmissionRules } from '../../../../src/apiserver/registry/kind.js';
import type { JsonObject } from '../../../../src/storage/interface.js';

const v1beta2 = 'infrastructure.cluster.x-k8s.io/v1beta2';
const v1alpha1 = 'infrastructure.cluster.x-k8s.io/v1alpha1';

function metadata(name: string): JsonObject {
  return { name, namespace: 'default', uid: '7c0e1b52-1c3b-4f0e-9a51-3f2d7e0c1a10', resourceVersion: '42', generation: 1 };
}

export function identityRef(): JsonObject {
  return { type: 'Secret', name: 'capi-quickstart-cloud-config', cloudName: 'openstack' };
}

export function machineSpec(): JsonObject {
  return {
    flavor: { filter: { name: 'm1.medium' } },
    image: { filter: { name: 'ubuntu-2204-kube-v1.33.1' } },
    sshKeyName: 'capi-key',
  };
}

export function securityGroupRules(): JsonObject[] {
  return [
    {
      name: 'BGP (Calico)',
      description: 'Created by cluster-api-provider-openstack - BGP (calico)',
      direction: 'ingress',
      etherType: 'IPv4',
      portRangeMin: 179,
      portRangeMax: 179,
      protocol: 'tcp',
      remoteManagedGroups: ['controlplane', 'worker'],
    },
    {
      name: 'IP-in-IP (calico)',
      description: 'Created by cluster-api-provider-openstack - IP-in-IP (calico)',
      direction: 'ingress',
      etherType: 'IPv4',
      protocol: '4',
      remoteManagedGroups: ['controlplane', 'worker'],
    },
  ];
}

export function clusterSpec(): JsonObject {
  return {
    apiServer: { managedLoadBalancer: { enabled: true } },
    externalNetwork: { id: '3d5d6b5e-4a46-4d7b-9c2c-1f1b0d6c9a31' },
    identityRef: identityRef(),
    managedSecurityGroups: { allowAllInClusterTraffic: false, clusterNodesSecurityGroupRules: securityGroupRules() },
    managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['8.8.8.8'] }],
  };
}

export function openStackCluster(): JsonObject {
  return { apiVersion: v1beta2, kind: 'OpenStackCluster', metadata: metadata('capi-quickstart'), spec: clusterSpec() };
}

export function openStackClusterTemplate(): JsonObject {
  return {
    apiVersion: v1beta2,
    kind: 'OpenStackClusterTemplate',
    metadata: metadata('dev-test-openstackcluster'),
    spec: {
      template: {
        metadata: { labels: { 'capo.e2e.test/template-metadata': 'propagated' } },
        spec: clusterSpec(),
      },
    },
  };
}

export function openStackMachine(): JsonObject {
  return {
    apiVersion: v1beta2,
    kind: 'OpenStackMachine',
    metadata: metadata('capi-quickstart-control-plane-x7k2p'),
    spec: { ...machineSpec(), identityRef: identityRef() },
  };
}

export function openStackMachineTemplate(): JsonObject {
  return {
    apiVersion: v1beta2,
    kind: 'OpenStackMachineTemplate',
    metadata: metadata('capi-quickstart-md-0'),
    spec: { template: { spec: machineSpec() } },
  };
}

export function openStackServer(): JsonObject {
  return {
    apiVersion: v1alpha1,
    kind: 'OpenStackServer',
    metadata: metadata('capi-quickstart-bastion'),
    spec: {
      flavor: 'm1.small',
      identityRef: identityRef(),
      image: { filter: { name: 'ubuntu-2204-kube-v1.33.1' } },
      ports: [{ network: { id: '9e1b1d7c-2f5a-4c1e-8e0e-5a4f3b2c1d0e' } }],
      sshKeyName: 'capi-key',
    },
  };
}

export function openStackFloatingIPPool(): JsonObject {
  return {
    apiVersion: v1alpha1,
    kind: 'OpenStackFloatingIPPool',
    metadata: metadata('public-pool'),
    spec: { identityRef: identityRef(), floatingIPNetwork: { filter: { name: 'public' } }, reclaimPolicy: 'Delete' },
  };
}

/** `old` after `change`, as an update would send it. */
export function changed(old: JsonObject, change: (object: Record<string, any>) => void): JsonObject {
  const object = structuredClone(old);
  change(object);
  return object;
}

export function create(rules: AdmissionRules, object: JsonObject, context: AdmissionContext = { dryRun: false }): FieldError[] {
  if (!rules.validateCreate) throw new Error('no create rules');
  return rules.validateCreate(object, context);
}

export function update(rules: AdmissionRules, object: JsonObject, old: JsonObject, context: AdmissionContext = { dryRun: false }): FieldError[] {
  if (!rules.validateUpdate) throw new Error('no update rules');
  return rules.validateUpdate(object, old, context);
}

/** The parts of a FieldError a client sees, as kube renders them. */
export function rendered(errors: readonly FieldError[]): { type: string; field: string; message: string }[] {
  return errors.map((error) => ({ type: error.type, field: error.field, message: error.body() }));
}
