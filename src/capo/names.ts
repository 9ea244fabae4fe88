/**
 * OpenStack names of what the reconciler creates. They follow CAPO's scheme,
 * so operators find resources where they are used to and a cloud shared with
 * CAPO shows one convention; unlike CAPO, a name is never enough to adopt a
 * resource (the owner tag is), so these names only have to be readable.
 */
import type { ObjectName } from '../storage/interface.js';

/** Network, subnet and router of a cluster. */
export function clusterResourceName(cluster: ObjectName): string {
  return `k8s-clusterapi-cluster-${cluster.namespace}-${cluster.name}`;
}

export type SecurityGroupRole = 'controlplane' | 'worker' | 'bastion';

export function securityGroupName(cluster: ObjectName, role: SecurityGroupRole): string {
  return `k8s-cluster-${cluster.namespace}-${cluster.name}-secgroup-${role}`;
}

export function apiLoadBalancerName(cluster: ObjectName): string {
  return `${clusterResourceName(cluster)}-kubeapi`;
}

export function ingressLoadBalancerName(cluster: ObjectName): string {
  return `${clusterResourceName(cluster)}-ingress`;
}

/** Listener, pool and health monitor of one port share the name. */
export function loadBalancerPortName(loadBalancerName: string, port: number): string {
  return `${loadBalancerName}-${port}`;
}

export function memberName(loadBalancerName: string, port: number, machineName: string): string {
  return `${loadBalancerName}-${port}-${machineName}`;
}

export function bastionServerName(cluster: ObjectName): string {
  return `${cluster.name}-bastion`;
}

export function portName(serverName: string, index: number, nameSuffix: string | undefined): string {
  return `${serverName}-${nameSuffix ?? String(index)}`;
}

export function volumeName(serverName: string, deviceName: string): string {
  return `${serverName}-${deviceName}`;
}

/** CAPO's tag on the floating IPs an OpenStackFloatingIPPool creates. */
export function floatingIpPoolTag(poolName: string): string {
  return `cluster-api-provider-openstack-fip-pool-${poolName}`;
}

/** The IPAddressClaim a server with floatingIPPoolRef makes for its floating IP. */
export function floatingAddressClaimName(serverName: string): string {
  return `${serverName}-floating-ip-address`;
}
