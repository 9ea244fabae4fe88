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
 */
import type { ReadTarget, ResourceActuator } from './resource/actuator.js';
import type { VerifiedResources } from './verified-resources.js';

/** Most resources one list call is asked for: 50 IDs or owner tags keep its URL under 3 KB, below common proxy limits. */
export const readTogetherLimit = 50;

interface Answer {
  /** Undefined: the list did not have it. */
  resource: unknown;
  at: number;
}

export class ReadTogether {
  /** Resources read along with another's, by group and ID, until their owner's pass takes them. */
  private readonly answers = new Map<string, Answer>();
  /** Lists under way, by the group and ID of each resource read along; settles once their answers are kept. */
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly verified: VerifiedResources,
    private readonly freshMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The resource of `target`, read with others when the actuator can; undefined when OpenStack has no such resource. */
  async read<Resource extends { id: string }>(actuator: ResourceActuator<{ name: string }, Resource>, target: ReadTarget): Promise<Resource | undefined> {
    const many = actuator.readMany;
    if (!many || this.freshMs <= 0) return actuator.getById(target.id);
    const key = keyOf(many.group, target.id);
    // Checked before any await: a list started by another owner a moment ago registers its targets at once.
    const flying = this.inFlight.get(key);
    if (flying) await flying;
    const answer = this.take(key);
    if (answer) return (answer.resource as Resource | undefined) ?? actuator.getById(target.id);

    const companions = this.verified
      .companions(many.group, target.id, this.freshMs, readTogetherLimit - 1)
      .filter((companion) => !this.inFlight.has(keyOf(many.group, companion.id)) && !this.answers.has(keyOf(many.group, companion.id)));
    if (companions.length === 0) return actuator.getById(target.id);

    const reading = many.read([target, ...companions]).then((found) => {
      this.sweep();
      const at = this.now();
      const byId = new Map(found.map((resource) => [resource.id, resource]));
      for (const companion of companions) this.answers.set(keyOf(many.group, companion.id), { resource: byId.get(companion.id), at });
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

  /** The kept answer for `key`, once, if still fresh. */
  private take(key: string): Answer | undefined {
    const answer = this.answers.get(key);
    if (!answer) return undefined;
    this.answers.delete(key);
    return this.now() - answer.at <= this.freshMs ? answer : undefined;
  }

  /** Answers no pass took in time (their object was deleted, or its pass read nothing of this group). */
  private sweep(): void {
    const oldest = this.now() - this.freshMs;
    for (const [key, answer] of this.answers) if (answer.at < oldest) this.answers.delete(key);
  }
}

function keyOf(group: string, id: string): string {
  return `${group}\n${id}`;
}
