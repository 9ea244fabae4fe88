/**
 * One reconcile pass over one object: the glue every kind's reconciler
 * shares between the generic engine (one OpenStack resource) and the object
 * (its status, conditions and requeue).
 *
 * - `record` writes an ID into status at once (and into the pass's working
 *   copy), before anything else can fail;
 * - `ensure` skips resources verified earlier in this generation and resync
 *   period, and collects waits instead of blocking;
 * - `finish` turns what happened, error included, into conditions and the
 *   controller's outcome: terminal errors stop retries until the object
 *   changes, blocked ones poll at a steady pace, transient ones back off.
 */
import type { JsonObject } from '../storage/interface.js';
import { conditionsOf, setCondition, type ConditionUpdate } from './conditions.js';
import { TerminalError, type ReconcileResult } from './runtime/controller.js';
import { WaitingError, waitingOf, type Owner, type ResourceActuator, type Waiting } from './resource/actuator.js';
import {
  blockedRequeueMs,
  classify,
  ensure,
  remove,
  retryAfterMs,
  type EnsureObserver,
  type Found,
  type Removal,
  type RemoveInput,
} from './resource/engine.js';
import type { EventRecorder, EventType } from './events/recorder.js';
import { metaOf, statusOf, type KindClient, type KindObject, type ObjectMeta, type ObjectRef } from './objects.js';
import type { ReadTogether, WaitingResource } from './read-together.js';
import type { VerifiedResources } from './verified-resources.js';
import { adoptionOf, ownerUidOf } from './adoption.js';
import type { WaitSchedule } from './wait-schedule.js';
import { DependencyVanishedError, forgetFrozen, vanishedReference } from './drift.js';

/** What passes share across objects: the resources verified, the lists read together, the learned wait times. */
export interface PassMemory {
  verified: VerifiedResources;
  reads: ReadTogether;
  schedule: WaitSchedule;
  /** This installation's id, tagged on what the pass creates (installation.ts). */
  installation?: string;
  /** Where Events about the object are recorded, if anywhere. */
  events?: EventRecorder;
}

export interface Ensured<Resource> {
  resource: Resource;
  ready: boolean;
  /** How the resource was found; undefined when it came from the verified memory (no call made). */
  found?: Found;
}

/** Where an OpenStack error surfaces, e.g. `{type: 'NetworkReady', reason: 'NetworkCreateFailed'}`. */
export interface FailureCondition {
  type: string;
  reason: string;
}

/** A call made ahead of its ensure: the read of a recorded resource, or the lookup by name of an unrecorded one. */
type ReadAhead = { kind: 'read'; id: string; answer: Promise<unknown> } | { kind: 'find'; answer: Promise<unknown[]> };

/** `Spec`: the type of the object's spec (KindClient). */
export class ReconcilePass<Spec = unknown> {
  readonly meta: ObjectMeta;
  /** The object's generation this pass judges: as read, or as its own spec write left it (wroteOwnSpec). */
  generation: number;
  readonly owner: Owner;
  /** The pass's own copy of the status: read at the start, plus every record and observation since. */
  readonly status: JsonObject;
  private readonly waits: Waiting[] = [];
  /** The resources of those waits that a list can read together with others' (ReadTogether.lookAgain). */
  private readonly waitingResources: WaitingResource[] = [];
  /** How long before the pass the oldest answer it took for a look was read (ReadTogether.read's `seen`): its transitions are timed by that. */
  private seenAgoMs = 0;
  private readonly seen = (ageMs: number): void => {
    this.seenAgoMs = Math.max(this.seenAgoMs, ageMs);
  };
  /** Waits on people or other objects (a blocked delete, a choice in the spec): looked at on their own pace, not polled. */
  private readonly steady: Waiting[] = [];
  private readonly blocked: string[] = [];
  /** Reads started by readAhead, by role, until their ensure takes them. */
  private readonly ahead = new Map<string, ReadAhead>();
  private dirty = false;
  private gone = false;
  /**
   * No pass of the object got as far as a status write, and what it makes is its own: its status was
   * empty when read (consistently), its owner uid is its own (not a copy moved from another management
   * cluster, which takes over the original's resources) and it adopts nothing of CAPO's.
   */
  readonly madeNothingYet: boolean;
  /** Set by createsFollowAWrite: nothing can have been made for the object before this pass's creates. */
  private createsFollowWrite = false;
  /** The pass wrote the object's status (a record, or the whole of it). */
  private statusWritten = false;

  private readonly verified: VerifiedResources;
  private readonly reads: ReadTogether;
  private readonly schedule: WaitSchedule;
  private readonly events: EventRecorder | undefined;
  /** Errors already told in an Event (a failed create), so finish does not tell them twice. */
  private readonly told = new WeakSet<object>();
  /**
   * Where the status holds references resolved once and then trusted (an external network, the
   * user's network, a server's resolved ports): forgotten when a request finds what they name gone,
   * so the next pass resolves them again.
   */
  frozen: (readonly string[])[] = [];

  constructor(
    readonly client: KindClient<Spec>,
    readonly object: KindObject<Spec>,
    memory: PassMemory,
  ) {
    ({ verified: this.verified, reads: this.reads, schedule: this.schedule, events: this.events } = memory);
    this.meta = metaOf(object);
    this.generation = this.meta.generation ?? 1;
    this.owner = {
      uid: ownerUidOf(object),
      namespace: this.meta.namespace,
      name: this.meta.name,
      kind: client.kind,
      adopt: adoptionOf(object) === 'capo',
      ...(memory.installation === undefined ? {} : { installation: memory.installation }),
    };
    this.status = structuredClone(statusOf(object));
    this.madeNothingYet = Object.keys(this.status).length === 0 && this.owner.uid === this.meta.uid && !this.owner.adopt;
  }

  /**
   * For a first pass about to create (madeNothingYet): makes sure a status is written before any
   * create, writing the working status now unless the pass wrote one already (a server's resolved
   * references), so that a crash after any create of this pass leaves a status behind it and the next
   * pass looks for what was made. Until then nothing can have been made, so this pass's ensures of the
   * object's own resources look nothing up by name (a new cluster's lookups were 7 of a fleet's calls a
   * cluster, a new server's 2). The lookups stay for an object not madeNothingYet or with nothing to
   * write yet.
   */
  async createsFollowAWrite(): Promise<void> {
    if (!this.madeNothingYet || this.createsFollowWrite) return;
    if (!this.statusWritten) {
      if (Object.keys(this.status).length === 0) return;
      if (!(await this.writeStatus())) this.goneMidPass();
    }
    this.createsFollowWrite = true;
  }

  /** Writes the working status as the object's whole status; false when the object is gone. */
  private async writeStatus(): Promise<boolean> {
    const observed = this.status;
    const written = await this.client.updateStatus(this.target, (status) => {
      for (const key of Object.keys(status)) delete status[key];
      Object.assign(status, structuredClone(observed));
    });
    if (written !== undefined) this.statusWritten = true;
    return written !== undefined;
  }

  /** The spec the pass works to, as read at its start. */
  get spec(): Spec {
    return this.object.spec;
  }

  get target() {
    return { namespace: this.meta.namespace, name: this.meta.name, uid: this.meta.uid };
  }

  /** The object by kind and name, as another pass (or a released download slot) asks for its pass. */
  get ref(): ObjectRef {
    return { kind: this.client.kind, namespace: this.meta.namespace, name: this.meta.name };
  }

  /** The object as what it verifies is kept under: by uid, with its kind and name to wake it by. */
  private get verifiedOwner() {
    return { uid: this.meta.uid, namespace: this.meta.namespace, object: this.ref };
  }

  get objectGone(): boolean {
    return this.gone;
  }

  /** Persists a status change now (and in the working copy), e.g. an ID right after its create. */
  async record(mutate: (status: JsonObject) => void): Promise<void> {
    mutate(this.status);
    const written = await this.client.updateStatus(this.target, mutate);
    if (!written) this.goneMidPass();
    this.statusWritten = true;
  }

  /** A status write found the object deleted or replaced: nothing more of this pass is for it. */
  private goneMidPass(): never {
    this.gone = true;
    throw new TerminalError(`${this.client.kind} ${this.meta.namespace}/${this.meta.name} was deleted or replaced during the reconcile`);
  }

  /**
   * The pass changed the object's spec itself (the endpoint it publishes),
   * which bumped the generation to `generation`. Nothing it judged depends on
   * that change, so its conditions and verified resources stand for the new
   * generation: no stale observedGeneration after Ready, no round of re-reads.
   */
  wroteOwnSpec(generation: number): void {
    const previous = this.generation;
    // More than one step: someone else changed the spec too, and the next pass judges that.
    if (generation !== previous + 1) return;
    this.generation = generation;
    this.verified.carryOver(this.meta.uid, previous, generation);
    this.observe((status) => {
      for (const condition of conditionsOf(status)) if (condition.observedGeneration === previous) condition.observedGeneration = generation;
    });
  }

  /** Records an Event about the object; never waits. */
  event(type: EventType, reason: string, message: string): void {
    this.events?.record(this.object, type, reason, message);
  }

  /** The Events of what the engine does to one resource, in CAPO's reasons (SuccessfulCreateNetwork, FailedCreateServer, ...). */
  private resourceEvents(kind: string, name: string): EnsureObserver {
    const reasonKind = kind.replace(/(^|\s)(\w)/g, (_, __, letter: string) => letter.toUpperCase());
    return {
      created: (id) => this.event('Normal', `SuccessfulCreate${reasonKind}`, `Created ${kind} ${name} with id ${id}`),
      adopted: (id) => this.event('Normal', `SuccessfulAdopt${reasonKind}`, `Adopted ${kind} ${name} with id ${id}, found by its name and owner tag`),
      createFailed: (error) => {
        // A wait (Octavia busy with another change) is not a failure: finish treats it as a wait, and so do Events.
        if (error instanceof WaitingError) return;
        if (typeof error === 'object' && error !== null) this.told.add(error);
        this.event('Warning', `FailedCreate${reasonKind}`, `Failed to create ${kind} ${name}: ${error instanceof Error ? error.message : String(error)}`);
      },
      deleted: (id) => this.event('Normal', `SuccessfulDelete${reasonKind}`, `Deleted ${kind} ${name} with id ${id}`),
      vanished: (id, next) => this.noteVanished(kind, name, id, next),
    };
  }

  /** Drift: a recorded resource is gone. Whoever else verified it forgets it and looks again; a Warning says what happens now. */
  noteVanished(kind: string, name: string, id: string, next: string): void {
    this.forgetVanished(id);
    this.event('Warning', vanishedReason, `${kind} ${name} (${id}), recorded in status, no longer exists in OpenStack: ${next}`);
  }

  /** Whoever verified the resource `id` forgets it, and is woken to look again. */
  private forgetVanished(id: string): void {
    for (const owner of this.verified.vanished(id)) this.schedule.wakeObject(owner);
  }

  /** engine.remove with the pass's bookkeeping (noteRemoval) and Events; whether the resource is gone. */
  async remove<Desired extends { name: string }, Resource extends { id: string }>(
    actuator: ResourceActuator<Desired, Resource>,
    input: RemoveInput,
  ): Promise<boolean> {
    return this.noteRemoval(await remove(actuator, { ...input, observer: this.resourceEvents(actuator.kind, input.name) }));
  }

  /** An observation to write with the rest at the end of the pass. */
  observe(mutate: (status: JsonObject) => void): void {
    mutate(this.status);
    this.dirty = true;
  }

  condition(update: ConditionUpdate): void {
    this.observe((status) => setCondition(status, this.generation, update));
  }

  /** `steady`: the wait is on a person or another object, so its delay is kept rather than shortened while young. */
  wait(waiting: Waiting, steady = false): void {
    (steady ? this.steady : this.waits).push(waiting);
  }

  /** A removal that could not finish: waits and "blocked by" messages both requeue. */
  noteRemoval(removal: Removal): boolean {
    if ('deleted' in removal) return true;
    if ('blockedBy' in removal) {
      this.blocked.push(removal.blockedBy);
      this.steady.push({ waitingFor: removal.blockedBy, requeueAfterMs: removal.requeueAfterMs });
    } else this.waits.push(removal);
    return false;
  }

  get waiting(): readonly Waiting[] {
    return [...this.waits, ...this.steady];
  }

  get blockedBy(): readonly string[] {
    return this.blocked;
  }

  /**
   * ensure() with the pass's bookkeeping: a resource verified ready in this
   * generation and resync period is taken from memory; the ID is recorded
   * through `record`; not-ready resources are returned with ready false and
   * their wait noted.
   */
  async ensure<Desired extends { name: string }, Resource extends { id: string }>(
    role: string,
    actuator: ResourceActuator<Desired, Resource>,
    input: {
      recordedId: string | undefined;
      desired: Desired;
      record: (status: JsonObject, id: string) => void;
      ifGone?: 'recreate' | 'fail';
      owner?: Owner;
      /**
       * Nothing of the kind can be there to adopt, so no lookup by name: what holds it (a subnet's network) was created in this
       * pass, or nothing was ever made for the owner (a server's first pass, see the server reconciler).
       */
      nothingToAdopt?: boolean;
    },
  ): Promise<Ensured<Resource>> {
    const cached = this.verified.get<Resource>(this.meta.uid, role, input.recordedId, this.generation);
    if (cached) return { resource: cached, ready: true };
    const owner = input.owner ?? this.owner;
    const ahead = this.ahead.get(role);
    this.ahead.delete(role);
    let find: (() => Promise<Resource[]>) | undefined;
    if (input.nothingToAdopt || (this.createsFollowWrite && owner.uid === this.owner.uid)) find = async () => [];
    else if (ahead?.kind === 'find' && input.recordedId === undefined) find = () => ahead.answer as Promise<Resource[]>;
    const result = await ensure(actuator, {
      recordedId: input.recordedId,
      desired: input.desired,
      owner,
      ifGone: input.ifGone,
      record: (id) => this.record((status) => input.record(status, id)),
      observer: this.resourceEvents(actuator.kind, input.desired.name),
      read: (id) =>
        ahead?.kind === 'read' && ahead.id === id
          ? (ahead.answer as Promise<Resource | undefined>)
          : this.reads.read(actuator, { id, ownerUid: owner.uid }, this.seen),
      ...(find === undefined ? {} : { find }),
    });
    if (!result.ready) {
      this.waits.push(waitingOf(result));
      if (actuator.readMany) this.waitingResources.push({ group: actuator.readMany.group, target: { id: result.resource.id, ownerUid: owner.uid } });
      return { resource: result.resource, ready: false, found: result.found };
    }
    this.verified.set(this.verifiedOwner, role, result.resource.id, this.generation, result.resource, readAlongOf(actuator, owner.uid));
    return { resource: result.resource, ready: true, found: result.found };
  }

  /**
   * Starts now the call `ensure` will make for this role (the read of the
   * recorded resource, or the lookup by name of an unrecorded one), for
   * ensures that must run one after another because each decides on the one
   * before (an Octavia listener, its pool, the pool's monitor; a server
   * after its ports): their calls overlap, their decisions keep their order.
   * Nothing is read for a role verified here, nor looked up without the
   * desired state or, for an actuator whose lookup needs nothing else, the
   * name. The answer is taken once, by the next ensure of the role in this
   * pass; one nobody takes is dropped with the pass.
   */
  readAhead<Desired extends { name: string }, Resource extends { id: string }>(
    role: string,
    actuator: ResourceActuator<Desired, Resource>,
    input: { recordedId: string | undefined; desired?: Desired; name?: string },
  ): void {
    const { recordedId, desired } = input;
    const name = desired?.name ?? input.name;
    if (this.ahead.has(role) || this.verified.get(this.meta.uid, role, recordedId, this.generation)) return;
    let answer: ReadAhead;
    if (recordedId !== undefined)
      answer = { kind: 'read', id: recordedId, answer: this.reads.read(actuator, { id: recordedId, ownerUid: this.owner.uid }, this.seen) };
    else if (name !== undefined && !this.createsFollowWrite) answer = { kind: 'find', answer: actuator.findAdoptable(name, this.owner, desired) };
    else return;
    // Whoever takes it sees the failure; one nobody takes must not surface as an unhandled rejection.
    answer.answer.catch(() => undefined);
    this.ahead.set(role, answer);
  }

  /**
   * Whether the recorded resource a readAhead of `role` is reading turned out gone; undefined
   * when none is being read (verified here, or nothing recorded). The answer stays for the
   * role's ensure.
   */
  async recordedGone(role: string): Promise<boolean | undefined> {
    const ahead = this.ahead.get(role);
    if (ahead?.kind !== 'read') return undefined;
    return (await ahead.answer) === undefined;
  }

  /**
   * Takes a resource as verified without reading it again, for a child whose
   * readiness its parent reports: an Octavia load balancer is ACTIVE again
   * only once its new listener, pool or monitor is, so polling the parent
   * suffices; a security group whose rules this pass wrote is as it left it.
   * A resync or a spec change reads it like any other, read along with its
   * kind when `actuator` can read many.
   */
  trust(role: string, resource: { id: string }, actuator?: Pick<ResourceActuator<{ name: string }, { id: string }>, 'readMany'>): void {
    this.verified.set(this.verifiedOwner, role, resource.id, this.generation, resource, readAlongOf(actuator, this.owner.uid));
  }

  /** A resource its parent's create made, as that answer showed it (see VerifiedResources.seenCreated). */
  seenCreated(role: string, resource: { id: string }): void {
    this.verified.seenCreated(this.verifiedOwner, role, resource.id, this.generation, resource);
  }

  /** What `verified` last held for a role at this generation, and whether that has run out (see VerifiedResources.lastSeen). */
  lastVerified<Resource>(role: string, id: string, aheadMs?: number): { resource: Resource; expired: boolean; unverified: boolean } | undefined {
    return this.verified.lastSeen<Resource>(this.meta.uid, role, id, this.generation, aheadMs);
  }

  /** Forgets what was verified for one role, after a change that makes the memory stale (e.g. a child of a load balancer). */
  invalidate(role: string): void {
    this.verified.invalidate(this.meta.uid, role);
  }

  /**
   * Writes the observed status and turns the outcome into the controller's
   * result. `error` is what the pass threw, if anything; `failure` names the
   * condition it lands on.
   */
  async finish(error: unknown, failure: FailureCondition): Promise<ReconcileResult> {
    if (this.gone) return {};
    // Octavia refused a change because another one is being applied, or a dependency is not ready: nothing happened, look again later.
    if (error instanceof WaitingError) {
      this.waits.push(error);
      error = undefined;
    }
    let result: ReconcileResult = {};
    let rethrow: unknown;
    const vanished = vanishedReference(error);
    if (vanished !== undefined) {
      // Drift: what the request named was deleted behind our back. Its owner heals it (woken now), or the spec names something gone.
      this.forgetVanished(vanished.id);
      for (const path of this.frozen) if (forgetFrozen(this.status, path, vanished.id)) this.dirty = true;
      const message = `${vanished.kind} ${vanished.id} no longer exists in OpenStack: waiting for it to be made again, or for the spec to name another (${error instanceof Error ? error.message : String(error)})`;
      this.event('Warning', vanishedReason, message);
      this.condition({ type: failure.type, status: 'False', reason: 'DependencyNotFound', message });
      error = new DependencyVanishedError(message, vanished.kind, vanished.id);
    }
    if (error !== undefined) {
      const kind = classify(error);
      const message = error instanceof Error ? error.message : String(error);
      if (!(typeof error === 'object' && error !== null && this.told.has(error)) && !(error instanceof DependencyVanishedError))
        this.event('Warning', failure.reason, message);
      if (error instanceof DependencyVanishedError) {
        rethrow = error;
      } else if (kind === 'terminal') {
        this.condition({ type: failure.type, status: 'False', reason: failure.reason, message });
        rethrow = error instanceof TerminalError ? error : new TerminalError(message);
      } else if (kind === 'blocked') {
        this.condition({ type: failure.type, status: 'False', reason: failure.reason, message: `blocked: ${message}` });
        result = { requeueAfterMs: blockedRequeueMs };
      } else {
        this.condition({ type: failure.type, status: 'False', reason: failure.reason, message: `will retry: ${message}` });
        const after = retryAfterMs(error);
        if (after !== undefined) result = { requeueAfterMs: after };
        else rethrow = error;
      }
    } else {
      // Told even when nothing is awaited any more: the transitions that ended are learned from.
      const next = this.schedule.next(this.meta.uid, this.waits, this.ref, {
        align: (delayMs) => this.reads.alignLook(this.waitingResources, delayMs),
        seenAgoMs: this.seenAgoMs,
      });
      if (this.waits.length > 0 || this.steady.length > 0)
        result = {
          requeueAfterMs: Math.min(next, ...this.steady.map((waiting) => waiting.requeueAfterMs)),
          waitingFor: this.waiting.map((waiting) => waiting.waitingFor),
        };
      if (result.requeueAfterMs !== undefined) this.reads.lookAgain(this.waitingResources, result.requeueAfterMs);
    }
    if (this.dirty && !(await this.writeStatus())) return {};
    if (rethrow !== undefined) throw rethrow;
    return result;
  }
}

/** The reason of the Warning that tells of drift: a resource deleted behind our back. */
export const vanishedReason = 'ResourceVanished';

/** The group a verified resource can be read in together with others of its kind (read-together.ts), if its actuator reads many at resync. */
function readAlongOf(actuator: Pick<ResourceActuator<{ name: string }, { id: string }>, 'readMany'> | undefined, tagOwnerUid: string) {
  return actuator?.readMany && !actuator.readMany.onlyForLooks ? { group: actuator.readMany.group, tagOwnerUid } : undefined;
}

/** Summarises waits for a condition message. */
export function describeWaits(waits: readonly Waiting[]): string {
  const shown = waits.slice(0, 3).map((waiting) => waiting.waitingFor);
  return `waiting for ${shown.join('; ')}${waits.length > 3 ? ` and ${waits.length - 3} more` : ''}`;
}

/**
 * Promise.all for steps that create things: waits for every step to settle
 * before throwing the first failure. With Promise.all a failing step ends
 * the pass while a sibling's create is still in flight; the next pass, not
 * seeing its ID yet, would create the same resource again.
 */
export async function settleAll<T>(steps: Iterable<T | PromiseLike<T>>): Promise<Awaited<T>[]> {
  const outcomes = await Promise.allSettled(steps);
  const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<Awaited<T>>).value);
}
