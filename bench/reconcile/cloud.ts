/**
 * The simulated cloud with a real cloud's pace: a fixed latency per service
 * and kind of request, asynchronous transitions that take seconds and differ
 * by resource (an amphora boots far slower than a listener is configured),
 * and an API front that answers 429 with Retry-After once too many requests
 * are in flight, as a rate-limiting proxy in front of a real cloud does.
 *
 * The simulator has one transition delay for everything; this wraps each
 * service factory so that every service sees its own delay. Octavia's load
 * balancer and its children share one service, so its delay is chosen by the
 * request being handled: Octavia's handlers start a transition synchronously
 * within the request. `octaviaTransitions` counts which delay each transition
 * got, so a run can check that every load balancer create got its own.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import { table } from '../common.js';
import { createCinderSimulator } from '../../src/simulator/cinder/index.js';
import type { SimulatedService, SimulatedServiceFactory, SimulatedServiceType, SimulatorContext } from '../../src/simulator/framework.js';
import { createGlanceSimulator } from '../../src/simulator/glance/index.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/host.js';
import { createServiceClients, loadCloud, OpenStackSession } from '../../src/openstack/index.js';
import { createNeutronSimulator, type NeutronOptions } from '../../src/simulator/neutron/index.js';
import { createNovaSimulator } from '../../src/simulator/nova/index.js';
import { createOctaviaSimulator } from '../../src/simulator/octavia/index.js';

/** Milliseconds a request takes inside the cloud, by service: reads, and writes (POST, PUT, DELETE). */
export const requestLatencySchema = z.record(
  z.enum(['identity', 'network', 'compute', 'load-balancer', 'image', 'block-storage'] satisfies SimulatedServiceType[]),
  z.object({ read: z.number().nonnegative(), write: z.number().nonnegative() }),
);
export type RequestLatency = z.infer<typeof requestLatencySchema>;

export const transitionDelaysSchema = z.object({
  loadBalancer: z.number().nonnegative(),
  loadBalancerChild: z.number().nonnegative(),
  server: z.number().nonnegative(),
  volume: z.number().nonnegative(),
});
/** Milliseconds from an accepted change to its end state (ACTIVE, available). */
export type TransitionDelays = z.infer<typeof transitionDelaysSchema>;

export interface CloudProfile {
  name: string;
  latency: RequestLatency;
  transitions: TransitionDelays;
  /** Fraction of requests (any service) the cloud answers 503, chosen by seeded rolls. */
  unavailableRate: number;
  /** What its Neutron has beyond ministack's Zed (e.g. `tag-creation`, Neutron 2024.1 on); Zed when omitted. */
  neutron?: NeutronOptions;
}

/**
 * Roughly what a healthy mid-sized cloud answers: Neutron and Glance reads
 * are cheap, Nova's server create and Keystone's token issue are the slowest
 * calls; an amphora boots in ~8 s here (minutes on clouds without a spare
 * pool), listener/pool/monitor/member changes take ~3 s, a server ~10 s to
 * ACTIVE, a volume ~5 s to available.
 */
export const realisticProfile: CloudProfile = {
  name: 'lab',
  latency: {
    identity: { read: 40, write: 80 },
    network: { read: 20, write: 40 },
    compute: { read: 30, write: 80 },
    'load-balancer': { read: 25, write: 50 },
    image: { read: 20, write: 40 },
    'block-storage': { read: 25, write: 50 },
  },
  transitions: { loadBalancer: 8_000, loadBalancerChild: 3_000, server: 10_000, volume: 5_000 },
  unavailableRate: 0,
};

const everyCall = (ms: number) => ({ read: ms, write: ms });

/**
 * A busy public cloud: every call takes a second, an amphora takes 90 s to come up (no spare pool),
 * a listener, pool, monitor or member change 10 s, a server 60 s to boot, and one call in twenty
 * fails with 503 (an overloaded API node behind the load balancer).
 */
export const publicCloudProfile: CloudProfile = {
  name: 'public',
  latency: {
    identity: everyCall(1_000),
    network: everyCall(1_000),
    compute: everyCall(1_000),
    'load-balancer': everyCall(1_000),
    image: everyCall(1_000),
    'block-storage': everyCall(1_000),
  },
  transitions: { loadBalancer: 90_000, loadBalancerChild: 10_000, server: 60_000, volume: 30_000 },
  unavailableRate: 0.05,
};

/** The profile as tables, for the head of a run's output. */
export function describeProfile(profile: CloudProfile): string {
  const { transitions } = profile;
  return [
    `Cloud pace, profile ${profile.name} (bench/reconcile/cloud.ts):`,
    table([
      ['service', 'read ms', 'write ms'],
      ...Object.entries(profile.latency).map(([service, costs]) => [service, String(costs.read), String(costs.write)]),
    ]),
    table([
      ['asynchronous transition', 'ms'],
      ['load balancer PENDING_CREATE -> ACTIVE', String(transitions.loadBalancer)],
      ['listener, pool, monitor, member (and the LB back to ACTIVE)', String(transitions.loadBalancerChild)],
      ['server BUILD -> ACTIVE', String(transitions.server)],
      ['volume creating -> available', String(transitions.volume)],
    ]),
    `Requests answered 503 by chance (seeded): ${(profile.unavailableRate * 100).toFixed(0)}%`,
    `Neutron: ${profile.neutron?.tagCreation ? 'with tag-creation (tags in the create body)' : "Zed's extensions (tags by a PUT after each create)"}`,
  ].join('\n');
}

export const cloudProfiles: Record<string, CloudProfile> = { lab: realisticProfile, public: publicCloudProfile };
/** The seed of the rolls that choose the 503s, so a run's faults can be replayed. */
const unavailableSeed = 2026;

export interface BenchCloudOptions {
  profile: CloudProfile;
  /** Requests the cloud's API front serves at once; more get 429 with Retry-After. Infinity = no limit. */
  maxInFlight: number;
  retryAfterSeconds: number;
  /** Told of every request the cloud served, Keystone's too (startSimulator's `onRequest`). */
  onRequest?: SimulatorOptions['onRequest'];
}

/** What the cloud's API front saw (Keystone excluded: tokens are issued once per session). */
export interface FrontStats {
  served: number;
  rejected: number;
  peakInFlight: number;
}

export interface BenchCloud {
  simulator: Simulator;
  front: FrontStats;
  /** Octavia transitions started, by the delay they were given. */
  octaviaTransitions: { loadBalancer: number; loadBalancerChild: number };
  /** Starts counting front statistics afresh (the peak too). */
  resetFront(): void;
  close(): Promise<void>;
}

const isRead = (method: string) => method === 'GET' || method === 'HEAD';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startBenchCloud(options: BenchCloudOptions): Promise<BenchCloud> {
  const latency: RequestLatency = requestLatencySchema.parse(options.profile.latency);
  const transitions = transitionDelaysSchema.parse(options.profile.transitions);
  if (!(options.maxInFlight >= 1)) throw new Error(`maxInFlight must be at least 1, got ${options.maxInFlight}`);
  const front: FrontStats = { served: 0, rejected: 0, peakInFlight: 0 };
  let inFlight = 0;
  /** Set while an Octavia handler runs; its transition (if any) starts within that synchronous call. */
  let octaviaRequest: string | undefined;

  const withDelay = (ctx: SimulatorContext, delay: () => number): SimulatorContext =>
    Object.create(ctx, { transitionDelayMs: { get: delay, enumerable: true } }) as SimulatorContext;
  const paced =
    (factory: SimulatedServiceFactory, delay: () => number): SimulatedServiceFactory =>
    (ctx) => {
      const service = factory(withDelay(ctx, delay));
      return { ...service, router: () => frontOf(service) };
    };

  function frontOf(service: SimulatedService): express.Router {
    const inner = service.router();
    const costs = latency[service.type];
    const outer = express.Router();
    outer.use(async (req: Request, res: Response, next: NextFunction) => {
      if (inFlight >= options.maxInFlight) {
        front.rejected += 1;
        res.setHeader('Retry-After', String(options.retryAfterSeconds));
        res.status(429).json(service.formatError(429, `Rate limit exceeded: more than ${options.maxInFlight} requests in flight.`));
        return;
      }
      inFlight += 1;
      front.served += 1;
      front.peakInFlight = Math.max(front.peakInFlight, inFlight);
      res.once('close', () => (inFlight -= 1));
      await sleep(isRead(req.method) ? costs.read : costs.write);
      if (service.type !== 'load-balancer') return inner(req, res, next);
      octaviaRequest = `${req.method} ${req.path}`;
      try {
        inner(req, res, next);
      } finally {
        octaviaRequest = undefined;
      }
    });
    return outer;
  }

  const octaviaTransitions = { loadBalancer: 0, loadBalancerChild: 0 };
  const octaviaDelay = () => {
    const kind = octaviaRequest !== undefined && /^POST \/v2(\.0)?\/lbaas\/loadbalancers\/?$/.test(octaviaRequest) ? 'loadBalancer' : 'loadBalancerChild';
    octaviaTransitions[kind] += 1;
    return transitions[kind];
  };
  const services = [
    paced(
      (ctx) => createNeutronSimulator(ctx, options.profile.neutron),
      () => 0,
    ),
    paced(createNovaSimulator, () => transitions.server),
    paced(createOctaviaSimulator, octaviaDelay),
    paced(createGlanceSimulator, () => 0),
    paced(createCinderSimulator, () => transitions.volume),
  ];
  const simulator = await startSimulator({
    services,
    onRequest: options.onRequest,
    faultSeed: unavailableSeed,
    latency: [
      { service: 'identity', method: 'GET', ms: latency.identity.read },
      { service: 'identity', method: 'POST', ms: latency.identity.write },
    ],
  });
  if (options.profile.unavailableRate > 0) simulator.faults.add({ service: '*', status: 503, rate: options.profile.unavailableRate });
  return {
    simulator,
    front,
    octaviaTransitions,
    resetFront() {
      Object.assign(front, { served: 0, rejected: 0, peakInFlight: inFlight });
    },
    close: () => simulator.close(),
  };
}

/** Enough quota for every cluster, and public addresses for three floating IPs or gateways each. */
export async function prepareForScale(cloud: BenchCloud, clusters: number): Promise<void> {
  for (const resource of [
    'instances',
    'cores',
    'ram',
    'network',
    'subnet',
    'port',
    'router',
    'floatingip',
    'security_group',
    'security_group_rule',
    'volumes',
    'gigabytes',
  ]) {
    cloud.simulator.setQuota('demo', resource, Infinity);
  }
  const session = await OpenStackSession.create(loadCloud({ cloudsYaml: cloud.simulator.cloudsYaml(), cloudName: 'simulator-admin' }));
  try {
    const { neutron } = createServiceClients(session);
    const [external] = await neutron.listNetworks({ name: 'public' });
    if (!external) throw new Error('the simulator has no public network');
    // 172.24.4.0/24 holds about 250 addresses; each cluster takes a router gateway and two floating IPs.
    const prefix = Math.min(24, 32 - Math.ceil(Math.log2(clusters * 3 + 8)));
    await neutron.createSubnet({ network_id: external.id, cidr: `172.25.0.0/${prefix}`, ip_version: 4, name: 'public-bench', enable_dhcp: false });
  } finally {
    session.close();
  }
  // Neutron makes a project's default security group on its first use; made now, it is part of what the cloud held before.
  const demo = await OpenStackSession.create(loadCloud({ cloudsYaml: cloud.simulator.cloudsYaml(), cloudName: 'simulator' }));
  try {
    await createServiceClients(demo).neutron.listSecurityGroups();
  } finally {
    demo.close();
  }
}

/** The cloud's resources by `<service> <kind>`. */
export function inventory(cloud: BenchCloud): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [service, kinds] of Object.entries(cloud.simulator.inventory())) {
    for (const [kind, count] of Object.entries(kinds ?? {})) counts.set(`${service} ${kind}`, count);
  }
  return counts;
}

export function inventoryDelta(before: Map<string, number>, after: Map<string, number>): [string, number][] {
  return [...after].map(([key, count]): [string, number] => [key, count - (before.get(key) ?? 0)]).filter(([, delta]) => delta !== 0);
}

/**
 * A second load balancer or server for one object is a leak; the figures of such a run count its
 * calls too, so a run says so loudly: one warning per kind whose count is off.
 */
export function duplicateWarnings(
  created: [string, number][],
  shape: { controlPlane: number; workers: number; ingressPorts: number },
  clusters: number,
): string[] {
  const count = (kind: string) => created.find(([key]) => key === kind)?.[1] ?? 0;
  const machines = clusters * (shape.controlPlane + shape.workers);
  const expected: [string, number][] = [
    ['load-balancer loadbalancers', clusters * (shape.ingressPorts > 0 ? 2 : 1)],
    ['network networks', clusters],
    ['network routers', clusters],
    ['compute servers', clusters + machines],
  ];
  return expected
    .filter(([kind, want]) => count(kind) !== want)
    .map(
      ([kind, want]) =>
        `WARNING: ${count(kind)} ${kind} in the cloud for ${clusters} cluster(s) with ${machines} machines in all and a bastion each; expected ${want}`,
    );
}
