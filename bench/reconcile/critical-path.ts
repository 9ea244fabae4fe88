/**
 * The fastest any reconciler could bring the example cluster to Ready on a
 * cloud with a given pace: the longest chain of operations that depend on
 * each other, each costing its requests' latency plus, for asynchronous
 * resources, the transition and the one read that sees it finished.
 *
 * Dependencies, as the data requires them:
 *   token → preflight (one round of parallel reads) → network → subnet → router (create, add interface);
 *   preflight → security groups (group, then its rules in parallel);
 *   subnet → load balancer → listener → pool → health monitor → floating IP on the VIP;
 *   cluster provisioned (all of the above) → per machine: port → server build → for control-plane
 *   machines, member add; Octavia changes one load balancer at a time, so member adds queue up;
 *   subnet + security groups → bastion port → bastion server → bastion floating IP.
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
  for (let name: string | undefined = last.name; name !== undefined; name = via.get(name)) chain.unshift({ step: byName.get(name)!, finishMs: finish.get(name)! });
  return { totalMs: finish.get(last.name)!, chain };
}

/** The steps for one cluster with a bastion, `controlPlane` machines joining the API load balancer and `workers` others. */
export function clusterSteps(profile: CloudProfile, machines: { controlPlane: number; workers: number }): Step[] {
  const { latency, transitions } = profile;
  const net = latency.network;
  const lb = latency['load-balancer'];
  const compute = latency.compute;
  const readRound = Math.max(latency.network.read, latency.compute.read, latency.image.read, lb.read);
  const octaviaChild = lb.write + transitions.loadBalancerChild + lb.read;
  const serverBuild = compute.write + transitions.server + compute.read;
  const steps: Step[] = [
    { name: 'token', ms: latency.identity.write, after: [] },
    { name: 'preflight reads', ms: readRound, after: ['token'] },
    { name: 'network', ms: net.write, after: ['preflight reads'] },
    { name: 'subnet', ms: net.write, after: ['network'] },
    { name: 'router + interface', ms: 2 * net.write, after: ['subnet'] },
    { name: 'security groups + rules', ms: 2 * net.write, after: ['preflight reads'] },
    { name: 'load balancer', ms: lb.write + transitions.loadBalancer + lb.read, after: ['subnet'] },
    { name: 'listener', ms: octaviaChild, after: ['load balancer'] },
    { name: 'pool', ms: octaviaChild, after: ['listener'] },
    { name: 'health monitor', ms: octaviaChild, after: ['pool'] },
    { name: 'API floating IP', ms: net.write, after: ['health monitor', 'router + interface'] },
    { name: 'cluster provisioned', ms: 0, after: ['API floating IP', 'security groups + rules'] },
    { name: 'bastion port', ms: net.write, after: ['subnet', 'security groups + rules'] },
    { name: 'bastion server', ms: serverBuild, after: ['bastion port'] },
    { name: 'bastion floating IP', ms: net.write, after: ['bastion server', 'router + interface'] },
  ];
  const machineNames = [
    ...Array.from({ length: machines.controlPlane }, (_, index) => ({ name: `control-plane-${index}`, member: true })),
    ...Array.from({ length: machines.workers }, (_, index) => ({ name: `worker-${index}`, member: false })),
  ];
  let previousMember: string | undefined;
  for (const machine of machineNames) {
    steps.push({ name: `${machine.name} port`, ms: net.write, after: ['cluster provisioned'] });
    steps.push({ name: `${machine.name} server`, ms: serverBuild, after: [`${machine.name} port`] });
    if (!machine.member) continue;
    const member = `${machine.name} member`;
    steps.push({ name: member, ms: octaviaChild, after: [`${machine.name} server`, ...(previousMember ? [previousMember] : [])] });
    previousMember = member;
  }
  return steps;
}
