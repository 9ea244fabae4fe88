/**
 * The one reconcile loop every kind of ours goes through, as ORC's generic object controller: a
 * kind declares what is its own (the client, the finalizer, the gate, how a pass begins, its
 * normal and delete work, what its failures report) and this loop owns the order CAPO's
 * reconcilers keep:
 *
 * 1. read the object (gone: nothing to do; the controller already dropped its state);
 * 2. the gate: Cluster API's owner Cluster and paused checks, when the kind has them;
 * 3. the finalizer, stored before anything is created in OpenStack (lifecycle.ts prepare), or, for a
 *    kind that creates nothing there, nothing at all for a deleting object;
 * 4. one pass (reconcile-pass.ts): the kind begins it (clouds, related objects), then either deletes
 *    what it made (the finalizer is dropped once everything is gone) or does its normal work;
 * 5. the outcome: what the pass observed and how it ended become status, conditions and the
 *    controller's requeue, in one write.
 *
 * A kind never writes that order again, so a change to it (say, a new gate) is made here once.
 */
import type { ReconcileResult, Reconcile } from './runtime/controller.js';
import type { ReconcilerDeps } from './deps.js';
import { finishDeletion, prepare } from './lifecycle.js';
import { metaOf, type KindClient, type KindObject } from './objects.js';
import { closedGate, type ClosedGate } from './paused.js';
import { ReconcilePass, type FailureCondition } from './reconcile-pass.js';

/** Whether a pass may act on an object: open, or closed with the reason its Paused condition shows. */
export type Admission = { open: true } | ClosedGate;

/** Where in the pass an error came from, for kinds whose failures read differently there. */
export type PassStage = 'begin' | 'normal' | 'delete';

/** What a pass that ended reports: the condition an error lands on, and the error to tell (the kind may reword it). */
export interface Outcome {
  error: unknown;
  failure: FailureCondition;
}

/** What one kind declares to the loop; everything else about reconciling it is the loop's. */
export interface ReconciledKind<Spec, Context, Gate extends Admission = Admission> {
  client: KindClient<Spec>;
  /**
   * Kept on the object while it has anything in OpenStack. A kind without one creates nothing there:
   * a deleting object of it is left alone.
   */
  finalizer?: string;
  /** Whether the pass may act now; without it, always. A closed gate on a live object only reports Paused. */
  gate?(object: KindObject<Spec>): Promise<Gate>;
  /** An object with nothing left to do whatever wakes it (a server found deleted behind our back): no pass at all. */
  settled?(object: KindObject<Spec>): boolean;
  /**
   * What the pass works with (clouds, related objects). Runs inside the pass, so what it throws is
   * reported like the rest. The gate is open, but for a deleting object: a deletion goes on whatever
   * the gate says (the owner Cluster may be gone first).
   */
  begin(pass: ReconcilePass<Spec>, gate: Gate): Promise<Context>;
  /** Brings OpenStack to the spec. */
  normal(context: Context): Promise<void>;
  /** Deletes what the object has in OpenStack; true once everything is gone, when the finalizer is dropped. */
  remove(context: Context): Promise<boolean>;
  /** What the pass reports as it ends; by default an error lands on Ready as OpenStackError. */
  outcome?(pass: ReconcilePass<Spec>, error: unknown, stage: PassStage): Outcome;
}

const openGate = { open: true } as const;

/** The controller's reconcile function for one kind. */
export function objectReconciler<Spec, Context, Gate extends Admission>(deps: ReconcilerDeps, kind: ReconciledKind<Spec, Context, Gate>): Reconcile {
  const { client, finalizer } = kind;
  return async (name) => {
    const object = await client.get(name);
    if (!object) return {};
    if (finalizer === undefined && metaOf(object).deletionTimestamp !== undefined) return {};
    const gate = kind.gate ? await kind.gate(object) : (openGate as Gate);
    const closed = gate.open ? undefined : () => closedGate(client, object, gate);
    if (finalizer === undefined) {
      if (closed) return closed();
    } else {
      const stop = await prepare(deps, client, object, finalizer, closed);
      if (stop) return stop;
    }
    if (kind.settled?.(object)) return {};
    return runPass(deps, kind, new ReconcilePass(client, object, deps), gate);
  };
}

async function runPass<Spec, Context, Gate extends Admission>(
  deps: ReconcilerDeps,
  kind: ReconciledKind<Spec, Context, Gate>,
  pass: ReconcilePass<Spec>,
  gate: Gate,
): Promise<ReconcileResult> {
  let stage: PassStage = 'begin';
  let error: unknown;
  try {
    const context = await kind.begin(pass, gate);
    if (pass.meta.deletionTimestamp !== undefined) {
      stage = 'delete';
      if ((await kind.remove(context)) && kind.finalizer !== undefined) return await finishDeletion(deps, pass, kind.finalizer);
    } else {
      stage = 'normal';
      await kind.normal(context);
    }
  } catch (thrown) {
    error = thrown;
  }
  const outcome = kind.outcome?.(pass, error, stage) ?? { error, failure: { type: 'Ready', reason: 'OpenStackError' } };
  return pass.finish(outcome.error, outcome.failure);
}
