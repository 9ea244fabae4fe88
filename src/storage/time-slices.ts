/**
 * Long work over many items without holding the one thread. A list's selector evaluated over every
 * object of its range is done in slices of at most `sliceMs`, and the event loop serves whatever
 * else waits (a GET, a watch event) between slices, as Go's scheduler lets other goroutines run
 * beside the one kube-apiserver filters a list in. Four selector-heavy LISTs once held an unrelated
 * GET for 24.8 s (issue 47, H1).
 *
 * Slices take turns: one slice runs per turn of the event loop, whichever work it belongs to, so
 * eight lists at once still hold the loop for one slice at a time, not eight back to back.
 */
import { performance } from 'node:perf_hooks';

/** How long one slice may run: what a request arriving meanwhile waits for, at most. */
export const sliceMs = 10;

/** Items between two looks at the clock: reading it costs more than a cheap visit. */
const itemsPerClockRead = 64;

/** Visits `items` in order until `visit` answers false, giving up the thread each time a slice has run `sliceMs`. */
export async function visitInSlices<T>(items: readonly T[], visit: (item: T) => boolean): Promise<void> {
  let sliceEnd = performance.now() + sliceMs;
  for (let index = 0; index < items.length; index++) {
    if (!visit(items[index]!)) return;
    if (index % itemsPerClockRead === itemsPerClockRead - 1 && performance.now() > sliceEnd) {
      await nextTurn();
      sliceEnd = performance.now() + sliceMs;
    }
  }
}

/** The slices waiting for a turn, in the order they gave up the thread. */
const waiting: (() => void)[] = [];
let turnScheduled = false;

function nextTurn(): Promise<void> {
  return new Promise((resume) => {
    waiting.push(resume);
    scheduleTurn();
  });
}

/** One waiting slice resumes per turn of the loop: setImmediate runs after the loop has polled for I/O. */
function scheduleTurn(): void {
  if (turnScheduled || waiting.length === 0) return;
  turnScheduled = true;
  setImmediate(() => {
    turnScheduled = false;
    waiting.shift()!();
    scheduleTurn();
  });
}
