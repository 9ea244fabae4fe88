/**
 * Fake time for the runtime's tests (vi.useFakeTimers): the controller and the leader lease both
 * wait on storage round trips between their timers, so time moves in short steps, each followed by
 * the round trips it let start.
 */
import { vi } from 'vitest';

/** Lets storage commits, watch events and the work they start run to completion. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Moves fake time in steps short enough for every chain of storage calls to finish within one. */
export async function advance(ms: number): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += 10) {
    await vi.advanceTimersByTimeAsync(Math.min(10, ms - elapsed));
    await settle();
  }
}
