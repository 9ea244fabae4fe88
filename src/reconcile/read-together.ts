/**
 * At resync, reads the resources of many objects in one list call rather
 * than one GET each. The objects of a namespace resync at the same instant
 * (runtime/resync-grid.ts); the first of them to read a resource of a group (one
 * kind on one cloud: ports by `id`, servers by owner tag, the members of one
 * pool) reads with it every resource of that group whose verification runs
 * out about now (verified-resources.ts), and keeps their answers for their
 * owners' passes, which come seconds later. An owner whose resource is being
 * read waits for that list instead of sending its own.
 *
 * Each answer is used once and only while fresh, so what a pass decides on
 * is never older than `freshMs`. A resource missing from a list is only not
 * vouched for (a server list by tag cannot see a server whose tag was taken
 * off), so its owner reads it by ID, which tells gone from present. Any
 * other handling (postCreate's checks, readiness) is the owner's pass, as
 * after a GET. Polls of resources still being built read along too: they
 * cost the same one call, and refresh others for free.
 *
 * Looks at resources still in a transition (servers in BUILD, load balancers
 * PENDING_*) are gathered the same way. A pass that waits on such a resource
 * says when it will look again (`lookAgain`); the first read of the group at
 * or after that instant reads it along, so the looks due together on one
 * cloud cost one list, however many objects wait. To make them due together,
 * a look that others of its group wait beside is put off to the next instant
 * of a shared grid (`alignLook`, at most `lookGridMs` later); a resource
 * alone in its wait keeps its own time and its GET. A look is never read
 * ahead of its time: read early, it would find the transition still under
 * way and cost a look more. Its answer is kept only briefly
 * (`lookAnswerFreshMs`): a pass coming later decides on a read of its own.
 */
import type { ReadTarget, ResourceActuator } from './resource/actuator.js';
import type { VerifiedResources } from './verified-resources.js';

/** Most resources one list call is asked for: 50 IDs or owner tags keep its URL under 3 KB, below common proxy limits. */
export const readTogetherLimit = 50;

/** The looks at waiting resources land on multiples of this (ms), so that those due about together are due at once. */
export const lookGridMs = 500;
/** A look due this soon counts as due: passes queued for one grid instant start a moment apart. */
const lookDueSlackMs = 50;
/** How long the answer read along for a waiting look stays good for its owner's pass. */
const lookAnswerFreshMs = 2_000;
/** A look whose owner's pass has not come this long after it was due is forgotten (the object went, or its pass failed). */
const lookKeptMs = 60_000;

interface Answer {
  /** Undefined: the list did not have it. */
  resource: unknown;
  /** When the list answered. */
  at: number;
  /** Taken after this, it is stale. */
  freshUntil: number;
  /** Read for a look at a resource in a transition (lookAgain), whose timing its owner's pass learns from. */
  look: boolean;
}

/** A resource its owner will look at again, once it is due. */
interface Look {
  target: ReadTarget;
  group: string;
  dueAt: number;
}

/** A resource an owner waits on: its group and ID, to say when the owner will look again. */
export interface WaitingResource {
  group: string;
  target: ReadTarget;
}

export class ReadTogether {
  /** Resources read along with another's, by group and ID, until their owner's pass takes them. */
  private readonly answers = new Map<string, Answer>();
  /** Lists under way, by the group and ID of each resource read along; settles once their answers are kept. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Looks to come, by group, then by grid instant, by group and ID: a read finds those due in a few instants, not by a scan of every one. */
  private readonly looks = new Map<string, Map<number, Map<string, Look>>>();
  /** The instant of each look to come, by group and ID. */
  private readonly lookInstants = new Map<string, number>();

  constructor(
    private readonly verified: VerifiedResources,
    private readonly freshMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * The resource of `target`, read with others when the actuator can; undefined when OpenStack has
   * no such resource. `seen` is told how old the answer is when it is one read along for a look.
   */
  async read<Resource extends { id: string }>(
    actuator: ResourceActuator<{ name: string }, Resource>,
    target: ReadTarget,
    seen?: (ageMs: number) => void,
  ): Promise<Resource | undefined> {
    const many = actuator.readMany;
    if (!many || this.freshMs <= 0) return actuator.getById(target.id);
    const key = keyOf(many.group, target.id);
    // Its owner looks now: a look it asked for earlier is this one.
    this.forgetLook(key);
    // Checked before any await: a list started by another owner a moment ago registers its targets at once.
    const flying = this.inFlight.get(key);
    if (flying) await flying;
    const answer = this.take(key);
    if (answer?.look && answer.resource !== undefined) seen?.(this.now() - answer.at);
    if (answer) return (answer.resource as Resource | undefined) ?? actuator.getById(target.id);

    const unread = (id: string) => !this.inFlight.has(keyOf(many.group, id)) && !this.answers.has(keyOf(many.group, id));
    const looks = this.dueLooks(many.group, readTogetherLimit - 1).filter((look) => unread(look.target.id));
    const companions = [
      ...looks.map((look) => look.target),
      ...this.verified
        .companions(many.group, target.id, this.freshMs, readTogetherLimit - 1 - looks.length)
        .filter((companion) => unread(companion.id) && !looks.some((look) => look.target.id === companion.id)),
    ];
    if (companions.length === 0) return actuator.getById(target.id);
    for (const look of looks) this.forgetLook(keyOf(many.group, look.target.id));

    const reading = many.read([target, ...companions]).then((found) => {
      this.sweep();
      const at = this.now();
      const byId = new Map(found.map((resource) => [resource.id, resource]));
      for (const companion of companions) {
        const look = looks.some((due) => due.target === companion);
        const freshUntil = at + (look ? lookAnswerFreshMs : this.freshMs);
        this.answers.set(keyOf(many.group, companion.id), { resource: byId.get(companion.id), at, freshUntil, look });
      }
      return byId.get(target.id);
    });
    const kept = reading.then(
      () => undefined,
      () => undefined,
    );
    const keys = companions.map((companion) => keyOf(many.group, companion.id));
    for (const companionKey of keys) this.inFlight.set(companionKey, kept);
    try {
      return (await reading) ?? (await actuator.getById(target.id));
    } finally {
      for (const companionKey of keys) if (this.inFlight.get(companionKey) === kept) this.inFlight.delete(companionKey);
    }
  }

  /**
   * The delay before an owner waiting on `waiting` looks again, given the delay it would wait
   * alone: put off to the next grid instant when another resource of one of their groups is
   * waited on too, so that their looks meet; as is otherwise.
   */
  alignLook(waiting: readonly WaitingResource[], delayMs: number): number {
    if (!Number.isFinite(delayMs) || !waiting.some((resource) => this.othersWaitIn(resource.group, waiting))) return delayMs;
    const now = this.now();
    return Math.ceil((now + delayMs) / lookGridMs) * lookGridMs - now;
  }

  /** The owner of these resources looks at them again `delayMs` from now: a read of their group then reads them along. */
  lookAgain(waiting: readonly WaitingResource[], delayMs: number): void {
    const dueAt = this.now() + delayMs;
    const instant = Math.ceil(dueAt / lookGridMs) * lookGridMs;
    for (const { group, target } of waiting) {
      const key = keyOf(group, target.id);
      this.forgetLook(key);
      const byInstant = this.looks.get(group) ?? new Map<number, Map<string, Look>>();
      this.looks.set(group, byInstant);
      const looks = byInstant.get(instant) ?? new Map<string, Look>();
      byInstant.set(instant, looks.set(key, { target, group, dueAt }));
      this.lookInstants.set(key, instant);
    }
  }

  /** Whether a resource of `group` other than these is waited on. */
  private othersWaitIn(group: string, waiting: readonly WaitingResource[]): boolean {
    for (const looks of this.looks.get(group)?.values() ?? []) {
      for (const look of looks.values()) if (!waiting.some((resource) => resource.target.id === look.target.id)) return true;
    }
    return false;
  }

  /** Up to `limit` looks of `group` due now (or overdue, but not forgotten), the earliest first. */
  private dueLooks(group: string, limit: number): Look[] {
    const byInstant = this.looks.get(group);
    if (!byInstant) return [];
    const now = this.now();
    const due: Look[] = [];
    for (const [instant, looks] of [...byInstant].sort(([a], [b]) => a - b)) {
      if (instant - lookGridMs > now + lookDueSlackMs) break;
      for (const look of looks.values()) {
        if (look.dueAt < now - lookKeptMs) this.forgetLook(keyOf(group, look.target.id));
        else if (look.dueAt <= now + lookDueSlackMs && due.length < limit) due.push(look);
      }
    }
    return due;
  }

  private forgetLook(key: string): void {
    const instant = this.lookInstants.get(key);
    if (instant === undefined) return;
    this.lookInstants.delete(key);
    const group = key.slice(0, key.lastIndexOf('\n'));
    const byInstant = this.looks.get(group);
    const looks = byInstant?.get(instant);
    looks?.delete(key);
    if (looks?.size === 0) byInstant!.delete(instant);
    if (byInstant?.size === 0) this.looks.delete(group);
  }

  /** The kept answer for `key`, once, if still fresh. */
  private take(key: string): Answer | undefined {
    const answer = this.answers.get(key);
    if (!answer) return undefined;
    this.answers.delete(key);
    return this.now() <= answer.freshUntil ? answer : undefined;
  }

  /** Answers no pass took in time (their object was deleted, or its pass read nothing of this group). */
  private sweep(): void {
    const now = this.now();
    for (const [key, answer] of this.answers) if (answer.freshUntil < now) this.answers.delete(key);
  }
}

function keyOf(group: string, id: string): string {
  return `${group}\n${id}`;
}
