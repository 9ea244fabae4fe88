/**
 * The fastest any reconciler could bring the example cluster to Ready on a
 * cloud with a given pace: the longest chain of operations that depend on
 * each other, each costing its requests' latency plus, for asynchronous
 * resources, the transition and the one read that sees it finished.
 *
 * Dependencies, as the data requires them:
 *   token → preflight (one round of parallel reads) → network → subnet → router (create, add interface);
 *   preflight → security groups (group, then its rules in parallel);
 *   subnet → API load balancer → (listener → pool → health monitor) per port → floating IP on the VIP;
 *   subnet → ingress load balancer, when enabled → (listener → pool → health monitor) per port;
 *   cluster provisioned (network, security groups, API endpoint) → per machine: port → server build
 *   → member add, to the API pool(s) for control-plane machines and to every ingress pool for workers;
 *   subnet + security groups → bastion port → bastion server → bastion floating IP.
 * Octavia changes one load balancer at a time, so the children and members of one load balancer
 * form a queue; two load balancers proceed in parallel.
 */
import type { CloudProfile } from './cloud.js';

export interface Step {
  name: string;
  /** What the step costs on its own. */
  ms: number;
  /** Steps that must finish first. */
  after: string[];
}

export interface CriticalPath {
  totalMs: number;
  /** The chain that sets totalMs, first step first, with each step's finish time. */
  chain: { step: Step; finishMs: number }[];
}

/** Longest path through the steps, listed in any order; a dependency cycle is an error. */
export function criticalPath(steps: Step[]): CriticalPath {
  const byName = new Map(steps.map((step) => [step.name, step]));
  const finish = new Map<string, number>();
  const via = new Map<string, string | undefined>();
  const visiting = new Set<string>();
  const finishOf = (name: string): number => {
    const known = finish.get(name);
    if (known !== undefined) return known;
    const step = byName.get(name);
    if (!step) throw new Error(`critical path: unknown step ${name}`);
    if (visiting.has(name)) throw new Error(`critical path: ${name} depends on itself`);
    visiting.add(name);
    let start = 0;
    let before: string | undefined;
    for (const dependency of step.after) {
      const ready = finishOf(dependency);
      if (ready > start) [start, before] = [ready, dependency];
    }
    visiting.delete(name);
    finish.set(name, start + step.ms);
    via.set(name, before);
    return start + step.ms;
  };
  let last = steps[0];
  for (const step of steps) if (finishOf(step.name) > finishOf(last.name)) last = step;
  const chain: CriticalPath['chain'] = [];
  for (let name: string | undefined = last.name; name !== undefined; name = via.get(name))
    chain.unshift({ step: byName.get(name)!, finishMs: finish.get(name)! });
  return { totalMs: finish.get(last.name)!, chain };
}

export interface ClusterShape {
  controlPlane: number;
  workers: number;
  /** Ports of the API load balancer (6443 and any additional ones). */
  apiPorts: number;
  /** Ports of the ingress load balancer the workers join; 0 = no ingress load balancer. */
  ingressPorts: number;
  bastion: boolean;
}

/** What one step of each kind costs under the profile: its requests, and for asynchronous ones the transition and the read that sees it over. */
function costs(profile: CloudProfile) {
  const { latency, transitions } = profile;
  const lb = latency['load-balancer'];
  const compute = latency.compute;
  return {
    net: latency.network,
    lb,
    readRound: Math.max(latency.network.read, compute.read, latency.image.read, lb.read),
    octaviaChange: lb.write + transitions.loadBalancerChild + lb.read,
    loadBalancer: lb.write + transitions.loadBalancer + lb.read,
    serverBuild: compute.write + transitions.server + compute.read,
  };
}

/** Token, one round of reads (`reads` names it), network, subnet, router and security groups, and the bastion when there is one. */
function networkSteps(profile: CloudProfile, shape: ClusterShape, reads: string): Step[] {
  const { net, readRound, serverBuild } = costs(profile);
  return [
    { name: 'token', ms: profile.latency.identity.write, after: [] },
    { name: reads, ms: readRound, after: ['token'] },
    { name: 'network', ms: net.write, after: [reads] },
    { name: 'subnet', ms: net.write, after: ['network'] },
    { name: 'router + interface', ms: 2 * net.write, after: ['subnet'] },
    { name: 'security groups + rules', ms: 2 * net.write, after: [reads] },
    ...(shape.bastion
      ? [
          { name: 'bastion port', ms: net.write, after: ['subnet', 'security groups + rules'] },
          { name: 'bastion server', ms: serverBuild, after: ['bastion port'] },
          { name: 'bastion floating IP', ms: net.write, after: ['bastion server', 'router + interface'] },
        ]
      : []),
  ];
}

/** The steps for one cluster with the bastion, machines and load balancers `shape` describes, as the reconciler orders them. */
export function clusterSteps(profile: CloudProfile, shape: ClusterShape): Step[] {
  const { net, octaviaChange, serverBuild, loadBalancer } = costs(profile);
  const steps: Step[] = networkSteps(profile, shape, 'preflight reads');
  /** A queue of changes on one load balancer: each waits for the one before. */
  const queue = (first: string, names: string[], after: (name: string) => string[] = () => []): string => {
    let previous = first;
    for (const name of names) {
      steps.push({ name, ms: octaviaChange, after: [previous, ...after(name)] });
      previous = name;
    }
    return previous;
  };
  const children = (prefix: string, ports: number) =>
    Array.from({ length: ports }, (_, port) =>
      ['listener', 'pool', 'health monitor'].map((child) => `${prefix} ${child}${ports > 1 ? ` ${port + 1}` : ''}`),
    ).flat();

  steps.push({ name: 'API load balancer', ms: loadBalancer, after: ['subnet'] });
  const apiReady = queue('API load balancer', children('API', shape.apiPorts));
  steps.push({ name: 'API floating IP', ms: net.write, after: [apiReady, 'router + interface'] });
  steps.push({ name: 'cluster provisioned', ms: 0, after: ['API floating IP', 'security groups + rules'] });
  let ingressReady: string | undefined;
  if (shape.ingressPorts > 0) {
    steps.push({ name: 'ingress load balancer', ms: loadBalancer, after: ['subnet'] });
    ingressReady = queue('ingress load balancer', children('ingress', shape.ingressPorts));
  }

  const machine = (name: string) => {
    steps.push({ name: `${name} port`, ms: net.write, after: ['cluster provisioned'] });
    steps.push({ name: `${name} server`, ms: serverBuild, after: [`${name} port`] });
    return name;
  };
  /** Each machine's member of each pool; a member needs its machine's server. */
  const members = (machines: string[], pools: number) =>
    machines.flatMap((name) => Array.from({ length: pools }, (_, pool) => `${name} member${pools > 1 ? ` ${pool + 1}` : ''}`));
  const serverOf = (member: string) => [`${member.slice(0, member.indexOf(' member'))} server`];
  const controlPlane = Array.from({ length: shape.controlPlane }, (_, index) => machine(`control-plane-${index}`));
  queue(apiReady, members(controlPlane, shape.apiPorts), serverOf);
  const workers = Array.from({ length: shape.workers }, (_, index) => machine(`worker-${index}`));
  if (ingressReady !== undefined) queue(ingressReady, members(workers, shape.ingressPorts), serverOf);
  return steps;
}

/**
 * The physical limit of the same work, whatever the order a reconciler imposes: lookups in one
 * round of parallel reads; each load balancer one fully populated create (one transition for the
 * whole tree); a machine's port and server as soon as the network, subnet and security groups
 * exist; each pool's members in one batch update once its load balancer is ACTIVE, since the ports
 * (and so the members' addresses) exist long before. A machine is done when its server is ACTIVE
 * and its members are in.
 */
export function physicalLimitSteps(profile: CloudProfile, shape: ClusterShape): Step[] {
  const { net, lb, serverBuild, loadBalancer, octaviaChange: memberBatch } = costs(profile);
  const steps: Step[] = [
    ...networkSteps(profile, shape, 'lookups'),
    { name: 'API load balancer accepted', ms: lb.write, after: ['subnet'] },
    { name: 'API load balancer tree', ms: loadBalancer - lb.write, after: ['API load balancer accepted'] },
    // The floating IP goes on the VIP port, which exists as soon as the create is accepted.
    { name: 'API floating IP', ms: net.write, after: ['API load balancer accepted', 'router + interface'] },
    { name: 'cluster provisioned', ms: 0, after: ['API load balancer tree', 'API floating IP', 'security groups + rules'] },
  ];
  const machines = (role: string, count: number) =>
    Array.from({ length: count }, (_, index) => {
      const name = `${role}-${index}`;
      steps.push({ name: `${name} port`, ms: net.write, after: ['subnet', 'security groups + rules'] });
      steps.push({ name: `${name} server`, ms: serverBuild, after: [`${name} port`] });
      return name;
    });
  const controlPlane = machines('control-plane', shape.controlPlane);
  const workers = machines('worker', shape.workers);
  if (controlPlane.length > 0) {
    steps.push({
      name: 'API members (one batch per pool)',
      ms: memberBatch * shape.apiPorts,
      after: ['API load balancer tree', ...controlPlane.map((name) => `${name} port`)],
    });
  }
  if (shape.ingressPorts > 0) {
    steps.push({ name: 'ingress load balancer', ms: loadBalancer, after: ['subnet'] });
    if (workers.length > 0)
      steps.push({
        name: 'ingress members (one batch per pool)',
        ms: memberBatch * shape.ingressPorts,
        after: ['ingress load balancer', ...workers.map((name) => `${name} port`)],
      });
  }
  for (const name of controlPlane) steps.push({ name: `${name} done`, ms: 0, after: [`${name} server`, 'API members (one batch per pool)'] });
  for (const name of workers)
    steps.push({ name: `${name} done`, ms: 0, after: [`${name} server`, ...(shape.ingressPorts > 0 ? ['ingress members (one batch per pool)'] : [])] });
  return steps;
}

/** The physical limit for machines added to a provisioned cluster: a port, then the server's build; their members go in, one batch per pool, while the servers build. */
export function machinesPhysicalLimitMs(profile: CloudProfile, poolsPerMachine: number): number {
  const { net, serverBuild, octaviaChange } = costs(profile);
  return net.write + Math.max(serverBuild, poolsPerMachine * octaviaChange);
}
