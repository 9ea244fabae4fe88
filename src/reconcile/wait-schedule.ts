/**
 * How soon to look again at something OpenStack is still doing.
 *
 * A wait that names its transition (`load balancer change`, `server BUILD`) is timed: the
 * schedule learns how long that transition takes on this cloud, from the looks that found it
 * still under way and the one that found it over, and once it knows, looks once, just after the
 * expected end. A look that comes too early is followed by quick ones, for as long again; past
 * that the transition is slower than learned and the rule below takes over.
 *
 * Anything else (and a transition not yet learned) follows the actuator's delay, its
 * requeueAfterMs, read as how long such a state usually lasts at most: the schedule looks sooner
 * while the state is young, because a wait that just began often ends within seconds, and backs
 * off as it ages, so a slow one (an amphora boot) costs few reads: each look comes after half the
 * time already waited, between half the actuator's delay (two seconds at least) and the delay.
 *
 * One schedule serves one manager, which reconciles against the clouds of its objects' identities;
 * transitions are learned across them, as one management plane usually drives one cloud.
 */
import type { Transition, Waiting } from './resource/actuator.js';

const minimumMs = 2000;
const growth = 0.5;
/** A learned look lands this long after the expected end, so that it finds the change done. */
const lookAfterMs = 100;
/** After a learned look came too early: the next looks, as a share of the expected time (at least 250 ms). */
const retryShare = 0.1;
const retryMinimumMs = 250;
/** A transition found over at the first look may have ended sooner: its sample is this share of the time, which lets the estimate come down. */
const probeShare = 0.8;
/** Weight of a new sample in the estimate. */
const learningRate = 0.5;

interface Timed {
  start: number;
  /** When a look last found it still under way (= start when none has). */
  lastLook: number;
}

/** What the schedule tracks of one object: when each of its waits began, and its transitions under way. */
interface Tracked {
  /** First time each wait was seen, by its text; a wait whose text changes (a new state) starts over. */
  since: Map<string, number>;
  /** Each transition under way, by `resource id\nkind`. */
  timed: Map<string, Timed>;
}

export class WaitSchedule {
  /** By object uid; an object that waits for nothing is not tracked. */
  private readonly objects = new Map<string, Tracked>();
  /** Expected duration of each transition kind, in ms. */
  private readonly expected = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * The delay before the next pass of `uid`, given everything it waits for after this pass
   * (none: the object is done waiting); forgets the waits it no longer has and learns from the
   * transitions that ended.
   */
  next(uid: string, waits: readonly Waiting[]): number {
    const now = this.now();
    const before = this.objects.get(uid);
    const tracked: Tracked = { since: new Map(), timed: new Map() };
    let delay = Infinity;
    for (const waiting of waits) {
      const start = tracked.since.get(waiting.waitingFor) ?? before?.since.get(waiting.waitingFor) ?? now;
      tracked.since.set(waiting.waitingFor, start);
      const learned = waiting.transition === undefined ? undefined : this.timedDelay(waiting.transition, before, tracked, now);
      delay = Math.min(delay, learned ?? ageDelay(waiting, now - start));
    }
    for (const [key, timed] of before?.timed ?? []) if (!tracked.timed.has(key)) this.ended(key, timed, now);
    if (waits.length > 0) this.objects.set(uid, tracked);
    else this.objects.delete(uid);
    return delay;
  }

  /** The learned delay for a timed transition, or undefined while it is not learned (or outlived its expectation). */
  private timedDelay(transition: Transition, before: Tracked | undefined, tracked: Tracked, now: number): number | undefined {
    const key = `${transition.id ?? ''}\n${transition.kind}`;
    let timed = tracked.timed.get(key);
    if (timed === undefined) {
      timed = before?.timed.get(key);
      before?.timed.delete(key);
      // A change sent in this pass: the transition before it (same kind, same resource) was seen over.
      if (timed !== undefined && transition.begins) {
        this.ended(key, timed, now);
        timed = undefined;
      }
      timed ??= { start: now, lastLook: now };
      tracked.timed.set(key, timed);
    }
    const elapsed = now - timed.start;
    timed.lastLook = now;
    const expectedMs = this.expected.get(transition.kind);
    if (expectedMs === undefined) return undefined;
    if (elapsed < expectedMs) return expectedMs - elapsed + lookAfterMs;
    if (elapsed < 2 * expectedMs) return Math.max(retryMinimumMs, expectedMs * retryShare);
    return undefined;
  }

  /** A transition seen over at `now`: it ended after its last look that found it under way, and by now. */
  private ended(key: string, timed: Timed, now: number): void {
    const transition = key.slice(key.indexOf('\n') + 1);
    const over = now - timed.start;
    const sample = timed.lastLook > timed.start ? (timed.lastLook - timed.start + over) / 2 : over * probeShare;
    const before = this.expected.get(transition);
    this.expected.set(transition, before === undefined ? sample : before + learningRate * (sample - before));
  }
}

function ageDelay(waiting: Waiting, ageMs: number): number {
  // A wait the actuator expects to be long (a server build) is not looked at before half its delay.
  const soonest = Math.max(minimumMs, waiting.requeueAfterMs / 2);
  return Math.min(waiting.requeueAfterMs, Math.max(soonest, ageMs * growth));
}
