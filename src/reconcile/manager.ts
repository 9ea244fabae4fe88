/**
 * Runs the reconcilers (OpenStackCluster, OpenStackMachine, OpenStackServer,
 * OpenStackMachineTemplate, OpenStackFloatingIPPool, ORC Image) on one
 * storage, and routes changes between them:
 * a server's status wakes its machine (or the cluster, for the bastion), a
 * cluster becoming provisioned wakes its machines, a new cluster its
 * templates, an IPAM claim or address wakes its pool and the claim's answer
 * the server that made it, and a Secret, Cluster or Machine from the source
 * wakes the objects that read it. Each reconciler
 * still only reacts to its own spec and metadata changes; these routes are
 * why nothing has to poll for another object's progress.
 */
import type { ClusterSpec, FloatingIPPoolSpec, ImageSpec, MachineSpec, MachineTemplateSpec, ServerSpec } from './kinds.js';
import { errors } from '../apiserver/errors.js';
import type { KindDefinition } from '../apiserver/registry/kind.js';
import { infrastructureGroup } from '../api/infrastructure/kinds.js';
import { fallbackLogger, type Logger } from '../observability/log.js';
import type { IpamClients, ReconcilerDeps } from './deps.js';
import type { MetricsRegistry } from '../observability/metrics.js';
import { OpenStackError, type SessionOptions } from '../openstack/index.js';
import type { JsonObject, ObjectName, Storage, Watch, WatchEvent } from '../storage/interface.js';
import { CloudConnections, IdentityError } from './cloud.js';
import { machinesMayStart, openStackClusterReconciler } from './cluster/reconciler.js';
import { Controller, generationOrMetadataChanged, type Reconcile, type Sharding } from './runtime/controller.js';
import { EventRecorder, type EventSink } from './events/recorder.js';
import type { LeaderLock } from './runtime/leader.js';
import { openStackMachineReconciler } from './machine/reconciler.js';
import { KindClient, metaOf, referenceName } from './objects.js';
import { clusterNameLabel, ownerClusterName } from './paused.js';
import { openStackServerReconciler } from './server/reconciler.js';
import { openStackMachineTemplateReconciler } from './template/reconciler.js';
import { clusterReferencesOf } from './server-spec.js';
import { orcImageReconciler } from './image/reconciler.js';
import { imageDownloads, type ImageDownloadOptions } from './image/downloads.js';
import { floatingIpPoolOf, floatingIpPoolReconciler, ipamGroup, poolKind } from './pool/reconciler.js';
import { orcGroup } from '../api/orc/kinds.js';
import type { ClusterApiSource, SourceChange } from './sources/source.js';
import { VerifiedResources } from './verified-resources.js';
import { ReadTogether } from './read-together.js';
import { defaultResyncPeriodMs, ResyncGrid } from './runtime/resync-grid.js';
import { adoptionOf, ownerUidOf } from './adoption.js';
import { auditLeaks, cleanUpLeaks, type AuditedCloud, type CleanupOutcome, type LeakAudit } from './leak-audit.js';
import { requirementsOf, runPreflight, type PreflightReport } from '../preflight/index.js';
import { WaitSchedule } from './wait-schedule.js';
import { MemberBatches } from './member-batches.js';
import { IdentityGuard, type SecretFinalizers } from './identity-guard.js';
import { isJsonObject } from '../storage/json.js';
import { clusterGroup, clusterGroupOf } from './cluster-shards.js';
import { DependencyVanishedError } from './drift.js';
import type { Stores } from '../apiserver/store/stores.js';
import type { Fence } from '../apiserver/store/resource-store.js';

/** source.component and reportingComponent of the Events the reconcilers record. */
export const eventComponent = 'capo-apiserver';

export interface ReconcilerOptions {
  storage: Storage;
  /** The served kinds' stores (apiserver/store/stores.ts), over `storage`: the reconcilers' clients write through them. */
  stores: Stores;
  /** Passed before each write the reconcilers make to storage (the leader or shard lease, leader.ts). */
  fence?: Fence;
  /** The served kinds; the infrastructure ones are picked by kind name. */
  kinds: KindDefinition[];
  source: ClusterApiSource;
  leader?: LeaderLock;
  /** Reconcile only the clusters of the shards this replica holds (runtime/shards.ts, cluster-shards.ts). */
  sharding?: Sharding;
  metrics?: MetricsRegistry;
  /** Per-object full re-read; default 10 minutes. */
  resyncPeriodMs?: number;
  workers?: number;
  sessionOptions?: SessionOptions;
  concurrency?: { perCloud: number; total: number };
  onError?: (error: unknown, object?: ObjectName) => void;
  /** The reconciler's logger; each controller logs under its name. */
  logger?: Logger;
  /** Finalizers on identity Secrets while they are in use; without it (no write access) Secrets are not protected. */
  secretFinalizers?: SecretFinalizers;
  /** The management cluster's IPAM objects; default: the served IPAddressClaim and IPAddress kinds, if any. */
  ipam?: IpamClients;
  /** This installation's id (installation.ts): tagged on what is created, and the leak audit's bound. */
  installation?: string;
  /** Where Events about our objects go: this server's storage (embedded) or the management cluster. */
  eventSink?: EventSink;
  /** ORC Image downloads: the destinations allowed besides public ones, the size and time bounds, the slots. */
  imageDownloads?: ImageDownloadOptions;
}

export interface RunningReconciler {
  controllers: Controller[];
  clouds: CloudConnections;
  /** Queue status per controller, for the admin API. */
  status(): ReturnType<Controller['status']>[];
  /**
   * Reconciles one object now, named by its Kind (OpenStackCluster, ...), reading its cloud resources afresh;
   * false for a kind the reconciler does not handle or an object that does not exist.
   */
  reconcileNow(kind: string, namespace: string, name: string): Promise<boolean>;
  /** The preflight report of a cluster as it stands (its machines included). */
  preflight(namespace: string, name: string): Promise<PreflightReport | undefined>;
  /** Resources of ours whose owner object is gone, in every cloud a stored object uses (leak-audit.ts). */
  leaks(): Promise<LeakAudit>;
  /** Deletes the named leaks that are still leaks. */
  cleanUpLeaks(targets: readonly { kind: string; id: string }[]): Promise<CleanupOutcome[]>;
  stop(): Promise<void>;
}

function kindNamed(kinds: KindDefinition[], kind: string): KindDefinition {
  const found = kinds.find((candidate) => candidate.kind === kind);
  if (!found) throw new Error(`the reconciler needs the ${kind} kind to be served`);
  return found;
}

/** What the reconcilers share: clients of their kinds, the cloud connections and the caches between passes. */
export function reconcilerDeps(options: ReconcilerOptions): ReconcilerDeps {
  const { storage, kinds, source } = options;
  const client = <Spec>(definition: KindDefinition) => new KindClient<Spec>(options.stores.storeOf(definition), options.fence);
  const clusters = client<ClusterSpec>(kindNamed(kinds, 'OpenStackCluster'));
  const machines = client<MachineSpec>(kindNamed(kinds, 'OpenStackMachine'));
  const servers = client<ServerSpec>(kindNamed(kinds, 'OpenStackServer'));
  const templates = client<MachineTemplateSpec>(kindNamed(kinds, 'OpenStackMachineTemplate'));
  const imageKind = kinds.find((candidate) => candidate.kind === 'Image' && candidate.group === orcGroup);
  const images = imageKind && client<ImageSpec>(imageKind);
  const identities = client(kindNamed(kinds, 'OpenStackClusterIdentity'));
  const pools = client<FloatingIPPoolSpec>(kindNamed(kinds, poolKind));
  const claimKind = kinds.find((candidate) => candidate.kind === 'IPAddressClaim' && candidate.group === ipamGroup);
  const addressKind = kinds.find((candidate) => candidate.kind === 'IPAddress' && candidate.group === ipamGroup);
  const ipam = options.ipam ?? (claimKind && addressKind ? storageIpam(storage, client(claimKind), client(addressKind)) : undefined);
  const clouds = new CloudConnections({
    source,
    identities,
    metrics: options.metrics,
    sessionOptions: options.sessionOptions,
    concurrency: options.concurrency,
  });
  const resyncPeriodMs = options.resyncPeriodMs ?? defaultResyncPeriodMs;
  const verified = new VerifiedResources(new ResyncGrid(resyncPeriodMs));
  return {
    clusters,
    machines,
    servers,
    templates,
    pools,
    ipam,
    images,
    readOrcImage: images ? (namespace, name) => images.get({ namespace, name }) : source.getOrcImage?.bind(source),
    imageDownloads: imageDownloads(options.imageDownloads, options.workers),
    source,
    clouds,
    verified,
    // Answers read along are taken within seconds of the resync instant; a quarter period (at most a minute) leaves room for a slow cloud.
    reads: new ReadTogether(verified, Math.min(resyncPeriodMs / 4, 60_000)),
    guard: new IdentityGuard(options.secretFinalizers, [clusters, machines, servers, pools, ...(images ? [images] : [])]),
    schedule: new WaitSchedule(),
    memberBatches: new MemberBatches(),
    ...(options.installation === undefined ? {} : { installation: options.installation }),
    ...(options.eventSink === undefined ? {} : { events: new EventRecorder(options.eventSink, { component: eventComponent, logger: options.logger }) }),
  };
}

export function startReconciler(options: ReconcilerOptions): RunningReconciler {
  const { storage, source } = options;
  const reportError =
    options.onError ?? ((error: unknown) => (options.logger ?? fallbackLogger).error({ err: error }, 'routing a change between objects failed'));
  const resyncPeriodMs = options.resyncPeriodMs ?? defaultResyncPeriodMs;
  const deps = reconcilerDeps(options);
  const { clusters, machines, servers, templates, pools, ipam, images, clouds } = deps;
  const common = {
    storage,
    resyncPeriodMs,
    workers: options.workers,
    leader: options.leader,
    sharding: options.sharding && { shards: options.sharding, groupOf: clusterGroupOf },
    metrics: options.metrics,
    shouldEnqueue: generationOrMetadataChanged,
    onError: options.onError,
    logger: options.logger,
    isActionableFailure: isCloudFailure,
  };
  /** Each kind's controller, by the kind's name: a pass asks for another object's by its kind and name. */
  const controllerOf = new Map<string, Controller>();
  // The store's own keys (apiserver/registry/keys.ts) tell a controller where its kind is stored: the layout has one owner.
  const controller = (name: string, client: KindClient, reconcile: Reconcile) => {
    const created = new Controller({ ...common, name, keys: client.store.keys, reconcile });
    controllerOf.set(client.kind, created);
    return created;
  };
  const clusterController = controller('openstackcluster', clusters, openStackClusterReconciler(deps));
  const machineController = controller('openstackmachine', machines, openStackMachineReconciler(deps));
  const serverController = controller('openstackserver', servers, openStackServerReconciler(deps));
  const templateController = controller('openstackmachinetemplate', templates, openStackMachineTemplateReconciler(deps));
  const imageController = images && controller('image', images, orcImageReconciler(deps, images));
  // A released download slot asks for a pass of the Images that waited for one.
  if (imageController) deps.imageDownloads.slots.wakeWith((image) => imageController.enqueue(image));
  const poolController = controller('openstackfloatingippool', pools, floatingIpPoolReconciler(deps, pools));
  const controllers = [
    clusterController,
    machineController,
    serverController,
    templateController,
    poolController,
    ...(imageController ? [imageController] : []),
  ];
  deps.schedule.wakeWith((object, delayMs) => controllerOf.get(object.kind)?.enqueue(object, delayMs));

  // Routing a change of another shard's cluster is the replica's that holds it: its controllers would drop what this one enqueues.
  const sharding = options.sharding;
  const ours = (group: string) => !sharding || sharding.holds(sharding.shardOf(group));
  // Routing reads the cache as it stands, as an informer reads its own: an object it misses by a moment
  // is enqueued by its own event when the cache gets there.
  const cached = { asCached: true };
  const machinesOfCluster = async (namespace: string, clusterName: string) => {
    for (const machine of await machines.list(namespace, { [clusterNameLabel]: clusterName }, cached)) {
      machineController.enqueue({ namespace, name: metaOf(machine).name });
    }
  };
  // Templates name their Cluster by label or by owner reference (Cluster API sets the latter).
  const templatesOfCluster = async (namespace: string, clusterName: string) => {
    for (const template of await templates.list(namespace, {}, cached)) {
      if (ownerClusterName(template) === clusterName) templateController.enqueue({ namespace, name: metaOf(template).name });
    }
  };
  // An Image becoming available (or failing) wakes the servers and templates that name it in image.imageRef.
  const imageUsers = async (namespace: string, imageName: string) => {
    const refersTo = (image: MachineSpec['image'] | undefined) => image?.imageRef?.name === imageName;
    for (const server of await servers.list(namespace, {}, cached)) {
      if (refersTo(server.spec.image)) serverController.enqueue({ namespace, name: metaOf(server).name });
    }
    for (const template of await templates.list(namespace, {}, cached)) {
      if (refersTo(template.spec.template?.spec.image)) {
        templateController.enqueue({ namespace, name: metaOf(template).name });
      }
    }
  };
  // A claim or address of a pool wakes the pool; a claim's answer wakes the server that made it.
  const ipamChange = (object: JsonObject) => {
    const meta = metaOf(object);
    const pool = floatingIpPoolOf(object);
    if (pool !== undefined) poolController.enqueue({ namespace: meta.namespace, name: pool });
    for (const reference of meta.ownerReferences ?? []) {
      if (reference.kind === 'OpenStackServer') serverController.enqueue({ namespace: meta.namespace, name: reference.name });
    }
  };
  /** The OpenStackClusters of a Cluster API cluster: labelled with its name, or named after it. */
  const clustersNamed = async (namespace: string, clusterName: string) => {
    for (const cluster of await clusters.list(namespace, { [clusterNameLabel]: clusterName }, cached))
      clusterController.enqueue({ namespace, name: metaOf(cluster).name });
    clusterController.enqueue({ namespace, name: clusterName });
  };
  // A machine joining or leaving a cluster changes what a dry-run adoption would take over: survey again.
  // Every machine created or deleted asks this, so it reads the stored objects as they are (labels and
  // annotations need no conversion) rather than presenting each one, as a KindClient list would.
  const dryRunsOfCluster = async (namespace: string, clusterName: string) => {
    for (const { value: cluster } of (await storage.list(clusters.store.prefix(namespace), { anyRevision: true })).entries) {
      const meta = metaOf(cluster);
      if ((meta.labels?.[clusterNameLabel] ?? meta.name) === clusterName && adoptionOf(cluster) === 'dry-run')
        clusterController.enqueue({ namespace, name: meta.name });
    }
  };
  const routes = [
    ...(ipam ? [ipam.watch(ipamChange)] : []),
    followChanges(storage, machines.prefix, (event) => {
      if (!ours(clusterGroupOf(event.value))) return;
      const meta = metaOf(event.value);
      const clusterName = meta.labels?.[clusterNameLabel];
      if (event.type !== 'MODIFIED' && clusterName !== undefined) void dryRunsOfCluster(meta.namespace, clusterName).catch(reportError);
      // A cluster being deleted waits for its machines: the last one gone lets it go on now, not at its next look.
      if (event.type === 'DELETED' && clusterName !== undefined) void clustersNamed(meta.namespace, clusterName).catch(reportError);
    }),
    ...(images
      ? [
          followChanges(storage, images.prefix, (event) => {
            // Its users read its ID once it is available: a change of anything else (an upload's progress) is nothing to them.
            if (event.type === 'MODIFIED' && event.prevValue !== undefined && imageAsUsed(event.prevValue) === imageAsUsed(event.value)) return;
            void imageUsers(metaOf(event.value).namespace, metaOf(event.value).name).catch(reportError);
          }),
        ]
      : []),
    followChanges(storage, servers.prefix, (event) => {
      if (!ours(clusterGroupOf(event.value))) return;
      for (const reference of metaOf(event.value).ownerReferences ?? []) {
        const owner = { namespace: metaOf(event.value).namespace, name: reference.name };
        if (reference.kind === 'OpenStackMachine') machineController.enqueue(owner);
        if (reference.kind === 'OpenStackCluster') clusterController.enqueue(owner);
      }
    }),
    followChanges(storage, clusters.prefix, (event) => {
      if (!ours(clusterGroupOf(event.value))) return;
      const meta = metaOf(event.value);
      // A template without identityRef of its own waits for the OpenStackCluster's.
      if (event.type === 'ADDED') void templatesOfCluster(meta.namespace, meta.labels?.[clusterNameLabel] ?? meta.name).catch(reportError);
      if (event.type === 'MODIFIED' && event.prevValue !== undefined && !routedStatusChanged(event.prevValue, event.value)) return;
      void machinesOfCluster(meta.namespace, meta.labels?.[clusterNameLabel] ?? meta.name).catch(reportError);
    }),
  ];
  const sourceWatch = source.watch((change) => {
    void routeSourceChange(change).catch(reportError);
  });

  async function routeSourceChange(change: SourceChange): Promise<void> {
    const { namespace, name } = change;
    if (change.kind === 'Image') {
      await imageUsers(namespace, name);
      return;
    }
    if (change.kind === 'Machine') {
      machineController.enqueue({ namespace, name });
      return;
    }
    if (change.kind === 'Cluster') {
      if (!ours(clusterGroup(namespace, name))) return;
      await clustersNamed(namespace, name);
      await machinesOfCluster(namespace, name);
      await templatesOfCluster(namespace, name);
      return;
    }
    // A Secret: identities of clusters (machines use theirs through the server) and user data of servers.
    for (const cluster of await clusters.list(namespace, {}, cached)) {
      if (referenceName(cluster.spec.identityRef) === name) {
        clusterController.enqueue({ namespace, name: metaOf(cluster).name });
      }
    }
    for (const server of await servers.list(namespace, {}, cached)) {
      if (referenceName(server.spec.userDataRef) === name || referenceName(server.spec.identityRef) === name) {
        serverController.enqueue({ namespace, name: metaOf(server).name });
      }
    }
  }

  for (const controller of controllers) controller.start();
  const byKind: Record<string, [Controller, KindClient]> = Object.fromEntries(
    (
      [
        [clusterController, clusters],
        [machineController, machines],
        [serverController, servers],
        [templateController, templates],
        [poolController, pools],
      ] as [Controller, KindClient][]
    ).map((entry) => [entry[1].kind, entry]),
  );
  /** The clouds the stored objects name, once per set of credentials. */
  const auditedClouds = async (): Promise<AuditedCloud[]> => {
    const references: { namespace: string; identityRef: unknown; label: string }[] = [];
    const refer = (object: JsonObject, identityRef: { name?: unknown; cloudName?: unknown } | undefined) => {
      if (identityRef === undefined) return;
      const namespace = metaOf(object).namespace!;
      references.push({ namespace, identityRef, label: `${namespace}/${String(identityRef.name)}:${String(identityRef.cloudName)}` });
    };
    for (const object of [...(await clusters.list(undefined)), ...(await servers.list(undefined))]) refer(object, object.spec.identityRef);
    for (const image of images ? await images.list(undefined) : []) {
      const credentials = image.spec.cloudCredentialsRef;
      refer(image, { name: credentials.secretName, cloudName: credentials.cloudName });
    }
    const byKey = new Map<string, AuditedCloud>();
    for (const reference of new Map(references.map((entry) => [entry.label, entry])).values()) {
      const connection = await clouds
        .connect(reference.namespace, reference.identityRef)
        .catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
      byKey.set(connection instanceof Error ? reference.label : connection.key, { label: reference.label, connection });
    }
    return [...byKey.values()];
  };
  const ownerUids = async () => {
    const owners = [clusters, machines, servers, pools, ...(images ? [images] : [])];
    return new Set((await Promise.all(owners.map((client) => client.list(undefined)))).flat().map(ownerUidOf));
  };

  return {
    controllers,
    clouds,
    status: () => controllers.map((controller) => controller.status()),
    async reconcileNow(kind, namespace, name) {
      const entry = byKind[kind];
      if (!entry) return false;
      const [controller, client] = entry;
      const object = await client.get({ namespace, name });
      if (!object) return false;
      // A person asked: read the cloud again rather than trust what an earlier pass verified (a server may have failed since).
      deps.verified.forget(metaOf(object).uid);
      controller.enqueue({ namespace, name });
      return true;
    },
    async preflight(namespace, name) {
      const cluster = await clusters.get({ namespace, name });
      if (!cluster) return undefined;
      const spec = (cluster.spec ?? {}) as JsonObject;
      // A cluster whose identity cannot be used (no Secret, no such cloud in it) has nothing to check against: the caller is told why.
      const cloud = await clouds.connect(namespace, spec.identityRef).catch((error: unknown) => {
        throw error instanceof IdentityError
          ? errors.conflict({ group: infrastructureGroup, resource: 'openstackclusters' }, name, `its cloud cannot be checked: ${error.message}`)
          : error;
      });
      const owned = await machines.list(namespace, { [clusterNameLabel]: metaOf(cluster).labels?.[clusterNameLabel] ?? name });
      return runPreflight(
        cloud.clients,
        cloud.session,
        requirementsOf(
          spec,
          owned.map((machine) => machine.spec),
        ),
      );
    },
    leaks: async () => auditLeaks(await auditedClouds(), ownerUids, options.installation),
    cleanUpLeaks: async (targets) => cleanUpLeaks(await auditedClouds(), ownerUids, targets, options.installation),
    async stop() {
      sourceWatch.stop();
      for (const route of routes) route.stop();
      await Promise.all(controllers.map((controller) => controller.stop()));
      clouds.close();
    },
  };
}

/** IPAM objects served by this server: KindClients over its storage, changes from storage watches. */
function storageIpam(storage: Storage, claims: KindClient, addresses: KindClient): IpamClients {
  return {
    claims,
    addresses,
    watch(listener) {
      const follows = [claims, addresses].map((client) => followChanges(storage, client.prefix, (event) => listener(event.value)));
      return {
        stop() {
          for (const follow of follows) follow.stop();
        },
      };
    },
  };
}

/** What machines wait for on their cluster: what their servers need, provisioning, and the load balancer pools they join. */
/** What of an ORC Image the servers and templates naming it read: its Glance ID and whether it is available, or failed. */
function imageAsUsed(image: JsonObject): string {
  const status = isJsonObject(image.status) ? image.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isJsonObject) : [];
  return JSON.stringify([status.id, conditions.map((condition) => [condition.type, condition.status, condition.reason])]);
}

function routedStatusChanged(before: JsonObject, after: JsonObject): boolean {
  const pick = (object: JsonObject) => {
    const status = isJsonObject(object.status) ? object.status : {};
    const extensions = isJsonObject(status.extensions) ? status.extensions : {};
    // The references machines' servers are made with: made again after drift, they wake the machines whose servers were not made yet.
    const references = clusterReferencesOf(status);
    return JSON.stringify([
      machinesMayStart(object),
      status.initialization,
      extensions.ownedResources,
      references,
      (object.metadata as JsonObject | undefined)?.deletionTimestamp,
    ]);
  };
  return pick(before) !== pick(after);
}

/** An answer of OpenStack's, or a resource deleted behind our back: the user or the cloud can act on it, our code did its job. */
function isCloudFailure(error: Error): boolean {
  return error instanceof OpenStackError || error instanceof DependencyVanishedError;
}

/** A storage watch from now that survives compaction and storage hiccups by starting again from the current revision. */
function followChanges(storage: Storage, prefix: string, onEvent: (event: WatchEvent) => void): { stop(): void } {
  let watch: Watch | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const start = async () => {
    if (stopped) return;
    try {
      const revision = await storage.currentRevision();
      if (stopped) return;
      watch = storage.watch({
        prefix,
        afterRevision: revision,
        onEvent,
        onError: () => {
          retry = setTimeout(() => void start(), 1000);
        },
      });
    } catch {
      retry = setTimeout(() => void start(), 1000);
    }
  };
  void start();
  return {
    stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      watch?.stop();
    },
  };
}
