/** Typed calls per OpenStack service, all over one ServiceTransport (normally an OpenStackSession). */
import type { ServiceTransport } from '../transport.js';
import { CinderClient } from './cinder.js';
import { GlanceClient } from './glance.js';
import { NeutronClient } from './neutron.js';
import { NovaClient } from './nova.js';
import { OctaviaClient } from './octavia.js';

export interface ServiceClients {
  neutron: NeutronClient;
  nova: NovaClient;
  octavia: OctaviaClient;
  glance: GlanceClient;
  cinder: CinderClient;
}

/** The clients hold no state of their own, so creating them per reconcile costs nothing. */
export function createServiceClients(transport: ServiceTransport): ServiceClients {
  return {
    neutron: new NeutronClient(transport),
    nova: new NovaClient(transport),
    octavia: new OctaviaClient(transport),
    glance: new GlanceClient(transport),
    cinder: new CinderClient(transport),
  };
}

export { CinderClient, GlanceClient, NeutronClient, NovaClient, OctaviaClient };
export { maxPages } from './common.js';
export type { TagFilters } from './common.js';
export { cinderMicroversion } from './cinder.js';
export type { CinderAbsoluteLimits, CinderAvailabilityZone, CinderQuotaUsage, CreateVolume, Volume, VolumeFilters, VolumeType } from './cinder.js';
export type { Image, ImageFilters } from './glance.js';
export type {
  AddressPair,
  AllocationPool,
  CreateFloatingIp,
  CreateNetwork,
  CreatePort,
  CreateRouter,
  CreateSecurityGroup,
  CreateSecurityGroupRule,
  CreateSubnet,
  CreateTrunk,
  ExternalGateway,
  FixedIpFilter,
  FloatingIp,
  FloatingIpFilters,
  Network,
  NetworkFilters,
  NeutronExtension,
  NeutronQuotaUsage,
  Port,
  PortFilters,
  Router,
  RouterFilters,
  RouterInterface,
  RouterInterfaceSpec,
  SecurityGroup,
  SecurityGroupFilters,
  SecurityGroupRule,
  SecurityGroupRuleFilters,
  SubPort,
  Subnet,
  SubnetFilters,
  TaggableResource,
  Trunk,
  TrunkFilters,
  UpdateFloatingIp,
  UpdateNetwork,
  UpdatePort,
  UpdateRouter,
  UpdateSecurityGroup,
  UpdateSubnet,
} from './neutron.js';
export { novaMicroversion, serverGroupMicroversion } from './nova.js';
export type {
  AttachInterface,
  AttachVolume,
  BlockDeviceMapping,
  CreatedServer,
  CreateServer,
  CreateServerGroup,
  Flavor,
  InterfaceAttachment,
  Keypair,
  NovaAbsoluteLimits,
  NovaAvailabilityZone,
  NovaVersion,
  SchedulerHints,
  Server,
  ServerAddress,
  ServerFilters,
  ServerGroup,
  ServerNetwork,
  VolumeAttachment,
} from './nova.js';
export type {
  CreateHealthMonitor,
  CreateListener,
  CreateLoadBalancer,
  CreateMember,
  CreatePool,
  HealthMonitor,
  HealthMonitorFilters,
  Listener,
  ListenerFilters,
  LoadBalancer,
  LoadBalancerFilters,
  LoadBalancerFlavor,
  LoadBalancerProvider,
  LoadBalancerQuota,
  Member,
  MemberFilters,
  OctaviaVersion,
  Pool,
  PoolFilters,
  UpdateHealthMonitor,
  UpdateListener,
} from './octavia.js';
