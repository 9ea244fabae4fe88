/**
 * How soon to look again at something OpenStack is still doing. The
 * actuator says how long such a state usually lasts at most (its
 * requeueAfterMs); the schedule looks sooner while the state is young,
 * because a wait that just began often ends within seconds (a listener, a
 * port), and backs off as it ages, so a slow one (an amphora boot) costs
 * few reads: each look comes after half the time already waited, between
 * half the actuator's delay (two seconds at least) and the actuator's delay.
 */
import type { Waiting } from './resource/actuator.js';

const minimumMs = 2000;
const growth = 0.5;

export class WaitSchedule {
  /** First time each (object, wait) was seen; a wait whose text changes (a new state) starts over. */
  private readonly since = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The delay before the next pass of `uid`, given everything it waits for now; forgets the waits it no longer has. */
  next(uid: string, waits: readonly Waiting[]): number {
    const now = this.now();
    const current = new Set<string>();
    let delay = Infinity;
    for (const waiting of waits) {
      const key = `${uid}\n${waiting.waitingFor}`;
      current.add(key);
      const start = this.since.get(key) ?? now;
      this.since.set(key, start);
      // A wait the actuator expects to be long (a server build) is not looked at before half its delay.
      const soonest = Math.max(minimumMs, waiting.requeueAfterMs / 2);
      delay = Math.min(delay, Math.min(waiting.requeueAfterMs, Math.max(soonest, (now - start) * growth)));
    }
    for (const key of this.since.keys()) if (key.startsWith(`${uid}\n`) && !current.has(key)) this.since.delete(key);
    return delay;
  }
}
