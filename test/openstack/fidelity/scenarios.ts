/**
 * The fidelity scenarios, written once against the typed clients and run
 * against any cloud: real Zed (ministack) to record fixtures, the simulator
 * to be compared with them. Each scenario names its resources after the run
 * prefix, records every call it makes, and deletes what it created in a
 * `finally`, newest first, whether or not the scenario got to its own deletes.
 */
import { Readable } from 'node:stream';
import { z } from 'zod';
import { isNotFound, OpenStackError, provisioningStatuses } from '../../../src/openstack/index.js';
import type { ServiceTransport } from '../../../src/openstack/transport.js';
import {
  createServiceClients,
  type CinderClient,
  type GlanceClient,
  type NeutronClient,
  type NovaClient,
  type OctaviaClient,
  type CreateMember,
  type LoadBalancer,
  type Member,
  type Network,
  type Subnet,
} from '../../../src/openstack/services/index.js';
import { messageMask, ObservingTransport, Recorder, sleep, type ScenarioRecord } from './observe.js';

export interface Timing {
  /** Between two reads of a resource that is changing state. */
  intervalMs: number;
  /** BUILD → ACTIVE of a server, and its disappearance after delete. */
  serverTimeoutMs: number;
  /** Each PENDING_* → ACTIVE of Octavia objects, and the load balancer's disappearance. */
  loadBalancerTimeoutMs: number;
  /** Everything else that settles asynchronously (volumes, floating IP status), and retried deletes in the cleanup. */
  timeoutMs: number;
}

export interface FidelityCloud {
  /** The demo project's session. */
  transport: ServiceTransport;
  /** An admin's session, for the admin-only calls a scenario checks (Nova's os-resetState). */
  adminTransport: ServiceTransport;
  projectId: string;
  /** Starts every name the scenarios give, so leftovers can be found and messages masked. */
  prefix: string;
  timing: Timing;
  /**
   * Sets the demo project's Neutron quota for `resource` to what it uses now
   * and answers the function that puts the old limit back; how differs
   * between a real cloud (the admin's quota API) and the simulator.
   */
  capQuotaAtUsage(resource: 'network'): Promise<() => Promise<void>>;
}

/** What every cloud has before the scenarios start (ministack's up.sh seeds the same as the simulator). */
interface Seed {
  externalNetworkId: string;
  imageId: string;
  flavorId: string;
}

interface Context {
  neutron: NeutronClient;
  nova: NovaClient;
  octavia: OctaviaClient;
  cinder: CinderClient;
  glance: GlanceClient;
  rec: Recorder;
  cleanup: Cleanup;
  seed: Seed;
  cloud: FidelityCloud;
  timing: Timing;
  /** A name unique to this run and scenario. */
  name(what: string): string;
}

export interface Scenario {
  name: string;
  /** Changes project-wide state (quotas) that concurrent scenarios would trip over, so it runs alone. */
  alone?: boolean;
  run(ctx: Context): Promise<void>;
}

export interface ScenarioResult {
  record: ScenarioRecord;
  /** Why the scenario stopped before its end. */
  failure?: string;
  /** Deletes that failed in the `finally`: resources possibly left behind. */
  cleanupFailures: string[];
}

/** Deletions to run after the scenario, newest first; each tolerates NotFound. */
class Cleanup {
  private readonly steps: { what: string; remove: () => Promise<void> }[] = [];

  constructor(private readonly timing: Timing) {}

  add(what: string, remove: () => Promise<void>): void {
    this.steps.push({ what, remove });
  }

  /**
   * Conflicts are retried: a network stays in use for a moment after its
   * last port went (Octavia removes the VIP port asynchronously, Nova
   * unbinds a server's ports after the server is gone).
   */
  async run(): Promise<string[]> {
    const failures: string[] = [];
    for (const step of [...this.steps].reverse()) {
      const deadline = Date.now() + this.timing.timeoutMs;
      for (;;) {
        try {
          await step.remove();
          break;
        } catch (error) {
          if (isNotFound(error)) break;
          if (error instanceof OpenStackError && error.kind === 'Conflict' && Date.now() < deadline) {
            await sleep(this.timing.intervalMs);
            continue;
          }
          failures.push(`${step.what}: ${error instanceof Error ? error.message : String(error)}`);
          break;
        }
      }
    }
    return failures;
  }
}

async function ignoringNotFound(run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/** Waits without recording, for states the scenario needs but the fixtures do not describe. */
async function settle<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, intervalMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting; last seen ${JSON.stringify(value)}`);
    await sleep(intervalMs);
  }
}

async function untilNotFound(read: () => Promise<unknown>, timeoutMs: number, intervalMs: number): Promise<void> {
  await settle(
    () =>
      read().then(
        () => false,
        (error: unknown) => {
          if (isNotFound(error)) return true;
          throw error;
        },
      ),
    (gone) => gone,
    timeoutMs,
    intervalMs,
  );
}

/** A network and one subnet on it; shapes are recorded only where the scenario is about them. */
/** An ID no resource has. */
const unknownId = '00000000-0000-4000-8000-000000000000';

async function networkWithSubnet(ctx: Context, label: string, cidr: string, recordShapes = false): Promise<{ network: Network; subnet: Subnet }> {
  const { neutron, rec, cleanup } = ctx;
  const network = await rec.call(
    `createNetwork(${label})`,
    () => neutron.createNetwork({ name: ctx.name(label), admin_state_up: true }),
    recordShapes ? { resource: 'network' } : undefined,
  );
  cleanup.add(`network ${network.id}`, () => neutron.deleteNetwork(network.id));
  const subnet = await rec.call(
    `createSubnet(${label})`,
    () => neutron.createSubnet({ network_id: network.id, name: ctx.name(label), cidr, ip_version: 4 }),
    recordShapes ? { resource: 'subnet', nested: ['allocation_pools[0]'] } : undefined,
  );
  cleanup.add(`subnet ${subnet.id}`, () => neutron.deleteSubnet(subnet.id));
  return { network, subnet };
}

/** A router with a gateway on the external network, as CAPO builds one per cluster. */
async function routerWithGateway(ctx: Context, recordShapes = false) {
  const { neutron, rec, cleanup } = ctx;
  const router = await rec.call(
    'createRouter',
    () => neutron.createRouter({ name: ctx.name('router'), external_gateway_info: { network_id: ctx.seed.externalNetworkId } }),
    recordShapes ? { resource: 'router', nested: ['external_gateway_info', 'external_gateway_info.external_fixed_ips[0]'] } : undefined,
  );
  cleanup.add(`router ${router.id}`, () => neutron.deleteRouter(router.id));
  return router;
}

async function addInterface(ctx: Context, routerId: string, subnetId: string, recordShapes = false) {
  const { neutron, rec, cleanup } = ctx;
  const added = await rec.call(
    'addInterface',
    () => neutron.addInterface(routerId, { subnet_id: subnetId }),
    recordShapes ? { resource: 'routerInterface' } : undefined,
  );
  cleanup.add(`interface of router ${routerId} on ${subnetId}`, () => neutron.removeInterface(routerId, { subnet_id: subnetId }).then(() => undefined));
  return added;
}

const networkAndSubnet: Scenario = {
  name: 'network-subnet',
  async run(ctx) {
    const { neutron, rec } = ctx;
    const { network, subnet } = await networkWithSubnet(ctx, 'net', '10.61.1.0/24', true);
    await rec.call('getNetwork', () => neutron.getNetwork(network.id), { resource: 'network' });
    await rec.call('getSubnet', () => neutron.getSubnet(subnet.id), { resource: 'subnet', nested: ['allocation_pools[0]'] });
    await rec.call('deleteSubnet', () => neutron.deleteSubnet(subnet.id));
    await rec.call('deleteNetwork', () => neutron.deleteNetwork(network.id));
    await rec.attempt('getNetwork(deleted)', () => neutron.getNetwork(network.id));
  },
};

const router: Scenario = {
  name: 'router',
  async run(ctx) {
    const { neutron, rec, cleanup } = ctx;
    const a = await networkWithSubnet(ctx, 'a', '10.61.2.0/24');
    const created = await routerWithGateway(ctx, true);
    await addInterface(ctx, created.id, a.subnet.id, true);
    const withInterface = await rec.call('getRouter', () => neutron.getRouter(created.id), {
      resource: 'router',
      nested: ['external_gateway_info', 'external_gateway_info.external_fixed_ips[0]'],
    });

    // A second network with the same CIDR cannot be routed by the same router.
    const b = await networkWithSubnet(ctx, 'b', '10.61.2.0/24');
    const overlapping = await rec.attempt('addInterface(overlapping CIDR)', () => neutron.addInterface(created.id, { subnet_id: b.subnet.id }));
    if (overlapping.ok)
      cleanup.add(`interface of router ${created.id} on ${b.subnet.id}`, () =>
        neutron.removeInterface(created.id, { subnet_id: b.subnet.id }).then(() => undefined),
      );

    await rec.attempt('deleteSubnet(router interface)', () => neutron.deleteSubnet(a.subnet.id));
    await rec.attempt('deleteNetwork(router interface)', () => neutron.deleteNetwork(a.network.id));
    await rec.attempt('deleteRouter(with interface)', () => neutron.deleteRouter(created.id));
    await rec.call('removeInterface', () => neutron.removeInterface(created.id, { subnet_id: a.subnet.id }), { resource: 'routerInterface' });
    // The reconciler trusts a router read at an unchanged revision to have the interfaces it had (resource/router.ts).
    await rec.answer(
      'getRouter(after removeInterface)',
      () => neutron.getRouter(created.id),
      (withoutInterface) =>
        [
          `add ${movedOn(created.revision_number, withInterface.revision_number)}`,
          `remove ${movedOn(withInterface.revision_number, withoutInterface.revision_number)}`,
        ].join(', '),
    );
    await rec.call('deleteRouter', () => neutron.deleteRouter(created.id));
  },
};

/** Whether a revision_number went up between two reads, in words. */
function movedOn(before: number | undefined, after: number | undefined): string {
  if (before === undefined || after === undefined) return 'shows no revision';
  return after > before ? 'moves the revision on' : 'leaves the revision';
}

const securityGroup: Scenario = {
  name: 'security-group',
  async run(ctx) {
    const { neutron, rec, cleanup } = ctx;
    const group = await rec.call('createSecurityGroup', () => neutron.createSecurityGroup({ name: ctx.name('sg'), description: 'fidelity' }), {
      resource: 'securityGroup',
      nested: ['security_group_rules[0]'],
    });
    cleanup.add(`security group ${group.id}`, () => neutron.deleteSecurityGroup(group.id));
    const ssh = {
      security_group_id: group.id,
      direction: 'ingress',
      ethertype: 'IPv4',
      protocol: 'tcp',
      port_range_min: 22,
      port_range_max: 22,
      remote_ip_prefix: '0.0.0.0/0',
    } as const;
    const rule = await rec.call('createSecurityGroupRule', () => neutron.createSecurityGroupRule(ssh), { resource: 'securityGroupRule' });
    cleanup.add(`security group rule ${rule.id}`, () => neutron.deleteSecurityGroupRule(rule.id));
    const duplicate = await rec.attempt('createSecurityGroupRule(duplicate)', () => neutron.createSecurityGroupRule(ssh));
    if (duplicate.ok) cleanup.add(`security group rule ${duplicate.value.id}`, () => neutron.deleteSecurityGroupRule(duplicate.value.id));
    await rec.call('getSecurityGroup', () => neutron.getSecurityGroup(group.id), { resource: 'securityGroup', nested: ['security_group_rules[0]'] });
    await rec.call('deleteSecurityGroupRule', () => neutron.deleteSecurityGroupRule(rule.id));
    await rec.call('deleteSecurityGroup', () => neutron.deleteSecurityGroup(group.id));
    await rec.attempt('getSecurityGroup(deleted)', () => neutron.getSecurityGroup(group.id));
  },
};

const port: Scenario = {
  name: 'port',
  async run(ctx) {
    const { neutron, rec, cleanup } = ctx;
    const { network, subnet } = await networkWithSubnet(ctx, 'net', '10.61.4.0/24');
    const group = await rec.call('createSecurityGroup', () => neutron.createSecurityGroup({ name: ctx.name('sg') }));
    cleanup.add(`security group ${group.id}`, () => neutron.deleteSecurityGroup(group.id));
    const spec = {
      network_id: network.id,
      name: ctx.name('port'),
      fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.61.4.10' }],
      security_groups: [group.id],
    };
    const created = await rec.call('createPort', () => neutron.createPort(spec), { resource: 'port', nested: ['fixed_ips[0]'] });
    cleanup.add(`port ${created.id}`, () => neutron.deletePort(created.id));
    const clash = await rec.attempt('createPort(address in use)', () => neutron.createPort({ ...spec, name: ctx.name('port-clash') }));
    if (clash.ok) cleanup.add(`port ${clash.value.id}`, () => neutron.deletePort(clash.value.id));
    await rec.call('getPort', () => neutron.getPort(created.id), { resource: 'port', nested: ['fixed_ips[0]'] });
    // Many ports by ID in one list (a repeated filter's values are ORed), as resyncs read them; an unknown ID adds nothing.
    const second = await rec.call('createPort(second)', () => neutron.createPort({ network_id: network.id, name: ctx.name('port-2') }));
    cleanup.add(`port ${second.id}`, () => neutron.deletePort(second.id));
    const named = (ports: { id: string }[]) =>
      ports
        .map((found) => (found.id === created.id ? 'first' : found.id === second.id ? 'second' : 'another'))
        .sort()
        .join(', ');
    await rec.answer('listPorts(by id)', () => neutron.listPorts({ id: [created.id, second.id, unknownId] }), named);
    await rec.call('deletePort(second)', () => neutron.deletePort(second.id));

    // Zed takes a port's tags in its create (tag-ports-during-bulk-creation), not a network's (tag-creation came with 2024.1).
    await rec.answer(
      'listExtensions(tags at creation)',
      () => neutron.listExtensions(),
      (all) => ['tag-ports-during-bulk-creation', 'tag-creation'].map((alias) => `${alias} ${all.some((extension) => extension.alias === alias)}`).join(', '),
    );
    const tagged = await rec.answer(
      'createPort(tags)',
      () => neutron.createPort({ network_id: network.id, name: ctx.name('port-tagged'), tags: ['fidelity', 'capo'] }),
      (port) => [...(port.tags ?? [])].sort().join(','),
    );
    cleanup.add(`port ${tagged.id}`, () => neutron.deletePort(tagged.id));
    await rec.call('deletePort(tags)', () => neutron.deletePort(tagged.id));
    const refused = await rec.attempt('createNetwork(tags)', () => neutron.createNetwork({ name: ctx.name('net-tagged'), tags: ['fidelity'] }));
    if (refused.ok) cleanup.add(`network ${refused.value.id}`, () => neutron.deleteNetwork(refused.value.id));

    await rec.attempt('deleteSecurityGroup(in use)', () => neutron.deleteSecurityGroup(group.id));
    await rec.attempt('deleteSubnet(in use)', () => neutron.deleteSubnet(subnet.id));
    await rec.attempt('deleteNetwork(in use)', () => neutron.deleteNetwork(network.id));
    await rec.call('deletePort', () => neutron.deletePort(created.id));
    await rec.call('deleteSecurityGroup', () => neutron.deleteSecurityGroup(group.id));
  },
};

const floatingIp: Scenario = {
  name: 'floating-ip',
  async run(ctx) {
    const { neutron, rec, cleanup, timing } = ctx;
    const { network, subnet } = await networkWithSubnet(ctx, 'net', '10.61.5.0/24');
    const gateway = await routerWithGateway(ctx);
    await addInterface(ctx, gateway.id, subnet.id);
    const target = await rec.call('createPort', () => neutron.createPort({ network_id: network.id, name: ctx.name('port') }));
    cleanup.add(`port ${target.id}`, () => neutron.deletePort(target.id));

    const created = await rec.call(
      'createFloatingIp',
      () => neutron.createFloatingIp({ floating_network_id: ctx.seed.externalNetworkId, description: ctx.name('fip') }),
      {
        resource: 'floatingIp',
      },
    );
    cleanup.add(`floating IP ${created.id}`, () => neutron.deleteFloatingIp(created.id));
    const associated = await rec.call('updateFloatingIp(associate)', () => neutron.updateFloatingIp(created.id, { port_id: target.id }), {
      resource: 'floatingIp',
    });
    const poll = { intervalMs: timing.intervalMs, timeoutMs: timing.timeoutMs };
    await rec.poll(
      'getFloatingIp(until ACTIVE)',
      () => neutron.getFloatingIp(created.id),
      (fip) => fip.status,
      { ...poll, until: ['ACTIVE', 'ERROR'], initial: associated.status },
    );
    // An update naming other fields keeps the association...
    await rec.call('updateFloatingIp(description only)', () => neutron.updateFloatingIp(created.id, { description: ctx.name('fip-described') }), {
      resource: 'floatingIp',
    });
    // ...an empty one (gophercloud's disassociation, as CAPO sends it) drops it, like port_id null.
    const emptied = await rec.call('updateFloatingIp(empty body)', () => neutron.updateFloatingIp(created.id, {}), { resource: 'floatingIp' });
    await rec.poll(
      'getFloatingIp(until DOWN after the empty update)',
      () => neutron.getFloatingIp(created.id),
      (fip) => fip.status,
      { ...poll, until: ['DOWN', 'ERROR'], initial: emptied.status },
    );
    await rec.call('updateFloatingIp(associate again)', () => neutron.updateFloatingIp(created.id, { port_id: target.id }), { resource: 'floatingIp' });
    const disassociated = await rec.call('updateFloatingIp(disassociate)', () => neutron.updateFloatingIp(created.id, { port_id: null }), {
      resource: 'floatingIp',
    });
    await rec.poll(
      'getFloatingIp(until DOWN)',
      () => neutron.getFloatingIp(created.id),
      (fip) => fip.status,
      { ...poll, until: ['DOWN', 'ERROR'], initial: disassociated.status },
    );
    await rec.call('deleteFloatingIp', () => neutron.deleteFloatingIp(created.id));
    await rec.attempt('getFloatingIp(deleted)', () => neutron.getFloatingIp(created.id));
  },
};

const server: Scenario = {
  name: 'server',
  async run(ctx) {
    const { neutron, nova, rec, cleanup, timing, seed } = ctx;
    const { network, subnet } = await networkWithSubnet(ctx, 'net', '10.61.6.0/24');
    const nic = await rec.call('createPort', () =>
      neutron.createPort({ network_id: network.id, name: ctx.name('port'), fixed_ips: [{ subnet_id: subnet.id }] }),
    );
    cleanup.add(`port ${nic.id}`, () => neutron.deletePort(nic.id));
    const poll = { intervalMs: timing.intervalMs, timeoutMs: timing.serverTimeoutMs };
    const removeServer = (id: string) => async () => {
      await ignoringNotFound(() => nova.deleteServer(id));
      await untilNotFound(() => nova.getServer(id), timing.serverTimeoutMs, timing.intervalMs);
    };

    // An id no image has: Nova checks the image before anything is built.
    const missingImage = await rec.attempt('createServer(missing image)', () =>
      nova.createServer({ name: ctx.name('no-image'), imageRef: unknownId, flavorRef: seed.flavorId, networks: 'none' }),
    );
    if (missingImage.ok) cleanup.add(`server ${missingImage.value.id}`, removeServer(missingImage.value.id));

    const created = await rec.call(
      'createServer',
      () => nova.createServer({ name: ctx.name('vm'), imageRef: seed.imageId, flavorRef: seed.flavorId, networks: [{ port: nic.id }] }),
      {
        resource: 'createdServer',
      },
    );
    cleanup.add(`server ${created.id}`, removeServer(created.id));
    await rec.poll(
      'getServer(until ACTIVE)',
      () => nova.getServer(created.id),
      (vm) => vm.status,
      { ...poll, until: ['ACTIVE', 'ERROR'] },
    );
    await rec.call('getServer', () => nova.getServer(created.id), { resource: 'server', nested: ['addresses.*[0]', 'flavor', 'image', 'security_groups[0]'] });
    // Servers by any of several tags in one list, as resyncs read them by their owner tags.
    const tag = ctx.name('owner');
    await rec.call('addServerTag', () => nova.addServerTag(created.id, tag));
    await rec.answer(
      'listServers(tags-any)',
      () => nova.listServers({ 'tags-any': [ctx.name('nobody'), tag] }),
      (servers) => servers.map((found) => (found.id === created.id ? 'created' : 'another')).join(', '),
    );
    await rec.call('getPort(bound)', () => neutron.getPort(nic.id), { resource: 'port', nested: ['fixed_ips[0]'] });
    await rec.call('deleteServer', () => nova.deleteServer(created.id));
    await rec.untilGone('getServer(until gone)', () => nova.getServer(created.id), poll);
  },
};

/** Nova's admin action that sets a server's state by hand, as an operator does after a failed hypervisor. */
const serverResetState: Scenario = {
  name: 'server-reset-state',
  async run(ctx) {
    const { nova, rec, cleanup, timing, seed, cloud } = ctx;
    const poll = { intervalMs: timing.intervalMs, timeoutMs: timing.serverTimeoutMs };
    const created = await rec.call('createServer', () =>
      nova.createServer({ name: ctx.name('vm'), imageRef: seed.imageId, flavorRef: seed.flavorId, networks: 'none' }),
    );
    cleanup.add(`server ${created.id}`, async () => {
      await ignoringNotFound(() => nova.deleteServer(created.id));
      await untilNotFound(() => nova.getServer(created.id), timing.serverTimeoutMs, timing.intervalMs);
    });
    await rec.poll(
      'getServer(until ACTIVE)',
      () => nova.getServer(created.id),
      (vm) => vm.status,
      { ...poll, until: ['ACTIVE', 'ERROR'] },
    );
    const action = (transport: ServiceTransport, state: string) => () =>
      transport.request('compute', { method: 'POST', path: `/servers/${created.id}/action`, body: { 'os-resetState': { state } } }, z.unknown());
    const admin = new ObservingTransport(cloud.adminTransport);
    await rec.attempt('resetState(error, as a member)', action(new ObservingTransport(cloud.transport), 'error'));
    await rec.attempt('resetState(a state it does not take)', action(admin, 'paused'));
    await rec.call('resetState(error)', action(admin, 'error'));
    await rec.poll(
      'getServer(after reset to error)',
      () => nova.getServer(created.id),
      (vm) => vm.status,
      { ...poll, until: ['ERROR'] },
    );
    await rec.call('resetState(active)', action(admin, 'active'));
    await rec.poll(
      'getServer(after reset to active)',
      () => nova.getServer(created.id),
      (vm) => vm.status,
      { ...poll, until: ['ACTIVE'] },
    );
  },
};

const byProvisioningStatus = (object: { provisioning_status: string }) => object.provisioning_status;

/**
 * The load balancer is deleted with everything below it at the end, whatever the scenario got to.
 * Registered before the create, by name: a create whose answer never came (Octavia's API makes the
 * VIP port before it answers, which on two busy cores once took over 30 s) may still have made one.
 */
function deleteAtCleanup(ctx: Context, loadBalancerName: string): void {
  const { octavia, cleanup, timing } = ctx;
  cleanup.add(`load balancer ${loadBalancerName}`, async () => {
    const made = await octavia.listLoadBalancers({ name: loadBalancerName });
    await Promise.all(
      made.map(async ({ id }) => {
        await ignoringNotFound(() => octavia.deleteLoadBalancer(id, { cascade: true }));
        await untilNotFound(() => octavia.getLoadBalancer(id), timing.loadBalancerTimeoutMs, timing.intervalMs);
      }),
    );
  });
}

const loadBalancer: Scenario = {
  name: 'load-balancer',
  async run(ctx) {
    const { octavia, rec, timing } = ctx;
    const { subnet } = await networkWithSubnet(ctx, 'net', '10.61.7.0/24');
    const poll = { intervalMs: timing.intervalMs, timeoutMs: timing.loadBalancerTimeoutMs };
    const until = ['ACTIVE', 'ERROR'];

    deleteAtCleanup(ctx, ctx.name('lb'));
    // Creating takes Octavia seconds (the simulator its transition delay), so the early change lands while the load
    // balancer is immutable. On a loaded ministack the API can take longer to serve that change than its no-op worker
    // takes to finish the create; the change then lands on an ACTIVE load balancer, which says nothing about Octavia's
    // rules. Both calls are then made again on a new load balancer (the other one goes at cleanup, by name), at most
    // three times in all.
    let created: LoadBalancer;
    for (let round = 1; ; round++) {
      const mark = rec.observations.length;
      created = await rec.call('createLoadBalancer', () => octavia.createLoadBalancer({ name: ctx.name('lb'), vip_subnet_id: subnet.id }), {
        resource: 'loadBalancer',
      });
      const early = await rec.attempt('createListener(while PENDING_CREATE)', () =>
        octavia.createListener({ name: ctx.name('early'), protocol: 'TCP', protocol_port: 8080, loadbalancer_id: created.id }),
      );
      if (!early.ok || round === 3) break;
      rec.rewind(mark);
    }
    await rec.poll('getLoadBalancer(until ACTIVE)', () => octavia.getLoadBalancer(created.id), byProvisioningStatus, {
      ...poll,
      until,
      initial: created.provisioning_status,
    });
    // Children turn ACTIVE together with their load balancer; wait for it too before the next change, unrecorded.
    const loadBalancerActive = () =>
      settle(
        () => octavia.getLoadBalancer(created.id),
        (lb: LoadBalancer) => lb.provisioning_status === 'ACTIVE',
        timing.loadBalancerTimeoutMs,
        timing.intervalMs,
      );

    const listener = await rec.call(
      'createListener',
      () => octavia.createListener({ name: ctx.name('listener'), protocol: 'TCP', protocol_port: 6443, loadbalancer_id: created.id }),
      {
        resource: 'listener',
      },
    );
    await rec.poll('getListener(until ACTIVE)', () => octavia.getListener(listener.id), byProvisioningStatus, {
      ...poll,
      until,
      initial: listener.provisioning_status,
    });
    await loadBalancerActive();
    const pool = await rec.call(
      'createPool',
      () => octavia.createPool({ name: ctx.name('pool'), protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN', listener_id: listener.id }),
      { resource: 'pool' },
    );
    await rec.poll('getPool(until ACTIVE)', () => octavia.getPool(pool.id), byProvisioningStatus, { ...poll, until, initial: pool.provisioning_status });
    await loadBalancerActive();
    const member = await rec.call(
      'createMember',
      () => octavia.createMember(pool.id, { name: ctx.name('member'), address: '10.61.7.20', protocol_port: 6443, subnet_id: subnet.id }),
      {
        resource: 'member',
      },
    );
    await rec.poll('getMember(until ACTIVE)', () => octavia.getMember(pool.id, member.id), byProvisioningStatus, {
      ...poll,
      until,
      initial: member.provisioning_status,
    });
    await loadBalancerActive();
    const monitor = await rec.call(
      'createHealthMonitor',
      () => octavia.createHealthMonitor({ name: ctx.name('hm'), pool_id: pool.id, type: 'TCP', delay: 5, timeout: 3, max_retries: 3 }),
      {
        resource: 'healthMonitor',
      },
    );
    await rec.poll('getHealthMonitor(until ACTIVE)', () => octavia.getHealthMonitor(monitor.id), byProvisioningStatus, {
      ...poll,
      until,
      initial: monitor.provisioning_status,
    });
    await loadBalancerActive();
    await rec.call('getLoadBalancer', () => octavia.getLoadBalancer(created.id), { resource: 'loadBalancer', nested: ['listeners[0]', 'pools[0]'] });
    await rec.call('getPool', () => octavia.getPool(pool.id), { resource: 'pool', nested: ['listeners[0]', 'members[0]'] });

    await rec.call('deleteLoadBalancer(cascade)', () => octavia.deleteLoadBalancer(created.id, { cascade: true }));
    await rec.untilGone('getLoadBalancer(until gone)', () => octavia.getLoadBalancer(created.id), { ...poll, statusOf: byProvisioningStatus });
    await rec.attempt('getListener(cascaded)', () => octavia.getListener(listener.id));
    await rec.attempt('getPool(cascaded)', () => octavia.getPool(pool.id));
    await rec.attempt('getHealthMonitor(cascaded)', () => octavia.getHealthMonitor(monitor.id));
  },
};

/** Octavia's fully populated create: the load balancer with a listener, its default pool, monitor and member in one request. */
const loadBalancerGraph: Scenario = {
  name: 'load-balancer-graph',
  async run(ctx) {
    const { octavia, rec, timing } = ctx;
    const { subnet } = await networkWithSubnet(ctx, 'net', '10.61.9.0/24');
    const poll = { intervalMs: timing.intervalMs, timeoutMs: timing.loadBalancerTimeoutMs };
    deleteAtCleanup(ctx, ctx.name('graph'));
    const created = await rec.call(
      'createLoadBalancer(fully populated)',
      () =>
        octavia.createLoadBalancer({
          name: ctx.name('graph'),
          vip_subnet_id: subnet.id,
          tags: ['fidelity'],
          listeners: [
            {
              name: ctx.name('graph-6443'),
              protocol: 'TCP',
              protocol_port: 6443,
              tags: ['fidelity'],
              default_pool: {
                name: ctx.name('graph-6443'),
                protocol: 'TCP',
                lb_algorithm: 'ROUND_ROBIN',
                tags: ['fidelity'],
                healthmonitor: { name: ctx.name('graph-6443'), type: 'TCP', delay: 10, timeout: 5, max_retries: 5, max_retries_down: 3, tags: ['fidelity'] },
                members: [{ name: ctx.name('graph-member'), address: '10.61.9.20', protocol_port: 6443, tags: ['fidelity'] }],
              },
            },
          ],
        }),
      { resource: 'loadBalancerGraph', nested: ['listeners[0]', 'pools[0]', 'pools[0].healthmonitor', 'pools[0].members[0]', 'pools[0].listeners[0]'] },
    );
    await rec.poll('getLoadBalancer(until ACTIVE)', () => octavia.getLoadBalancer(created.id), byProvisioningStatus, {
      ...poll,
      until: ['ACTIVE', 'ERROR'],
      initial: created.provisioning_status,
    });
    const [listener] = await rec.call('listListeners', () => octavia.listListeners({ loadbalancer_id: created.id }));
    await rec.call('getListener', () => octavia.getListener(listener!.id), { resource: 'listener' });
    const [pool] = await rec.call('listPools', () => octavia.listPools({ loadbalancer_id: created.id }));
    await rec.call('getPool', () => octavia.getPool(pool!.id), { resource: 'pool', nested: ['listeners[0]', 'members[0]'] });
    await rec.call('getHealthMonitor', () => octavia.getHealthMonitor(pool!.healthmonitor_id!), { resource: 'healthMonitor' });
    await rec.call('listMembers', () => octavia.listMembers(pool.id));
    await rec.call('deleteLoadBalancer(cascade)', () => octavia.deleteLoadBalancer(created.id, { cascade: true }));
    await rec.untilGone('getLoadBalancer(until gone)', () => octavia.getLoadBalancer(created.id), { ...poll, statusOf: byProvisioningStatus });
  },
};

/** The batch member update: one change of the pool for many members, matched by address and port, with and without additive_only. */
const memberBatch: Scenario = {
  name: 'member-batch',
  async run(ctx) {
    const { octavia, rec, timing } = ctx;
    const { subnet } = await networkWithSubnet(ctx, 'net', '10.61.11.0/24');
    const poll = { intervalMs: timing.intervalMs, timeoutMs: timing.loadBalancerTimeoutMs };
    const member = (host: number, extra: Partial<CreateMember> = {}): CreateMember => ({
      name: ctx.name(`m${host}`),
      address: `10.61.11.${host}`,
      protocol_port: 6443,
      ...extra,
    });
    // Built one by one: Zed's fully populated create can leave its children PENDING_CREATE for good (see load-balancer-graph).
    deleteAtCleanup(ctx, ctx.name('batch'));
    const created = await rec.call('createLoadBalancer', () => octavia.createLoadBalancer({ name: ctx.name('batch'), vip_subnet_id: subnet.id }));
    await rec.poll('getLoadBalancer(until ACTIVE)', () => octavia.getLoadBalancer(created.id), byProvisioningStatus, {
      ...poll,
      until: ['ACTIVE', 'ERROR'],
      initial: created.provisioning_status,
    });
    const settled = () =>
      settle(
        () => octavia.getLoadBalancer(created.id),
        (lb: LoadBalancer) => lb.provisioning_status === 'ACTIVE',
        timing.loadBalancerTimeoutMs,
        timing.intervalMs,
      );
    const listener = await rec.call('createListener', () =>
      octavia.createListener({ name: ctx.name('batch'), protocol: 'TCP', protocol_port: 6443, loadbalancer_id: created.id }),
    );
    await settled();
    const pool = await rec.call('createPool', () =>
      octavia.createPool({ name: ctx.name('batch'), protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN', listener_id: listener.id }),
    );
    await settled();
    await rec.call('createMember', () => octavia.createMember(pool.id, member(20, { tags: ['first'] })));
    await settled();
    const monitor = await rec.call('createHealthMonitor', () =>
      octavia.createHealthMonitor({ name: ctx.name('batch'), pool_id: pool.id, type: 'TCP', delay: 5, timeout: 3, max_retries: 3 }),
    );
    await settled();
    // The status tree: every object below the load balancer with its statuses, in one read.
    await rec.call('getLoadBalancerStatus', () => octavia.getLoadBalancerStatus(created.id), {
      resource: 'loadBalancerStatus',
      nested: [
        'statuses',
        'statuses.loadbalancer',
        'statuses.loadbalancer.listeners[0]',
        'statuses.loadbalancer.listeners[0].pools[0]',
        'statuses.loadbalancer.listeners[0].pools[0].health_monitor',
        'statuses.loadbalancer.listeners[0].pools[0].members[0]',
      ],
    });
    const known = [created.id, listener.id, pool.id, monitor.id];
    const kinds = ['load balancer', 'listener', 'pool', 'monitor'];
    await rec.answer(
      'getLoadBalancerStatus(what it shows)',
      () => octavia.getLoadBalancerStatus(created.id),
      (tree) =>
        [...provisioningStatuses(tree).entries()]
          .map(([id, status]) => `${kinds[known.indexOf(id)] ?? 'member'} ${status}`)
          .sort()
          .join('; '),
    );
    const members = () => octavia.listMembers(pool.id);
    const described = (found: Member[]) =>
      [...found]
        .sort((a, b) => a.address.localeCompare(b.address))
        .map((one) => `${one.address} ${one.provisioning_status} weight ${one.weight} [${(one.tags ?? []).join(',')}]`)
        .join('; ');
    const lbStatus = () => octavia.getLoadBalancer(created.id);

    await rec.call('updateMembers(additive_only, two new)', () =>
      octavia.updateMembers(pool.id, [member(21, { tags: ['batch'] }), member(22, { tags: ['batch'] })], { additiveOnly: true }),
    );
    await rec.answer('listMembers(right after)', members, described);
    await rec.answer('getLoadBalancer(right after)', lbStatus, byProvisioningStatus);
    await rec.attempt('updateMembers(while PENDING_UPDATE)', () => octavia.updateMembers(pool.id, [member(23)], { additiveOnly: true }));
    await settled();
    await rec.answer('listMembers(settled)', members, described);

    await rec.attempt('updateMembers(one address twice)', () => octavia.updateMembers(pool.id, [member(24), member(24)], { additiveOnly: true }));
    await rec.attempt('updateMembers(reserved address)', () =>
      octavia.updateMembers(pool.id, [{ ...member(25), address: '169.254.169.254' }], { additiveOnly: true }),
    );
    await rec.attempt('updateMembers(unknown subnet)', () =>
      octavia.updateMembers(pool.id, [member(26, { subnet_id: '4f0ef1a5-2b47-4d27-9a0e-2f0e8f1b7c11' })], { additiveOnly: true }),
    );
    await rec.answer('getLoadBalancer(after refusals)', lbStatus, byProvisioningStatus);

    await rec.call('updateMembers(additive_only, an existing address)', () =>
      octavia.updateMembers(pool.id, [member(21, { weight: 5, tags: ['batch', 'heavier'] })], { additiveOnly: true }),
    );
    await rec.answer('listMembers(after the update)', members, described);
    await settled();
    await rec.call('updateMembers(the whole list)', () => octavia.updateMembers(pool.id, [member(20, { tags: ['first'] })], { additiveOnly: false }));
    await rec.answer('listMembers(after the whole list)', members, described);
    await settled();
    await rec.answer('listMembers(the whole list applied)', members, described);
    await rec.call('deleteLoadBalancer(cascade)', () => octavia.deleteLoadBalancer(created.id, { cascade: true }));
    await rec.untilGone('getLoadBalancer(until gone)', lbStatus, { ...poll, statusOf: byProvisioningStatus });
  },
};

const volume: Scenario = {
  name: 'volume',
  async run(ctx) {
    const { cinder, rec, cleanup, timing } = ctx;
    const poll = { intervalMs: timing.intervalMs, timeoutMs: timing.timeoutMs };
    const created = await rec.call('createVolume', () => cinder.createVolume({ size: 1, name: ctx.name('vol') }), { resource: 'volume' });
    cleanup.add(`volume ${created.id}`, async () => {
      // Cinder refuses to delete a volume that is still being created.
      await settle(
        () => cinder.getVolume(created.id),
        (v) => v.status !== 'creating',
        timing.timeoutMs,
        timing.intervalMs,
      );
      await ignoringNotFound(() => cinder.deleteVolume(created.id));
      await untilNotFound(() => cinder.getVolume(created.id), timing.timeoutMs, timing.intervalMs);
    });
    await rec.poll(
      'getVolume(until available)',
      () => cinder.getVolume(created.id),
      (v) => v.status,
      { ...poll, until: ['available', 'error'], initial: created.status },
    );
    await rec.call('getVolume', () => cinder.getVolume(created.id), { resource: 'volume' });
    await rec.call('deleteVolume', () => cinder.deleteVolume(created.id));
    await rec.untilGone('getVolume(until gone)', () => cinder.getVolume(created.id), poll);
  },
};

/** What an ORC Image does to Glance: a queued image, its data streamed in, active with Glance's hashes, renamed and retagged, then deleted. */
const image: Scenario = {
  name: 'image',
  async run(ctx) {
    const { glance, rec, cleanup } = ctx;
    // The same bytes in every run (raw: any bytes are a valid raw disk).
    const data = Buffer.alloc(64 * 1024, 7);
    const created = await rec.call(
      'createImage',
      () => glance.createImage({ name: ctx.name('img'), disk_format: 'raw', container_format: 'bare', tags: ['fidelity'] }),
      { resource: 'image' },
    );
    cleanup.add(`image ${created.id}`, () => ignoringNotFound(() => glance.deleteImage(created.id)));
    await rec.call('uploadImageData', () => glance.uploadImageData(created.id, Readable.from([data])));
    await rec.call('getImage(after upload)', () => glance.getImage(created.id), { resource: 'image' });
    await rec.call(
      'updateImage(name, tags)',
      () =>
        glance.updateImage(created.id, [
          { op: 'replace', path: '/name', value: ctx.name('img-renamed') },
          { op: 'replace', path: '/tags', value: ['fidelity', 'renamed'] },
        ]),
      { resource: 'image' },
    );
    await rec.attempt('uploadImageData(again)', () => glance.uploadImageData(created.id, Readable.from([data])));
    await rec.call('deleteImage', () => glance.deleteImage(created.id));
    await rec.attempt('getImage(deleted)', () => glance.getImage(created.id));
  },
};

const overQuota: Scenario = {
  name: 'over-quota',
  alone: true,
  async run(ctx) {
    const { neutron, rec, cleanup } = ctx;
    const restore = await ctx.cloud.capQuotaAtUsage('network');
    try {
      const refused = await rec.attempt('createNetwork(at quota)', () => neutron.createNetwork({ name: ctx.name('net') }));
      if (refused.ok) cleanup.add(`network ${refused.value.id}`, () => neutron.deleteNetwork(refused.value.id));
    } finally {
      await restore();
    }
  },
};

export const scenarios: readonly Scenario[] = [
  networkAndSubnet,
  router,
  securityGroup,
  port,
  floatingIp,
  server,
  serverResetState,
  loadBalancer,
  loadBalancerGraph,
  memberBatch,
  volume,
  image,
  overQuota,
];

async function findSeed(cloud: FidelityCloud): Promise<Seed> {
  const clients = createServiceClients(cloud.transport);
  const [external] = (await clients.neutron.findExternalNetworks()).filter((network) => network.name === 'public');
  const [image] = await clients.glance.findImages({ name: 'ubuntu-22.04' });
  const flavor = await clients.nova.findFlavorByName('m1.tiny');
  if (external === undefined || image === undefined || flavor === undefined) {
    throw new Error(
      `the cloud lacks ministack's seed data: external network "public" ${external?.id ?? 'missing'}, image "ubuntu-22.04" ${image?.id ?? 'missing'}, flavor "m1.tiny" ${flavor?.id ?? 'missing'}`,
    );
  }
  return { externalNetworkId: external.id, imageId: image.id, flavorId: flavor.id };
}

async function runScenario(scenario: Scenario, cloud: FidelityCloud, seed: Seed): Promise<ScenarioResult> {
  const clients = createServiceClients(new ObservingTransport(cloud.transport));
  const rec = new Recorder(messageMask(cloud.prefix));
  const cleanup = new Cleanup(cloud.timing);
  const ctx: Context = { ...clients, rec, cleanup, seed, cloud, timing: cloud.timing, name: (what) => `${cloud.prefix}-${scenario.name}-${what}` };
  let failure: string | undefined;
  let cleanupFailures: string[] = [];
  try {
    await scenario.run(ctx);
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
  } finally {
    cleanupFailures = await cleanup.run();
  }
  return { record: { scenario: scenario.name, observations: rec.observations }, ...(failure === undefined ? {} : { failure }), cleanupFailures };
}

/** The scenarios that must run alone first, then all others at once; results by scenario name. */
export async function runScenarios(cloud: FidelityCloud, selected: readonly Scenario[] = scenarios): Promise<Map<string, ScenarioResult>> {
  const seed = await findSeed(cloud);
  const results = new Map<string, ScenarioResult>();
  for (const scenario of selected.filter((s) => s.alone === true)) results.set(scenario.name, await runScenario(scenario, cloud, seed));
  const together = selected.filter((s) => s.alone !== true);
  const outcomes = await Promise.all(together.map((scenario) => runScenario(scenario, cloud, seed)));
  together.forEach((scenario, index) => {
    results.set(scenario.name, outcomes[index]!);
  });
  return results;
}
