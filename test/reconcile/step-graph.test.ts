/**
 * Steps declared with what they need: run at once where they allow, after their needs, blocked
 * by a need not ready, failing after every sibling settled; removed the other way round, with
 * independent branches at once; and a graph with a cycle, an unknown need or an undeclared read
 * refused.
 */
import { describe, expect, it } from 'vitest';
import { WaitingError, type Waiting } from '../../src/reconcile/resource/actuator.js';
import { ensureGraph, removeGraph, stepGraph, type StepGraph } from '../../src/reconcile/step-graph.js';

interface Outputs {
  network: string;
  groups: string;
  balancer: string;
  bastion: string;
}

/** A promise settled from outside, so a test decides when a step finishes. */
function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Collects the waits steps throw, as a reconcile pass does. */
function waitLog(): { waits: Waiting[]; wait(waiting: Waiting): void } {
  const waits: Waiting[] = [];
  return { waits, wait: (waiting) => waits.push(waiting) };
}

/** Lets every settled promise's continuations run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function graphOf(
  ensure: (name: keyof Outputs, inputs: Partial<Outputs>) => Promise<string | undefined>,
  remove?: (name: keyof Outputs) => Promise<boolean>,
): StepGraph<null, Outputs> {
  const step = (name: keyof Outputs, needs: (keyof Outputs)[]) => ({
    needs,
    ensure: (_: null, inputs: { get<N extends keyof Outputs>(need: N): Outputs[N] }) =>
      ensure(name, Object.fromEntries(needs.map((need) => [need, inputs.get(need)]))),
    ...(remove ? { remove: () => remove(name) } : {}),
  });
  return stepGraph<null, Outputs>({
    network: step('network', []),
    groups: step('groups', []),
    balancer: step('balancer', ['network']),
    bastion: step('bastion', ['network', 'groups']),
  });
}

describe('ensureGraph', () => {
  it('starts steps without needs at once and each other step as soon as its needs are ready, handing it their outputs', async () => {
    const started: string[] = [];
    const gates = { network: gate<string>(), groups: gate<string>(), balancer: gate<string>(), bastion: gate<string>() };
    const inputsSeen: Record<string, Partial<Outputs>> = {};
    const graph = graphOf((name, inputs) => {
      started.push(name);
      inputsSeen[name] = inputs;
      return gates[name].promise;
    });
    const run = ensureGraph(graph, null, waitLog());
    await settle();
    expect(started).toEqual(['network', 'groups']);
    gates.network.open('net-1');
    await settle();
    // The load balancer needs only the network; the bastion still waits for the groups.
    expect(started).toEqual(['network', 'groups', 'balancer']);
    expect(inputsSeen.balancer).toEqual({ network: 'net-1' });
    gates.groups.open('sg-1');
    await settle();
    expect(started).toEqual(['network', 'groups', 'balancer', 'bastion']);
    expect(inputsSeen.bastion).toEqual({ network: 'net-1', groups: 'sg-1' });
    gates.balancer.open('lb-1');
    gates.bastion.open('bastion-1');
    expect(await run).toEqual({ ready: { network: 'net-1', groups: 'sg-1', balancer: 'lb-1', bastion: 'bastion-1' }, blocked: new Map() });
  });

  it('does not run a step whose need is not ready, and says which need held it', async () => {
    const started: string[] = [];
    const graph = graphOf(async (name) => {
      started.push(name);
      return name === 'groups' ? undefined : `${name}-1`;
    });
    const { ready, blocked } = await ensureGraph(graph, null, waitLog());
    expect(started).toEqual(['network', 'groups', 'balancer']);
    expect(ready).toEqual({ network: 'network-1', balancer: 'balancer-1' });
    expect(blocked).toEqual(new Map([['bastion', ['groups']]]));
  });

  it('takes a step that throws a wait as not ready: its wait is recorded, its dependents are blocked, the others run', async () => {
    const graph = graphOf(async (name) => {
      if (name === 'network') throw new WaitingError('load balancer lb-1 to finish another change', 2_000);
      return `${name}-1`;
    });
    const log = waitLog();
    const { ready, blocked } = await ensureGraph(graph, null, log);
    expect(ready).toEqual({ groups: 'groups-1' });
    expect(blocked).toEqual(
      new Map([
        ['balancer', ['network']],
        ['bastion', ['network']],
      ]),
    );
    expect(log.waits).toEqual([{ waitingFor: 'load balancer lb-1 to finish another change', requeueAfterMs: 2_000 }]);
  });

  it("throws the first failure once every step has settled, without running the failed step's dependents", async () => {
    const started: string[] = [];
    const groups = gate<string>();
    const graph = graphOf(async (name) => {
      started.push(name);
      if (name === 'network') throw new Error('network create failed');
      return name === 'groups' ? groups.promise : `${name}-1`;
    });
    let settled = false;
    const run = ensureGraph(graph, null, waitLog()).finally(() => {
      settled = true;
    });
    await settle();
    // The groups' create is still in flight: the failure waits for it.
    expect(settled).toBe(false);
    groups.open('sg-1');
    await expect(run).rejects.toThrow('network create failed');
    expect(started).toEqual(['network', 'groups']);
  });

  it('refuses a read of a step the reader did not declare', async () => {
    const graph = stepGraph<null, { network: string; bastion: string }>({
      network: { needs: [], ensure: async () => 'net-1' },
      bastion: { needs: [], ensure: async (_, inputs) => inputs.get('network') },
    });
    await expect(ensureGraph(graph, null, waitLog())).rejects.toThrow('step "bastion" reads "network" without declaring it in its needs');
  });
});

describe('removeGraph', () => {
  it('removes a step once every step needing it is gone, independent branches at once', async () => {
    const started: string[] = [];
    const gates = { network: gate<boolean>(), groups: gate<boolean>(), balancer: gate<boolean>(), bastion: gate<boolean>() };
    const graph = graphOf(
      async () => undefined,
      (name) => {
        started.push(name);
        return gates[name].promise;
      },
    );
    const run = removeGraph(graph, null);
    await settle();
    // Nothing needs the load balancer or the bastion: both go first, together.
    expect(started).toEqual(['balancer', 'bastion']);
    gates.bastion.open(true);
    await settle();
    // The groups were only the bastion's; the network waits for the load balancer too.
    expect(started).toEqual(['balancer', 'bastion', 'groups']);
    gates.groups.open(true);
    gates.balancer.open(true);
    await settle();
    expect(started).toEqual(['balancer', 'bastion', 'groups', 'network']);
    gates.network.open(true);
    expect(await run).toBe(true);
  });

  it('keeps what a step not yet gone needs for a later pass', async () => {
    const removed: string[] = [];
    const graph = graphOf(
      async () => undefined,
      async (name) => {
        if (name === 'balancer') return false;
        removed.push(name);
        return true;
      },
    );
    expect(await removeGraph(graph, null)).toBe(false);
    expect(removed).toEqual(['bastion', 'groups']);
  });

  it('counts a step without a removal as gone at once', async () => {
    const graph = stepGraph<null, { zones: true }>({ zones: { needs: [], ensure: async () => true } });
    expect(await removeGraph(graph, null)).toBe(true);
  });
});

describe('stepGraph', () => {
  it('refuses a cycle and a need that names no step', () => {
    const ensure = async () => true as const;
    expect(() =>
      stepGraph<null, { a: true; b: true }>({
        a: { needs: ['b'], ensure },
        b: { needs: ['a'], ensure },
      }),
    ).toThrow('step graph cycle: a -> b -> a');
    expect(() => stepGraph<null, { a: true }>({ a: { needs: ['missing' as 'a'], ensure } })).toThrow('step "a" needs "missing", which is no step');
  });
});
