/**
 * How soon to look again at something OpenStack is still doing.
 *
 * A wait that names its transition (`load balancer change`, `server BUILD`) is timed: the
 * schedule learns how long that transition takes on this cloud, from the looks that found it
 * still under way and the one that found it over, and once it knows, looks once, just after the
 * expected end. A look that comes too early is followed by quick ones, for as long again; past
 * that the transition is slower than learned and the rule below takes over.
 *
 * The look that found it over teaches how long it took only if it came when due (by the delay the
 * schedule asked for, give or take a tenth of it). One that came late, because this replica was
 * busy, not the cloud slow, shows only that it ended by then, a bound as loose as the look was
 * late: learned from, it would time every later wait too long, and on a replica that stays busy
 * those looks come late again and stretch it further. So a late look teaches only what is sure,
 * that the transition took at least as long as its last look that found it under way (however
 * late that one came): it raises an estimate found too low and leaves the rest. A kind not learned
 * yet stays so, its own rule bounding the wait better than a lower bound of any size would.
 *
 * A transition not learned yet (the first load balancer or server boot this process sees) is
 * looked at after a tenth of the time it has run (a second at least, the actuator's delay at most),
 * so while it is young it is found over at most 10% after it ended: the first of a kind is what
 * every later one is timed by, and on a cloud this process has not driven yet it is the whole wait
 * of a cluster's first load balancer. A long one (an amphora booting for minutes) is looked at
 * every delay once a tenth of its age is past that, as any other long wait.
 *
 * Anything else follows the actuator's delay, its requeueAfterMs, read as how long such a state
 * usually lasts at most: the schedule looks sooner while the state is young, because a wait that
 * just began often ends within seconds, and backs off as it ages, so a slow one costs few reads:
 * each look comes after half the time already waited, between half the actuator's delay (two
 * seconds at least) and the delay.
 *
 * One schedule serves one manager, which reconciles against the clouds of its objects' identities;
 * transitions are learned across them, as one management plane usually drives one cloud.
 *
 * When a transition is seen over, the other objects waiting on one of its kind are asked for a
 * pass (`wakeWith`) once theirs has run as long as it took, unless they looked since: machines
 * booting together end together, and one whose last look came a moment too early, while nothing
 * was learned yet, would otherwise wait out its growing interval after its siblings were Ready.
 */
import type { ObjectRef } from './objects.js';
import type { Transition, Waiting } from './resource/actuator.js';

const minimumMs = 2000;
const growth = 0.5;
/** A transition not learned yet: the next look after this share of the time it has run, at least unlearnedMinimumMs. */
const unlearnedGrowth = 0.1;
const unlearnedMinimumMs = 1000;
/** A learned look lands this long after the expected end, so that it finds the change done. */
const lookAfterMs = 100;
/** After a learned look came too early: the next looks, as a share of the expected time (at least 250 ms). */
const retryShare = 0.1;
const retryMinimumMs = 250;
/** A transition found over at the first look may have ended sooner: its sample is this share of the time, which lets the estimate come down. */
const probeShare = 0.8;
/** Weight of a new sample in the estimate. */
const learningRate = 0.5;
/**
 * A pass is due by the delay asked for, give or take this share of it (at least dueMinimumMs: a
 * status write, a worker a moment busy); later, it came late. A first look up to a tenth late that
 * finds the transition over still brings the estimate down (probeShare x 1.1 < 1), so the lateness
 * tolerated cannot feed itself.
 */
const dueShare = 0.1;
const dueMinimumMs = 250;

interface Timed {
  start: number;
  /** When a look last found it still under way (= start when none has). */
  lastLook: number;
}

/** Asks for a pass of the object, `delayMs` from now (an earlier pass already asked for stands). */
export type Wake = (object: ObjectRef, delayMs: number) => void;

/** What the schedule tracks of one object: when each of its waits began, and its transitions under way. */
interface Tracked {
  /** Its kind and name, to wake it with. */
  object?: ObjectRef;
  /** First time each wait was seen, by its text; a wait whose text changes (a new state) starts over. */
  since: Map<string, number>;
  /** Each transition under way, by `resource id\nkind`. */
  timed: Map<string, Timed>;
  /** Past this, its next pass came late (see dueShare). */
  lateAfter: number;
}

/** One pass of an object: when it came, whether it came when due, and the transitions seen over in it, with how long each kind took at most. */
interface Look {
  now: number;
  timely: boolean;
  learned: Map<string, number>;
}

export class WaitSchedule {
  /** By object uid; an object that waits for nothing is not tracked. */
  private readonly objects = new Map<string, Tracked>();
  /** Expected duration of each transition kind, in ms. */
  private readonly expected = new Map<string, number>();

  private wake: Wake | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  /** How to ask for another object's pass; set once the controllers of the kinds exist. */
  wakeWith(wake: Wake): void {
    this.wake = wake;
  }

  /** Asks for a pass of another object now: a resource it verified was found gone (drift.ts). */
  wakeObject(object: ObjectRef): void {
    this.wake?.(object, 0);
  }

  /**
   * The delay before the next pass of `uid`, given everything it waits for after this pass
   * (none: the object is done waiting); forgets the waits it no longer has and learns from the
   * transitions that ended. `align` may put the look off a little, so that it meets others'
   * (ReadTogether.alignLook); the pass is due by the delay it gives. `seenAgoMs`: what the pass
   * saw of its transitions was read that long before it (a list read along for its look, see
   * read-together.ts), and they are timed by that read, not by the pass, which would stretch
   * what is learned by the answer's age.
   */
  next(uid: string, waits: readonly Waiting[], object?: ObjectRef, options: { align?: (delayMs: number) => number; seenAgoMs?: number } = {}): number {
    const passAt = this.now();
    const now = passAt - (options.seenAgoMs ?? 0);
    const before = this.objects.get(uid);
    // A pass earlier than asked for (an event, a wake, a shorter wait) is timely too: it can only narrow what it shows.
    const look: Look = { now, timely: before === undefined || passAt <= before.lateAfter, learned: new Map() };
    const tracked: Tracked = { object, since: new Map(), timed: new Map(), lateAfter: Infinity };
    let delay = Infinity;
    for (const waiting of waits) {
      const start = tracked.since.get(waiting.waitingFor) ?? before?.since.get(waiting.waitingFor) ?? now;
      tracked.since.set(waiting.waitingFor, start);
      const timedDelay = waiting.transition === undefined ? undefined : this.timedDelay(waiting.transition, waiting.requeueAfterMs, before, tracked, look);
      delay = Math.min(delay, timedDelay ?? ageDelay(waiting, now - start));
    }
    for (const [timedKey, timed] of before?.timed ?? []) if (!tracked.timed.has(timedKey)) this.ended(timedKey, timed, look);
    if (waits.length > 0) {
      delay = Math.max(0, delay - (passAt - now));
      if (options.align) delay = options.align(delay);
      tracked.lateAfter = passAt + delay + Math.max(dueMinimumMs, delay * dueShare);
      this.objects.set(uid, tracked);
    } else this.objects.delete(uid);
    for (const [kind, tookMs] of look.learned) this.wakeWaitingOn(kind, tookMs, uid, passAt);
    return delay;
  }

  /** Asks each other object for a look once its transition of `kind` has run `tookMs`, unless it looked since. */
  private wakeWaitingOn(kind: string, tookMs: number, exceptUid: string, now: number): void {
    if (this.wake === undefined) return;
    for (const [uid, tracked] of this.objects) {
      if (uid === exceptUid || tracked.object === undefined) continue;
      let soonest = Infinity;
      for (const [timedKey, timed] of tracked.timed) {
        const overBy = timed.start + tookMs;
        if (kindOf(timedKey) === kind && overBy > timed.lastLook) soonest = Math.min(soonest, overBy);
      }
      if (soonest < Infinity) this.wake(tracked.object, Math.max(0, soonest - now) + lookAfterMs);
    }
  }

  /** The delay for a timed transition: learned, or the unlearned rule; undefined once it outlived what was learned. */
  private timedDelay(transition: Transition, requeueAfterMs: number, before: Tracked | undefined, tracked: Tracked, look: Look): number | undefined {
    const key = `${transition.id ?? ''}\n${transition.kind}`;
    let timed = tracked.timed.get(key);
    if (timed === undefined) {
      timed = before?.timed.get(key);
      before?.timed.delete(key);
      // A change sent in this pass: the transition before it (same kind, same resource) was seen over.
      if (timed !== undefined && transition.begins) {
        this.ended(key, timed, look);
        timed = undefined;
      }
      timed ??= { start: look.now, lastLook: look.now };
      tracked.timed.set(key, timed);
    }
    const elapsed = look.now - timed.start;
    timed.lastLook = look.now;
    const expectedMs = this.expected.get(transition.kind);
    if (expectedMs === undefined) return unlearnedDelay(requeueAfterMs, elapsed);
    if (elapsed < expectedMs) return expectedMs - elapsed + lookAfterMs;
    if (elapsed < 2 * expectedMs) return Math.max(retryMinimumMs, expectedMs * retryShare);
    return undefined;
  }

  /**
   * A transition seen over by `look`: it ended after its last look that found it under way, and by
   * the look. Noted in `learned` however late the look came: that it took at most this long stays
   * true, and wakes no sibling too soon.
   */
  private ended(key: string, timed: Timed, look: Look): void {
    const transition = kindOf(key);
    const over = look.now - timed.start;
    const underWay = timed.lastLook - timed.start;
    look.learned.set(transition, Math.min(look.learned.get(transition) ?? Infinity, over));
    const before = this.expected.get(transition);
    let sample: number;
    if (look.timely) sample = underWay > 0 ? (underWay + over) / 2 : over * probeShare;
    // Late: it may have ended any time up to the look, even after it was due, so neither the look nor its due time bounds it.
    else if (before !== undefined && underWay > before) sample = underWay;
    else return;
    this.expected.set(transition, before === undefined ? sample : before + learningRate * (sample - before));
  }
}

/** The kind of a tracked transition's key (`resource id\nkind`). */
function kindOf(timedKey: string): string {
  return timedKey.slice(timedKey.indexOf('\n') + 1);
}

function unlearnedDelay(requeueAfterMs: number, ageMs: number): number {
  return Math.min(requeueAfterMs, Math.max(unlearnedMinimumMs, ageMs * unlearnedGrowth));
}

function ageDelay(waiting: Waiting, ageMs: number): number {
  // A wait the actuator expects to be long (a server build) is not looked at before half its delay.
  const soonest = Math.max(minimumMs, waiting.requeueAfterMs / 2);
  return Math.min(waiting.requeueAfterMs, Math.max(soonest, ageMs * growth));
}
