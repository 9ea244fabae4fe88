/**
 * The OpenStackMachine reconciler: a thin layer over an OpenStackServer of
 * the same name, as CAPO does it. It waits for what its server needs of the
 * cluster (its network and security groups; not the API load balancer, which
 * the server's boot overlaps, unlike CAPO) and the bootstrap data, creates
 * the server object with a spec derived from the machine and the cluster,
 * mirrors the server's state into the Cluster API contract fields
 * (providerID, addresses, initialization.provisioned, Ready), registers
 * control plane machines with the API server load balancer and computes the
 * node's reserved resources from its flavor. What it makes is a step graph
 * (step-graph.ts): the server object, then its load balancer members, which
 * need the server's address; deletion follows it backwards.
 */
import type { JsonObject } from '../../storage/interface.js';
import { reservedResources } from './reservations.js';
import type { CloudConnection } from '../cloud.js';
import type { ReconcilerDeps } from '../deps.js';
import { deletionProgress } from '../lifecycle.js';
import { findCondition } from '../conditions.js';
import type { Reconcile } from '../runtime/controller.js';
import { clusterProvisioned, machinesMayStart } from '../cluster/reconciler.js';
import { ownedResources, setOwned } from '../owned.js';
import { apiLoadBalancerName, ingressLoadBalancerName, memberName } from '../../capo/names.js';
import { metaOf, specOf, statusOf, type KindObject } from '../objects.js';
import { objectReconciler } from '../object-reconciler.js';
import type { ObjectName } from '../../storage/interface.js';
import { clusterGate, clusterNameLabel, ownerClusterName, setPaused } from '../paused.js';
import { type ReconcilePass, describeWaits } from '../reconcile-pass.js';
import { ensureGraph, removeGraph, stepGraph } from '../step-graph.js';
import { memberActuator } from '../resource/member.js';
import { createTags } from '../resource/octavia.js';
import { clusterReferencesMoved, serverSpecFor, type ServerSpecInput } from '../server-spec.js';
import type { ClusterSpec, MachineSpec } from '../kinds.js';
import { adoptAnnotation, adoptionOf } from '../adoption.js';
import { flavorById } from '../lookups.js';
import { serverDeletedAt, serverDeletedMessage } from '../server/reconciler.js';
import type { ClusterApiMachine, ClusterApiSource } from '../sources/source.js';

export const machineFinalizer = 'openstackmachine.infrastructure.cluster.x-k8s.io';
const controlPlaneLabel = 'cluster.x-k8s.io/control-plane';

interface MachineContext {
  pass: ReconcilePass<MachineSpec>;
  spec: MachineSpec;
  machine: ObjectName;
  openStackCluster: KindObject<ClusterSpec> | undefined;
  owner: ClusterApiMachine | undefined;
  deps: ReconcilerDeps;
  /** Control plane placements of one cluster are chosen one after the other. */
  placements: OneAtATime;
  /**
   * The whole cluster is going (its Cluster or its OpenStackCluster is being deleted): its load
   * balancers go with it, and their cascade delete takes the machines' members.
   */
  clusterTearingDown: boolean;
}

/** How soon to look again when no event is expected to bring the machine back (the cluster or server events usually come first). */
const waitRequeueMs = 15_000;

export function openStackMachineReconciler(deps: ReconcilerDeps): Reconcile {
  const placements = new OneAtATime();
  return objectReconciler(deps, {
    client: deps.machines,
    finalizer: machineFinalizer,
    gate: (object) => clusterGate(deps.source, object),
    begin: async (pass, gate) => {
      pass.observe((status) => setPaused(status, pass.generation, gate));
      const { namespace, name } = pass.meta;
      const clusterName = ownerClusterName(pass.object) ?? '';
      const infraName = gate.open ? (gate.cluster.infrastructureRef?.name ?? clusterName) : clusterName;
      const openStackCluster = await deps.clusters.get({ namespace, name: infraName });
      // The machines of a cluster that adopts CAPO's resources adopt theirs (load balancer members here, the rest through the server).
      if (adoptionOf(openStackCluster) === 'capo') pass.owner.adopt = true;
      return {
        pass,
        spec: pass.spec,
        machine: { namespace, name },
        openStackCluster,
        owner: await ownerMachine(deps.source, pass.object),
        deps,
        placements,
        clusterTearingDown:
          (gate.open && gate.cluster.deleting) || (openStackCluster !== undefined && metaOf(openStackCluster).deletionTimestamp !== undefined),
      };
    },
    normal: reconcileNormal,
    remove: async (context) => {
      if (await removeGraph(machineSteps, context)) return true;
      deletionProgress(context.pass, 'Ready', 'DeletionBlocked');
      return false;
    },
  });
}

/** The owner Machine: by owner reference, else (no Cluster API controller, embedded mode) the Machine of the same name pointing at us. */
async function ownerMachine(source: ClusterApiSource, object: JsonObject): Promise<ClusterApiMachine | undefined> {
  const meta = metaOf(object);
  const reference = meta.ownerReferences?.find((candidate) => candidate.kind === 'Machine');
  if (reference) return source.getMachine(meta.namespace, reference.name);
  const sameName = await source.getMachine(meta.namespace, meta.name);
  return sameName?.infrastructureRef?.name === meta.name ? sameName : undefined;
}

function isControlPlane(context: MachineContext): boolean {
  return context.owner?.controlPlane === true || metaOf(context.pass.object).labels?.[controlPlaneLabel] !== undefined;
}

/** Where the machine's members are recorded: control plane machines join the API load balancer's pools, workers the ingress one's. */
function memberPrefix(context: MachineContext): '' | 'ingress/' {
  return isControlPlane(context) ? '' : 'ingress/';
}

interface MachineOutputs {
  /** The machine's OpenStackServer once the object exists (its status, mirrored into the machine's), and the cloud it is on. */
  server: { status: JsonObject; cloud: CloudConnection };
  /** Set once the machine is a member of every pool of its role. */
  members: true;
}

const machineSteps = stepGraph<MachineContext, MachineOutputs>({
  server: { needs: [], ensure: ensureServerObject, remove: removeServerObject },
  members: {
    needs: ['server'],
    ensure: async (context, inputs) => {
      const server = inputs.get('server');
      // A server deleted behind our back serves nothing: its machine fails (reconcileNormal) rather than join a pool.
      if (serverDeletedAt(server.status) !== undefined) return undefined;
      return (await reconcileLoadBalancerMembers(context, server.cloud, server.status)) || undefined;
    },
    remove: removeMembers,
  },
});

async function reconcileNormal(context: MachineContext): Promise<void> {
  const { pass, machine, owner, openStackCluster } = context;
  if (!owner) {
    pass.condition({
      type: 'Ready',
      status: 'False',
      reason: 'WaitingForMachine',
      message: 'no owner Machine yet (owner reference, or a Machine of the same name whose infrastructureRef names this object)',
    });
    return;
  }
  if (!openStackCluster || !machinesMayStart(openStackCluster)) {
    waitForCluster(pass, "the OpenStackCluster's network and security groups");
    return;
  }
  if (!owner.bootstrapDataSecretName) {
    pass.condition({
      type: 'Ready',
      status: 'False',
      reason: 'WaitingForBootstrapData',
      message: `Machine ${machine.namespace}/${owner.name} has no spec.bootstrap.dataSecretName yet`,
    });
    return;
  }
  // The machine joins its load balancer as soon as its address is known (its port's, before the server boots): the
  // member's change, one at a time per load balancer, then overlaps the boot instead of following it. Until the API
  // server runs on the machine, the health monitor keeps the member out of rotation, as it would after the boot.
  const { ready } = await ensureGraph(machineSteps, context, pass);
  const server = ready.server;
  if (!server) return;
  const instance = findCondition(server.status, 'InstanceReady');
  if (serverDeletedAt(server.status) !== undefined) {
    // CAPO's words on both conditions; Cluster API (a MachineHealthCheck) replaces the machine, nothing here makes the server again.
    if (findCondition(pass.status, 'Ready')?.reason !== 'InstanceDeleted')
      pass.event('Warning', 'InstanceDeleted', `OpenStackServer ${machine.name}: ${instance?.message ?? serverDeletedMessage}`);
    pass.condition({ type: 'InstanceReady', status: 'False', reason: 'InstanceDeleted', message: serverDeletedMessage });
    pass.condition({ type: 'Ready', status: 'False', reason: 'InstanceDeleted', message: serverDeletedMessage });
    return;
  }
  if (server.status.ready !== true) {
    const reason = instance?.status === 'False' ? instance.reason : 'InstanceNotReady';
    const message = instance?.message ?? 'the server is being created';
    // A failure of its server is the machine's to tell too: people describe the machine. Once per new message.
    if (serverFailures.has(reason) && findCondition(pass.status, 'Ready')?.message !== message)
      pass.event('Warning', reason, `OpenStackServer ${machine.name}: ${message}`);
    pass.condition({ type: 'Ready', status: 'False', reason, message });
    return;
  }

  const instanceID = server.status.instanceID as string;
  await publishProviderId(context, instanceID);
  await reconcileNodeResources(context, server.cloud, server.status);
  if (!ready.members) {
    pass.condition({ type: 'Ready', status: 'False', reason: 'APIServerIngressNotReady', message: describeWaits(pass.waiting) });
    return;
  }
  // The server may be up before the cluster's endpoint: Cluster API takes a machine as provisioned only within a provisioned cluster.
  if (!clusterProvisioned(openStackCluster)) {
    waitForCluster(pass, 'the OpenStackCluster to be provisioned');
    return;
  }
  pass.observe((status) => {
    status.initialization = { ...((status.initialization as JsonObject | undefined) ?? {}), provisioned: true };
  });
  pass.condition({ type: 'Ready', status: 'True', reason: 'Ready' });
}

/** The reasons of a server's InstanceReady=False that are failures, not progress. */
const serverFailures = new Set(['OpenStackError', 'InstanceCreateFailed', 'InstanceStateError', 'DependencyFailed']);

/** The OpenStackServer object, created once (the gates of reconcileNormal passed), its state mirrored into the machine's. */
async function ensureServerObject(context: MachineContext): Promise<MachineOutputs['server'] | undefined> {
  const { pass, deps, machine, owner, openStackCluster } = context;
  const server = await deps.servers.get(machine);
  if (!server) {
    const cluster = ownerClusterName(pass.object) ?? '';
    await context.placements.run(`${machine.namespace}/${cluster}`, () => createServer(context, owner!));
    pass.condition({ type: 'Ready', status: 'False', reason: 'InstanceNotReady', message: 'creating the OpenStackServer' });
    return undefined;
  }
  const serverStatus = statusOf(server);
  const serverMeta = metaOf(server);
  if (serverMeta.deletionTimestamp !== undefined) {
    // Being replaced (below): its finalizer removes what it made, then the next pass makes the new one.
    pass.condition({
      type: 'Ready',
      status: 'False',
      reason: 'WaitingForClusterInfrastructure',
      message: `waiting for OpenStackServer ${machine.name}, made for the cluster's earlier network, to be deleted`,
    });
    pass.wait({ waitingFor: `OpenStackServer ${machine.name} to be deleted`, requeueAfterMs: waitRequeueMs }, true);
    return undefined;
  }
  if (serverStatus.instanceID === undefined && clusterReferencesMoved(specOf(server), serverSpecInput(context, owner!, server.spec.availabilityZone))) {
    // The cluster made its network or security groups again (deleted behind its back) before this server was made: its
    // spec, immutable, names the gone ones. Nothing of value is lost in replacing it; a server that exists is not replaced.
    pass.event(
      'Normal',
      'ReplacingServer',
      `OpenStackServer ${machine.name} names the cluster's network or security groups as they were before they were made again; replacing it, as its server was not made yet`,
    );
    await deps.servers.delete(machine, serverMeta.uid);
    pass.condition({
      type: 'Ready',
      status: 'False',
      reason: 'WaitingForClusterInfrastructure',
      message: `replacing OpenStackServer ${machine.name}: the cluster's network or security groups were made again`,
    });
    pass.wait({ waitingFor: `OpenStackServer ${machine.name} to be deleted`, requeueAfterMs: waitRequeueMs }, true);
    return undefined;
  }
  pass.observe((status) => {
    for (const field of ['instanceID', 'instanceState', 'addresses', 'resolved', 'resources'] as const) {
      if (serverStatus[field] !== undefined) status[field] = structuredClone(serverStatus[field]);
    }
  });
  const cloud = await deps.clouds.connect(machine.namespace, context.spec.identityRef ?? openStackCluster!.spec.identityRef);
  return { status: serverStatus, cloud };
}

/** The cluster's change events bring the machine back; the requeue is only a safety net. */
function waitForCluster(pass: ReconcilePass, what: string): void {
  pass.condition({ type: 'Ready', status: 'False', reason: 'WaitingForClusterInfrastructure', message: `waiting for ${what}` });
  pass.wait({ waitingFor: what, requeueAfterMs: waitRequeueMs }, true);
}

/** What the machine's server spec is made from, in the zone given. */
function serverSpecInput(context: MachineContext, owner: ClusterApiMachine, availabilityZone: string | undefined): ServerSpecInput {
  const { openStackCluster } = context;
  return {
    machineSpec: context.spec,
    clusterSpec: openStackCluster!.spec,
    clusterStatus: statusOf(openStackCluster!),
    role: isControlPlane(context) ? 'controlplane' : 'worker',
    availabilityZone,
    userDataSecretName: owner.bootstrapDataSecretName,
  };
}

async function createServer(context: MachineContext, owner: ClusterApiMachine): Promise<void> {
  const { pass, deps, machine, openStackCluster } = context;
  const clusterStatus = statusOf(openStackCluster!);
  const controlPlane = isControlPlane(context);
  const clusterName = ownerClusterName(pass.object) ?? '';
  const zone = owner.failureDomain ?? (controlPlane ? await leastUsedControlPlaneDomain(deps, machine.namespace, clusterName, clusterStatus) : undefined);
  const spec = serverSpecFor(serverSpecInput(context, owner, zone));
  await deps.servers.create(machine.namespace, {
    metadata: {
      name: machine.name,
      namespace: machine.namespace,
      labels: { ...pass.meta.labels, [clusterNameLabel]: clusterName, ...(controlPlane ? { [controlPlaneLabel]: '' } : {}) },
      ...(pass.owner.adopt ? { annotations: { [adoptAnnotation]: 'capo' } } : {}),
      ownerReferences: [
        { apiVersion: deps.machines.apiVersion, kind: 'OpenStackMachine', name: machine.name, uid: pass.meta.uid, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec,
  });
}

/**
 * The zone of a control plane machine whose Machine names no failure domain
 * (nothing like KubeadmControlPlane chose one, as in the embedded mode): the
 * control plane failure domain with the fewest of the cluster's control plane
 * servers, the first by name on a tie. CAPO leaves the choice to Nova, which
 * may put them all in one zone (CAPO #2560). With one domain there is no
 * choice to make, and the server asks for no zone, as CAPO's does.
 */
async function leastUsedControlPlaneDomain(
  deps: ReconcilerDeps,
  namespace: string,
  clusterName: string,
  clusterStatus: JsonObject,
): Promise<string | undefined> {
  const domains = ((clusterStatus.failureDomains as { name: string; controlPlane?: boolean }[] | undefined) ?? [])
    .filter((domain) => domain.controlPlane === true)
    .map((domain) => domain.name);
  if (domains.length < 2) return undefined;
  const used = new Map(domains.map((domain) => [domain, 0]));
  for (const server of await deps.servers.list(namespace, { [clusterNameLabel]: clusterName, [controlPlaneLabel]: '' }, { asCached: true })) {
    const zone = server.spec.availabilityZone;
    if (zone !== undefined && used.has(zone) && metaOf(server).deletionTimestamp === undefined) used.set(zone, used.get(zone)! + 1);
  }
  return [...used.entries()].sort(([a, countA], [b, countB]) => countA - countB || (a < b ? -1 : a > b ? 1 : 0))[0][0];
}

/** Runs tasks of the same key one after the other. */
class OneAtATime {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/** providerID is set once: openstack://<region>/<server ID>, the region being identityRef's (usually empty). */
async function publishProviderId(context: MachineContext, instanceID: string): Promise<void> {
  const { pass, deps, spec, openStackCluster } = context;
  if (spec.providerID) return;
  const identity = spec.identityRef ?? openStackCluster!.spec.identityRef;
  const providerID = `openstack://${identity?.region ?? ''}/${instanceID}`;
  await deps.machines.update(pass.target, (object) => {
    const current = (object.spec ?? {}) as JsonObject;
    if (!current.providerID) current.providerID = providerID;
    object.spec = current;
  });
}

/**
 * The machine's address in every pool it belongs to: control plane machines
 * in the API server load balancer, workers in the ingress load balancer.
 */
async function reconcileLoadBalancerMembers(context: MachineContext, cloud: CloudConnection, serverStatus: JsonObject): Promise<boolean> {
  const { pass, openStackCluster, machine } = context;
  const cluster = openStackCluster!;
  const clusterStatus = statusOf(cluster);
  const clusterOwned = ownedResources(clusterStatus);
  const clusterObject = { namespace: machine.namespace, name: metaOf(cluster).name };
  const controlPlane = isControlPlane(context);
  const prefix = memberPrefix(context);
  const lbId = controlPlane
    ? ((clusterStatus.apiServerManagedLoadBalancer as { id?: string } | undefined)?.id ?? clusterOwned['loadbalancer/api'])
    : clusterOwned['ingress/loadbalancer'];
  const members = poolMembers(clusterObject, clusterOwned, prefix, machine.name);
  if (!lbId || members.length === 0) return true;
  const address = internalAddress(serverStatus);
  const { memberBatches } = context.deps;
  // Wanted as soon as the address is known, even before the load balancer takes members: whoever gets its turn sends them all.
  if (address) {
    for (const { poolId, port, role, name } of members) {
      if (ownedResources(pass.status)[role] === undefined) memberBatches.want(poolId, { name, address, protocol_port: port, tags: createTags(pass.owner) });
    }
  }
  // Its pools are recorded from the load balancer's create, before it is ACTIVE: a member waits for the cluster's endpoint rather than meet a 409.
  if (controlPlane && !clusterProvisioned(cluster)) {
    pass.condition({ type: 'APIServerIngressReady', status: 'False', reason: 'LoadBalancerNotReady', message: "waiting for the cluster's API load balancer" });
    pass.wait({ waitingFor: "the cluster's API load balancer", requeueAfterMs: waitRequeueMs }, true);
    return false;
  }
  if (!address) {
    // A server still being built gets its address with a status change, which brings this machine back anyway.
    if (serverStatus.ready === true) pass.wait({ waitingFor: 'the server to have an internal address', requeueAfterMs: waitRequeueMs });
    return false;
  }
  let ready = true;
  // One pool at a time: each change puts the load balancer in PENDING_UPDATE.
  for (const { poolId, port, role, name } of members) {
    const recordedId = ownedResources(pass.status)[role];
    // A member to add waits for the load balancer's turn without asking Octavia; another machine's batch may bring it meanwhile.
    const waitMs = recordedId === undefined ? memberBatches.waitMs(lbId) : undefined;
    if (waitMs !== undefined) {
      pass.wait({ waitingFor: `load balancer ${lbId} to finish another machine's member change`, requeueAfterMs: waitMs }, true);
      ready = false;
      break;
    }
    const member = await pass.ensure(role, memberActuator(cloud.clients.octavia, poolId, memberBatches), {
      recordedId,
      desired: { name, pool_id: poolId, loadbalancer_id: lbId, address, protocol_port: port },
      record: (status, id) => setOwned(status, role, id),
    });
    memberBatches.done(poolId, name);
    if (!member.ready) {
      ready = false;
      break;
    }
  }
  pass.condition(
    ready
      ? { type: 'APIServerIngressReady', status: 'True', reason: 'Ready' }
      : { type: 'APIServerIngressReady', status: 'False', reason: 'LoadBalancerMemberNotReady', message: describeWaits(pass.waiting) },
  );
  return ready;
}

async function reconcileNodeResources(context: MachineContext, cloud: CloudConnection, serverStatus: JsonObject): Promise<void> {
  const flavorId = (serverStatus.resolved as { flavorID?: string } | undefined)?.flavorID;
  if (!flavorId) return;
  const flavor = await flavorById(cloud, flavorId);
  const reservation = reservedResources(
    { vcpus: flavor.vcpus, ramMiB: flavor.ram, diskGiB: flavor.disk },
    isControlPlane(context) ? 'control-plane' : 'worker',
  );
  context.pass.observe((status) => {
    const extensions = ((status.extensions as JsonObject | undefined) ?? {}) as JsonObject;
    status.extensions = {
      ...extensions,
      nodeResources: {
        reserved: { cpu: reservation.cpu, memory: reservation.memory, ephemeralStorage: reservation.ephemeralStorage },
        policy: reservation.policy,
      },
    };
  });
}

function internalAddress(status: JsonObject): string | undefined {
  return ((status.addresses as { type: string; address: string }[] | undefined) ?? []).find((candidate) => candidate.type === 'InternalIP')?.address;
}

interface PoolMember {
  /** '' for the API load balancer's pools, 'ingress/' for the ingress one's. */
  prefix: string;
  poolId: string;
  port: number;
  /** Where the machine records the member's ID. */
  role: string;
  name: string;
}

/** The machine's member of each of the cluster's pools under `prefix`. */
function poolMembers(
  clusterObject: { namespace: string; name: string },
  clusterOwned: Record<string, string>,
  prefix: string,
  machineName: string,
): PoolMember[] {
  const lbName = prefix ? ingressLoadBalancerName(clusterObject) : apiLoadBalancerName(clusterObject);
  return Object.entries(clusterOwned)
    .filter(([role]) => role.startsWith(`${prefix}pool/`))
    .map(([role, poolId]) => {
      const port = Number(role.slice(`${prefix}pool/`.length));
      return { prefix, poolId, port, role: `${prefix}member/${port}`, name: memberName(lbName, port, machineName) };
    });
}

/**
 * The machine's load balancer members, removed before its server (the API must
 * stop sending traffic). A member is looked for by name in each of the
 * cluster's pools for the machine's role, recorded or not, once the machine
 * had an address to want one with (and until its server goes, which follows
 * the members): a batch sent by another machine may have made it before this
 * one recorded it. True once all are gone. When the whole cluster is going,
 * none is removed here: each removal is an Octavia transition of its own,
 * machines removing theirs at once mostly meet a load balancer busy with
 * another's (a 409 and a retry), and the load balancers' cascade delete,
 * once the machines are gone, takes every member in one.
 */
async function removeMembers(context: MachineContext): Promise<boolean> {
  const { pass, deps, machine, openStackCluster } = context;
  const recorded = ownedResources(pass.status);
  const clusterOwned = ownedResources(openStackCluster ? statusOf(openStackCluster) : {});
  const clusterObject = openStackCluster && { namespace: machine.namespace, name: metaOf(openStackCluster).name };
  const slots = clusterObject ? ['', 'ingress/'].flatMap((slotPrefix) => poolMembers(clusterObject, clusterOwned, slotPrefix, machine.name)) : [];
  let toRemove: PoolMember[] = [];
  if (context.clusterTearingDown) {
    for (const { poolId, name } of slots) await deps.memberBatches.forget(poolId, name);
  } else {
    const server = await deps.servers.get(machine);
    // Once the server goes, an earlier pass has looked for every member already.
    const lookUnrecorded = server !== undefined && metaOf(server).deletionTimestamp === undefined && internalAddress(pass.status) !== undefined;
    const prefix = memberPrefix(context);
    toRemove = slots.filter((slot) => recorded[slot.role] !== undefined || (lookUnrecorded && slot.prefix === prefix));
  }
  if (toRemove.length > 0) {
    const identityRef = context.spec.identityRef ?? openStackCluster?.spec.identityRef;
    const cloud = await deps.clouds.connect(machine.namespace, identityRef);
    for (const { poolId, role, name } of toRemove) {
      await deps.memberBatches.forget(poolId, name);
      if (!(await pass.remove(memberActuator(cloud.clients.octavia, poolId, deps.memberBatches), { recordedId: recorded[role], name, owner: pass.owner })))
        return false;
      if (recorded[role] !== undefined) await pass.record((status) => setOwned(status, role, undefined));
    }
  }
  // A recorded member whose pool is gone went with it, one left to the cascade delete goes with it: only the record is left.
  for (const role of Object.keys(recorded).filter(
    (candidate) => /^(ingress\/)?member\//.test(candidate) && (context.clusterTearingDown || !slots.some((slot) => slot.role === candidate)),
  )) {
    await pass.record((status) => setOwned(status, role, undefined));
  }
  return true;
}

/** The server object, whose own finalizer cleans OpenStack up; true once it is gone. */
async function removeServerObject(context: MachineContext): Promise<boolean> {
  const { pass, deps, machine } = context;
  const server = await deps.servers.get(machine);
  if (!server) return true;
  const meta = metaOf(server);
  if (meta.deletionTimestamp === undefined) await deps.servers.delete(machine, meta.uid);
  pass.wait({ waitingFor: `OpenStackServer ${machine.name} to be deleted`, requeueAfterMs: waitRequeueMs }, true);
  return false;
}
