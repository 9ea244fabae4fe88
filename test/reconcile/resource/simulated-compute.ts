/**
 * What the server and volume actuator tests share: one simulator per bench,
 * clients over real sessions whose every HTTP attempt is logged (so a test
 * can prove what was sent, and what was not), and drivers that run ensure
 * or remove pass after pass as the controller would.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createServiceClients, loadCloud, OpenStackSession, type ServiceClients } from '../../../src/openstack/index.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../../src/simulator/host.js';
import type { Owner, ResourceActuator } from '../../../src/reconcile/resource/actuator.js';
import { ensure, remove, type Ensured, type Removal } from '../../../src/reconcile/resource/engine.js';

export class SimulatedCompute {
  sim!: Simulator;
  /** The demo project's clients, as the reconciler would hold them. */
  clients!: ServiceClients;
  /** The admin project's: for what Nova keeps from members, such as a server's user data. */
  admin!: ServiceClients;
  /** Session log lines (`openstack compute POST /servers 202 3ms …`) and `record <id>` markers, in order, since the last test began. */
  readonly events: string[] = [];
  private readonly sessions: OpenStackSession[] = [];

  /** Stands in for the status write that ensure awaits. */
  readonly record = async (id: string): Promise<void> => void this.events.push(`record ${id}`);

  /** Requests as `METHOD path?query` (tokens left out), and records, in order. */
  trace(): string[] {
    return this.events
      .filter((line) => !line.startsWith('openstack identity '))
      .map((line) => (line.startsWith('record ') ? line : line.split(' ').slice(2, 4).join(' ')));
  }

  /** Requests whose `METHOD path` starts with this. */
  requests(prefix: string): string[] {
    return this.trace().filter((line) => line.startsWith(prefix));
  }

  forget(): void {
    this.events.splice(0);
  }

  /**
   * Runs ensure as successive reconciles would, passing on the ID recorded
   * so far (and logging each record), until the resource is ready; what
   * ensure throws on the way is thrown.
   */
  async ensureReady<Desired extends { name: string }, Resource extends { id: string }>(
    actuator: ResourceActuator<Desired, Resource>,
    desired: Desired,
    owner: Owner,
    recordedId?: string,
  ): Promise<Ensured<Resource>> {
    let id = recordedId;
    const record = async (recorded: string) => {
      id = recorded;
      await this.record(recorded);
    };
    return repeat(
      `${actuator.kind} "${desired.name}" ready`,
      () => ensure(actuator, { recordedId: id, desired, owner, record }),
      (result) => result.ready,
    );
  }

  /** Runs remove as successive reconciles would until it reports the resource deleted; every outcome is returned, in order. */
  async removeAll<Resource extends { id: string }>(
    actuator: ResourceActuator<{ name: string }, Resource>,
    name: string,
    owner: Owner,
    recordedId?: string,
  ): Promise<Removal[]> {
    const outcomes: Removal[] = [];
    await repeat(
      `${actuator.kind} "${name}" deleted`,
      async () => {
        const outcome = await remove(actuator, { recordedId, name, owner });
        outcomes.push(outcome);
        return outcome;
      },
      (outcome) => 'deleted' in outcome,
    );
    return outcomes;
  }

  /** Starts a simulator before the file's tests and stops it after; the log is cleared after each test. */
  static forThisFile(options: SimulatorOptions = { transitionDelayMs: 20 }): SimulatedCompute {
    const bench = new SimulatedCompute();
    beforeAll(async () => {
      bench.sim = await startSimulator(options);
      bench.clients = await bench.connect('simulator');
      bench.admin = await bench.connect('simulator-admin');
    });
    afterEach(() => {
      bench.forget();
    });
    afterAll(async () => {
      for (const session of bench.sessions) session.close();
      await bench.sim?.close();
    });
    return bench;
  }

  private async connect(cloudName: string): Promise<ServiceClients> {
    const cloud = loadCloud({ cloudsYaml: this.sim.cloudsYaml(), cloudName });
    const session = await OpenStackSession.create(cloud, { sleep: async () => undefined, logger: (line) => this.events.push(line) });
    this.sessions.push(session);
    return createServiceClients(session);
  }
}

/** Enough for every transition the simulator makes 20 ms long. */
const maxPasses = 300;

/** Between passes: the controller would wait requeueAfterMs; the simulator's transitions take 20 ms. */
const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 10));

async function repeat<T>(goal: string, step: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let pass = 0; pass < maxPasses; pass += 1) {
    const value = await step();
    if (done(value)) return value;
    await pause();
  }
  throw new Error(`not ${goal} after ${maxPasses} attempts`);
}

export function newOwner(): Owner {
  return { uid: randomUUID(), namespace: 'default', name: 'worker-0', kind: 'OpenStackMachine' };
}

/** The seeded image every test boots from or copies into a volume. */
export async function seededImageId(clients: ServiceClients): Promise<string> {
  const [image] = await clients.glance.findImages({ name: 'ubuntu-22.04' });
  if (image === undefined) throw new Error('the simulator has no ubuntu-22.04 image');
  return image.id;
}
