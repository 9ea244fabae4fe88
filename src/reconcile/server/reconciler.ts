/**
 * The OpenStackServer reconciler: one Nova server with its ports, trunks
 * and volumes, for a machine or the bastion.
 *
 * Its steps are a graph (step-graph.ts), as the cluster's are: the
 * prerequisites (every reference resolved once and frozen in
 * status.resolved, so a re-uploaded image cannot change a running server's
 * inputs; the bootstrap data; the floating address claimed from its pool),
 * then volumes and ports at once, each recorded the moment it exists, then
 * the server, whose ID is recorded from the create response. Deletion
 * follows the same graph backwards: the server (waiting until Nova has it
 * gone), then ports with their trunks and volumes at once, then the
 * floating address's claim, and only then the finalizer. Nothing is found
 * by name alone.
 */
import type { JsonObject } from '../../storage/interface.js';
import type { CloudConnection } from '../cloud.js';
import type { ReconcilerDeps } from '../deps.js';
import { TerminalError, type Reconcile } from '../runtime/controller.js';
import { portName, volumeName } from '../../capo/names.js';
import type { NeutronParam, SubnetFilter } from '../../capo/neutron-query.js';
import { resolveNetwork, resolveSecurityGroups, resolveSubnet } from '../neutron-filters.js';
import { deletionProgress } from '../lifecycle.js';
import { DependencyFailedError, resolveFlavorId, resolveImageId } from '../lookups.js';
import { imageRefResolver } from '../image/reconciler.js';
import { WaitingError } from '../resource/actuator.js';
import { ownedResources, setOwned } from '../owned.js';
import { metaOf, statusOf } from '../objects.js';
import type { ServerSpec } from '../kinds.js';
import { objectReconciler, type Outcome } from '../object-reconciler.js';
import { findCondition } from '../conditions.js';
import { clusterNameLabel, pausedAnnotation, setPausedCondition } from '../paused.js';
import { describeWaits, settleAll, type ReconcilePass } from '../reconcile-pass.js';
import { ensureGraph, removeGraph, stepGraph } from '../step-graph.js';
import { ResourceTerminalError } from '../resource/engine.js';
import { portActuator, type PortDesired } from '../resource/port.js';
import { serverActuator, serverAddresses, type MachineAddress, type ServerDesired } from '../resource/server.js';
import { trunkActuator } from '../resource/trunk.js';
import { volumeActuator } from '../resource/volume.js';
import type { Port, Server } from '../../openstack/index.js';
import { associateFloatingAddress, claimFloatingAddress, releaseFloatingAddress } from './floating-address.js';

export const serverFinalizer = 'openstackserver.infrastructure.cluster.x-k8s.io';

/** CAPO's ServerUnexpectedDeletedMessage: what its machine says of a server deleted behind its back. */
export const serverDeletedMessage = 'The server was unexpectedly deleted';

/** What happens after a server is found deleted behind our back, as its Warning says. */
const vanishedServerNext = 'not made again: the machine is failed, for Cluster API to replace';

interface ResolvedPort {
  name: string;
  description?: string;
  networkID: string;
  tags?: string[];
  trunk?: boolean;
  fixedIPs?: { subnet?: string; ipAddress?: string }[];
  securityGroups?: string[];
  adminStateUp?: boolean;
  macAddress?: string;
  allowedAddressPairs?: { ipAddress: string; macAddress?: string }[];
  hostID?: string;
  vnicType?: string;
  profile?: { ovsHWOffload?: boolean; trustedVF?: boolean };
  enablePortSecurity?: boolean;
  propagateUplinkStatus?: boolean;
  valueSpecs?: { name: string; key: string; value: string }[];
}

interface Resolved {
  imageID?: string;
  flavorID?: string;
  serverGroupID?: string;
  ports?: ResolvedPort[];
}

interface ServerContext {
  pass: ReconcilePass<ServerSpec>;
  spec: ServerSpec;
  cloud: CloudConnection;
  deps: ReconcilerDeps;
}

/** How long one read of a network (its ID and port security) serves the servers resolving their ports on it. */
const networkReadTtlMs = 60_000;

/** How soon to look for bootstrap data that is not there yet, when no Secret event comes first. */
const userDataRequeueMs = 15_000;

export function openStackServerReconciler(deps: ReconcilerDeps): Reconcile {
  return objectReconciler(deps, {
    client: deps.servers,
    finalizer: serverFinalizer,
    gate: async (object) =>
      metaOf(object).deletionTimestamp === undefined && (await serverPaused(deps, object))
        ? { open: false, reason: 'Paused', message: 'the server or its Cluster is paused' }
        : { open: true },
    // CAPO: "instance state is DELETED, no actions". Nothing can bring the server back; a pass woken by anything but a spec
    // change (an Image it names made again) would only read again what is known gone.
    settled: (object) => {
      const meta = metaOf(object);
      return meta.deletionTimestamp === undefined && serverDeletedAt(statusOf(object)) === (meta.generation ?? 1);
    },
    begin: async (pass): Promise<ServerContext> => ({
      pass,
      spec: pass.spec,
      cloud: await deps.clouds.connect(pass.meta.namespace, pass.spec.identityRef),
      deps,
    }),
    normal: reconcileNormal,
    remove: async (context) => {
      if (await removeGraph(serverSteps, context)) return true;
      deletionProgress(context.pass, 'InstanceReady', 'InstanceDeleteFailed');
      return false;
    },
    outcome: serverOutcome,
  });
}

/**
 * How a failed pass reads on the server: a port, trunk or volume of a made server deleted behind
 * our back (onceMade) leaves it not whole; the server itself failed or gone is the instance's
 * state, in CAPO's reasons and message.
 */
function serverOutcome(pass: ReconcilePass<ServerSpec>, error: unknown): Outcome {
  if (!(error instanceof ResourceTerminalError)) {
    return { error, failure: { type: 'InstanceReady', reason: error instanceof DependencyFailedError ? 'DependencyFailed' : 'OpenStackError' } };
  }
  if (error.resourceKind !== 'server') {
    if (error.reason === 'Gone') {
      pass.observe((status) => {
        status.ready = false;
      });
    }
    return { error, failure: { type: 'InstanceReady', reason: 'OpenStackError' } };
  }
  pass.observe((status) => {
    status.ready = false;
    if (error.reason !== 'Ambiguous') status.instanceState = error.reason === 'Gone' ? 'DELETED' : 'ERROR';
  });
  const reason = error.reason === 'Gone' ? 'InstanceDeleted' : error.reason === 'Failed' ? 'InstanceStateError' : 'InstanceCreateFailed';
  const told = error.reason === 'Gone' ? new ResourceTerminalError('Gone', 'server', error.ids, `${serverDeletedMessage}: ${error.message}`) : error;
  return { error: told, failure: { type: 'InstanceReady', reason } };
}

/**
 * The generation at which an OpenStackServer's server was found deleted behind our back
 * (InstanceReady=False InstanceDeleted), from its status; undefined if it was not.
 */
export function serverDeletedAt(serverStatus: JsonObject): number | undefined {
  const instance = findCondition(serverStatus, 'InstanceReady');
  return instance?.status === 'False' && instance.reason === 'InstanceDeleted' ? instance.observedGeneration : undefined;
}

async function serverPaused(deps: ReconcilerDeps, object: JsonObject): Promise<boolean> {
  const meta = metaOf(object);
  if (meta.annotations?.[pausedAnnotation] !== undefined) return true;
  const clusterName = meta.labels?.[clusterNameLabel];
  if (clusterName === undefined) return false;
  return (await deps.source.getCluster(meta.namespace, clusterName))?.paused === true;
}

function resolvedOf(status: JsonObject): Resolved {
  return (status.resolved as Resolved | undefined) ?? {};
}

function recordedPorts(status: JsonObject): ({ id: string } | undefined)[] {
  return ((status.resources as JsonObject | undefined)?.ports as { id: string }[] | undefined) ?? [];
}

/** What the resources are built from, settled before any of them is made. */
interface Prerequisites {
  resolved: Resolved;
  /** Base64 user data; undefined when the server has none. */
  userData: string | undefined;
  /** The IPAddress the pool answered the claim with, when the server takes a floating IP from a pool. */
  floatingAddress: string | undefined;
}

interface ServerOutputs {
  prerequisites: Prerequisites;
  volumes: Volumes;
  ports: Port[];
  /** The server, once it is ACTIVE. */
  server: Server;
}

const serverSteps = stepGraph<ServerContext, ServerOutputs>({
  prerequisites: {
    needs: [],
    ensure: prerequisitesOf,
    // The claim goes last: another server must not be given the address while a port of this one still holds it.
    remove: async (context) => {
      await releaseFloatingAddress(context.deps, context.pass);
      return true;
    },
  },
  volumes: { needs: ['prerequisites'], ensure: (context, inputs) => ensureVolumes(context, inputs.get('prerequisites').resolved), remove: removeVolumes },
  ports: {
    needs: ['prerequisites'],
    ensure: (context, inputs) => {
      lookUpServerAhead(context, inputs.get('prerequisites').resolved);
      return ensurePorts(context, inputs.get('prerequisites').resolved);
    },
    remove: removePorts,
  },
  server: {
    needs: ['prerequisites', 'volumes', 'ports'],
    ensure: (context, inputs) => ensureServer(context, inputs.get('prerequisites'), inputs.get('volumes'), inputs.get('ports')),
    remove: removeServer,
  },
});

async function reconcileNormal(context: ServerContext): Promise<void> {
  const { pass } = context;
  pass.observe((status) => setPausedCondition(status, pass.generation, undefined));
  const instanceID = pass.status.instanceID as string | undefined;
  // References resolved once are trusted until the server exists; one found gone before then is resolved again.
  if (instanceID === undefined) pass.frozen = [['resolved']];
  // A recorded server is read while its ports are (its step waits for theirs): a look at a boot costs one call's time, not two.
  pass.readAhead('server', serverActuator(context.cloud.clients.nova), { recordedId: instanceID });
  let outcome: Awaited<ReturnType<typeof ensureGraph<ServerContext, ServerOutputs>>>;
  try {
    outcome = await ensureGraph(serverSteps, context, pass);
  } catch (error) {
    // A server deleted behind our back usually took its ports and volumes with it (a cloud rebuilt): what its steps met is told as the server's loss.
    if (instanceID !== undefined && (await pass.recordedGone('server'))) {
      pass.noteVanished('server', pass.meta.name, instanceID, vanishedServerNext);
      throw new ResourceTerminalError('Gone', 'server', [instanceID], `server ${instanceID}, recorded in status, no longer exists in OpenStack`);
    }
    throw error;
  }
  const { ready, blocked } = outcome;
  // Prerequisites that are not there yet say so themselves; volumes and ports on their way are waits of the instance.
  if (ready.prerequisites && blocked.has('server')) {
    pass.condition({ type: 'InstanceReady', status: 'False', reason: 'InstanceNotReady', message: describeWaits(pass.waiting) });
  }
}

/** The prerequisites, or undefined (with a wait and a condition) while the bootstrap data or the floating address is not there yet. */
async function prerequisitesOf(context: ServerContext): Promise<Prerequisites | undefined> {
  const { pass, spec } = context;
  const resolved = await resolve(context).catch((error: unknown) => {
    // A dependency on its way (an ORC Image) is a wait, shown as such.
    if (error instanceof WaitingError) pass.condition({ type: 'InstanceReady', status: 'False', reason: 'DependencyNotReady', message: error.message });
    throw error;
  });
  // Every create follows the write of status.resolved: a first pass has nothing to look up by name (one a port, one the server).
  await pass.createsFollowAWrite();
  const userData = await userDataOf(context);
  if (userData === 'missing') return undefined;
  // CAPO creates the server only once the pool has given it an address.
  const floatingAddress = spec.floatingIPPoolRef && (await claimFloatingAddress(context.deps, pass, spec.floatingIPPoolRef));
  if (spec.floatingIPPoolRef && floatingAddress === undefined) return undefined;
  return { resolved, userData, floatingAddress };
}

async function ensureServer(context: ServerContext, prerequisites: Prerequisites, volumes: Volumes, ports: Port[]): Promise<Server | undefined> {
  const { pass, spec, cloud } = context;
  const { resolved, userData, floatingAddress } = prerequisites;
  const serverName = pass.meta.name;
  const desired: ServerDesired = {
    name: serverName,
    flavorRef: resolved.flavorID!,
    ...(spec.rootVolume ? {} : { imageRef: resolved.imageID! }),
    portIds: ports.map((port) => port.id),
    ...(spec.sshKeyName ? { key_name: spec.sshKeyName } : {}),
    ...(userData === undefined ? {} : { user_data: userData }),
    ...(spec.serverMetadata && spec.serverMetadata.length > 0
      ? { metadata: Object.fromEntries(spec.serverMetadata.map((item) => [item.key, item.value])) }
      : {}),
    ...(spec.tags && spec.tags.length > 0 ? { tags: spec.tags } : {}),
    ...(spec.configDrive === undefined ? {} : { config_drive: spec.configDrive }),
    ...(spec.availabilityZone ? { availability_zone: spec.availabilityZone } : {}),
    volumes: volumes.attached,
    ephemeral: (spec.additionalBlockDevices ?? [])
      .filter((device) => device.storage.type === 'Local')
      .map((device) => ({ sizeGiB: device.sizeGiB, name: device.name })),
    ...(resolved.serverGroupID ? { serverGroupId: resolved.serverGroupID } : {}),
    ...(spec.schedulerHintAdditionalProperties && spec.schedulerHintAdditionalProperties.length > 0
      ? {
          schedulerHints: Object.fromEntries(
            spec.schedulerHintAdditionalProperties.map((hint) => [
              hint.name,
              hint.value.type === 'Bool' ? hint.value.bool! : hint.value.type === 'Number' ? hint.value.number! : hint.value.string!,
            ]),
          ),
        }
      : {}),
  };
  const server = await pass.ensure('server', serverActuator(cloud.clients.nova), {
    recordedId: pass.status.instanceID as string | undefined,
    desired,
    ifGone: 'fail',
    record: (status, id) => {
      status.instanceID = id;
    },
  });
  const addresses = withPortAddresses(serverAddresses(server.resource), ports);
  pass.observe((status) => {
    status.instanceID = server.resource.id;
    status.instanceState = server.resource.status;
    if (addresses.length > 0) status.addresses = addresses;
    status.ready = server.ready && server.resource.status === 'ACTIVE';
  });
  if (server.ready && server.resource.status === 'ACTIVE') {
    pass.condition({ type: 'InstanceReady', status: 'True', reason: 'Ready' });
    if (floatingAddress) await associateFloatingAddress(context.deps, pass, cloud.clients.neutron, server.resource, ports, floatingAddress);
    return server.resource;
  }
  if (server.ready) {
    // SHUTOFF, PAUSED and the like: the server exists but is not serving; someone has to act.
    pass.condition({ type: 'InstanceReady', status: 'False', reason: 'InstanceNotReady', message: `server is ${server.resource.status}` });
    pass.wait({ waitingFor: `server ${server.resource.id} to be ACTIVE (now ${server.resource.status})`, requeueAfterMs: 60_000 }, true);
  } else {
    pass.condition({ type: 'InstanceReady', status: 'False', reason: 'InstanceNotReady', message: describeWaits(pass.waiting) });
  }
  return undefined;
}

/**
 * Nova reports a server's addresses once its networking is set up, during
 * the boot; the ports' fixed IPs are the same addresses and are known from
 * the start. Given early, they let the machine join its load balancer while
 * the server boots (the member's change then overlaps the boot).
 */
function withPortAddresses(addresses: MachineAddress[], ports: Port[]): MachineAddress[] {
  if (addresses.some((address) => address.type === 'InternalIP')) return addresses;
  const fixed = ports.flatMap((port) => port.fixed_ips.map((ip): MachineAddress => ({ type: 'InternalIP', address: ip.ip_address })));
  return [...fixed, ...addresses];
}

/** Resolves references once; afterwards status.resolved is authoritative. */
async function resolve(context: ServerContext): Promise<Resolved> {
  const { pass, spec, cloud } = context;
  const current = resolvedOf(pass.status);
  if (current.imageID && current.flavorID && current.ports && (current.serverGroupID || !spec.serverGroup)) return current;
  // The references are resolved at once, not one after another: a first boot's setup is one call's time, not three.
  const image = current.imageID ?? resolveImageId(cloud, spec.image, imageRefResolver(context.deps.readOrcImage, pass.meta.namespace));
  const flavor = current.flavorID ?? resolveFlavorId(cloud, spec);
  const serverGroup = current.serverGroupID ?? resolveServerGroupId(context);
  const resolvedPorts = current.ports ?? resolvePorts(context);
  await settleAll<unknown>([image, flavor, serverGroup, resolvedPorts]);
  const [imageID, flavorID, serverGroupID, ports] = [await image, await flavor, await serverGroup, await resolvedPorts];
  const next: Resolved = strip({ imageID, flavorID, serverGroupID, ports });
  await pass.record((status) => {
    status.resolved = next as unknown as JsonObject;
  });
  return next;
}

/** The server group's ID: as given, else the one group the filter names; undefined without one. */
async function resolveServerGroupId(context: ServerContext): Promise<string | undefined> {
  const { spec, cloud } = context;
  if (!spec.serverGroup) return undefined;
  if (spec.serverGroup.id) return spec.serverGroup.id;
  const groups = (await cloud.clients.nova.listServerGroups()).filter((group) => group.name === spec.serverGroup!.filter?.name);
  if (groups.length !== 1) throw new TerminalError(`serverGroup filter matches ${groups.length} server groups; it must match exactly one`);
  return groups[0].id;
}

/** A port's port security as asked, in either release's spelling (admission refuses both); undefined: the network's. */
function portSecurityOf(port: ServerSpec['ports'][number]): boolean | undefined {
  return port.enablePortSecurity ?? (port.disablePortSecurity === undefined ? undefined : !port.disablePortSecurity);
}

/** Each port of the spec with its network, subnets and security groups resolved to IDs. */
async function resolvePorts(context: ServerContext): Promise<ResolvedPort[]> {
  const { pass, spec, cloud } = context;
  const { neutron } = cloud.clients;
  const projectId = (await cloud.session.authenticate()).projectId;
  return Promise.all(
    spec.ports.map(async (port, index): Promise<ResolvedPort> => {
      if (!port.network) throw new TerminalError(`spec.ports[${index}] has no network`);
      // A cluster's machines name one network by ID: one read serves those resolving it about together.
      const networkId = port.network.id;
      const network = networkId
        ? await cloud.memo(`network:${networkId}`, networkReadTtlMs, () => neutron.getNetwork(networkId))
        : await resolveNetwork(neutron, port.network as NeutronParam, `spec.ports[${index}].network`);
      const fixedIPs = await Promise.all(
        (port.fixedIPs ?? []).map(async (fixed, fixedIndex) => ({
          ...(fixed.subnet
            ? {
                subnet: (
                  await resolveSubnet(neutron, fixed.subnet as NeutronParam<SubnetFilter>, `spec.ports[${index}].fixedIPs[${fixedIndex}].subnet`, network.id)
                ).id,
              }
            : {}),
          ...(fixed.ipAddress ? { ipAddress: fixed.ipAddress } : {}),
        })),
      );
      const groupParams = [...(port.securityGroups ?? []), ...(spec.securityGroups ?? [])] as NeutronParam[];
      const groups = [
        ...new Set(
          (
            await Promise.all(
              groupParams.map((param, groupIndex) => resolveSecurityGroups(neutron, param, `security group ${groupIndex} of spec.ports[${index}]`, projectId)),
            )
          ).flat(),
        ),
      ];
      const tags = [...new Set([...(spec.tags ?? []), ...(port.tags ?? [])])];
      const requestedPortSecurity = portSecurityOf(port);
      const portSecurity = requestedPortSecurity ?? network.port_security_enabled;
      return strip({
        name: portName(pass.meta.name, index, port.nameSuffix),
        description: port.description,
        networkID: network.id,
        tags: tags.length > 0 ? tags : undefined,
        trunk: port.trunk ?? spec.trunk ?? false,
        fixedIPs: fixedIPs.length > 0 ? fixedIPs : undefined,
        securityGroups: portSecurity === false ? undefined : groups,
        adminStateUp: port.adminStateUp,
        macAddress: port.macAddress,
        allowedAddressPairs: port.allowedAddressPairs,
        hostID: port.hostID,
        vnicType: port.vnicType,
        profile: port.profile,
        enablePortSecurity: requestedPortSecurity,
        propagateUplinkStatus: port.propagateUplinkStatus,
        valueSpecs: port.valueSpecs,
      });
    }),
  );
}

/** Base64 user data from the Secret's `value` key; 'missing' (and a wait) while the Secret is not there yet. */
async function userDataOf(context: ServerContext): Promise<string | undefined | 'missing'> {
  const { pass, spec, deps } = context;
  const ref = spec.userDataRef;
  if (!ref) return undefined;
  const secret = await deps.source.getSecret(pass.meta.namespace, ref.name);
  const value = secret?.data.value;
  if (!value) {
    const message = secret
      ? `Secret ${pass.meta.namespace}/${ref.name} has no "value" key`
      : `Secret ${pass.meta.namespace}/${ref.name} with the user data does not exist yet`;
    pass.condition({ type: 'InstanceReady', status: 'False', reason: 'WaitingForBootstrapData', message });
    pass.wait({ waitingFor: message, requeueAfterMs: userDataRequeueMs }, true);
    return 'missing';
  }
  return value.toString('base64');
}

interface Volumes {
  attached: NonNullable<ServerDesired['volumes']>;
}

async function ensureVolumes(context: ServerContext, resolved: Resolved): Promise<Volumes | undefined> {
  const { pass, spec, cloud } = context;
  const actuator = volumeActuator(cloud.clients.cinder);
  const wanted: { role: string; name: string; size: number; type?: string; zone?: string; imageRef?: string; bootIndex: number; tag?: string }[] = [];
  const zoneOf = (zone: { from?: string; name?: string } | undefined) => (zone?.from === 'Machine' ? spec.availabilityZone : zone?.name);
  if (spec.rootVolume) {
    wanted.push({
      role: 'volume/root',
      name: volumeName(pass.meta.name, 'root'),
      size: spec.rootVolume.sizeGiB,
      type: spec.rootVolume.type,
      zone: zoneOf(spec.rootVolume.availabilityZone),
      imageRef: resolved.imageID,
      bootIndex: 0,
    });
  }
  for (const device of spec.additionalBlockDevices ?? []) {
    if (device.storage.type !== 'Volume') continue;
    wanted.push({
      role: `volume/${device.name}`,
      name: volumeName(pass.meta.name, device.name),
      size: device.sizeGiB,
      type: device.storage.volume?.type,
      zone: zoneOf(device.storage.volume?.availabilityZone),
      bootIndex: -1,
      tag: device.name,
    });
  }
  const results = await settleAll(
    wanted.map((volume) =>
      pass.ensure(volume.role, actuator, {
        recordedId: ownedResources(pass.status)[volume.role],
        ifGone: onceMade(pass),
        desired: {
          name: volume.name,
          size: volume.size,
          ...(volume.type ? { volume_type: volume.type } : {}),
          ...(volume.zone ? { availability_zone: volume.zone } : {}),
          ...(volume.imageRef ? { imageRef: volume.imageRef } : {}),
        },
        record: (status, id) => setOwned(status, volume.role, id),
      }),
    ),
  );
  if (results.some((result) => !result.ready)) return undefined;
  return {
    attached: wanted.map((volume, index) => ({ id: results[index].resource.id, bootIndex: volume.bootIndex, ...(volume.tag ? { tag: volume.tag } : {}) })),
  };
}

function portDesired(port: ResolvedPort): PortDesired {
  return strip({
    name: port.name,
    network_id: port.networkID,
    description: port.description,
    fixed_ips: port.fixedIPs?.map((fixed) => strip({ subnet_id: fixed.subnet, ip_address: fixed.ipAddress })),
    security_groups: port.securityGroups,
    allowed_address_pairs: port.allowedAddressPairs?.map((pair) => strip({ ip_address: pair.ipAddress, mac_address: pair.macAddress })),
    port_security_enabled: port.enablePortSecurity,
    admin_state_up: port.adminStateUp,
    mac_address: port.macAddress,
    'binding:vnic_type': port.vnicType,
    'binding:host_id': port.hostID,
    'binding:profile': port.profile
      ? strip({ ...(port.profile.ovsHWOffload ? { capabilities: ['switchdev'] } : {}), ...(port.profile.trustedVF ? { trusted: true } : {}) })
      : undefined,
    propagate_uplink_status: port.propagateUplinkStatus,
    value_specs: port.valueSpecs && port.valueSpecs.length > 0 ? Object.fromEntries(port.valueSpecs.map((spec) => [spec.key, spec.value])) : undefined,
    tags: port.tags,
  }) as PortDesired;
}

/**
 * A new server's lookup by name (what a lost create left is adopted), started as its ports are
 * made rather than after them: its create follows theirs in the same pass. Only while a port is
 * still to be made, so a pass whose server step waits (for a volume) spends it once at most. A first
 * pass makes none (ReconcilePass.createsFollowAWrite).
 */
function lookUpServerAhead(context: ServerContext, resolved: Resolved): void {
  const { pass, cloud } = context;
  if (pass.status.instanceID !== undefined) return;
  const portsRecorded = recordedPorts(pass.status);
  if ((resolved.ports ?? []).every((_, index) => portsRecorded[index]?.id !== undefined)) return;
  pass.readAhead('server', serverActuator(cloud.clients.nova), { recordedId: undefined, name: pass.meta.name });
}

/** The ports in order once every port (and trunk) exists. */
async function ensurePorts(context: ServerContext, resolved: Resolved): Promise<Port[] | undefined> {
  const { pass, cloud } = context;
  const ports = resolved.ports ?? [];
  const results = await settleAll(
    ports.map((port, index) =>
      pass.ensure(`port/${index}`, portActuator(cloud.clients.neutron), {
        recordedId: recordedPorts(pass.status)[index]?.id,
        desired: portDesired(port),
        ifGone: onceMade(pass),
        record: (status, id) => {
          const resources = ((status.resources as JsonObject | undefined) ?? {}) as JsonObject;
          const list = [...(((resources.ports as { id: string }[] | undefined) ?? []) as ({ id: string } | null)[])];
          while (list.length < index) list.push(null);
          list[index] = { id };
          status.resources = { ...resources, ports: list as unknown as JsonObject[] };
        },
      }),
    ),
  );
  const trunks = await settleAll(
    ports.map((port, index) =>
      port.trunk
        ? pass.ensure(`trunk/${index}`, trunkActuator(cloud.clients.neutron), {
            recordedId: ownedResources(pass.status)[`trunk/${index}`],
            ifGone: onceMade(pass),
            desired: { name: port.name, port_id: results[index].resource.id },
            record: (status, id) => setOwned(status, `trunk/${index}`, id),
          })
        : undefined,
    ),
  );
  if (results.some((result) => !result.ready) || trunks.some((trunk) => trunk !== undefined && !trunk.ready)) return undefined;
  return results.map((result) => result.resource);
}

/** The server's deletion; true once Nova has it gone. */
async function removeServer(context: ServerContext): Promise<boolean> {
  const { pass, cloud } = context;
  if (
    !(await pass.remove(serverActuator(cloud.clients.nova), {
      recordedId: pass.status.instanceID as string | undefined,
      name: pass.meta.name,
      owner: pass.owner,
    }))
  )
    return false;
  if (pass.status.instanceID !== undefined) {
    await pass.record((status) => {
      delete status.instanceID;
      status.instanceState = 'DELETED';
      status.ready = false;
    });
  }
  return true;
}

/** Each port after its trunk, the ports at once; true once all are gone. */
async function removePorts(context: ServerContext): Promise<boolean> {
  const { pass, cloud } = context;
  const { neutron } = cloud.clients;
  const gone = await settleAll(
    (resolvedOf(pass.status).ports ?? []).map(async (port, index) => {
      if (
        port.trunk &&
        !(await pass.remove(trunkActuator(neutron), { recordedId: ownedResources(pass.status)[`trunk/${index}`], name: port.name, owner: pass.owner }))
      )
        return false;
      return pass.remove(portActuator(neutron), { recordedId: recordedPorts(pass.status)[index]?.id, name: port.name, owner: pass.owner });
    }),
  );
  return gone.every(Boolean);
}

/** The recorded volumes, and those of the spec whose ID never reached status (found by name and owner), at once. */
async function removeVolumes(context: ServerContext): Promise<boolean> {
  const { pass, spec, cloud } = context;
  const owned = ownedResources(pass.status);
  const recorded = Object.keys(owned)
    .filter((role) => role.startsWith('volume/'))
    .map((role) => ({ recordedId: owned[role], device: role.slice('volume/'.length) }));
  const devices = [...(spec.rootVolume ? ['root'] : []), ...(spec.additionalBlockDevices ?? []).filter((d) => d.storage.type === 'Volume').map((d) => d.name)];
  const unrecorded = devices.filter((device) => owned[`volume/${device}`] === undefined).map((device) => ({ recordedId: undefined, device }));
  const gone = await settleAll(
    [...recorded, ...unrecorded].map(async ({ recordedId, device }) =>
      pass.remove(volumeActuator(cloud.clients.cinder), { recordedId, name: volumeName(pass.meta.name, device), owner: pass.owner }),
    ),
  );
  return gone.every(Boolean);
}

/**
 * A port, trunk or volume found gone: made again while the server is still to be made; once it is,
 * one made now would not be attached to it, so the loss is told (the object fails) instead.
 */
function onceMade(pass: ReconcilePass): 'recreate' | 'fail' {
  return pass.status.instanceID === undefined ? 'recreate' : 'fail';
}

function strip<T extends object>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as T;
}
