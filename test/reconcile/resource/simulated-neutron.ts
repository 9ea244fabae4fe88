/**
 * What the Neutron actuator tests share: one simulator per test file, and
 * Neutron clients over real sessions whose every HTTP attempt is logged, so
 * a test can prove what was sent, and what was not.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createServiceClients, loadCloud, OpenStackSession, type NeutronClient, type SessionOptions } from '../../../src/openstack/index.js';
import { startSimulator, type Simulator } from '../../../src/simulator/host.js';
import type { Owner, ResourceActuator } from '../../../src/reconcile/resource/actuator.js';
import { ensure, remove, type Removal } from '../../../src/reconcile/resource/engine.js';

export class SimulatedNeutron {
  sim!: Simulator;
  /** The demo project's client, as the reconciler would hold it. */
  neutron!: NeutronClient;
  /** The admin project's: for what Neutron's policy keeps from members (specific addresses, bindings). */
  admin!: NeutronClient;
  /** Session log lines (`openstack network POST /v2.0/routers 201 3ms …`) and `record <id>` markers, in order, since the last test began. */
  readonly events: string[] = [];
  private readonly sessions: OpenStackSession[] = [];

  /** Stands in for the status write that ensure awaits. */
  readonly record = async (id: string): Promise<void> => void this.events.push(`record ${id}`);

  async connect(options: SessionOptions = {}, cloudName = 'simulator'): Promise<NeutronClient> {
    const cloud = loadCloud({ cloudsYaml: this.sim.cloudsYaml(), cloudName });
    const session = await OpenStackSession.create(cloud, { sleep: async () => undefined, logger: (line) => this.events.push(line), ...options });
    this.sessions.push(session);
    return createServiceClients(session).neutron;
  }

  /** Neutron requests as `METHOD path?query`, and records, in order; not the extensions, which a client reads once (before its first create). */
  trace(): string[] {
    return this.events
      .filter((line) => line.startsWith('record ') || (line.startsWith('openstack network ') && !line.startsWith('openstack network GET /v2.0/extensions ')))
      .map((line) => (line.startsWith('record ') ? line : line.split(' ').slice(2, 4).join(' ')));
  }

  /** The requests that change something in the cloud. */
  mutations(): string[] {
    return this.trace().filter((line) => /^(POST|PUT|DELETE) /.test(line));
  }

  /** Requests whose `METHOD path` starts with this. */
  requests(prefix: string): string[] {
    return this.trace().filter((line) => line.startsWith(prefix));
  }

  /**
   * Ensures a resource, then removes it while its DELETE answers 404, as
   * when someone else deleted it in between; returns what remove reports.
   */
  async removeWhileDeleteAnswers404<Desired extends { name: string }, Resource extends { id: string }>(
    actuator: ResourceActuator<Desired, Resource>,
    desired: Desired,
    collection: string,
  ): Promise<Removal> {
    const owner = newOwner();
    const { resource } = await ensure(actuator, { recordedId: undefined, desired, owner, record: this.record });
    this.sim.faults.add({ service: 'network', method: 'DELETE', path: `/v2.0/${collection}/${resource.id}$`, status: 404, times: 1 });
    return remove(actuator, { recordedId: resource.id, name: desired.name, owner });
  }

  forget(): void {
    this.events.splice(0);
  }

  /** Starts the simulator before the file's tests and stops it after; faults and the log are cleared after each test. */
  static forThisFile(): SimulatedNeutron {
    const bench = new SimulatedNeutron();
    beforeAll(async () => {
      bench.sim = await startSimulator({ transitionDelayMs: 20 });
      bench.neutron = await bench.connect();
      bench.admin = await bench.connect({}, 'simulator-admin');
    });
    afterEach(() => {
      bench.sim.faults.clear();
      bench.forget();
    });
    afterAll(async () => {
      for (const session of bench.sessions) session.close();
      await bench.sim?.close();
    });
    return bench;
  }
}

export function newOwner(name = 'demo'): Owner {
  return { uid: randomUUID(), namespace: 'default', name, kind: 'OpenStackCluster' };
}

export const uniqueName = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** A network with one IPv4 subnet, made directly (no owner tags): what a cluster's ports and router interfaces sit on. */
export async function networkWithSubnet(neutron: NeutronClient, cidr: string) {
  const network = await neutron.createNetwork({ name: uniqueName('net') });
  const subnet = await neutron.createSubnet({ network_id: network.id, cidr, ip_version: 4, name: uniqueName('subnet') });
  return { network, subnet };
}

/** The seeded external network (ministack's `public`, 172.24.4.0/24). */
export async function publicNetworkId(neutron: NeutronClient): Promise<string> {
  const [external] = await neutron.findExternalNetworks();
  if (external === undefined) throw new Error('the simulator has no external network');
  return external.id;
}
