/** What every reconciler works with; startReconciler builds one of these and shares it. */
import type { EventRecorder } from './events/recorder.js';
import type { JsonObject, ObjectName } from '../storage/interface.js';
import type { CloudConnections } from './cloud.js';
import type { IdentityGuard } from './identity-guard.js';
import type { MemberBatches } from './member-batches.js';
import type { KindClient } from './objects.js';
import type { ClusterApiSource } from './sources/source.js';
import type { ReadTogether } from './read-together.js';
import type { VerifiedResources } from './verified-resources.js';
import type { WaitSchedule } from './wait-schedule.js';
import type { ImageDownloads } from './image/downloads.js';
import type { ClusterSpec, FloatingIPPoolSpec, ImageSpec, MachineSpec, MachineTemplateSpec, ServerSpec } from './kinds.js';

/**
 * Objects of a kind the reconcilers read and write but do not reconcile: a
 * KindClient over this server's storage, or the management cluster's API.
 * Writes pinned to a uid do nothing when the object is gone or replaced.
 */
export interface ObjectClient {
  get(name: ObjectName): Promise<JsonObject | undefined>;
  list(namespace: string): Promise<JsonObject[]>;
  create(namespace: string, body: JsonObject): Promise<JsonObject>;
  updateStatus(target: ObjectName & { uid: string }, mutate: (status: JsonObject) => void): Promise<JsonObject | undefined>;
  removeFinalizer(target: ObjectName & { uid: string }, finalizer: string): Promise<void>;
  /** Starts deletion; gone already is fine. */
  delete(name: ObjectName, uid?: string): Promise<void>;
}

/**
 * Cluster API's IPAM objects, which OpenStackFloatingIPPool answers: served
 * here in the embedded mode, the management cluster's when aggregated.
 */
export interface IpamClients {
  claims: ObjectClient;
  addresses: ObjectClient;
  /** Every change of a claim or an address, so the pool and the claiming server can be woken. */
  watch(listener: (object: JsonObject) => void): { stop(): void };
}

export interface ReconcilerDeps {
  clusters: KindClient<ClusterSpec>;
  machines: KindClient<MachineSpec>;
  servers: KindClient<ServerSpec>;
  /** OpenStackMachineTemplates, whose status reports a machine's capacity. */
  templates: KindClient<MachineTemplateSpec>;
  /** OpenStackFloatingIPPools, whose floating IPs servers with floatingIPPoolRef claim. */
  pools: KindClient<FloatingIPPoolSpec>;
  /** IPAddressClaims and IPAddresses, when served here. */
  ipam: IpamClients | undefined;
  /** ORC Images, when served here. */
  images: KindClient<ImageSpec> | undefined;
  /** An ORC Image by namespace and name, served here or ORC's own (--orc-images=external); `image.imageRef` resolves through it. */
  readOrcImage: ((namespace: string, name: string) => Promise<JsonObject | undefined>) | undefined;
  /** The bounds and slots of ORC Image content downloads. */
  imageDownloads: ImageDownloads;
  source: ClusterApiSource;
  clouds: CloudConnections;
  verified: VerifiedResources;
  reads: ReadTogether;
  schedule: WaitSchedule;
  guard: IdentityGuard;
  /** Machines' pending pool members, sent together by whichever machine has the load balancer's turn. */
  memberBatches: MemberBatches;
  /** This installation's id (installation.ts); without it nothing is tagged with one. */
  installation?: string;
  /** Where passes record Events about their objects; none where no Event is served. */
  events?: EventRecorder;
}
