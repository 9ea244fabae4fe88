/**
 * A reconciler's steps declared as data: each names the steps whose output
 * it needs. From that one declaration follow the create order (a step runs
 * once what it needs is ready), the parallelism (steps that do not need each
 * other run at once) and the delete order (a step is removed once every step
 * needing it is gone, independent branches at once), as ORC declares an
 * object's dependencies rather than sequencing them by hand.
 *
 * A step reads its inputs through `inputs.get`, which only answers for the
 * steps it declared: an undeclared dependency fails the first test that
 * takes that path instead of holding by accident of timing.
 */
import { settleAll } from './reconcile-pass.js';
import { WaitingError, waitingOf, type Waiting } from './resource/actuator.js';

export interface Inputs<Outputs> {
  /** The output of a step this one declared in `needs`; anything else is a programming error. */
  get<Name extends keyof Outputs>(name: Name): Outputs[Name];
}

export interface Step<Context, Outputs, Output> {
  /** The steps whose output this one takes: it runs after them and is removed before them. */
  readonly needs: readonly (keyof Outputs)[];
  /**
   * Its output once what it manages is ready; undefined while it is not (it has recorded its waits in the context).
   * A WaitingError it throws (a load balancer busy with another change, a dependency on its way) is the same: not ready, with that wait.
   */
  ensure(context: Context, inputs: Inputs<Outputs>): Promise<Output | undefined>;
  /** True once everything the step made is gone; without it the step leaves nothing behind. */
  remove?(context: Context): Promise<boolean>;
}

export type StepGraph<Context, Outputs> = { readonly [Name in keyof Outputs]: Step<Context, Outputs, Outputs[Name]> };

export interface GraphEnsured<Outputs> {
  /** The outputs of the steps that are ready. */
  ready: Partial<Outputs>;
  /** Steps that did not run this pass, with the needs that were not ready. */
  blocked: Map<keyof Outputs, (keyof Outputs)[]>;
}

/** Checks that every need names a step and that no step needs itself through others; the graph, unchanged. */
export function stepGraph<Context, Outputs>(graph: StepGraph<Context, Outputs>): StepGraph<Context, Outputs> {
  const names = Object.keys(graph) as (keyof Outputs)[];
  const state = new Map<keyof Outputs, 'visiting' | 'done'>();
  const visit = (name: keyof Outputs, path: (keyof Outputs)[]): void => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') throw new Error(`step graph cycle: ${[...path, name].map(String).join(' -> ')}`);
    state.set(name, 'visiting');
    for (const need of graph[name].needs) {
      if (!(need in graph)) throw new Error(`step "${String(name)}" needs "${String(need)}", which is no step`);
      visit(need, [...path, name]);
    }
    state.set(name, 'done');
  };
  for (const name of names) visit(name, []);
  return graph;
}

/** Where the waits that steps throw are recorded (the reconcile pass). */
export interface WaitRecorder {
  wait(waiting: Waiting): void;
}

/**
 * Runs every step as soon as its needs are ready, all at once where they
 * allow. A step whose need is not ready does not run (it is `blocked`). A
 * step that throws a wait is not ready, and its wait goes to `waits`: the
 * caller still sees the others' outcomes and reports readiness from them
 * (a thrown wait must not leave a Ready condition of an earlier pass
 * standing). A failing step blocks its dependents; the first failure is
 * thrown once every step has settled, so no create is left in flight
 * behind it.
 */
export async function ensureGraph<Context, Outputs>(graph: StepGraph<Context, Outputs>, context: Context, waits: WaitRecorder): Promise<GraphEnsured<Outputs>> {
  const ready: Partial<Outputs> = {};
  const blocked = new Map<keyof Outputs, (keyof Outputs)[]>();
  const runs = new Map<keyof Outputs, Promise<boolean>>();
  const run = (name: keyof Outputs): Promise<boolean> => {
    let running = runs.get(name);
    if (running) return running;
    running = (async () => {
      const step = graph[name];
      const needsReady = await Promise.all(step.needs.map(run));
      const missing = step.needs.filter((_, index) => !needsReady[index]);
      if (missing.length > 0) {
        blocked.set(name, missing);
        return false;
      }
      const output = await step.ensure(context, inputsFor(name, step.needs, ready)).catch((error: unknown) => {
        if (!(error instanceof WaitingError)) throw error;
        waits.wait(waitingOf(error));
        return undefined;
      });
      if (output === undefined) return false;
      ready[name] = output;
      return true;
    })();
    runs.set(name, running);
    return running;
  };
  await settleAll((Object.keys(graph) as (keyof Outputs)[]).map(run));
  return { ready, blocked };
}

/**
 * Removes every step once the steps needing it are gone: the reverse of the
 * create order, independent branches at once. True once all are gone; a
 * step not gone yet keeps what it needs for a later pass. Failures are
 * thrown once every removal under way has settled.
 */
export async function removeGraph<Context, Outputs>(graph: StepGraph<Context, Outputs>, context: Context): Promise<boolean> {
  const names = Object.keys(graph) as (keyof Outputs)[];
  const dependents = new Map<keyof Outputs, (keyof Outputs)[]>(names.map((name) => [name, names.filter((other) => graph[other].needs.includes(name))]));
  const removals = new Map<keyof Outputs, Promise<boolean>>();
  const removeStep = (name: keyof Outputs): Promise<boolean> => {
    let removing = removals.get(name);
    if (removing) return removing;
    removing = (async () => {
      const dependentsGone = await Promise.all(dependents.get(name)!.map(removeStep));
      if (!dependentsGone.every(Boolean)) return false;
      return (await graph[name].remove?.(context)) ?? true;
    })();
    removals.set(name, removing);
    return removing;
  };
  return (await settleAll(names.map(removeStep))).every(Boolean);
}

function inputsFor<Outputs>(name: keyof Outputs, needs: readonly (keyof Outputs)[], ready: Partial<Outputs>): Inputs<Outputs> {
  return {
    get(need) {
      if (!needs.includes(need)) throw new Error(`step "${String(name)}" reads "${String(need)}" without declaring it in its needs`);
      return ready[need] as Outputs[typeof need];
    },
  };
}
