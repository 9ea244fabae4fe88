/**
 * Resolves after ms, or at once when signal aborts (never rejects, so loops
 * check the signal themselves). Built on the global setTimeout rather than
 * node:timers/promises so that tests' fake timers drive it.
 */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    signal.addEventListener('abort', wake, { once: true });
  });
}
