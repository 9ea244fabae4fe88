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
export { poolMonitors, provisioningStatuses } from './octavia.js';
export type { TagFilters } from './common.js';
export type { Volume } from './cinder.js';
export type { CreateImage, Image } from './glance.js';
export type {
  AllocationPool,
  CreateSecurityGroupRule,
  FloatingIp,
  IdFilters,
  Network,
  Port,
  Router,
  RouterInterfaceSpec,
  SecurityGroup,
  SecurityGroupRule,
  Subnet,
  TaggableResource,
  Trunk,
  UpdateFloatingIp,
} from './neutron.js';
export { novaMicroversion } from './nova.js';
export type {
  BlockDeviceMapping,
  CreateServer,
  Flavor,
  SchedulerHints,
  Server,
} from './nova.js';
export type {
  CreateListenerInGraph,
  CreateMember,
  HealthMonitor,
  Listener,
  LoadBalancer,
  Member,
  Pool,
} from './octavia.js';
