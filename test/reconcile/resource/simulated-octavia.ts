/**
 * What the Octavia actuator tests share: one simulator per test file with a
 * subnet for VIPs, an Octavia client over a real session whose every HTTP
 * attempt is logged (so a test can prove what was sent, and what was not),
 * and a driver that runs ensure pass after pass as the controller would.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createServiceClients, loadCloud, OpenStackSession, type LoadBalancer, type ServiceClients } from '../../../src/openstack/index.js';
import { startSimulator, type Simulator } from '../../../src/simulator/host.js';
import type { Owner, ResourceActuator } from '../../../src/reconcile/resource/actuator.js';
import { ensure, type Ensured } from '../../../src/reconcile/resource/engine.js';
import { loadBalancerActuator } from '../../../src/reconcile/resource/load-balancer.js';
import { LoadBalancerBusyError } from '../../../src/reconcile/resource/octavia.js';

export class SimulatedOctavia {
  sim!: Simulator;
  clients!: ServiceClients;
  /** Where every test's VIP goes. */
  subnetId!: string;
  /** Session log lines (`openstack load-balancer POST /v2/lbaas/listeners 201 3ms …`) and `record <id>` markers, in order, since the last test began. */
  readonly events: string[] = [];
  private session: OpenStackSession | undefined;

  get octavia() {
    return this.clients.octavia;
  }

  /** Stands in for the status write that ensure awaits. */
  readonly record = async (id: string): Promise<void> => void this.events.push(`record ${id}`);

  /** Octavia requests as `METHOD path status`, and records, in order. */
  trace(): string[] {
    return this.events
      .filter((line) => line.startsWith('record ') || line.startsWith('openstack load-balancer '))
      .map((line) => (line.startsWith('record ') ? line : line.split(' ').slice(2, 5).join(' ')));
  }

  /** The requests that change (or tried to change) something in Octavia. */
  mutations(): string[] {
    return this.trace().filter((line) => /^(POST|PUT|DELETE) /.test(line));
  }

  forget(): void {
    this.events.splice(0);
  }

  /**
   * Runs ensure as successive reconciles would, passing the ID recorded so
   * far, until the resource is ready; what each pass returned is kept. A
   * create refused because the load balancer was busy is a wait, too.
   */
  async settle<Desired extends { name: string }, Resource extends { id: string }>(
    actuator: ResourceActuator<Desired, Resource>,
    desired: Desired,
    owner: Owner,
    recordedId?: string,
  ): Promise<Ensured<Resource>[]> {
    const passes: Ensured<Resource>[] = [];
    let id = recordedId;
    for (let pass = 0; pass < maxPasses; pass += 1) {
      try {
        const result = await ensure(actuator, {
          recordedId: id,
          desired,
          owner,
          record: async (recorded) => {
            id = recorded;
          },
        });
        passes.push(result);
        if (result.ready) return passes;
      } catch (error) {
        if (!(error instanceof LoadBalancerBusyError)) throw error;
      }
      await pause();
    }
    throw new Error(`${actuator.kind} "${desired.name}" was not ready after ${maxPasses} passes`);
  }

  /** The resource once settle() found it ready. */
  async ready<Desired extends { name: string }, Resource extends { id: string }>(
    actuator: ResourceActuator<Desired, Resource>,
    desired: Desired,
    owner: Owner,
  ): Promise<Resource> {
    return (await this.settle(actuator, desired, owner)).at(-1)!.resource;
  }

  /** An owner-tagged load balancer on the test subnet, ACTIVE. */
  activeLoadBalancer(owner: Owner): Promise<LoadBalancer> {
    return this.ready(loadBalancerActuator(this.octavia), { name: uniqueName('kubeapi'), vip_subnet_id: this.subnetId }, owner);
  }

  /**
   * Starts the simulator before the file's tests and stops it after; faults
   * and the log are cleared after each test. `transitionDelayMs` is how long
   * a load balancer stays PENDING_* after each change: long enough for the
   * few requests a test sends while it is busy.
   */
  static forThisFile(transitionDelayMs = 30): SimulatedOctavia {
    const bench = new SimulatedOctavia();
    beforeAll(async () => {
      bench.sim = await startSimulator({ transitionDelayMs });
      const cloud = loadCloud({ cloudsYaml: bench.sim.cloudsYaml(), cloudName: 'simulator' });
      bench.session = await OpenStackSession.create(cloud, { sleep: async () => undefined, logger: (line) => bench.events.push(line) });
      bench.clients = createServiceClients(bench.session);
      const network = await bench.clients.neutron.createNetwork({ name: uniqueName('lb-net') });
      bench.subnetId = (await bench.clients.neutron.createSubnet({ network_id: network.id, cidr: '10.20.0.0/22', ip_version: 4 })).id;
    });
    afterEach(() => {
      bench.sim.faults.clear();
      bench.forget();
    });
    afterAll(async () => {
      bench.session?.close();
      await bench.sim?.close();
    });
    return bench;
  }
}

/** Enough for any transition these tests ask of the simulator. */
const maxPasses = 200;

/** Between passes: the controller would wait requeueAfterMs; the simulator's transitions take tens of milliseconds. */
export const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 10));

export function newOwner(kind = 'OpenStackCluster'): Owner {
  return { uid: randomUUID(), namespace: 'default', name: 'demo', kind };
}

export const uniqueName = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;
