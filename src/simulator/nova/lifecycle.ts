/**
 * The asynchronous side of Nova: scheduling, spawning (ports bound in
 * Neutron, volumes attached in Cinder), power actions and deletion, each
 * taking ctx.transitionDelayMs as nova-conductor and nova-compute would.
 */
import { SimulatorError, type PeerPort, type SimulatorContext } from '../framework.js';
import { conflict, notFound } from './errors.js';
import type { BlockDevice, ComputeHost, Fault, Nic, NovaStore, Server } from './model.js';

const NO_VALID_HOST = 'No valid host was found. There are not enough hosts available.';
/** Deleted servers kept for `changes-since` listings. */
const TOMBSTONES = 1000;
/** How many transition delays delete_on_termination waits for a volume to be detached. */
const DETACH_ATTEMPTS = 20;
const POWER_TASKS = new Set(['powering-off', 'powering-on', 'rebooting', 'rebooting_hard']);

export class ServerLifecycle {
  constructor(
    private readonly store: NovaStore,
    private readonly ctx: SimulatorContext,
  ) {}

  private get delay(): number {
    return this.ctx.transitionDelayMs;
  }

  private touch(server: Server): void {
    server.updatedAt = this.ctx.clock.now();
  }

  /** The server, if it still exists and nothing (a delete) has overtaken the step that is due. */
  private current(id: string, vmState: string): Server | undefined {
    const server = this.store.servers.get(id);
    return server && server.vmState === vmState && server.taskState !== 'deleting' ? server : undefined;
  }

  /** True when a port is bound to, or promised to, a live server. */
  portClaimed(portId: string): boolean {
    for (const server of this.store.servers.values()) {
      if (server.nics.some((n) => n.portId === portId)) return true;
      if (server.vmState === 'building' && server.requestedNetworks.some((r) => r.kind === 'port' && r.portId === portId)) return true;
    }
    return false;
  }

  /** Next free virtio device name; /dev/vda is the root disk. */
  nextDevice(server: Server): string {
    const used = new Set(server.blockDevices.map((bd) => bd.device));
    for (let i = 1; i < 26; i += 1) {
      const device = `/dev/vd${String.fromCharCode(97 + i)}`;
      if (!used.has(device)) return device;
    }
    throw new SimulatorError(400, 'No free disk device names for prefix vd');
  }

  build(server: Server): void {
    this.ctx.clock.after(this.delay, () => this.schedule(server.id));
  }

  /** os-resetState: an admin sets the vm_state by hand, clearing the task; Nova records no fault. */
  resetState(server: Server, state: 'active' | 'error'): void {
    Object.assign(server, { vmState: state, taskState: null });
    this.touch(server);
  }

  private fail(server: Server, message: string): void {
    const fault: Fault = { code: 500, message, created: this.ctx.clock.now() };
    Object.assign(server, { vmState: 'error', taskState: null, powerState: 0, fault });
    this.touch(server);
  }

  /**
   * The scheduler's filters: the requested zone and host, then the server
   * group (anti-affinity admits max_server_per_host members per host, default
   * 1; affinity keeps to the members' host). Its weighing spreads: the host
   * with the fewest servers wins, the first one on a tie.
   */
  private pickHost(server: Server): ComputeHost | undefined {
    const group = server.groupId ? this.store.groups.get(server.groupId) : undefined;
    const membersOn = (host: ComputeHost) => (group?.members ?? []).filter((id) => id !== server.id && this.store.servers.get(id)?.host === host.name).length;
    const memberHosts = this.store.hosts.filter((host) => membersOn(host) > 0);
    const candidates = this.store.hosts.filter(
      (host) =>
        (server.availabilityZone === null || host.zone === server.availabilityZone) &&
        (server.requestedHost === undefined || host.name === server.requestedHost) &&
        (group?.policy !== 'anti-affinity' || membersOn(host) < (group.rules.max_server_per_host ?? 1)) &&
        (group?.policy !== 'affinity' || memberHosts.length === 0 || memberHosts.includes(host)),
    );
    const load = (host: ComputeHost) => [...this.store.servers.values()].filter((other) => other.host === host.name).length;
    return candidates.reduce<ComputeHost | undefined>((best, host) => (best === undefined || load(host) < load(best) ? host : best), undefined);
  }

  private schedule(id: string): void {
    const server = this.current(id, 'building');
    if (!server) return;
    const host = this.pickHost(server);
    if (!host) return this.fail(server, NO_VALID_HOST);
    server.host = host.name;
    server.availabilityZone = host.zone;
    server.taskState = 'spawning';
    this.touch(server);
    const toCreate = server.blockDevices.filter((bd) => bd.destinationType === 'volume' && !bd.volumeId);
    if (toCreate.length === 0) return this.spawn(id);
    const storage = this.ctx.peers.blockStorage;
    try {
      for (const bd of toCreate) {
        if (!storage) throw new SimulatorError(503, 'The block storage service is unavailable.');
        const volume = storage.createVolume(server.projectId, {
          size: bd.volumeSize ?? 1,
          // Nova leaves the zone to Cinder (cross_az_attach is on by default).
          ...(bd.sourceType === 'image' && bd.uuid ? { imageRef: bd.uuid } : {}),
        });
        bd.volumeId = volume.id;
        bd.createdByNova = true;
      }
    } catch (error) {
      return this.abort(server, error);
    }
    server.taskState = 'block_device_mapping';
    this.ctx.clock.after(this.delay, () => this.spawn(id));
  }

  private abort(server: Server, error: unknown): void {
    this.releaseResources(server);
    const reason = error instanceof Error ? error.message : String(error);
    this.fail(server, `Build of instance ${server.id} aborted: ${reason}`);
  }

  private spawn(id: string): void {
    const server = this.current(id, 'building');
    if (!server) return;
    try {
      for (const bd of server.blockDevices) {
        if (!bd.createdByNova || !bd.volumeId || bd.attachmentId) continue;
        const volume = this.ctx.peers.blockStorage?.getVolume(bd.volumeId);
        if (volume?.status !== 'available') {
          throw new Error(
            `Volume ${bd.volumeId} did not finish being created even after we waited 0 seconds or 1 attempts. And its status is ${volume?.status ?? 'deleted'}.`,
          );
        }
        this.attachBlockDevice(server, bd);
      }
    } catch (error) {
      return this.abort(server, error);
    }
    try {
      for (const requested of server.requestedNetworks) {
        if (requested.kind === 'port') {
          this.bindPort(server, requested.portId);
          server.nics.push({ portId: requested.portId, createdByNova: false, ...(requested.tag ? { tag: requested.tag } : {}) });
        } else {
          const port = this.createPort(server, requested.networkId, requested.fixedIp);
          server.nics.push({ portId: port.id, createdByNova: true, ...(requested.tag ? { tag: requested.tag } : {}) });
        }
      }
    } catch (error) {
      if (!(error instanceof SimulatorError)) throw error;
      return this.abort(server, new Error('Failed to allocate the network(s), not rescheduling.'));
    }
    const now = this.ctx.clock.now();
    Object.assign(server, { vmState: 'active', taskState: null, powerState: 1, launchedAt: now, updatedAt: now });
  }

  private requireNetwork() {
    const network = this.ctx.peers.network;
    if (!network) throw new SimulatorError(503, 'The network service is unavailable.');
    return network;
  }

  bindPort(server: Server, portId: string): PeerPort {
    return this.requireNetwork().updatePort(portId, {
      device_id: server.id,
      device_owner: `compute:${server.availabilityZone}`,
      'binding:host_id': server.host ?? '',
    });
  }

  createPort(server: Server, networkId: string, fixedIp?: string): PeerPort {
    const network = this.requireNetwork();
    const port = network.createPort(server.projectId, {
      network_id: networkId,
      name: '',
      device_id: server.id,
      device_owner: `compute:${server.availabilityZone}`,
      ...(fixedIp ? { fixed_ips: [{ ip_address: fixedIp }] } : {}),
    });
    return network.updatePort(port.id, { 'binding:host_id': server.host ?? '' });
  }

  attachBlockDevice(server: Server, bd: BlockDevice): void {
    const storage = this.ctx.peers.blockStorage;
    if (!storage || !bd.volumeId) throw new SimulatorError(503, 'The block storage service is unavailable.');
    bd.device ??= bd.bootIndex === 0 ? '/dev/vda' : this.nextDevice(server);
    bd.attachmentId = storage.attachVolume(bd.volumeId, { serverId: server.id, device: bd.device, hostName: server.host ?? '' });
  }

  releaseNic(nic: Nic): void {
    const network = this.ctx.peers.network;
    if (!network) return;
    try {
      if (nic.createdByNova) network.deletePort(nic.portId);
      else network.updatePort(nic.portId, { device_id: '', device_owner: '', 'binding:host_id': '' });
    } catch (error) {
      // The port may be gone already (deleted through Neutron); Nova ignores that too.
      if (!(error instanceof SimulatorError)) throw error;
    }
  }

  releaseBlockDevice(server: Server, bd: BlockDevice): void {
    const storage = this.ctx.peers.blockStorage;
    if (!storage || !bd.volumeId) return;
    if (bd.attachmentId) {
      try {
        storage.detachVolume(bd.volumeId, server.id);
      } catch (error) {
        if (!(error instanceof SimulatorError)) throw error;
      }
      bd.attachmentId = undefined;
    }
    if (bd.deleteOnTermination) this.deleteWhenDetached(bd.volumeId, DETACH_ATTEMPTS);
  }

  /** A detach takes Cinder a transition, so delete_on_termination waits for `available`. */
  private deleteWhenDetached(volumeId: string, attempts: number): void {
    const storage = this.ctx.peers.blockStorage;
    const volume = storage?.getVolume(volumeId);
    this.store.volumesToDelete.delete(volumeId);
    if (!storage || !volume) return;
    if (volume.status === 'available' || volume.status === 'error') {
      try {
        storage.deleteVolume(volumeId);
      } catch (error) {
        if (!(error instanceof SimulatorError)) throw error;
      }
      return;
    }
    if (attempts <= 0) return;
    this.store.volumesToDelete.add(volumeId);
    this.ctx.clock.after(this.delay, () => this.deleteWhenDetached(volumeId, attempts - 1));
  }

  private releaseResources(server: Server): void {
    for (const nic of server.nics.splice(0)) this.releaseNic(nic);
    for (const bd of server.blockDevices) this.releaseBlockDevice(server, bd);
  }

  delete(server: Server): void {
    if (server.taskState === 'deleting') return;
    // A server that never reached a host is deleted by nova-api at once ("local delete").
    if (!server.host) return this.reap(server);
    server.taskState = 'deleting';
    this.touch(server);
    this.reapLater(server.id);
  }

  private reapLater(id: string): void {
    this.ctx.clock.after(this.delay, () => {
      const current = this.store.servers.get(id);
      if (current) this.reap(current);
    });
  }

  private reap(server: Server): void {
    this.releaseResources(server);
    const group = server.groupId ? this.store.groups.get(server.groupId) : undefined;
    if (group) group.members = group.members.filter((id) => id !== server.id);
    this.store.servers.delete(server.id);
    const now = this.ctx.clock.now();
    this.store.deleted.set(server.id, { ...server, vmState: 'deleted', taskState: null, powerState: 0, updatedAt: now, terminatedAt: now });
    if (this.store.deleted.size > TOMBSTONES) this.store.deleted.delete(this.store.deleted.keys().next().value!);
  }

  /** stop/start/reboot: a task state for one transition, then the resulting vm_state. */
  powerAction(server: Server, action: 'stop' | 'start' | 'reboot', hard = false): void {
    const allowed: Record<typeof action, string[]> = {
      stop: ['active', 'error'],
      start: ['stopped'],
      reboot: hard ? ['active', 'stopped', 'error', 'paused', 'suspended'] : ['active'],
    };
    if (server.taskState !== null) {
      throw conflict(`Cannot '${action}' instance ${server.id} while it is in task_state ${server.taskState}`);
    }
    if (!allowed[action].includes(server.vmState)) {
      throw conflict(`Cannot '${action}' instance ${server.id} while it is in vm_state ${server.vmState}`);
    }
    server.taskState = action === 'stop' ? 'powering-off' : action === 'start' ? 'powering-on' : hard ? 'rebooting_hard' : 'rebooting';
    this.touch(server);
    this.finishPowerAction(server.id, server.vmState, action !== 'stop');
  }

  private finishPowerAction(id: string, vmState: string, running: boolean): void {
    this.ctx.clock.after(this.delay, () => {
      const current = this.current(id, vmState);
      if (!current) return;
      Object.assign(current, { vmState: running ? 'active' : 'stopped', powerState: running ? 1 : 4, taskState: null });
      this.touch(current);
    });
  }

  /**
   * After a restart from a state file: each server caught in a transition goes on with it (a
   * build is scheduled again, or spawned where it had been placed; a delete, a power action
   * finishes), and the volumes delete_on_termination was waiting on are waited on again.
   */
  resume(): void {
    for (const server of this.store.servers.values()) {
      if (server.taskState === 'deleting') this.reapLater(server.id);
      else if (server.vmState === 'building' && server.host === null) this.build(server);
      else if (server.vmState === 'building') this.ctx.clock.after(this.delay, () => this.spawn(server.id));
      else if (server.taskState !== null && POWER_TASKS.has(server.taskState))
        this.finishPowerAction(server.id, server.vmState, server.taskState !== 'powering-off');
    }
    for (const volumeId of this.store.volumesToDelete) this.ctx.clock.after(this.delay, () => this.deleteWhenDetached(volumeId, DETACH_ATTEMPTS));
  }

  requireVolume(volumeId: string) {
    const volume = this.ctx.peers.blockStorage?.getVolume(volumeId);
    if (!volume) throw notFound(`Volume ${volumeId} could not be found.`);
    return volume;
  }
}
