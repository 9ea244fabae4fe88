/**
 * A write is a run of synchronous stages (decoding, admission and validation, field ownership,
 * conversion, serialization), each in proportion to the object's size: one-label patches to a
 * 3.8 MB object held every other request for 2.5 s (issue 47, H2). Between stages a write lets
 * whatever else is waiting run, so an unrelated request waits behind one stage, not the whole write.
 *
 * Only once it has held the thread a while, though: most objects are a few kilobytes and their
 * stages take microseconds, and giving way costs a write a turn of the event loop (several under
 * load), which every write of the reconciler would pay for nothing.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';

/** How long a write runs before it gives way at its next stage. */
const heldMs = 4;

export class WriteTurns {
  private since = performance.now();

  /** Between two stages: lets others run if this write has run `heldMs` since it began or last gave way. */
  async giveWay(): Promise<void> {
    if (performance.now() - this.since < heldMs) return;
    await setImmediate();
    this.since = performance.now();
  }
}
