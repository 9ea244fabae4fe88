/**
 * A write is a run of synchronous stages (decoding, admission and validation, field ownership,
 * conversion, serialization), each in proportion to the object's size: one-label patches to a
 * 3.8 MB object held every other request for 2.5 s (issue 47, H2). Between stages a write lets
 * whatever else is waiting run, so an unrelated request waits behind one stage, not the whole write.
 */
import { setImmediate } from 'node:timers/promises';

export function letOthersRun(): Promise<void> {
  return setImmediate();
}
