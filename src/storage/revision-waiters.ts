/**
 * Callers waiting for a follower of the store (the watch cache, the
 * inventory cache) to reach a revision: each is woken once the follower
 * reports that revision or a later one, or when everyone is let go at once
 * (a reload, a close), to look again for themselves.
 */
interface Waiter {
  revision: number;
  wake: () => void;
}

export class RevisionWaiters {
  private waiters: Waiter[] = [];

  /** Resolves once `reached(revision)` or `releaseAll()` is called; false when `timeoutMs` passes first. */
  wait(revision: number, timeoutMs?: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.waiters = this.waiters.filter((waiter) => waiter !== entry);
              resolve(false);
            }, timeoutMs);
      const entry: Waiter = {
        revision,
        wake: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      this.waiters.push(entry);
    });
  }

  /** The follower now reflects `revision`: wakes everyone waiting for it or an earlier one. */
  reached(revision: number): void {
    if (!this.waiters.some((waiter) => waiter.revision <= revision)) return;
    const ready = this.waiters.filter((waiter) => waiter.revision <= revision);
    this.waiters = this.waiters.filter((waiter) => waiter.revision > revision);
    for (const waiter of ready) waiter.wake();
  }

  releaseAll(): void {
    this.reached(Number.POSITIVE_INFINITY);
  }
}
