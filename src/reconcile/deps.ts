/** What every reconciler works with; startReconciler builds one of these and shares it. */
import type { JsonObject } from '../storage/interface.js';
import type { CloudConnections } from './cloud.js';
import type { IdentityGuard } from './identity-guard.js';
import type { LoadBalancerTurns } from './load-balancer-turns.js';
import type { KindClient } from './objects.js';
import type { ClusterApiSource } from './sources/source.js';
import type { VerifiedResources } from './verified-resources.js';
import type { WaitSchedule } from './wait-schedule.js';

/** Cluster API's IPAM objects, which OpenStackFloatingIPPool answers; served here in the embedded mode. */
export interface IpamClients {
  claims: KindClient;
  addresses: KindClient;
}

export interface ReconcilerDeps {
  clusters: KindClient;
  machines: KindClient;
  servers: KindClient;
  /** OpenStackMachineTemplates, whose status reports a machine's capacity. */
  templates: KindClient;
  /** OpenStackFloatingIPPools, whose floating IPs servers with floatingIPPoolRef claim. */
  pools: KindClient;
  /** IPAddressClaims and IPAddresses, when served here. */
  ipam: IpamClients | undefined;
  /** ORC Images, when served here. */
  images: KindClient | undefined;
  /** An ORC Image by namespace and name, served here or ORC's own (--orc-images=external); `image.imageRef` resolves through it. */
  readOrcImage: ((namespace: string, name: string) => Promise<JsonObject | undefined>) | undefined;
  source: ClusterApiSource;
  clouds: CloudConnections;
  verified: VerifiedResources;
  schedule: WaitSchedule;
  guard: IdentityGuard;
  turns: LoadBalancerTurns;
}
